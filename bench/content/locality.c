/* locality.c - lay the scaled contents out as a dataset's stream is: stretches of new data, runs
 * of copies of earlier sequences (whole groups, in order), zero runs; lengths from [locality]. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/content.h"
#include "bench/content/dupgen.h"
#include "bench/content/locality.h"
#include "lib/rng.h"

/* ---- lengths drawn from a histogram of [2^k, 2^(k+1)) bins with their mean ---- */

struct len_sampler {
	const struct dist_len_hist *h;
	uint64_t cum[DIST_LEN_BINS], cum_blocks[DIST_LEN_BINS];
	uint64_t total, total_blocks;
};

static void sampler_init(struct len_sampler *s, const struct dist_len_hist *h)
{
	s->h = h;
	s->total = s->total_blocks = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++) {
		s->cum[k] = s->total += h->count[k];
		s->cum_blocks[k] = s->total_blocks += h->blocks[k];
	}
}

/* A stretch's length: its bin in proportion to how many stretches the bin has (per_block: to how
 * many blocks, the length of the stretch a block picked at random lies in), then uniform on
 * [2^k, hi] with hi chosen so the bin's mean length is kept (where the bin allows it). */
static uint64_t sampler_pick(const struct len_sampler *s, struct rng *r, uint64_t fallback, bool per_block)
{
	if (!s->total)
		return fallback;
	const uint64_t *cum = per_block ? s->cum_blocks : s->cum;
	uint64_t x = rng_below(r, per_block ? s->total_blocks : s->total);
	int k = 0;
	while (cum[k] <= x)
		k++;
	uint64_t lo = 1ULL << k, top = (2ULL << k) - 1;
	double mean = (double)s->h->blocks[k] / (double)s->h->count[k];
	double want = 2 * mean - (double)lo;
	uint64_t hi = want <= (double)lo ? lo : want >= (double)top ? top : (uint64_t)(want + 0.5);
	return rng_range(r, lo, hi);
}

