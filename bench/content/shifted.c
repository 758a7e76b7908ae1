/* shifted.c - shifted copies in the copied-runs layout: stretches of unique blocks turned into
 * copies of earlier sequences of contents, shifted by part of a block, as [cdc 1] measured them. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "bench/content/shifted.h"
#include "lib/content.h"
#include "lib/rng.h"
#include "lib/u64map.h"

/* What the placement draws from: the share of the data in shifted duplicates, their runs' lengths
 * (blocks, from the byte bins) and shifts (in units, weighted by bytes). */
struct plan {
	double share;
	uint64_t run_cum[DIST_CDC_RUN_BINS], run_total;
	uint64_t *shift_cum;
	uint32_t *shift_units;
	size_t nshifts;
	uint64_t shift_total;
	uint32_t block_size, avg;
	double mean_run;       /* blocks */
};

static uint64_t run_blocks(const struct plan *p, struct rng *r)
{
	uint64_t x = rng_below(r, p->run_total);
	int k = 0;
	while (p->run_cum[k] <= x)
		k++;
	/* a run of duplicate chunks lies inside a copy about a chunk longer at each end: the chunks
	 * that straddle the copy's edges differ from the source's */
	uint64_t bytes = rng_range(r, 1ULL << k, (2ULL << k) - 1) + 2 * (uint64_t)p->avg;
	return (bytes + p->block_size / 2) / p->block_size;
}

static uint32_t shift_bytes(const struct plan *p, struct rng *r)
{
	uint64_t x = rng_below(r, p->shift_total);
	size_t lo = 0, hi = p->nshifts - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->shift_cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return p->shift_units[lo] * CONTENT_SHIFT_UNIT;
}

/* The measured shifts in whole units of a block of block_size (a tar's 512-byte headers stay
 * exact; others round to the nearest unit, never 0 or a whole block). 1 when there is nothing to
 * place, -1 out of memory. */
static int plan_make(struct plan *p, const struct dist_cdc *cdc, uint32_t block_size)
{
	memset(p, 0, sizeof *p);
	p->block_size = block_size;
	p->avg = cdc->avg;
	uint32_t units = block_size / CONTENT_SHIFT_UNIT;
	if (!cdc->present || !cdc->sampled_bytes || !cdc->nshifts || cdc->block_size != block_size || units < 2)
		return 1;
	p->share = (double)cdc->shifted_bytes / (double)cdc->sampled_bytes;
	double runs = 0, bytes = 0;
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++) {
		p->run_cum[k] = p->run_total += cdc->run_count[k];
		runs += (double)cdc->run_count[k];
		bytes += (double)cdc->run_bytes[k];
	}
	if (!p->run_total || p->share <= 0)
		return 1;
	p->mean_run = (bytes / runs + 2.0 * cdc->avg) / block_size;
	p->shift_cum = malloc(cdc->nshifts * sizeof *p->shift_cum);
	p->shift_units = malloc(cdc->nshifts * sizeof *p->shift_units);
	if (!p->shift_cum || !p->shift_units)
		return -1;
	for (size_t i = 0; i < cdc->nshifts; i++) {
		uint32_t u = (cdc->shifts[i].shift + CONTENT_SHIFT_UNIT / 2) / CONTENT_SHIFT_UNIT;
		u = u < 1 ? 1 : u > units - 1 ? units - 1 : u > 63 ? 63 : u;
		p->shift_units[p->nshifts] = u;
		p->shift_cum[p->nshifts++] = p->shift_total += cdc->shifts[i].bytes;
	}
	return p->shift_total ? 0 : 1;
}

/* A shifted run decided: in unique extent `ext`, blocks [off, off + len) become copies of B, B + 1..
 * shifted by `shift` bytes. */
struct run {
	size_t ext;
	uint64_t off, len, b;
	uint32_t shift;
};

static int by_place(const void *x, const void *y)
{
	const struct run *a = x, *b = y;
	return a->ext != b->ext ? (a->ext > b->ext) - (a->ext < b->ext) : (a->off > b->off) - (a->off < b->off);
}

static bool is_unique(const struct locality_extent *e)
{
	return !e->zero && e->base >> 62 == 3;
}

/* Which unique extent holds weighted slot x (cum: their running lengths). */
static size_t pick_extent(const uint64_t *cum, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Runs drawn with the measured lengths, each in a unique extent picked in proportion to its
 * length (so long runs land in long stretches, as a copied file does), after the runs already
 * there and a random gap (about as long as spreads the runs over the stretches), until `target`
 * blocks (or 64 picks in a row find no room). */
static size_t draw_runs(const struct locality_layout *l, const struct plan *p, struct rng *r, uint64_t target,
			struct run **out)
{
	size_t nu = 0, cap = 0, n = 0;
	for (size_t i = 0; i < l->n; i++)
		nu += is_unique(&l->ext[i]);
	uint64_t *cum = malloc(nu * sizeof *cum), *used = calloc(nu ? nu : 1, sizeof *used);
	size_t *idx = malloc(nu * sizeof *idx);
	struct run *runs = NULL;
	uint64_t total = 0, placed = 0;
	for (size_t i = 0, j = 0; cum && idx && i < l->n; i++)
		if (is_unique(&l->ext[i])) {
			idx[j] = i;
			cum[j++] = total += l->ext[i].len;
		}
	/* gaps that spread the runs over the stretches: runs take target / total of them */
	double mean_gap = total > target && target ? p->mean_run * (double)(total - target) / (double)target : 0;
	for (unsigned misses = 0; cum && used && idx && total && placed < target && misses < 64;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct run *x = realloc(runs, cap * sizeof *x);
			if (!x)
				break;
			runs = x;
		}
		size_t j = pick_extent(cum, nu, rng_below(r, total)), e = idx[j];
		uint64_t room = l->ext[e].len - used[j];
		if (!room) {
			misses++;
			continue;
		}
		misses = 0;
		uint64_t spread = (uint64_t)(2 * mean_gap), len = run_blocks(p, r);
		uint64_t gap = rng_below(r, (spread < room / 4 ? spread : room / 4) + 1);
		len = len < room - gap ? len : room - gap;
		if (!len)
			continue;
		runs[n++] = (struct run){e, used[j] + gap, len, 0, shift_bytes(p, r)};
		used[j] += gap + len;
		placed += len;
	}
	free(cum);
	free(idx);
	free(used);
	if (n)
		qsort(runs, n, sizeof *runs, by_place);
	*out = runs;
	return n;
}

