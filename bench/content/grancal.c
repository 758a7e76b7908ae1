/* grancal.c - fit a run's content vocabulary to the distribution's granularity curve: sample
 * windows of a calibration layout, filled as the run fills them, compressed as dedisgen measures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/content/dupgen.h"
#include "bench/content/grancal.h"
#include "lib/content.h"
#include "lib/rng.h"

/* The calibration layout: the distribution scaled to this many bytes, in copied runs. Fixed, so
 * every process and rank fits the same vocabulary (a content's bytes must not depend on who
 * writes it), whatever the run's size. */
#define CAL_BYTES (256ull << 20)
/* Sample windows per measurement: with 24 the fitted share moved by at most 2/128 between seeds
 * on the datasets of doc/notes/granularity.md; each candidate costs ~15 ms of zstd -3. */
#define CAL_WINDOWS 96

struct calibration {
	struct compmodel *m;
	struct dupgen g;             /* the calibration layout's */
	struct dupgen_recipes recipes; /* by g: what a window's contents, shifted halves too, are built by */
	uint64_t seed;
	uint32_t block_size, per_window;
	struct content_gen gen;
	uint64_t *ids;           /* CAL_WINDOWS * per_window content ids */
	uint8_t *window;
	struct compmodel_codecs *codecs;
};

double grancal_ratio(const struct dist_gran *g, int codec, int k)
{
	const uint64_t *sums = codec == 0 ? g->zstd1 : codec == 1 ? g->zstd3 : g->lz4;
	return sums[k] ? (double)g->bytes[k] / (double)sums[k] : 0;
}

double grancal_growth(const struct grancal_result *r, int codec, int k)
{
	double base = grancal_ratio(&r->blocks, codec, 0);
	return base > 0 ? grancal_ratio(&r->replica, codec, k) / base : 0;
}

/* The ids of the sample windows: CAL_WINDOWS windows of the layout, aligned (as dedisgen's are
 * in a file) and spread by a hash. */
static void pick_windows(struct calibration *c, const struct scaled_layout *l)
{
	uint64_t windows = l->n / c->per_window;
	struct dupgen g;
	dupgen_init_scaled(&g, l, 0);
	for (unsigned w = 0; w < CAL_WINDOWS; w++) {
		uint64_t first = (rng_mix64(c->seed ^ 0x6772616eULL /* "gran" */ ^ w) % windows) * c->per_window;
		for (uint32_t b = 0; b < c->per_window; b++)
			c->ids[(size_t)w * c->per_window + b] = dupgen_first(&g, first + b);
	}
}

/* Fill window w with the model's current vocabulary. */
static void fill_window(struct calibration *c, unsigned w)
{
	for (uint32_t b = 0; b < c->per_window; b++) {
		uint64_t id = c->ids[(size_t)w * c->per_window + b];
		content_fill_recipe(&c->gen, id, dupgen_recipe(&c->recipes, id), c->window + (size_t)b * c->block_size);
	}
}

/* The windows measured with vocabulary (share, pool): every piece size and codec when full, else
 * only what the bisection needs (zstd -3 on whole windows, into acc->zstd3[5] and bytes[5]). */
static int measure(struct calibration *c, uint32_t share, uint32_t pool, bool full, struct dist_gran *acc,
		   struct dd_err *err)
{
	memset(acc, 0, sizeof *acc);
	compmodel_set_vocabulary(c->m, share, pool, true);
	for (unsigned w = 0; w < CAL_WINDOWS; w++) {
		fill_window(c, w);
		if (full) {
			if (compmodel_measure_window(c->codecs, c->window, acc, err))
				return -1;
			continue;
		}
		struct compmodel_sizes z1, z3;
		if (content_all_zero(c->window, DIST_GRAN_WINDOW))
			continue; /* all zero: a hole, left out as the full measurement leaves it out */
		if (compmodel_measure_level(c->codecs, c->window, DIST_GRAN_WINDOW, 1, false, &z1, err) ||
		    compmodel_measure_level(c->codecs, c->window, DIST_GRAN_WINDOW, 3, false, &z3, err))
			return -1;
		acc->bytes[DIST_GRAN_SIZES - 1] += DIST_GRAN_WINDOW;
		acc->zstd1[DIST_GRAN_SIZES - 1] += (uint64_t)z1.zstd;
		acc->zstd3[DIST_GRAN_SIZES - 1] += (uint64_t)z3.zstd;
	}
	acc->present = true;
	return 0;
}

