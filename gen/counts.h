/* counts.h - the histogram of copies: how many distinct contents were seen exactly c times,
 * accumulated from an index walk and turned into distribution rows (dups = c - 1). */
#ifndef DEDIS_GEN_COUNTS_H
#define DEDIS_GEN_COUNTS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"
#include "lib/u64map.h"

/* copies -> distinct contents with that many copies. Zeroed: empty. */
struct count_hist {
	struct u64map map;
};

/* contents += nfps for `copies` (>= 1). Returns 0 or -1 (out of memory, overflow, copies 0). */
int count_hist_add(struct count_hist *h, uint64_t copies, uint64_t nfps);
/* Rows sorted by dups; an empty histogram is an error (dist_from_rows: "no rows"). */
int count_hist_to_dist(const struct count_hist *h, struct dist *out, struct dd_err *err);
void count_hist_free(struct count_hist *h);

#endif
