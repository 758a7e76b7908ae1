/* dupgen.c - content ids from a duplicate distribution: per-write sampling in O(log rows), and
 * the scaled layout (exact scaling, a keyed permutation of instances, owed-copy overwrites). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/compmodel.h"
#include "lib/content.h"
#include "bench/content/dupgen.h"
#include "bench/content/shifted.h"

int dupgen_build(struct dupgen_table *t, const struct dist *d)
{
	struct dist_rows rows;
	dist_compute_rows(d, &rows);
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++)
		n += d->rows[i].dups > 0;
	*t = (struct dupgen_table){0};
	t->cum = calloc(n + 1, sizeof *t->cum);
	t->first_id = calloc(n + 1, sizeof *t->first_id);
	t->blocks = calloc(n + 1, sizeof *t->blocks);
	t->dups = calloc(n + 1, sizeof *t->dups);
	if (!t->cum || !t->first_id || !t->blocks || !t->dups) {
		dupgen_free(t);
		return -1;
	}
	uint64_t acc = rows.unique_blocks, next_id = 1;
	for (size_t i = 0, k = 0; i < d->nrows; i++) {
		const struct dist_row *r = &d->rows[i];
		if (r->dups == 0)
			continue;
		acc += r->blocks * (r->dups + 1);
		t->cum[k] = acc;
		t->first_id[k] = next_id;
		t->blocks[k] = r->blocks;
		t->dups[k] = r->dups;
		next_id += r->blocks;
		k++;
	}
	t->nrows = n;
	t->unique_weight = rows.unique_blocks;
	t->total = rows.total_blocks;
	return 0;
}

void dupgen_free(struct dupgen_table *t)
{
	free(t->cum);
	free(t->first_id);
	free(t->blocks);
	free(t->dups);
	*t = (struct dupgen_table){0};
}

void dupgen_init(struct dupgen *g, const struct dupgen_table *t, uint64_t worker)
{
	memset(g, 0, sizeof *g);
	g->t = t;
	g->worker = worker;
	g->unique_next = 0;
}

size_t dupgen_row_of(const struct dupgen_table *t, uint64_t x)
{
	size_t lo = 0, hi = t->nrows - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x < t->cum[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint64_t dupgen_next(struct dupgen *g, struct rng *r)
{
	const struct dupgen_table *t = g->t;
	uint64_t x = rng_below(r, t->total);
	if (x < t->unique_weight || t->nrows == 0)
		return content_unique_id(g->worker, g->unique_next++);
	size_t row = dupgen_row_of(t, x);
	return t->first_id[row] + rng_below(r, t->blocks[row]);
}

/* ---- scaled ---- */

#define LAYOUT_UNIQUE_BIT (1ULL << 62) /* layout uniques; overwrite uniques keep it clear */

/* Append a row, growing the array. */
static int push_row(struct scaled_layout *l, size_t *cap, struct scaled_row row)
{
	if (l->nrows == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct scaled_row *r = realloc(l->rows, n * sizeof *r);
		if (!r)
			return -1;
		l->rows = r;
		*cap = n;
	}
	l->rows[l->nrows++] = row;
	return 0;
}

/* What scaled_build carries from one step to the next. */
struct scaler {
	struct scaled_layout *l;
	size_t cap;
	long double scale;     /* n / T */
	uint64_t remaining;    /* blocks not yet given to a row */
	uint64_t next_id;      /* the next duplicated content's id */
	uint64_t zero_blocks;  /* the zero block's copies in the dataset, until its row has it */
};

static int push_dominant(struct scaler *s, uint64_t copies, uint64_t id, unsigned cls)
{
	struct scaled_layout *l = s->l;
	if (push_row(l, &s->cap, (struct scaled_row){copies, 1, 0, id, cls}))
		return -1;
	s->remaining -= copies;
	l->dominant_contents++;
	l->dominant_blocks += copies;
	if (copies > l->dominant_max_copies)
		l->dominant_max_copies = copies;
	return 0;
}