/* The replica's 4 KiB ratios from every block of the windows, not only their first: the share
 * does not move them, and 24 blocks alone would put a few per cent of noise on every growth. */
static int measure_blocks(struct calibration *c, struct dist_gran *acc, struct dd_err *err)
{
	memset(acc, 0, sizeof *acc);
	compmodel_set_vocabulary(c->m, 0, 0, true);
	for (unsigned w = 0; w < CAL_WINDOWS; w++) {
		fill_window(c, w);
		for (uint32_t off = 0; off < DIST_GRAN_WINDOW; off += DIST_GRAN_MIN) {
			const uint8_t *b = c->window + off;
			struct compmodel_sizes z, z3;
			if (content_all_zero(b, DIST_GRAN_MIN))
				continue;
			if (compmodel_measure_level(c->codecs, b, DIST_GRAN_MIN, 1, true, &z, err) ||
			    compmodel_measure_level(c->codecs, b, DIST_GRAN_MIN, 3, false, &z3, err))
				return -1;
			acc->bytes[0] += DIST_GRAN_MIN;
			acc->zstd1[0] += (uint64_t)z.zstd;
			acc->zstd3[0] += (uint64_t)z3.zstd;
			acc->lz4[0] += (uint64_t)z.lz4;
		}
	}
	return 0;
}

/* How far a replica's curve is from the data's: squared log errors of the growth from 4 KiB to
 * each larger piece, every codec (the replica's 4 KiB from `blocks`). The 4 KiB ratios themselves
 * are the compressibility model's. */
static double curve_error(const struct dist_gran *data, const struct dist_gran *blocks, const struct dist_gran *rep)
{
	double e = 0;
	for (int codec = 0; codec < 3; codec++)
		for (int k = 1; k < DIST_GRAN_SIZES; k++) {
			double d0 = grancal_ratio(data, codec, 0), dk = grancal_ratio(data, codec, k);
			double r0 = grancal_ratio(blocks, codec, 0), rk = grancal_ratio(rep, codec, k);
			if (d0 > 0 && dk > 0 && r0 > 0 && rk > 0) {
				double x = log((rk / r0) / (dk / d0));
				e += x * x;
			}
		}
	return e;
}

/* zstd -1 and -3 together at size k: a geometric mean weighted 0.2 / 0.8. Real text gains more
 * from zstd -3's deeper search than our slices do (3 to 6 % at 128 KiB on the datasets of
 * doc/notes/granularity.md), and the 4 KiB model, fitted on zstd -1 and LZ4, already sits up to
 * 2.4 % low on zstd -3. Record stores (ZFS, btrfs) compress with zstd -3: lean to it, and leave
 * zstd -1 a little above the data. */
static double zstd_mean_ratio(const struct dist_gran *g, int k)
{
	return pow(grancal_ratio(g, 0, k), 0.2) * pow(grancal_ratio(g, 1, k), 0.8);
}

/* The smallest share whose whole windows reach the data's zstd ratio at 128 KiB (relative to the
 * replica's own 4 KiB ratio, which the share does not move), by bisection; CONTENT_SHARE_MAX when
 * none does. */
