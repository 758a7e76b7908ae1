/* compmodel.c - calibrate content recipes on zstd -1 and LZ4 (a grid of literal counts and
 * alphabets, measured once per run, then inverted per cell) and pick each content's recipe. */
#include <errno.h>
#include <lz4.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "lib/compmodel.h"
#include "lib/errmsg.h"
#include "lib/rng.h"

struct compmodel_codecs {
	ZSTD_CCtx *zstd;
	void *out;
	size_t cap;
};

static int reserve_output(struct compmodel_codecs *c, size_t len)
{
	size_t need = ZSTD_compressBound(len);
	size_t lz4_need = (size_t)LZ4_compressBound((int)len);
	if (lz4_need > need)
		need = lz4_need;
	if (need > c->cap) {
		void *p = realloc(c->out, need);
		if (!p)
			return -1;
		c->out = p;
		c->cap = need;
	}
	return 0;
}

struct compmodel_codecs *compmodel_codecs_new(size_t max_block)
{
	struct compmodel_codecs *c = calloc(1, sizeof *c);
	if (c && (!(c->zstd = ZSTD_createCCtx()) || reserve_output(c, max_block))) {
		compmodel_codecs_free(c);
		c = NULL;
	}
	return c;
}

void compmodel_codecs_free(struct compmodel_codecs *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->zstd);
	free(c->out);
	free(c);
}

int compmodel_measure(struct compmodel_codecs *c, const void *block, size_t len, struct compmodel_sizes *out,
		      struct dd_err *err)
{
	return compmodel_measure_level(c, block, len, 1, true, out, err);
}

int compmodel_measure_level(struct compmodel_codecs *c, const void *block, size_t len, int zstd_level, bool lz4,
			    struct compmodel_sizes *out, struct dd_err *err)
{
	if (reserve_output(c, len))
		return err_fail_errno(err, -1, ENOMEM, "a buffer for compressed blocks of %zu bytes", len);
	size_t z = ZSTD_compressCCtx(c->zstd, c->out, c->cap, block, len, zstd_level);
	if (ZSTD_isError(z))
		return err_fail(err, -1, "zstd: %s", ZSTD_getErrorName(z));
	out->zstd = (double)(z < len ? z : len);
	out->lz4 = 0;
	if (!lz4)
		return 0;
	int l = LZ4_compress_default(block, c->out, (int)len, (int)c->cap);
	if (l <= 0)
		return err_fail(err, -1, "LZ4 could not compress a block of %zu bytes", len);
	out->lz4 = (double)((size_t)l < len ? (size_t)l : len);
	return 0;
}

/* How many of the window's first bytes are zero (whole words; the window is 8-aligned or not,
 * memcpy reads it either way). */
static size_t zero_prefix(const uint8_t *w)
{
	size_t i = 0;
	for (; i < DIST_GRAN_WINDOW; i += 8) {
		uint64_t x;
		memcpy(&x, w + i, 8);
		if (x)
			break;
	}
	return i;
}

int compmodel_measure_window(struct compmodel_codecs *c, const uint8_t *window, struct dist_gran *acc, struct dd_err *err)
{
	size_t zeros = zero_prefix(window);
	acc->windows++;
	/* level by level: the codec state re-fits its tables on each change of level */
	for (int level = 1; level <= 3; level += 2)
		for (int k = 0; k < DIST_GRAN_SIZES; k++) {
			size_t size = (size_t)DIST_GRAN_MIN << k;
			struct compmodel_sizes m;
			if (zeros >= size)
				continue; /* a hole to a store */
			if (compmodel_measure_level(c, window, size, level, level == 1, &m, err))
				return -1;
			if (level == 1) {
				acc->bytes[k] += size;
				acc->zstd1[k] += (uint64_t)m.zstd;
				acc->lz4[k] += (uint64_t)m.lz4;
			} else {
				acc->zstd3[k] += (uint64_t)m.zstd;
			}
		}
	return 0;
}

/* ---- calibration ---- */

/* The grid: literal counts in 1/32 of a sector, and alphabets from 2 to 256 symbols, roughly
 * geometric (zstd's cost per literal grows with log2 of the alphabet). */
#define GRID_N 33
static const uint16_t grid_alphabets[] = {2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 200, 256};
#define GRID_A (sizeof grid_alphabets / sizeof grid_alphabets[0])
/* Blocks measured per grid point and per chosen recipe: compressed sizes vary a little with the
 * random literals, more so with small alphabets (chance LZ matches). */
#define SAMPLES 3
/* Calibrate on blocks of at most this size and scale: a recipe repeats per 4 KiB sector, so a
 * larger block compresses to about as many times the size (measured: within 1 % at 64 KiB). */
#define CALIBRATE_MAX (16u << 10)