static uint64_t sampler_draw(const struct len_sampler *s, struct rng *r, uint64_t fallback)
{
	return sampler_pick(s, r, fallback, false);
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
	uint64_t *zero_runs;       /* their runs' lengths, in the order they are placed */
	size_t nzero_runs, zero_next;
	struct len_sampler news, dups, copies;
	uint64_t new_total, dup_total; /* blocks of each kind to place */
	double dup_mean;           /* of the duplicate runs drawn */
	uint32_t more_pieces;      /* chance, in 2^-20, that a dup run goes on after a piece */
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

/* Split every duplicated row into groups with the copy runs' lengths, each drawn per run or, with
 * chance per_block (in 2^-20), per block; returns the copies the groups make (the copied runs
 * they will be), or UINT64_MAX out of memory. The same rng state gives the same draws. */
static uint64_t draw_groups(struct builder *b, const struct scaled_layout *rows, struct rng r, uint32_t per_block,
			    size_t *cap)
{
	uint64_t copies = 0;
	b->ngroups = 0;
	b->unopened_blocks = 0;
	for (size_t i = 0; i < rows->nrows; i++) {
		const struct scaled_row *row = &rows->rows[i];
		if (row->first_id == CONTENT_ZERO || row->copies == 1)
			continue;
		for (uint64_t done = 0; done < row->contents;) {
			bool by_block = rng_below(&r, 1u << 20) < per_block;
			uint64_t len = sampler_pick(&b->copies, &r, 1, by_block);
			if (len > row->contents - done)
				len = row->contents - done;
			if (len > UINT32_MAX)
				len = UINT32_MAX;
			if (b->ngroups == *cap) {
				*cap = *cap ? *cap * 2 : 1024;
				struct group *g = realloc(b->groups, *cap * sizeof *g);
				if (!g)
					return UINT64_MAX;
				b->groups = g;
			}
			b->groups[b->ngroups++] = (struct group){row->first_id + done, (uint32_t)len, row->copies};
			b->unopened_blocks += len;
			copies += row->copies - 1;
			done += len;
		}
	}
	return copies;
}

/* What draw_groups' copies would be, estimated from at most CALIB_CONTENTS contents per row
 * (scaled to the row): the bisection then costs the same for a terabyte as for a gigabyte. */
#define CALIB_CONTENTS (1u << 16)
static double count_copies(const struct builder *b, const struct scaled_layout *rows, struct rng r, uint32_t per_block)
{
	double copies = 0;
	for (size_t i = 0; i < rows->nrows; i++) {
		const struct scaled_row *row = &rows->rows[i];
		if (row->first_id == CONTENT_ZERO || row->copies == 1)
			continue;
		uint64_t upto = row->contents < CALIB_CONTENTS ? row->contents : CALIB_CONTENTS, groups = 0, done = 0;
		while (done < upto) {
			bool by_block = rng_below(&r, 1u << 20) < per_block;
			uint64_t len = sampler_pick(&b->copies, &r, 1, by_block);
			done += len < row->contents - done ? len : row->contents - done;
			groups++;
		}
		copies += (double)groups * (double)row->contents / (double)done * (double)(row->copies - 1);
	}
	return copies;
}

/* The groups, then shuffled: the order groups are first written in is random, so two groups
 * copied one after the other are rarely adjacent at their sources (that would join their copies
 * into one longer sequence). The lengths are drawn per run, but a row of few contents copied many
 * times cannot hold the long runs the data had there, and its short groups, each copied as often,
 * make more copied runs than the data has (fewer duplicates continuing a source): so a share of
 * the draws is per block, the share (bisected) whose groups make the data's copied runs, scaled. */
static int make_groups(struct builder *b, const struct scaled_layout *rows, uint64_t seed)
{
	uint64_t copy_blocks = 0;
	for (size_t i = 0; i < rows->nrows; i++) {
		const struct scaled_row *row = &rows->rows[i];
		if (row->first_id == CONTENT_ZERO) {
			b->zero_first_left = true;
			b->zero_left = row->copies - 1;
		} else if (row->copies == 1) { /* the same ids as the scattered layout's unique instances */
			b->unique_base = row->first_id;
			b->unique_next = row->start;
			b->unique_left = row->contents;
		} else {
			copy_blocks += (row->copies - 1) * row->contents;
		}
	}
	struct rng r;
	rng_split(&r, seed, 0x47524f555053ULL); /* "GROUPS" */
	double target = b->copies.total_blocks ? (double)copy_blocks * (double)b->copies.total /
							 (double)b->copies.total_blocks : 0;
	size_t cap = 0;
	uint32_t lo = 0, hi = 1u << 20, best = 0;
	double best_off = -1;
	for (int step = 0; step < 12 && target > 0; step++) {
		uint32_t mid = lo + (hi - lo) / 2;
		double off = count_copies(b, rows, r, mid) - target;
		if (best_off < 0 || (off < 0 ? -off : off) < best_off) {
			best_off = off < 0 ? -off : off;
			best = mid;
		}
		if (off > 0)
			lo = mid; /* too many copied runs: more draws per block */
		else
			hi = mid;
	}
	if (draw_groups(b, rows, r, best, &cap) == UINT64_MAX)
		return -1;
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

/* The zero copies' runs, drawn per block rather than per run: each length bin gets the share of
 * the zero copies its blocks hold in the data (cumulative rounding: the shares sum to the copies
 * exactly), cut into runs of the bin's mean length, and the runs are shuffled. A few long runs
 * that hold most zero blocks (free pages of a database, an unused disk area) are then always
 * there, as long as measured; drawn run by run they came out by chance or not at all. */
static int make_zero_runs(struct builder *b, const struct dist_len_hist *h)
{
	uint64_t zeros = b->zero_left, all = 0, placed = 0, cum = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++)
		all += h->blocks[k];
	size_t cap = 0;
	for (int k = 0; k < DIST_LEN_BINS && zeros; k++) {
		if (!all || !h->count[k])
			continue;
		cum += h->blocks[k];
		uint64_t upto = cum == all ? zeros : (uint64_t)((double)zeros * (double)cum / (double)all + 0.5);
		uint64_t share = upto > placed ? upto - placed : 0;
		placed += share;
		double mean = (double)h->blocks[k] / (double)h->count[k];
		uint64_t n = (uint64_t)((double)share / mean + 0.5);
		if (share && !n)
			n = 1;
		if (b->nzero_runs + n > cap) {
			cap = (b->nzero_runs + n) * 2;
			uint64_t *z = realloc(b->zero_runs, cap * sizeof *z);
			if (!z)
				return -1;
			b->zero_runs = z;
		}
		for (uint64_t i = 0; i < n; i++)
			b->zero_runs[b->nzero_runs++] = share / n + (i < share % n);
	}
	if (placed < zeros) { /* no zero runs measured: the zero copies one by one */
		uint64_t *z = realloc(b->zero_runs, (b->nzero_runs + (zeros - placed)) * sizeof *z);
		if (!z)
			return -1;
		b->zero_runs = z;
		while (placed++ < zeros)
			b->zero_runs[b->nzero_runs++] = 1;
	}
	for (size_t i = b->nzero_runs; i > 1; i--) {
		size_t j = rng_below(&b->r, i);
		uint64_t t = b->zero_runs[i - 1];
		b->zero_runs[i - 1] = b->zero_runs[j];
		b->zero_runs[j] = t;
	}
	return 0;
}

static void open_group(struct builder *b)
{
	struct group *g = &b->groups[b->opened];
	g->copies_left--;
	b->unopened_blocks -= g->len;
	if (g->copies_left) {
		pool_add(&b->pool, b->opened, (int64_t)g->copies_left);
		b->pool_blocks += g->copies_left * g->len;
	}
	b->opened++;
}

/* How far the duplicates are behind the new blocks, as the ratio of the shares left of each (at
 * most 4, at least 1/4). Duplicate runs behind are longer than drawn by that many mean lengths
 * less one (not a multiple: a long draw would make a run longer than any the data had), ahead
 * they are shorter in that ratio, so that both kinds run out together, instead of the last runs
 * of one joining into one as long as all that is left of it once the other is all written. */
static double behind(const struct builder *b)
{
	uint64_t dups_left = b->dup_total - b->l->stats.dup_blocks;
	if (!b->new_total || !b->dup_total || !dups_left)
		return 1;
	double x = ((double)dups_left / (double)b->dup_total) / ((double)(new_left(b) + 1) / (double)b->new_total);
	return x < 0.25 ? 0.25 : x > 4 ? 4 : x;
}

/* A stretch of first occurrences as long as drawn: groups' first instances and unique contents,
 * interleaved in proportion to what is left of each; the zero block's first occurrence comes in
 * the first. A group's first instance is never cut (its copies' sources must follow one
 * another): one that does not fit in what is left of the stretch gives its place to unique
 * contents, or ends the stretch, and opens the next one (unless it is longer than a whole one). */
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
		bool group = rng_below(&b->r, b->unique_left + b->unopened_blocks) < b->unopened_blocks;
		const struct group *g = &b->groups[b->opened];
		bool fits = group && g->len <= want - filled;
		/* a group that does not fit waits, unless only groups are left: then it opens a stretch */
		if (fits || (group && !b->unique_left)) {
			if (!fits && filled)
				break;
			if (emit(b, g->first_id, g->len, false))
				return -1;
			filled += g->len;
			open_group(b);
			continue;
		}
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
	b->l->stats.new_stretches++;
	b->l->stats.first_blocks += filled;
	return 0;
}

