/* dupgen.c - sampling content ids from a duplicate distribution in O(log rows) per write:
 * one draw over T picks unique-or-row exactly in proportion, a second picks the content. */
#include <stdlib.h>
#include "content.h"
#include "dupgen.h"

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