static int bisect_share(struct calibration *c, uint32_t pool, double want, uint32_t *share, struct dd_err *err)
{
	uint32_t lo = 0, hi = CONTENT_SHARE_MAX;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		struct dist_gran g;
		if (measure(c, mid, pool, false, &g, err))
			return -1;
		if (zstd_mean_ratio(&g, DIST_GRAN_SIZES - 1) >= want)
			hi = mid;
		else
			lo = mid + 1;
	}
	*share = lo;
	return 0;
}

/* Every pool size a block's own sectors cannot overlap in (pool >= the block), each with its
 * bisected share; the candidate closest over the whole curve wins. */
static int search(struct calibration *c, const struct dist_gran *data, struct grancal_result *out, struct dd_err *err)
{
	struct dist_gran none, blocks;
	if (measure_blocks(c, &blocks, err) || measure(c, 0, 0, true, &none, err))
		return -1;
	out->blocks = blocks;
	out->share = 0;
	out->pool = 0;
	out->replica = none;
	double best = curve_error(data, &blocks, &none);
	double want = zstd_mean_ratio(&blocks, 0) * zstd_mean_ratio(data, DIST_GRAN_SIZES - 1) / zstd_mean_ratio(data, 0);
	if (zstd_mean_ratio(&none, DIST_GRAN_SIZES - 1) >= want)
		return 0; /* the data grows no more than unshared blocks do */
	uint32_t min_pool = 0;
	while ((CONTENT_SECTOR << min_pool) < c->block_size)
		min_pool++;
	for (uint32_t pool = min_pool; pool <= CONTENT_POOL_MAX && pool <= min_pool + 1; pool++) {
		uint32_t share;
		struct dist_gran g;
		if (bisect_share(c, pool, want, &share, err) || measure(c, share, pool, true, &g, err))
			return -1;
		double e = curve_error(data, &blocks, &g);
		if (e < best) {
			best = e;
			out->share = share;
			out->pool = pool;
			out->replica = g;
		}
	}
	return 0;
}

int grancal_fit(struct compmodel *m, const struct dist *d, uint32_t block_size, uint64_t seed,
		struct grancal_result *out, struct dd_err *err)
{
	memset(out, 0, sizeof *out);
	if (!d->gran.present || !d->locality.present || block_size > DIST_GRAN_WINDOW || DIST_GRAN_WINDOW % block_size ||
	    zstd_mean_ratio(&d->gran, 0) <= 0 || zstd_mean_ratio(&d->gran, DIST_GRAN_SIZES - 1) <= 0)
		return 0;
	struct scaled_layout l;
	memset(&l, 0, sizeof l);
	struct calibration c = {.m = m, .seed = seed, .block_size = block_size, .per_window = DIST_GRAN_WINDOW / block_size};
	size_t n = (size_t)CAL_WINDOWS * c.per_window;
	int rc = -1;
	c.ids = malloc(n * sizeof *c.ids);
	c.window = aligned_alloc(64, DIST_GRAN_WINDOW);
	c.codecs = compmodel_codecs_new(DIST_GRAN_WINDOW);
	if (!c.ids || !c.window || !c.codecs || content_init(&c.gen, seed, block_size, 1) ||
	    scaled_build(&l, d, d->zero_blocks, CAL_BYTES / block_size, seed) ||
	    scaled_build_runs(&l, &d->locality, d->cdc.present ? &d->cdc : NULL, block_size, seed)) {
		err_fail(err, -1, "out of memory fitting the content vocabulary");
		goto out;
	}
	dupgen_init_scaled(&c.g, &l, 0);
	c.recipes = (struct dupgen_recipes){m, seed, &c.g};
	c.gen.recipe_of = dupgen_recipe;
	c.gen.recipe_ctx = &c.recipes;
	pick_windows(&c, &l);
	if (search(&c, &d->gran, out, err))
		goto out;
	compmodel_set_vocabulary(m, out->share, out->pool, true);
	out->fitted = true;
	rc = 0;
out:
	scaled_free(&l);
	compmodel_codecs_free(c.codecs);
	free(c.window);
	free(c.ids);
	return rc;
}
