/* test_compmodel.c - the compressibility model: calibrated recipes reach their cells' sizes
 * under the real zstd -1 and LZ4, picks follow the cells' weights, sparse classes borrow. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/compmodel.h"
#include "unit.h"

#define BS 4096

/* Cells as dedisgen writes them (means in 1/2^20 of the block; K: 1/1024 of it). */
#define K (DIST_COMP_UNIT / 1024)
static const struct dist_comp_cell cells[] = {
	{0, 3, 4, 1000, 100 * K, 130 * K},    /* text-like: zstd 4:1 ... */
	{0, 7, 9, 2000, 240 * K, 300 * K},
	{0, 15, 17, 3000, 490 * K, 560 * K},
	{0, 31, 31, 4000, 1024 * K, 1024 * K}, /* incompressible */
	{1, 9, 12, 500, 300 * K, 400 * K},
	{1, 1, 1, 500, 40 * K, 50 * K},        /* nearly empty blocks */
	{5, 20, 25, 3, 650 * K, 800 * K},      /* too few measured: borrows */
};

static void comp_of(struct dist_comp *c)
{
	memset(c, 0, sizeof *c);
	c->present = true;
	c->sample_rate = 1;
	c->cells = (struct dist_comp_cell *)cells;
	c->ncells = sizeof cells / sizeof cells[0];
	c->class_measured[0] = 10000;
	c->class_measured[1] = 1000;
	c->class_measured[5] = 3;
	c->measured = 11003;
}

/* Fresh contents of every cell, each compressed alone, land within 5 % of the cell's target
 * (the tolerance) in the mean; the plain layout is used for incompressible cells. */
static void recipes_reach_targets(void)
{
	struct dist_comp comp;
	comp_of(&comp);
	struct compmodel *m;
	struct dd_err err;
	CU_ASSERT_FATAL(compmodel_build(&m, &comp, BS, &err) == 0);
	CU_ASSERT_EQUAL(compmodel_ncells(m), comp.ncells);
	struct content_gen g;
	CU_ASSERT_FATAL(content_init(&g, 4242, BS, 1) == 0);
	struct compmodel_codecs *codecs = compmodel_codecs_new(0);
	uint8_t *buf = aligned_alloc(64, BS);
	CU_ASSERT_FATAL(codecs && buf);
	for (size_t i = 0; i < comp.ncells; i++) {
		struct compmodel_sizes t = compmodel_target(m, i), sum = {0, 0};
		content_recipe r = compmodel_recipe(m, i);
		if (cells[i].zstd_bucket == 31)
			CU_ASSERT_EQUAL(r, CONTENT_RECIPE_PLAIN);
		const int n = 64;
		for (int k = 0; k < n; k++) {
			struct compmodel_sizes s;
			content_fill_recipe(&g, 1000 + 77 * k, r, buf);
			CU_ASSERT_FATAL(compmodel_measure(codecs, buf, BS, &s, NULL) == 0);
			sum.zstd += s.zstd / n;
			sum.lz4 += s.lz4 / n;
		}
		double ez = fabs(sum.zstd - t.zstd) / t.zstd, el = fabs(sum.lz4 - t.lz4) / t.lz4;
		if (ez > 0.05 || el > 0.05)
			fprintf(stderr, "cell %zu: target %.0f/%.0f got %.0f/%.0f\n", i, t.zstd, t.lz4, sum.zstd, sum.lz4);
		CU_ASSERT(ez <= 0.05);
		CU_ASSERT(el <= 0.05);
		/* and the model's own expectation says the same */
		struct compmodel_sizes e = compmodel_expected(m, i);
		CU_ASSERT(fabs(e.zstd - sum.zstd) <= 0.05 * sum.zstd);
		CU_ASSERT(fabs(e.lz4 - sum.lz4) <= 0.05 * sum.lz4);
	}
	free(buf);
	compmodel_codecs_free(codecs);
	compmodel_free(m);
}

/* A content's cell is a pure function of (seed, id); over many ids, class 0's cells are picked in
 * proportion to their contents (1:2:3:4, ±0.01 over 40000 ids); class 1 picks only its own. */
static void picks_follow_weights(void)
{
	struct dist_comp comp;
	comp_of(&comp);
	struct compmodel *m;
	struct dd_err err;
	CU_ASSERT_FATAL(compmodel_build(&m, &comp, BS, &err) == 0);
	double seen[8] = {0};
	const int n = 40000;
	int moved = 0;
	for (int id = 1; id <= n; id++) {
		size_t c = compmodel_cell(m, 0, 99, (uint64_t)id);
		CU_ASSERT_EQUAL(c, compmodel_cell(m, 0, 99, (uint64_t)id));
		CU_ASSERT_FATAL(c < 4);
		seen[c] += 1.0 / n;
		moved += compmodel_cell(m, 0, 100, (uint64_t)id) != c;
		size_t c1 = compmodel_cell(m, 1, 99, (uint64_t)id);
		CU_ASSERT(c1 == 4 || c1 == 5);
	}
	for (int c = 0; c < 4; c++)
		CU_ASSERT(fabs(seen[c] - (c + 1) / 10.0) <= 0.01);
	CU_ASSERT(moved > n / 2); /* another seed, another assignment */
	compmodel_free(m);
}

/* Class 5 measured 3 contents: it borrows its neighbours until 32 were measured (down to class
 * 1 here), so its picks are mostly class 1's cells; a class nobody measured borrows too. */
static void sparse_classes_borrow(void)
{
	struct dist_comp comp;
	comp_of(&comp);
	struct compmodel *m;
	struct dd_err err;
	CU_ASSERT_FATAL(compmodel_build(&m, &comp, BS, &err) == 0);
	int own = 0, borrowed = 0, far = 0;
	for (int id = 1; id <= 10000; id++) {
		size_t c = compmodel_cell(m, 5, 7, (uint64_t)id);
		own += c == 6;
		borrowed += c == 4 || c == 5;
		far += compmodel_cell(m, 40, 7, (uint64_t)id) < comp.ncells;
	}
	CU_ASSERT(borrowed > 9800);
	CU_ASSERT(own > 0);
	CU_ASSERT_EQUAL(far, 10000);
	compmodel_free(m);
	/* no section: a clear error */
	struct dist_comp none = {0};
	CU_ASSERT_EQUAL(compmodel_build(&m, &none, BS, &err), -1);
	CU_ASSERT(strstr(err.msg, "compressibility") != NULL);
}

static void classes(void)
{
	CU_ASSERT_EQUAL(compmodel_class(0), 0);
	CU_ASSERT_EQUAL(compmodel_class(1), 0);
	CU_ASSERT_EQUAL(compmodel_class(2), 1);
	CU_ASSERT_EQUAL(compmodel_class(3), 1);
	CU_ASSERT_EQUAL(compmodel_class(4), 2);
	CU_ASSERT_EQUAL(compmodel_class(1ULL << 40), 40);
}

int suite_compmodel(void)
{
	static const struct unit_test tests[] = {
		{"recipes reach their cells' zstd -1 / LZ4 sizes within 5 %", recipes_reach_targets},
		{"picks: pure function of (seed, id), follow the cells' weights", picks_follow_weights},
		{"classes measured too little borrow their neighbours' cells", sparse_classes_borrow},
		{"copy classes are floor(log2(copies))", classes},
		{NULL, NULL},
	};
	return unit_add_suite("compmodel", tests);
}