/* Dominant contents - more copies than 1/64 of the run - cannot keep their copy count (one would
 * be a large share of a small run, or not fit at all): each keeps its share of the blocks
 * instead, c' = c * n / T, rounded with error feedback so the total is exact. The zero block
 * (from "# zero-blocks:") is one of them when it has that many copies; its row loses it. */
static int scale_dominant(struct scaler *s, const struct dist *d)
{
	struct scaled_layout *l = s->l;
	if (s->zero_blocks > l->dominant_above) {
		uint64_t z = (uint64_t)llroundl((long double)s->zero_blocks * s->scale);
		if (z > s->remaining)
			z = s->remaining;
		if (z && push_dominant(s, z, CONTENT_ZERO, compmodel_class(s->zero_blocks)))
			return -1;
		l->zero_copies = z;
	}
	long double carry = 0;
	for (size_t i = d->nrows; i-- > 0;) { /* rows are sorted by dups ascending: heaviest first */
		uint64_t c = d->rows[i].dups + 1, b = d->rows[i].blocks;
		if (c <= l->dominant_above)
			break;
		if (c == s->zero_blocks) {
			s->zero_blocks = 0;
			b--;
		}
		for (uint64_t j = 0; j < b; j++) {
			long double want = (long double)c * s->scale + carry;
			uint64_t copies = want >= 2 ? (uint64_t)llroundl(want) : 0;
			if (copies > s->remaining)
				copies = s->remaining;
			carry = want - (long double)copies;
			if (copies >= 2 && push_dominant(s, copies, s->next_id++, compmodel_class(c)))
				return -1;
		}
	}
	return 0;
}

/* `take` contents of c copies for a regular row. The zero block, when it is not dominant, is one
 * of its row's contents like any other: it keeps its copies, and is present when its row keeps
 * at least one content (scaling it by its share instead made a 4-copy zero block of a 6-block
 * dataset two thirds of any larger run: D 66.7 % for the dataset's 50 %). Its row goes first, so
 * rows stay in ascending first_id. */
static int push_regular(struct scaler *s, uint64_t c, uint64_t take)
{
	struct scaled_layout *l = s->l;
	if (take && c == s->zero_blocks) {
		s->zero_blocks = 0;
		if (push_row(l, &s->cap, (struct scaled_row){c, 1, 0, CONTENT_ZERO, compmodel_class(c)}))
			return -1;
		memmove(l->rows + 1, l->rows, (l->nrows - 1) * sizeof *l->rows);
		l->rows[0] = (struct scaled_row){c, 1, 0, CONTENT_ZERO, compmodel_class(c)};
		l->zero_copies = c;
		take--;
	}
	if (take && push_row(l, &s->cap, (struct scaled_row){c, take, 0, s->next_id, compmodel_class(c)}))
		return -1;
	s->next_id += take;
	return 0;
}

/* The other duplicated rows keep their copies and scale their number of contents, heaviest
 * first, rounded with error feedback and a seeded random offset: unbiased, so a content of
 * thousands of copies with an expected count below one is present with that probability, and
 * the overshoot or shortfall moves to the next (similar) rows, not to the unique row. */
static int scale_regular(struct scaler *s, const struct dist *d, struct rng *r)
{
	long double carry = 0;
	for (size_t i = d->nrows; i-- > 0;) {
		uint64_t c = d->rows[i].dups + 1, b = d->rows[i].blocks;
		if (c > s->l->dominant_above || c < 2)
			continue;
		long double want = (long double)b * c * s->scale + carry;
		long double kk = floorl(want / c + rng_double(r));
		if (kk < 0)
			kk = 0;
		uint64_t fit = s->remaining / c;
		uint64_t take = kk > (long double)fit ? fit : (uint64_t)kk;
		carry = want - (long double)take * c;
		s->remaining -= take * c;
		if (push_regular(s, c, take))
			return -1;
	}
	return 0;
}

