/* locality.c - lay the scaled contents out as a dataset's stream is: stretches of new data, runs
 * of copies of earlier sequences (whole groups, in order), zero runs; lengths from [locality]. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/content.h"
#include "bench/content/dupgen.h"
#include "bench/content/locality.h"
#include "lib/rng.h"

/* ---- lengths drawn from a histogram of [2^k, 2^(k+1)) bins with their mean ---- */

struct len_sampler {
	const struct dist_len_hist *h;
	uint64_t cum[DIST_LEN_BINS];
	uint64_t total;
};

static void sampler_init(struct len_sampler *s, const struct dist_len_hist *h)
{
	s->h = h;
	s->total = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++)
		s->cum[k] = s->total += h->count[k];
}

/* A stretch's length: its bin in proportion to how many stretches the bin has, then uniform on
 * [2^k, hi] with hi chosen so the bin's mean length is kept (where the bin allows it). */
static uint64_t sampler_draw(const struct len_sampler *s, struct rng *r, uint64_t fallback)
{
	if (!s->total)
		return fallback;
	uint64_t x = rng_below(r, s->total);
	int k = 0;
	while (s->cum[k] <= x)
		k++;
	uint64_t lo = 1ULL << k, top = (2ULL << k) - 1;
	double mean = (double)s->h->blocks[k] / (double)s->h->count[k];
	double want = 2 * mean - (double)lo;
	uint64_t hi = want <= (double)lo ? lo : want >= (double)top ? top : (uint64_t)(want + 0.5);
	return rng_range(r, lo, hi);
}

/* ---- groups: sequences of contents of one row, always stored together and in order ---- */

struct group {
	uint64_t first_id;
	uint32_t len;
	uint64_t copies_left;     /* instances not yet placed */
};

/* Pending copies by group (Fenwick tree over groups in opening order, weighted by the copies
 * each still owes): a duplicate run copies a group with probability proportional to them. */
struct pool {
	uint64_t *tree;
	size_t n;
	uint64_t total;
	unsigned top;              /* the highest power of two <= n */
};

static int pool_init(struct pool *p, size_t n)
{
	p->tree = calloc(n + 1, sizeof *p->tree);
	p->n = n;
	p->total = 0;
	p->top = 1;
	while ((size_t)p->top * 2 <= n)
		p->top *= 2;
	return p->tree ? 0 : -1;
}

static void pool_add(struct pool *p, size_t i, int64_t delta)
{
	p->total += (uint64_t)delta;
	for (size_t k = i + 1; k <= p->n; k += k & -k)
		p->tree[k] += (uint64_t)delta;
}

/* The group holding pending copy number x (0 <= x < total). */
static size_t pool_find(const struct pool *p, uint64_t x)
{
	size_t pos = 0;
	for (unsigned step = p->top; step; step /= 2) {
		if (pos + step <= p->n && p->tree[pos + step] <= x) {
			pos += step;
			x -= p->tree[pos];
		}
	}
	return pos; /* 0-based index of the group */
}

/* ---- building ---- */

struct builder {
	struct locality_layout *l;
	size_t cap;
	uint64_t slot;
	struct rng r;
	struct group *groups;      /* in opening order (shuffled) */
	size_t ngroups, opened;
	uint64_t unopened_blocks;  /* first instances still to place */
	struct pool pool;
	uint64_t pool_blocks;      /* blocks of the pending copies */
	uint64_t unique_base, unique_next, unique_left;
	uint64_t zero_left;        /* zero-block copies still to place (the first one is new data) */
	bool zero_first_left;
	struct len_sampler news, dups, copies, zeros;
};

static int emit(struct builder *b, uint64_t base, uint64_t len, bool zero)
{
	struct locality_layout *l = b->l;
	while (len) {
		uint32_t piece = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
		struct locality_extent *last = l->n ? &l->ext[l->n - 1] : NULL;
		bool joins = last && last->zero == zero && (zero || last->base + last->len == base) &&
			     (uint64_t)last->len + piece <= UINT32_MAX;
		if (joins) {
			last->len += piece;
		} else {
			if (l->n == b->cap) {
				size_t cap = b->cap ? b->cap * 2 : 1024;
				struct locality_extent *e = realloc(l->ext, cap * sizeof *e);
				if (!e)
					return -1;
				l->ext = e;
				b->cap = cap;
			}
			l->ext[l->n++] = (struct locality_extent){b->slot, zero ? 0 : base, piece, zero};
		}
		b->slot += piece;
		if (!zero)
			base += piece;
		len -= piece;
	}
	return 0;
}

/* Split every duplicated row into groups with the copy runs' lengths, then shuffle them: the order
 * groups are first written in is random, so two groups copied one after the other are rarely
 * adjacent at their sources (that would join their copies into one longer sequence). */
static int make_groups(struct builder *b, const struct scaled_layout *rows)
{
	size_t cap = 0;
	for (size_t i = 0; i < rows->nrows; i++) {
		const struct scaled_row *row = &rows->rows[i];
		if (row->first_id == CONTENT_ZERO) {
			b->zero_first_left = true;
			b->zero_left = row->copies - 1;
			continue;
		}
		if (row->copies == 1) { /* the same ids as the scattered layout's unique instances */
			b->unique_base = row->first_id;
			b->unique_next = row->start;
			b->unique_left = row->contents;
			continue;
		}
		for (uint64_t done = 0; done < row->contents;) {
			uint64_t len = sampler_draw(&b->copies, &b->r, 1);
			if (len > row->contents - done)
				len = row->contents - done;
			if (len > UINT32_MAX)
				len = UINT32_MAX;
			if (b->ngroups == cap) {
				cap = cap ? cap * 2 : 1024;
				struct group *g = realloc(b->groups, cap * sizeof *g);
				if (!g)
					return -1;
				b->groups = g;
			}
			b->groups[b->ngroups++] = (struct group){row->first_id + done, (uint32_t)len, row->copies};
			b->unopened_blocks += len;
			done += len;
		}
	}
	for (size_t i = b->ngroups; i > 1; i--) {
		size_t j = rng_below(&b->r, i);
		struct group t = b->groups[i - 1];
		b->groups[i - 1] = b->groups[j];
		b->groups[j] = t;
	}
	return pool_init(&b->pool, b->ngroups);
}

