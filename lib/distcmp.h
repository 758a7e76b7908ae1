/* distcmp.h - comparing duplicate distributions: the block-weighted histogram of copies in
 * power-of-two buckets, the total-variation distance between two, the rows' differences, and the
 * derived figures of the compressibility and locality sections. */
#ifndef DEDIS_DISTCMP_H
#define DEDIS_DISTCMP_H

#include <stdint.h>
#include "lib/distfile.h"

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

/* [compressibility] figures. Copy-class groups as shared/tools/blockcomp.py prints them:
 * all, 1 copy, 2-3, 4-15, 16+ (classes 0..63, 0, 1, 2-3, 4..63). */
#define DIST_GROUPS 5
extern const char *const dist_group_names[DIST_GROUPS];
struct dist_comp_figures {
	double zstd_ratio, lz4_ratio;     /* after dedup: Σ contents / Σ contents·mean/2^20 (0: none) */
	double contents[DIST_GROUPS];     /* estimated distinct contents per group */
	double eighths[DIST_GROUPS][8];   /* share of the group's contents per zstd -1 size eighth
	                                   * (bucket / 4: size in [k/8, (k+1)/8) of the block) */
};
void dist_comp_figures(const struct dist_comp *c, struct dist_comp_figures *f);

/* [locality 1] figures. */
struct dist_loc_figures {
	double dup_share;        /* duplicates / analysed */
	double runs_ge8_share;   /* share of duplicates in dup runs of 8 blocks or more */
	double sequential_share; /* sequential / duplicates */
	double mean_dup_run;     /* duplicates / dup runs */
};
void dist_loc_figures(const struct dist_locality *l, struct dist_loc_figures *f);

/* The compressibility and locality of two distributions side by side (present: both carry it). */
struct dist_sect_diff {
	bool comp, loc;
	struct dist_comp_figures ca, cb;
	double zstd_ratio_err, lz4_ratio_err;  /* (b - a) / a */
	double tv_eighths[DIST_GROUPS];        /* total-variation distance of the eighths (0 when a
	                                        * group is empty on either side) */
	struct dist_loc_figures la, lb;
};
void dist_compare_sections(const struct dist *a, const struct dist *b, struct dist_sect_diff *out);

#endif
