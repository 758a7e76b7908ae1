/* counts.c - the histogram of copies (copies -> distinct contents), a small u64map: a dataset
 * has few distinct copy counts (at most about sqrt(2T)), however large. */
#include <stdlib.h>
#include <string.h>
#include "gen/counts.h"

int count_hist_add(struct count_hist *h, uint64_t copies, uint64_t nfps)
{
	uint64_t *contents = copies ? u64map_at(&h->map, copies) : NULL;
	if (!contents || *contents + nfps < *contents)
		return -1;
	*contents += nfps;
	return 0;
}

int count_hist_to_dist(const struct count_hist *h, struct dist *out, struct dd_err *err)
{
	struct dist_row *rows = malloc((h->map.used ? h->map.used : 1) * sizeof *rows);
	size_t n = 0, slot = 0;
	uint64_t copies, contents;
	if (!rows) {
		memset(out, 0, sizeof *out);
		if (err)
			strcpy(err->msg, "out of memory");
		return -1;
	}
	while (u64map_next(&h->map, &slot, &copies, &contents))
		rows[n++] = (struct dist_row){copies - 1, contents};
	int rc = dist_from_rows(rows, n, out, err); /* sorts, checks T for overflow */
	free(rows);
	return rc;
}

void count_hist_free(struct count_hist *h)
{
	u64map_free(&h->map);
}