/* A whole copy of a group already written, picked in proportion to the copies each still owes: of
 * a few draws, the longest that fits in `room` (one that fills at least half of it ends the
 * search). None fits: a run's first copy is the shortest drawn, whole (a copy cut in two is two
 * copied runs where the data had one: fewer duplicates continuing a source); a later one is not
 * placed and the run ends a little short. Returns 0, 1 (nothing placed) or -1 out of memory. */
#define COPY_FIT_TRIES 4 /* 16 fitted no better and built a 1 TiB layout in twice the time */
static int copy_piece(struct builder *b, uint64_t room, bool first, uint64_t *filled)
{
	size_t best = SIZE_MAX, shortest = SIZE_MAX;
	for (int tries = 0; tries < COPY_FIT_TRIES; tries++) {
		size_t i = pool_find(&b->pool, rng_below(&b->r, b->pool.total));
		uint32_t len = b->groups[i].len;
		if (shortest == SIZE_MAX || len < b->groups[shortest].len)
			shortest = i;
		if (len <= room && (best == SIZE_MAX || len > b->groups[best].len))
			best = i;
		if (len <= room && 2 * (uint64_t)len >= room)
			break;
	}
	if (best == SIZE_MAX && !first)
		return 1;
	struct group *g = &b->groups[best == SIZE_MAX ? shortest : best];
	if (emit(b, g->first_id, g->len, false))
		return -1;
	g->copies_left--;
	pool_add(&b->pool, (size_t)(g - b->groups), -1);
	b->pool_blocks -= g->len;
	*filled += g->len;
	return 0;
}

