/* counts.c - the histogram of copies (copies -> distinct contents), a small open-addressing
 * map: a dataset has few distinct copy counts (at most about sqrt(2T)), however large. */
#include <stdlib.h>
#include <string.h>
#include "gen/counts.h"
#include "lib/rng.h"

static int grow(struct count_hist *h)
{
	size_t ncap = h->cap ? 2 * h->cap : 64;
	uint64_t *k = calloc(ncap, sizeof *k), *v = calloc(ncap, sizeof *v);
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (size_t i = 0; i < h->cap; i++) {
		if (!h->keys[i])
			continue;
		size_t p = rng_mix64(h->keys[i]) & (ncap - 1);
		while (k[p])
			p = (p + 1) & (ncap - 1);
		k[p] = h->keys[i];
		v[p] = h->vals[i];
	}
	free(h->keys);
	free(h->vals);
	h->keys = k;
	h->vals = v;
	h->cap = ncap;
	return 0;
}

int count_hist_add(struct count_hist *h, uint64_t copies, uint64_t nfps)
{
	if (copies == 0)
		return -1;
	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -1;
	size_t p = rng_mix64(copies) & (h->cap - 1);
	while (h->keys[p] && h->keys[p] != copies)
		p = (p + 1) & (h->cap - 1);
	if (!h->keys[p]) {
		h->keys[p] = copies;
		h->n++;
	}
	if (h->vals[p] + nfps < h->vals[p])
		return -1;
	h->vals[p] += nfps;
	return 0;
}

int count_hist_to_dist(const struct count_hist *h, struct dist *out, struct dist_error *err)
{
	struct dist_row *rows = malloc((h->n ? h->n : 1) * sizeof *rows);
	size_t n = 0;
	if (!rows) {
		memset(out, 0, sizeof *out);
		if (err)
			strcpy(err->msg, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < h->cap; i++)
		if (h->keys[i])
			rows[n++] = (struct dist_row){h->keys[i] - 1, h->vals[i]};
	int rc = dist_from_rows(rows, n, out, err); /* sorts, checks T for overflow */
	free(rows);
	return rc;
}

void count_hist_free(struct count_hist *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof *h);
}