struct calibrator {
	struct content_gen gen;
	struct compmodel_codecs *codecs;
	void *block;
	uint32_t size;           /* calibration block size */
	double scale;            /* run block size / calibration block size */
	uint32_t sector;         /* literals per sector are at most this */
	struct compmodel_sizes grid[GRID_A][GRID_N];
};

/* Mean sizes of SAMPLES blocks of recipe r (fixed ids: the same figures in every run). */
static int measure_recipe(struct calibrator *c, content_recipe r, struct compmodel_sizes *out)
{
	struct compmodel_sizes sum = {0, 0};
	for (uint64_t i = 0; i < SAMPLES; i++) {
		struct compmodel_sizes s;
		content_fill_recipe(&c->gen, (1ULL << 62) + i * 0x9e3779b97f4a7c15ULL % (1ULL << 40), r, c->block);
		if (compmodel_measure(c->codecs, c->block, c->size, &s, NULL))
			return -1;
		sum.zstd += s.zstd;
		sum.lz4 += s.lz4;
	}
	out->zstd = sum.zstd / SAMPLES * c->scale;
	out->lz4 = sum.lz4 / SAMPLES * c->scale;
	return 0;
}

static uint32_t grid_literals(const struct calibrator *c, int j)
{
	return (uint32_t)((uint64_t)c->sector * (uint64_t)j / (GRID_N - 1));
}

static int calibrate_grid(struct calibrator *c)
{
	for (size_t a = 0; a < GRID_A; a++) {
		for (int j = 0; j < GRID_N; j++)
			if (measure_recipe(c, content_recipe_make(grid_literals(c, j), grid_alphabets[a]), &c->grid[a][j]))
				return -1;
		/* Sizes grow with the literals; a measured dip (noise) would make the inversion ambiguous. */
		for (int j = 1; j < GRID_N; j++) {
			if (c->grid[a][j].lz4 < c->grid[a][j - 1].lz4)
				c->grid[a][j].lz4 = c->grid[a][j - 1].lz4;
			if (c->grid[a][j].zstd < c->grid[a][j - 1].zstd)
				c->grid[a][j].zstd = c->grid[a][j - 1].zstd;
		}
	}
	return 0;
}

/* On alphabet row a: the (fractional) literal count whose LZ4 size is `lz4`, clamped to the grid,
 * and the zstd size there. */
static void solve_row(const struct calibrator *c, size_t a, double lz4, double *n, double *zstd)
{
	const struct compmodel_sizes *g = c->grid[a];
	if (lz4 <= g[0].lz4) {
		*n = 0;
		*zstd = g[0].zstd;
		return;
	}
	for (int j = 1; j < GRID_N; j++) {
		if (lz4 <= g[j].lz4) {
			double span = g[j].lz4 - g[j - 1].lz4;
			double t = span > 0 ? (lz4 - g[j - 1].lz4) / span : 0;
			*n = (j - 1 + t) * c->sector / (GRID_N - 1);
			*zstd = g[j - 1].zstd + t * (g[j].zstd - g[j - 1].zstd);
			return;
		}
	}
	*n = c->sector;
	*zstd = g[GRID_N - 1].zstd;
}

/* The recipe closest to (zstd, lz4) bytes: on every alphabet row the literal count that meets
 * the LZ4 size, then between the two rows whose zstd sizes bracket the target, interpolated
 * (the alphabet on a log scale). Outside the reachable range, the nearest row. */
static content_recipe invert(const struct calibrator *c, double zstd, double lz4)
{
	double n[GRID_A], z[GRID_A];
	for (size_t a = 0; a < GRID_A; a++)
		solve_row(c, a, lz4, &n[a], &z[a]);
	size_t best = 0;
	for (size_t a = 0; a < GRID_A; a++)
		if (fabs(z[a] - zstd) < fabs(z[best] - zstd))
			best = a;
	double lit = n[best], alpha = grid_alphabets[best];
	for (size_t a = 0; a + 1 < GRID_A; a++) {
		double lo = z[a], hi = z[a + 1];
		if ((lo <= zstd && zstd <= hi) || (hi <= zstd && zstd <= lo)) {
			double t = hi != lo ? (zstd - lo) / (hi - lo) : 0;
			lit = n[a] + t * (n[a + 1] - n[a]);
			alpha = exp(log(grid_alphabets[a]) + t * (log(grid_alphabets[a + 1]) - log(grid_alphabets[a])));
			break;
		}
	}
	long la = lround(alpha), ln = lround(lit);
	if (la < (long)CONTENT_MIN_ALPHABET)
		la = CONTENT_MIN_ALPHABET;
	if (la > (long)CONTENT_MAX_ALPHABET)
		la = CONTENT_MAX_ALPHABET;
	if (ln < 0)
		ln = 0;
	return content_recipe_make((uint32_t)ln, (uint32_t)la);
}

