/* distcmp.h - comparing duplicate distributions: the block-weighted histogram of copies in
 * power-of-two buckets, the total-variation distance between two, and the rows' differences. */
#ifndef DEDIS_DISTCMP_H
#define DEDIS_DISTCMP_H

#include <stdint.h>
#include "distfile.h"

/* Bucket k holds the contents stored c times with 2^k <= c < 2^(k+1) (c = dups + 1). */
#define DIST_POW2_BUCKETS 64

struct dist_pow2 {
	uint64_t blocks[DIST_POW2_BUCKETS];   /* logical blocks: sum of blocks*(dups+1) in the bucket */
	uint64_t contents[DIST_POW2_BUCKETS]; /* distinct contents: sum of blocks */
	double share[DIST_POW2_BUCKETS];      /* blocks[k] / T (all 0 for an empty distribution) */
	int top;                              /* highest non-empty bucket, -1 when empty */
};

void dist_pow2_histogram(const struct dist *d, struct dist_pow2 *h);
/* 1/2 * sum |p_k - q_k| over the buckets' shares: 0 identical, 1 disjoint. */
double dist_tv_distance(const struct dist_pow2 *a, const struct dist_pow2 *b);

struct dist_diff {
	struct dist_rows a, b;
	double du0, du1, dd;     /* b - a, in percentage points */
	double max_pp;           /* the largest |du0|, |du1|, |dd| */
	double ratio_err;        /* (b.ratio - a.ratio) / a.ratio, a fraction (0 when a.ratio is 0) */
	double tv;               /* total-variation distance of the pow2 histograms */
};

void dist_compare(const struct dist *a, const struct dist *b, struct dist_diff *out);

#endif