static uint64_t new_left(const struct builder *b)
{
	return b->unique_left + b->unopened_blocks + b->zero_first_left;
}

static uint64_t dup_ready(const struct builder *b)
{
	return b->pool_blocks + (b->zero_first_left ? 0 : b->zero_left);
}

/* A stretch of first occurrences: groups' first instances and unique contents, interleaved in
 * proportion to what is left of each; the zero block's first occurrence comes in the first. */
static int new_stretch(struct builder *b)
{
	uint64_t want = sampler_draw(&b->news, &b->r, 1), filled = 0;
	if (b->zero_first_left) {
		if (emit(b, 0, 1, true))
			return -1;
		b->zero_first_left = false;
		filled++;
	}
	while (filled < want && b->unique_left + b->unopened_blocks) {
		if (rng_below(&b->r, b->unique_left + b->unopened_blocks) < b->unopened_blocks) {
			struct group *g = &b->groups[b->opened];
			if (emit(b, g->first_id, g->len, false))
				return -1;
			g->copies_left--;
			b->unopened_blocks -= g->len;
			if (g->copies_left) {
				pool_add(&b->pool, b->opened, (int64_t)g->copies_left);
				b->pool_blocks += g->copies_left * g->len;
			}
			b->opened++;
			filled += g->len;
		} else {
			uint64_t len = sampler_draw(&b->copies, &b->r, 1);
			if (len > want - filled)
				len = want - filled;
			if (len > b->unique_left)
				len = b->unique_left;
			if (emit(b, b->unique_base | b->unique_next, len, false))
				return -1;
			b->unique_next += len;
			b->unique_left -= len;
			filled += len;
		}
	}
	b->l->stats.new_stretches++;
	b->l->stats.first_blocks += filled;
	return 0;
}

/* A run of duplicates: whole copies of groups already written (picked in proportion to the copies
 * they still owe) and zero runs, in proportion to the blocks left of each. */
static int dup_run(struct builder *b)
{
	uint64_t want = sampler_draw(&b->dups, &b->r, 1), filled = 0;
	while (filled < want && dup_ready(b)) {
		uint64_t zero = b->zero_first_left ? 0 : b->zero_left;
		if (rng_below(&b->r, zero + b->pool_blocks) < zero) {
			uint64_t len = sampler_draw(&b->zeros, &b->r, 1);
			if (len > zero)
				len = zero;
			if (emit(b, 0, len, true))
				return -1;
			b->zero_left -= len;
			b->l->stats.zero_dups += len;
			filled += len;
		} else {
			size_t i = pool_find(&b->pool, rng_below(&b->r, b->pool.total));
			struct group *g = &b->groups[i];
			if (emit(b, g->first_id, g->len, false))
				return -1;
			g->copies_left--;
			pool_add(&b->pool, i, -1);
			b->pool_blocks -= g->len;
			filled += g->len;
		}
	}
	b->l->stats.dup_runs++;
	b->l->stats.dup_blocks += filled;
	return 0;
}

int locality_build(struct locality_layout *out, const struct scaled_layout *rows, const struct dist_locality *loc,
		   uint64_t seed)
{
	memset(out, 0, sizeof *out);
	struct builder b = {.l = out};
	rng_split(&b.r, seed, 0x4c4f43414cULL); /* "LOCAL" */
	sampler_init(&b.news, &loc->new_runs);
	sampler_init(&b.dups, &loc->dup_runs);
	sampler_init(&b.copies, &loc->copy_runs);
	/* No zero runs measured (no zero duplicates in the data analysed): the duplicate runs' lengths. */
	sampler_init(&b.zeros, &loc->zero_runs);
	if (!b.zeros.total)
		sampler_init(&b.zeros, &loc->dup_runs);
	int rc = make_groups(&b, rows);
	while (!rc && (new_left(&b) || dup_ready(&b))) {
		if (new_left(&b))
			rc = new_stretch(&b);
		if (!rc && dup_ready(&b))
			rc = dup_run(&b);
	}
	out->blocks = b.slot;
	out->stats.groups = b.ngroups;
	free(b.groups);
	free(b.pool.tree);
	if (rc || out->blocks != rows->n) {
		locality_free(out);
		return -1;
	}
	return 0;
}

void locality_free(struct locality_layout *l)
{
	free(l->ext);
	memset(l, 0, sizeof *l);
}

uint64_t locality_content(const struct locality_layout *l, uint64_t slot, size_t *cursor)
{
	size_t i = *cursor < l->n ? *cursor : 0;
	const struct locality_extent *e = &l->ext[i];
	if (slot < e->start || slot - e->start >= e->len) {
		if (i + 1 < l->n && slot >= l->ext[i + 1].start && slot - l->ext[i + 1].start < l->ext[i + 1].len) {
			i++;
		} else {
			size_t lo = 0, hi = l->n - 1;
			while (lo < hi) { /* the last extent starting at or before slot */
				size_t mid = lo + (hi - lo + 1) / 2;
				if (l->ext[mid].start <= slot)
					lo = mid;
				else
					hi = mid - 1;
			}
			i = lo;
		}
		*cursor = i;
		e = &l->ext[i];
	}
	return e->zero ? CONTENT_ZERO : e->base + (slot - e->start);
}