/* ---- the model ---- */

struct model_cell {
	content_recipe recipe;
	struct compmodel_sizes expected, target;
};

/* A class's cells (its own, or borrowed from its nearest classes) as cumulative weights. */
struct model_class {
	size_t first;              /* into pick[] */
	size_t n;
	uint64_t total;
	unsigned lo, hi;           /* the classes whose cells it picks from (borrow_range) */
};

struct compmodel {
	uint32_t block_size;
	struct model_cell *cells;
	size_t ncells;
	struct model_class cls[DIST_CLASSES];
	size_t *pick_cell;         /* per class range: the cell */
	uint64_t *pick_cum;        /* per class range: cumulative contents up to and including it */
	size_t npick;
	uint32_t share, pool;      /* the vocabulary every model recipe names (compmodel_set_vocabulary) */
	bool banded;               /* neighbouring ids pick neighbouring cells (compmodel_set_vocabulary) */
};

/* Which classes' cells class k uses: its own when it measured enough, else its nearest
 * neighbours (alternating below and above) until enough were measured together. */
static void borrow_range(const struct dist_comp *comp, unsigned k, unsigned *lo, unsigned *hi)
{
	uint64_t got = comp->class_measured[k];
	*lo = *hi = k;
	while (got < COMPMODEL_MIN_MEASURED && (*lo > 0 || *hi + 1 < DIST_CLASSES)) {
		if (*lo > 0)
			got += comp->class_measured[--*lo];
		if (got < COMPMODEL_MIN_MEASURED && *hi + 1 < DIST_CLASSES)
			got += comp->class_measured[++*hi];
	}
}

static int build_picks(struct compmodel *m, const struct dist_comp *comp)
{
	/* Each class's range can hold every cell at most once. */
	size_t cap = comp->ncells * DIST_CLASSES, used = 0;
	m->pick_cell = malloc(cap * sizeof *m->pick_cell);
	m->pick_cum = malloc(cap * sizeof *m->pick_cum);
	if (!m->pick_cell || !m->pick_cum)
		return -1;
	for (unsigned k = 0; k < DIST_CLASSES; k++) {
		unsigned lo, hi;
		borrow_range(comp, k, &lo, &hi);
		m->cls[k].lo = lo;
		m->cls[k].hi = hi;
		m->cls[k].first = used;
		uint64_t total = 0;
		for (size_t i = 0; i < comp->ncells; i++) {
			const struct dist_comp_cell *c = &comp->cells[i];
			if (c->cls < lo || c->cls > hi)
				continue;
			total += c->contents;
			m->pick_cell[used] = i;
			m->pick_cum[used++] = total;
		}
		m->cls[k].n = used - m->cls[k].first;
		m->cls[k].total = total;
	}
	m->npick = used;
	return 0;
}

int compmodel_build(struct compmodel **out, const struct dist_comp *comp, uint32_t block_size, struct dd_err *err)
{
	*out = NULL;
	if (!comp->present || !comp->ncells)
		return err_fail(err, -1, "the distribution has no compressibility section");
	struct compmodel *m = calloc(1, sizeof *m);
	struct calibrator *c = calloc(1, sizeof *c);
	int rc = -1;
	if (!m || !c)
		goto oom;
	m->block_size = block_size;
	c->size = block_size < CALIBRATE_MAX ? block_size : CALIBRATE_MAX;
	c->scale = (double)block_size / c->size;
	c->sector = c->size < CONTENT_SECTOR ? c->size : CONTENT_SECTOR;
	if (content_init(&c->gen, 0x63616c6962ULL /* "calib" */, c->size, 1) ||
	    !(c->codecs = compmodel_codecs_new(c->size)) || !(c->block = aligned_alloc(64, c->size)))
		goto oom;
	if (calibrate_grid(c)) {
		err_fail(err, -1, "calibrating content recipes: a compressor failed");
		goto out;
	}
	m->ncells = comp->ncells;
	if (!(m->cells = calloc(m->ncells, sizeof *m->cells)))
		goto oom;
	double unit = (double)block_size / DIST_COMP_UNIT;
	for (size_t i = 0; i < m->ncells; i++) {
		struct model_cell *mc = &m->cells[i];
		mc->target.zstd = comp->cells[i].zstd_mean * unit;
		mc->target.lz4 = comp->cells[i].lz4_mean * unit;
		/* Incompressible under both: the plain layout is exactly that, and the cheapest. */
		if (comp->cells[i].zstd_bucket == DIST_COMP_BUCKETS - 1 && comp->cells[i].lz4_bucket == DIST_COMP_BUCKETS - 1)
			mc->recipe = CONTENT_RECIPE_PLAIN;
		else
			mc->recipe = invert(c, mc->target.zstd, mc->target.lz4);
		if (mc->recipe == CONTENT_RECIPE_PLAIN) {
			mc->expected = (struct compmodel_sizes){block_size, block_size};
		} else if (measure_recipe(c, mc->recipe, &mc->expected)) {
			err_fail(err, -1, "calibrating content recipes: a compressor failed");
			goto out;
		}
	}
	if (build_picks(m, comp))
		goto oom;
	*out = m;
	m = NULL;
	rc = 0;
	goto out;
oom:
	err_fail(err, -1, "out of memory for the compressibility model");
out:
	if (c) {
		compmodel_codecs_free(c->codecs);
		free(c->block);
		free(c);
	}
	compmodel_free(m);
	return rc;
}