/* A run of duplicates about as long as drawn (steered, see behind()): whole group copies that fit
 * (copy_piece) and zero runs, as many pieces as the data's runs hold on average. A zero run is
 * never cut: one longer than what is left gives its place to a copy, or ends the run and opens
 * the next (a zero run longer than the drawn length makes the run that long), and two are not
 * put side by side while copies are left (they would join into one longer run). */
static int dup_run(struct builder *b)
{
	double lag = behind(b);
	uint64_t want = sampler_draw(&b->dups, &b->r, 1), filled = 0;
	if (lag > 1)
		want += (uint64_t)((lag - 1) * b->dup_mean + 0.5);
	else if (lag < 1)
		want = (uint64_t)((double)want * lag + 0.5) ? (uint64_t)((double)want * lag + 0.5) : 1;
	bool after_zero = false;
	while (filled < want && dup_ready(b)) {
		/* Zero runs and copies in proportion to the runs left of each (by blocks, the few long
		 * zero runs would come first, in runs of their own, and the copies all after). */
		uint64_t zero = b->zero_first_left ? 0 : b->nzero_runs - b->zero_next;
		uint64_t copies = b->pool.total;
		bool pick_zero = zero && !(after_zero && copies) &&
				 rng_below(&b->r, zero + copies) < zero;
		if (pick_zero) {
			uint64_t len = b->zero_runs[b->zero_next];
			if (after_zero) /* no copies left to put between them */
				break;
			if (filled && len > want - filled) {
				if (!copies)
					break;
				pick_zero = false;
			} else {
				if (emit(b, 0, len, true))
					return -1;
				b->zero_next++;
				b->zero_left -= len;
				b->l->stats.zero_dups += len;
				filled += len;
			}
		}
		if (!pick_zero) {
			int rc = copy_piece(b, want - filled, !filled, &filled);
			if (rc < 0)
				return -1;
			if (rc)
				break;
		}
		after_zero = pick_zero;
		/* As many pieces per run as the data has (a dup run is mostly one copied file), unless
		 * the duplicates are behind. */
		if (lag < 1.25 && rng_below(&b->r, 1u << 20) >= b->more_pieces)
			break;
	}
	b->l->stats.dup_runs++;
	b->l->stats.dup_blocks += filled;
	return 0;
}

/* The data's pieces (copied runs and zero runs) per duplicate run, r >= 1, as the chance 1 - 1/r
 * that a run goes on after a piece: the runs then hold r pieces on average (geometric). */
static uint32_t more_pieces(const struct dist_locality *loc)
{
	uint64_t runs = 0, pieces = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++) {
		runs += loc->dup_runs.count[k];
		pieces += loc->copy_runs.count[k] + loc->zero_runs.count[k];
	}
	if (!runs || pieces <= runs)
		return 0;
	return (uint32_t)((double)(1u << 20) * (1 - (double)runs / (double)pieces));
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
	b.more_pieces = more_pieces(loc);
	b.dup_mean = b.dups.total ? (double)b.dups.total_blocks / (double)b.dups.total : 1;
	int rc = make_groups(&b, rows, seed);
	/* No zero runs measured (no zero duplicates in the data analysed): the duplicate runs' lengths. */
	bool zero_runs = false;
	for (int k = 0; k < DIST_LEN_BINS; k++)
		zero_runs |= loc->zero_runs.count[k] != 0;
	if (!rc)
		rc = make_zero_runs(&b, zero_runs ? &loc->zero_runs : &loc->dup_runs);
	b.new_total = new_left(&b);
	b.dup_total = b.zero_left;
	for (size_t i = 0; i < b.ngroups; i++)
		b.dup_total += (b.groups[i].copies_left - 1) * b.groups[i].len;
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
	free(b.zero_runs);
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