int scaled_build(struct scaled_layout *l, const struct dist *d, uint64_t zero_blocks, uint64_t n, uint64_t seed)
{
	memset(l, 0, sizeof *l);
	if (!n)
		return -1;
	struct dist_rows dr;
	dist_compute_rows(d, &dr);
	struct rng r;
	rng_split(&r, seed, 0x5343414c45ULL); /* "SCALE" */
	struct scaler s = {l, 0, (long double)n / (long double)dr.total_blocks, n, 1,
			   dr.total_blocks ? zero_blocks : 0};
	l->dominant_above = n / 64 > 2 ? n / 64 : 2;
	l->dataset_blocks = dr.total_blocks;
	if (scale_dominant(&s, d) || scale_regular(&s, d, &r))
		return -1;
	/* The unique row takes the rest, so the total is exactly n. */
	if (s.remaining &&
	    push_row(l, &s.cap, (struct scaled_row){1, s.remaining, 0, LAYOUT_UNIQUE_BIT | CONTENT_UNIQUE_BIT, 0}))
		return -1;
	uint64_t start = 0;
	for (size_t i = 0; i < l->nrows; i++) {
		l->rows[i].start = start;
		start += l->rows[i].contents * l->rows[i].copies;
	}
	l->n = n;
	unsigned bits = 1;
	while (bits < 64 && (1ULL << bits) < n)
		bits++;
	l->half_bits = (bits + 1) / 2;
	for (int i = 0; i < 4; i++)
		l->keys[i] = rng_next(&r);
	return 0;
}

static int by_dups(const void *a, const void *b)
{
	uint64_t x = ((const struct dist_row *)a)->dups, y = ((const struct dist_row *)b)->dups;
	return x < y ? -1 : x > y;
}

int scaled_to_dist(const struct scaled_layout *l, struct dist *out)
{
	memset(out, 0, sizeof *out);
	struct dist_row *rows = malloc((l->nrows ? l->nrows : 1) * sizeof *rows);
	if (!rows)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < l->nrows; i++)
		if (l->rows[i].contents)
			rows[n++] = (struct dist_row){l->rows[i].copies - 1, l->rows[i].contents};
	qsort(rows, n, sizeof *rows, by_dups);
	size_t m = 0; /* dominant contents of equal copies share a row */
	for (size_t i = 0; i < n; i++) {
		if (m && rows[m - 1].dups == rows[i].dups)
			rows[m - 1].blocks += rows[i].blocks;
		else
			rows[m++] = rows[i];
	}
	struct dd_err err;
	int rc = dist_from_rows(rows, m, out, &err);
	free(rows);
	if (rc)
		return -1;
	out->zero_blocks = l->zero_copies;
	return 0;
}

int scaled_build_runs(struct scaled_layout *l, const struct dist_locality *loc, const struct dist_cdc *cdc,
		      uint32_t block_size, uint64_t seed)
{
	if (locality_build(&l->runs, l, loc, seed) || (cdc && shifted_place(&l->runs, cdc, block_size, seed)))
		return -1;
	l->has_runs = true;
	return 0;
}

void scaled_free(struct scaled_layout *l)
{
	free(l->rows);
	locality_free(&l->runs);
	memset(l, 0, sizeof *l);
}

content_recipe dupgen_recipe(const void *recipes, uint64_t id)
{
	const struct dupgen_recipes *r = recipes;
	if (!r->model || id == CONTENT_ZERO)
		return CONTENT_RECIPE_PLAIN;
	return compmodel_pick(r->model, dupgen_class(r->g, id), r->seed, id);
}

unsigned dupgen_class(const struct dupgen *g, uint64_t id)
{
	if (id & CONTENT_UNIQUE_BIT || id == CONTENT_ZERO)
		return 0;
	if (g->layout) { /* rows are in ascending first_id: the zero row, dominant, regular, unique */
		const struct scaled_layout *l = g->layout;
		size_t lo = 0, hi = l->nrows - 1;
		while (lo < hi) {
			size_t mid = lo + (hi - lo + 1) / 2;
			if (l->rows[mid].first_id <= id)
				lo = mid;
			else
				hi = mid - 1;
		}
		return l->rows[lo].cls;
	}
	const struct dupgen_table *t = g->t;
	if (!t->nrows)
		return 0;
	size_t lo = 0, hi = t->nrows - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (t->first_id[mid] <= id)
			lo = mid;
		else
			hi = mid - 1;
	}
	return compmodel_class(t->dups[lo] + 1);
}

