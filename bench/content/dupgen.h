/* dupgen.h - the content-id generator. `sampled` (DEDISbench): each write draws unique-or-duplicate
 * from the distribution. `scaled`: the target holds the distribution scaled to its size, exactly. */
#ifndef DEDIS_BENCH_DUPGEN_H
#define DEDIS_BENCH_DUPGEN_H

#include <stddef.h>
#include <stdint.h>
#include "lib/compmodel.h"
#include "lib/distfile.h"
#include "bench/content/locality.h"
#include "lib/rng.h"

/* Shared, read-only after dupgen_build (built once before the workers fork). */
struct dupgen_table {
	size_t nrows;          /* rows with dups > 0 */
	uint64_t total;        /* T = sum blocks*(dups+1), the draw space */
	uint64_t unique_weight;/* blocks of the dups = 0 row */
	uint64_t *cum;         /* cum[i] = unique_weight + sum_{j<=i} blocks_j*(dups_j+1) */
	uint64_t *first_id;    /* first content id of row i (ids are 1..distinct duplicated contents) */
	uint64_t *blocks;      /* distinct contents in row i */
	uint64_t *dups;        /* duplicates of each content of row i */
};

int dupgen_build(struct dupgen_table *t, const struct dist *d);
void dupgen_free(struct dupgen_table *t);

/* The scaled layout: the distribution scaled to exactly `n` blocks. A row keeps its copies per
 * content (c = dups + 1) and gets k contents, rounded with error feedback in block units and a
 * seeded random offset, so totals are exact and a heavy-tail content (c large, expected k < 1)
 * is present with probability = its expected count. Dominant contents (c > n/64, the zero block
 * when it has that many copies) keep their share of the blocks instead of their copy count. Instances [start, start + k*c)
 * are a row's; instance x is placed on slot perm(x) by a keyed Feistel permutation of [0, n). */
struct scaled_row {
	uint64_t copies;       /* c */
	uint64_t contents;     /* k */
	uint64_t start;        /* first instance */
	uint64_t first_id;     /* content id of its first content (CONTENT_ZERO for the zero row) */
	unsigned cls;          /* copy class of the dataset's contents (dominant rows keep theirs) */
};

struct scaled_layout {
	uint64_t n;            /* blocks (instances) */
	struct scaled_row *rows; /* the zero block, dominant contents, then rows by copies descending, unique
	                          * last: ascending first_id */
	size_t nrows;
	uint64_t zero_copies;  /* copies of the all-zero block (from "# zero-blocks:"), a row of its own:
	                        * its share when dominant, else its dataset copies (or 0, its row
	                        * scaled to no content) */
	unsigned half_bits;    /* Feistel: each half has this many bits; 2*half_bits >= log2(n) */
	uint64_t keys[4];
	/* Copied runs (scaled_build_runs): slot -> content follows the dataset's stream order
	 * instead of the permutation. */
	bool has_runs;
	struct locality_layout runs;
	/* What scaling did, for the summary and the plot's caption: the dominant contents (the zero
	 * block among them) that keep their share of the blocks rather than their copy count. */
	uint64_t dominant_above;     /* a content is dominant above this many copies (n/64) */
	uint64_t dominant_contents;  /* of them, present in the run */
	uint64_t dominant_blocks;    /* blocks they hold in the run */
	uint64_t dominant_max_copies;/* the most copies one of them has in the run */
	uint64_t dataset_blocks;     /* T of the distribution scaled */
};

/* zero_blocks: the distribution's "# zero-blocks: N" (0 if none). */
int scaled_build(struct scaled_layout *l, const struct dist *d, uint64_t zero_blocks, uint64_t n, uint64_t seed);
/* Lay the rows out in copied runs with the distribution's [locality] (locality.h) instead of
 * scattering them, and, with cdc (NULL: none), shifted copies in place of unique blocks
 * (shifted.h): 0, or -1 out of memory. */
int scaled_build_runs(struct scaled_layout *l, const struct dist_locality *loc, const struct dist_cdc *cdc,
		      uint32_t block_size, uint64_t seed);
void scaled_free(struct scaled_layout *l);
/* The scaled layout as a distribution (what the target should hold): 0, or -1 out of memory. */
int scaled_to_dist(const struct scaled_layout *l, struct dist *out);
/* The bijection slot -> instance on [0, n) (and its inverse, for tests). */
uint64_t scaled_permute(const struct scaled_layout *l, uint64_t slot);
/* The content id of instance x. Unique instances get ids no other instance or worker shares. */
uint64_t scaled_content(const struct scaled_layout *l, uint64_t instance);

/* Per worker. */
#define DUPGEN_QUEUE 64
struct dupgen {
	const struct dupgen_table *t;
	const struct scaled_layout *layout; /* NULL: sampled */
	uint64_t worker;
	uint64_t unique_next;
	/* scaled overwrites: contents whose copies were overwritten and are owed back */
	uint64_t owed[DUPGEN_QUEUE]; /* oldest first */
	unsigned owed_len;
	unsigned owed_zero;          /* how many of them are the zero block (paid first) */
	size_t cursor;          /* copied runs: the extent of the last first write */
};

void dupgen_init(struct dupgen *g, const struct dupgen_table *t, uint64_t worker);
void dupgen_init_scaled(struct dupgen *g, const struct scaled_layout *l, uint64_t worker);
/* The row a draw x in [unique_weight, total) falls in: binary search over the rows, O(log rows). */
size_t dupgen_row_of(const struct dupgen_table *t, uint64_t x);
/* Sampled: the next content id (never 0). */
uint64_t dupgen_next(struct dupgen *g, struct rng *r);
/* Scaled, first write of a slot: the layout's content for it. */
static inline uint64_t dupgen_first(struct dupgen *g, uint64_t slot)
{
	if (g->layout->has_runs)
		return locality_content(&g->layout->runs, slot, &g->cursor);
	return scaled_content(g->layout, scaled_permute(g->layout, slot));
}
/* The copy class (compmodel_class) of the dataset contents an id stands for: its row's; unique
 * contents (of the layout or fresh) are class 0. */
unsigned dupgen_class(const struct dupgen *g, uint64_t id);
/* What content `id` is built by: the model's pick for its class in g's layout (no model, or the
 * zero block: the plain layout). A dupgen_recipes is also content_gen's recipe_of context, so the
 * halves of a shifted block are built exactly as the blocks it copies were. */
struct dupgen_recipes {
	const struct compmodel *model; /* NULL: none */
	uint64_t seed;
	const struct dupgen *g;
};
content_recipe dupgen_recipe(const void *recipes, uint64_t id);
/* Scaled, overwrite of a block holding `victim`: a different content that keeps the live data on
 * the distribution (a content owed by an earlier overwrite, else a fresh unique one); the victim
 * itself when only its own content is owed and DUPGEN_QUEUE copies of it already are. Exact: each
 * duplicated content's live copies plus those owed equal its layout's. */
uint64_t dupgen_overwrite(struct dupgen *g, uint64_t victim);
/* A fresh unique id for this worker (never equal to any layout instance's id). */
uint64_t dupgen_fresh_unique(struct dupgen *g);

#endif