/* Is every block of the run new: no earlier run made the same (B, shift)? Then taken (all shifted
 * ids so far) gains them. Two runs over the same sequence at the same shift would be duplicates,
 * not the unique blocks they replace. 1 yes, 0 no, -1 out of memory. */
static int claim(struct u64map *taken, const struct run *x)
{
	for (uint64_t k = 0; k < x->len; k++)
		if (u64map_find(taken, content_shifted_id(x->b + k, x->shift)))
			return 0;
	for (uint64_t k = 0; k < x->len; k++)
		if (!u64map_at(taken, content_shifted_id(x->b + k, x->shift)))
			return -1;
	return 1;
}

/* Each run's source: a sequence of B - 1, B, .. of an extent that stays as it is (not a unique
 * extent with runs in it), at least one block longer than the run if one is found in 8 tries
 * (else the run is cut to the longest seen), and not a sequence another run copied at its shift
 * (else the run is dropped: len 0). 0, or -1 out of memory. */
static int pick_sources(const struct locality_layout *l, struct run *runs, size_t n, struct rng *r)
{
	size_t *src = malloc((l->n ? l->n : 1) * sizeof *src), ns = 0, k = 0;
	struct u64map taken = {0};
	if (!src)
		return -1;
	for (size_t i = 0; i < l->n; i++) {
		while (k < n && runs[k].ext < i)
			k++;
		const struct locality_extent *e = &l->ext[i];
		if (!e->zero && e->len >= 2 && !content_is_shifted(e->base) && !(k < n && runs[k].ext == i))
			src[ns++] = i;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		uint64_t want = runs[i].len;
		runs[i].len = 0;
		for (int t = 0; ns && t < 8; t++) {
			const struct locality_extent *e = &l->ext[src[rng_below(r, ns)]];
			struct run x = runs[i];
			x.len = want < e->len - 1 ? want : e->len - 1;
			x.b = e->base + rng_below(r, e->len - x.len) + 1;
			if (x.len < want / 2 && t < 7)
				continue; /* a longer source may come */
			if ((rc = claim(&taken, &x)) != 0) {
				runs[i] = x;
				break;
			}
		}
	}
	u64map_free(&taken);
	free(src);
	return rc < 0 ? -1 : 0;
}

/* The layout again with the runs in place: unique extents split around them. */
static struct locality_extent *rebuild(const struct locality_layout *l, const struct run *runs, size_t n, size_t *count,
				       struct locality_stats *st)
{
	struct locality_extent *out = malloc((l->n + 2 * n) * sizeof *out);
	size_t m = 0, k = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		struct locality_extent e = l->ext[i];
		uint64_t pos = 0;
		for (; k < n && runs[k].ext == i; k++) {
			const struct run *x = &runs[k];
			if (!x->len)
				continue;
			if (x->off > pos)
				out[m++] = (struct locality_extent){e.start + pos, e.base + pos, (uint32_t)(x->off - pos), 0};
			out[m++] = (struct locality_extent){e.start + x->off, content_shifted_id(x->b, x->shift), (uint32_t)x->len, 0};
			st->shifted_runs++;
			st->shifted_blocks += x->len;
			pos = x->off + x->len;
		}
		if (pos < e.len)
			out[m++] = (struct locality_extent){e.start + pos, e.base + pos, (uint32_t)(e.len - pos), e.zero};
	}
	*count = m;
	return out;
}

int shifted_place(struct locality_layout *l, const struct dist_cdc *cdc, uint32_t block_size, uint64_t seed)
{
	struct plan p;
	int rc = plan_make(&p, cdc, block_size);
	struct run *runs = NULL;
	if (rc)
		goto out;
	/* the copies, edges and all, that leave the measured share in whole duplicate chunks; at most
	 * 9 in 10 unique blocks (the rest stay new data) */
	uint64_t unique = 0, nonzero = 0;
	for (size_t i = 0; i < l->n; i++) {
		unique += is_unique(&l->ext[i]) ? l->ext[i].len : 0;
		nonzero += l->ext[i].zero ? 0 : l->ext[i].len;
	}
	/* [cdc 1]'s share is of the non-zero chunks' bytes */
	double want = p.share * (double)nonzero * p.mean_run / (p.mean_run - 2.0 * p.avg / block_size);
	uint64_t target = (uint64_t)(want < 0.9 * (double)unique ? want : 0.9 * (double)unique);
	struct rng r;
	rng_seed(&r, seed ^ 0x7368696674ULL /* "shift" */);
	size_t n = draw_runs(l, &p, &r, target, &runs);
	size_t count;
	if (pick_sources(l, runs, n, &r)) {
		rc = -1;
		goto out;
	}
	struct locality_extent *ext = rebuild(l, runs, n, &count, &l->stats);
	if (!ext) {
		rc = -1;
		goto out;
	}
	free(l->ext);
	l->ext = ext;
	l->n = count;
out:
	free(p.shift_cum);
	free(p.shift_units);
	free(runs);
	return rc < 0 ? -1 : 0;
}
