/* grancal.h - the vocabulary of a run's content model fitted to its distribution's granularity
 * curve ([granularity 1]): how much neighbouring blocks share, so larger pieces compress as the data's. */
#ifndef DEDIS_BENCH_GRANCAL_H
#define DEDIS_BENCH_GRANCAL_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/compmodel.h"
#include "lib/distfile.h"
#include "lib/errmsg.h"

/* What the fit chose and what the replica's sample windows then measured. */
struct grancal_result {
	bool fitted;             /* false: the distribution has no curve (or no copied runs), nothing done */
	uint32_t share, pool;    /* the vocabulary (content.h) */
	struct dist_gran replica; /* the calibration windows with it, measured as dedisgen measures data */
	struct dist_gran blocks;  /* their 4 KiB ratios from every block (index 0 only) */
};

/* The ratio a [granularity 1] section gives at size index k (0: 4 KiB .. 5: 128 KiB) for one codec
 * (0 zstd -1, 1 zstd -3, 2 LZ4); 0 when nothing was measured at that size. */
double grancal_ratio(const struct dist_gran *g, int codec, int k);

/* How the replica sample's ratio at size k grows from its 4 KiB ratio (every block's). */
double grancal_growth(const struct grancal_result *r, int codec, int k);

/* Fit the model's vocabulary to d's curve: lays d out in copied runs at a fixed calibration size
 * (256 MiB, the same in every process and rank, whatever the run's size), fills sample windows of
 * 128 KiB with the model's content, and picks the share and pool whose growth of the ratio from
 * 4 to 128 KiB is closest to the data's, then sets it on the model (banded picks on). Without a
 * [granularity 1] or [locality 1] section, or with blocks over 128 KiB, does nothing (fitted
 * false). 0, or -1 with err set (out of memory, a compressor failing). */
int grancal_fit(struct compmodel *m, const struct dist *d, uint32_t block_size, uint64_t seed,
		struct grancal_result *out, struct dd_err *err);

#endif