/* Four Feistel rounds on 2*half_bits bits: a bijection; cycle-walking keeps it inside [0, n)
 * (at most ~4 steps on average since 2^(2*half_bits) < 4n). */
static inline uint64_t feistel(const struct scaled_layout *l, uint64_t x)
{
	unsigned h = l->half_bits;
	uint64_t mask = (1ULL << h) - 1, left = x >> h, right = x & mask;
	for (int i = 0; i < 4; i++) {
		uint64_t f = rng_mix64(right ^ l->keys[i]) & mask;
		uint64_t t = right;
		right = left ^ f;
		left = t;
	}
	return (left << h) | right;
}

uint64_t scaled_permute(const struct scaled_layout *l, uint64_t slot)
{
	uint64_t x = slot;
	do
		x = feistel(l, x);
	while (x >= l->n);
	return x;
}

uint64_t scaled_content(const struct scaled_layout *l, uint64_t instance)
{
	size_t lo = 0, hi = l->nrows - 1;
	while (lo < hi) { /* the last row whose start <= instance */
		size_t mid = lo + (hi - lo + 1) / 2;
		if (l->rows[mid].start <= instance)
			lo = mid;
		else
			hi = mid - 1;
	}
	const struct scaled_row *row = &l->rows[lo];
	if (row->copies == 1)
		return row->first_id | instance; /* every unique instance its own id */
	if (row->first_id == CONTENT_ZERO)
		return CONTENT_ZERO;
	return row->first_id + (instance - row->start) / row->copies;
}

void dupgen_init_scaled(struct dupgen *g, const struct scaled_layout *l, uint64_t worker)
{
	memset(g, 0, sizeof *g);
	g->layout = l;
	g->worker = worker;
}

uint64_t dupgen_fresh_unique(struct dupgen *g)
{
	return content_unique_id(g->worker, g->unique_next++);
}

uint64_t dupgen_overwrite(struct dupgen *g, uint64_t victim)
{
	/* The victim's copy disappears: if it was a duplicated content, one copy of it is now owed
	 * and a later write re-creates it (elsewhere). A unique victim owes nothing. */
	bool owes = !(victim & CONTENT_UNIQUE_BIT);
	/* Pay the oldest debt other than the victim's own content (the block must change), a zero
	 * block's first: the zero block is most data's one dominant content, and its debts left unpaid
	 * would fill the queue until zero victims can only be rewritten unchanged. The victim's debt
	 * takes the paid one's place. */
	unsigned pay = g->owed_len;
	/* a zero debt that is not the victim's own: only then is it worth looking past the first */
	bool zero_payable = g->owed_zero && victim != CONTENT_ZERO;
	for (unsigned i = 0; i < g->owed_len; i++) {
		if (g->owed[i] == victim)
			continue;
		if (pay == g->owed_len)
			pay = i;
		if (!zero_payable || g->owed[i] == CONTENT_ZERO) {
			pay = i;
			break;
		}
	}
	if (pay < g->owed_len) {
		uint64_t id = g->owed[pay];
		g->owed_zero -= id == CONTENT_ZERO;
		if (owes) {
			g->owed[pay] = victim;
			g->owed_zero += victim == CONTENT_ZERO;
		} else {
			memmove(&g->owed[pay], &g->owed[pay + 1], (g->owed_len - pay - 1) * sizeof *g->owed);
			g->owed_len--;
		}
		return id;
	}
	if (!owes)
		return dupgen_fresh_unique(g);
	if (g->owed_len < DUPGEN_QUEUE) {
		g->owed[g->owed_len++] = victim;
		g->owed_zero += victim == CONTENT_ZERO;
		return dupgen_fresh_unique(g);
	}
	/* All that is owed is the victim's own content, as many copies as are held (a sweep through a
	 * long run of one content: free space's zero block): the block is rewritten unchanged, so the
	 * live data never drifts further than DUPGEN_QUEUE copies and no debt is ever dropped. */
	return victim;
}