void compmodel_free(struct compmodel *m)
{
	if (!m)
		return;
	free(m->cells);
	free(m->pick_cell);
	free(m->pick_cum);
	free(m);
}

/* Contents of a class below this many bands' worth keep independent picks: banding a small class
 * would leave its histogram to a handful of draws. */
#define BANDED_MIN_BANDS 64

size_t compmodel_cell(const struct compmodel *m, unsigned cls, uint64_t seed, uint64_t id)
{
	const struct model_class *k = &m->cls[cls < DIST_CLASSES ? cls : DIST_CLASSES - 1];
	uint64_t u = rng_mix64(rng_mix64(id ^ 0x636f6d70ULL /* "comp" */) ^ seed);
	if (m->banded && k->total >= (uint64_t)BANDED_MIN_BANDS << CONTENT_BAND_BITS) {
		/* the band's quantile, and a sixteenth of the range either way per id: still uniform
		 * over ids (a uniform plus an independent offset, modulo 1), so the histogram holds */
		uint64_t band = rng_mix64(rng_mix64((id >> CONTENT_BAND_BITS) ^ 0x62616e64ULL /* "band" */) ^ seed);
		u = band + (u >> 3) - (UINT64_C(1) << 60);
	}
	uint64_t x = (uint64_t)(((unsigned __int128)u * k->total) >> 64);
	const uint64_t *cum = m->pick_cum + k->first;
	size_t lo = 0, hi = k->n - 1;
	while (lo < hi) { /* the first cell whose cumulative weight exceeds x */
		size_t mid = lo + (hi - lo) / 2;
		if (cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return m->pick_cell[k->first + lo];
}

content_recipe compmodel_recipe(const struct compmodel *m, size_t cell)
{
	return content_recipe_vocabulary(m->cells[cell].recipe, m->share, m->pool);
}

static bool compresses_better(const struct model_cell *a, const struct model_cell *b)
{
	return a->target.zstd < b->target.zstd || (a->target.zstd == b->target.zstd && a->target.lz4 < b->target.lz4);
}

/* A class's cells from most to least compressible (insertion sort: a class has a few hundred
 * cells at most), each keeping its weight, so that nearby quantiles are blocks that compress
 * alike and a band of neighbouring ids compresses like the blocks of one file. */
static void sort_class_by_size(struct compmodel *m, const struct model_class *k)
{
	size_t *cell = m->pick_cell + k->first;
	uint64_t *cum = m->pick_cum + k->first;
	for (size_t i = k->n; i-- > 1;)
		cum[i] -= cum[i - 1]; /* weights */
	for (size_t i = 1; i < k->n; i++) {
		size_t x = cell[i], j = i;
		uint64_t w = cum[i];
		for (; j > 0 && compresses_better(&m->cells[x], &m->cells[cell[j - 1]]); j--) {
			cell[j] = cell[j - 1];
			cum[j] = cum[j - 1];
		}
		cell[j] = x;
		cum[j] = w;
	}
	for (size_t i = 1; i < k->n; i++)
		cum[i] += cum[i - 1];
}

bool compmodel_borrowed(const struct compmodel *m, unsigned cls, unsigned *lo, unsigned *hi)
{
	*lo = m->cls[cls].lo;
	*hi = m->cls[cls].hi;
	return *lo != cls || *hi != cls;
}

void compmodel_set_vocabulary(struct compmodel *m, uint32_t share, uint32_t pool, bool banded)
{
	m->share = share > CONTENT_SHARE_MAX ? CONTENT_SHARE_MAX : share;
	m->pool = pool > CONTENT_POOL_MAX ? CONTENT_POOL_MAX : pool;
	if (banded && !m->banded)
		for (unsigned k = 0; k < DIST_CLASSES; k++)
			sort_class_by_size(m, &m->cls[k]);
	m->banded = m->banded || banded;
}

struct compmodel_sizes compmodel_expected(const struct compmodel *m, size_t cell)
{
	return m->cells[cell].expected;
}

struct compmodel_sizes compmodel_target(const struct compmodel *m, size_t cell)
{
	return m->cells[cell].target;
}

size_t compmodel_ncells(const struct compmodel *m)
{
	return m->ncells;
}
