/* test_dupgen.c - the content-id sampler: frequencies match the distribution (chi-square with a
 * fixed seed), ids stay in their row's range, unique ids are fresh and per worker. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "lib/compmodel.h"
#include "lib/content.h"
#include "lib/distfile.h"
#include "bench/content/dupgen.h"
#include "unit.h"
#include "bench/content/verify.h"

static void build(struct dist *d, struct dupgen_table *t, const struct dist_row *rows, size_t n)
{
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, n, d, &e) == 0);
	CU_ASSERT_FATAL(dupgen_build(t, d) == 0);
}

static void frequencies_follow_distribution(void)
{
	/* T = 1000 + 200*2 + 50*4 + 10*10 = 1700. P(unique) = 1000/1700, P(row dups=1) = 400/1700... */
	const struct dist_row rows[] = {{9, 10}, {0, 1000}, {1, 200}, {3, 50}};
	struct dist d;
	struct dupgen_table t;
	build(&d, &t, rows, 4);
	CU_ASSERT_EQUAL(t.total, 1700);
	CU_ASSERT_EQUAL(t.nrows, 3);
	struct dupgen g;
	struct rng r;
	dupgen_init(&g, &t, 0);
	rng_seed(&r, 12345);
	const int n = 1000000;
	uint64_t cat[4] = {0}, in_row9[10] = {0};
	for (int i = 0; i < n; i++) {
		uint64_t id = dupgen_next(&g, &r);
		CU_ASSERT_NOT_EQUAL_FATAL(id, 0);
		if (id & CONTENT_UNIQUE_BIT) {
			cat[0]++;
			continue;
		}
		/* ids 1..200 are the dups=1 row, 201..250 dups=3, 251..260 dups=9 */
		CU_ASSERT_FATAL(id >= 1 && id <= 260);
		if (id <= 200)
			cat[1]++;
		else if (id <= 250)
			cat[2]++;
		else {
			cat[3]++;
			in_row9[id - 251]++;
		}
	}
	const double p[4] = {1000 / 1700.0, 400 / 1700.0, 200 / 1700.0, 100 / 1700.0};
	double chi = 0;
	for (int i = 0; i < 4; i++)
		chi += (cat[i] - n * p[i]) * (cat[i] - n * p[i]) / (n * p[i]);
	CU_ASSERT(chi < 16.27); /* 3 dof, 0.1 % */
	/* contents within a row are equally likely: 9 dof, 0.1 % critical value 27.88 */
	double chi9 = 0, e = cat[3] / 10.0;
	for (int i = 0; i < 10; i++)
		chi9 += (in_row9[i] - e) * (in_row9[i] - e) / e;
	CU_ASSERT(chi9 < 27.88);
	CU_ASSERT_EQUAL(g.unique_next, cat[0]);
	dupgen_free(&t);
	dist_free(&d);
}

static void unique_ids_are_fresh_per_worker(void)
{
	const struct dist_row rows[] = {{0, 10}};
	struct dist d;
	struct dupgen_table t;
	build(&d, &t, rows, 1);
	struct dupgen a, b;
	struct rng r;
	rng_seed(&r, 1);
	dupgen_init(&a, &t, 0);
	dupgen_init(&b, &t, 1);
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t x = dupgen_next(&a, &r), y = dupgen_next(&b, &r);
		CU_ASSERT_EQUAL(x, content_unique_id(0, i));
		CU_ASSERT_EQUAL(y, content_unique_id(1, i));
		CU_ASSERT_NOT_EQUAL(x, y);
	}
	dupgen_free(&t);
	dist_free(&d);
}

static void bundled_distribution_unique_share(void)
{
	struct dist d;
	struct dd_err e;
	struct dupgen_table t;
	CU_ASSERT_FATAL(dist_load(DEDIS_SRCDIR "/distributions/kernels.dist", &d, &e) == 0);
	CU_ASSERT_FATAL(dupgen_build(&t, &d) == 0);
	struct dist_rows rows;
	dist_compute_rows(&d, &rows);
	struct dupgen g;
	struct rng r;
	dupgen_init(&g, &t, 0);
	rng_seed(&r, 9);
	const int n = 400000;
	int uniq = 0;
	for (int i = 0; i < n; i++)
		uniq += (dupgen_next(&g, &r) & CONTENT_UNIQUE_BIT) != 0;
	/* binomial sd = sqrt(p(1-p)/n) ~ 0.066 %; allow 5 sd */
	CU_ASSERT_DOUBLE_EQUAL((double)uniq / n, rows.u0, 0.0033);
	/* the row search agrees with a linear scan at every boundary */
	for (size_t i = 0; i < t.nrows; i++) {
		CU_ASSERT_EQUAL(dupgen_row_of(&t, t.cum[i] - 1), i);
		if (i + 1 < t.nrows)
			CU_ASSERT_EQUAL(dupgen_row_of(&t, t.cum[i]), i + 1);
	}
	dupgen_free(&t);
	dist_free(&d);
}

static uint64_t layout_blocks(const struct scaled_layout *l)
{
	uint64_t t = 0;
	for (size_t i = 0; i < l->nrows; i++)
		t += l->rows[i].contents * l->rows[i].copies;
	return t;
}

static void scaler_totals_exact(void)
{
	/* Every bundled distribution, many sizes (primes too): the rows sum to exactly n blocks,
	 * and the instance line ends at n. */
	static const char *const names[] = {"archival", "personalfiles", "highperf", "kernels", "ubuntuamd"};
	static const uint64_t sizes[] = {1, 2, 63, 1000, 65536, 65537, 262139, 1048576, 4000037};
	for (size_t k = 0; k < 5; k++) {
		char path[512];
		snprintf(path, sizeof path, DEDIS_SRCDIR "/distributions/%s.dist", names[k]);
		struct dist d;
		struct dd_err e;
		CU_ASSERT_FATAL(dist_load(path, &d, &e) == 0);
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			struct scaled_layout l;
			CU_ASSERT_FATAL(scaled_build(&l, &d, 0, sizes[i], 42 + i) == 0);
			CU_ASSERT_EQUAL(layout_blocks(&l), sizes[i]);
			CU_ASSERT_EQUAL(l.rows[l.nrows - 1].start + l.rows[l.nrows - 1].contents * l.rows[l.nrows - 1].copies,
					sizes[i]);
			scaled_free(&l);
		}
		dist_free(&d);
	}
}

static void scaler_shares_at_size(void)
{
	/* At 65536 blocks (256 MiB of 4 KiB) the layout's rows are within 0.5 point of the
	 * distribution's for every bundled file (the e2e test checks the written data at 1 point). */
	static const char *const names[] = {"archival", "personalfiles", "highperf", "kernels", "ubuntuamd"};
	for (size_t k = 0; k < 5; k++) {
		char path[512];
		snprintf(path, sizeof path, DEDIS_SRCDIR "/distributions/%s.dist", names[k]);
		struct dist d;
		struct dd_err e;
		CU_ASSERT_FATAL(dist_load(path, &d, &e) == 0);
		struct dist_rows want;
		dist_compute_rows(&d, &want);
		struct scaled_layout l;
		CU_ASSERT_FATAL(scaled_build(&l, &d, 0, 65536, 7) == 0);
		uint64_t u0 = 0, u1 = 0, dd = 0;
		for (size_t i = 0; i < l.nrows; i++) {
			const struct scaled_row *r = &l.rows[i];
			if (r->copies == 1)
				u0 += r->contents;
			else {
				u1 += r->contents;
				dd += r->contents * (r->copies - 1);
			}
		}
		CU_ASSERT_DOUBLE_EQUAL(u0 / 65536.0, want.u0, 0.005);
		CU_ASSERT_DOUBLE_EQUAL(u1 / 65536.0, want.u1, 0.005);
		CU_ASSERT_DOUBLE_EQUAL(dd / 65536.0, want.d, 0.005);
		scaled_free(&l);
		dist_free(&d);
	}
}

static void heavy_tail_inclusion_probability(void)
{
	/* A content with 400 copies among 99,600 unique blocks (T = 100,000) scaled to 40,000
	 * blocks: 400 <= n/64 = 625 so it keeps its copies, expected count 0.4. Over 4000 seeds it
	 * must be present 40 % of the time (binomial sd 0.77 %, 4.4 sd allowed) - neither dropped
	 * nor inflated - and present exactly with its 400 copies. */
	const struct dist_row rows[] = {{0, 99600}, {399, 1}};
	struct dist d;
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, 2, &d, &e) == 0);
	int present = 0;
	const int seeds = 4000;
	for (int s = 0; s < seeds; s++) {
		struct scaled_layout l;
		CU_ASSERT_FATAL(scaled_build(&l, &d, 0, 40000, (uint64_t)s) == 0);
		for (size_t i = 0; i < l.nrows; i++) {
			if (l.rows[i].copies > 1) {
				CU_ASSERT_EQUAL_FATAL(l.rows[i].copies, 400);
				CU_ASSERT_EQUAL_FATAL(l.rows[i].contents, 1);
				present++;
			}
		}
		scaled_free(&l);
	}
	CU_ASSERT_DOUBLE_EQUAL((double)present / seeds, 0.40, 0.034);
	dist_free(&d);
}

static void permutation_is_a_bijection(void)
{
	const struct dist_row rows[] = {{0, 50}, {2, 10}};
	struct dist d;
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, 2, &d, &e) == 0);
	static const uint64_t sizes[] = {1, 2, 3, 1000, 4097, 65536};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		uint64_t n = sizes[k];
		struct scaled_layout l;
		CU_ASSERT_FATAL(scaled_build(&l, &d, 0, n, 3) == 0);
		uint8_t *seen = calloc(n, 1);
		uint64_t fixed = 0;
		for (uint64_t x = 0; x < n; x++) {
			uint64_t p = scaled_permute(&l, x);
			CU_ASSERT_FATAL(p < n);
			CU_ASSERT_EQUAL(seen[p], 0);
			seen[p] = 1;
			fixed += p == x;
		}
		if (n >= 1000)
			CU_ASSERT(fixed < n / 100); /* it really shuffles */
		free(seen);
		scaled_free(&l);
	}
	dist_free(&d);
}

static void copies_spread_and_zero_blocks(void)
{
	/* 10 contents x 100 copies + 1000 uniques + 500 zero blocks declared (T = 2500, n = 2500):
	 * the zero block keeps its share (500 copies, id 0); no content's copies sit back to back. */
	const struct dist_row rows[] = {{0, 1000}, {99, 10}, {499, 1}};
	struct dist d;
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, 3, &d, &e) == 0);
	struct scaled_layout l;
	CU_ASSERT_FATAL(scaled_build(&l, &d, 500, 2500, 11) == 0);
	CU_ASSERT_EQUAL(l.zero_copies, 500);
	uint64_t zeros = 0, adjacent_same = 0, prev = UINT64_MAX;
	for (uint64_t slot = 0; slot < 2500; slot++) {
		uint64_t id = scaled_content(&l, scaled_permute(&l, slot));
		zeros += id == CONTENT_ZERO;
		adjacent_same += id == prev && id != CONTENT_ZERO;
		prev = id;
	}
	CU_ASSERT_EQUAL(zeros, 500);
	/* 1000 duplicate blocks among 2500: back-to-back copies would give ~990 equal neighbours; a
	 * random placement sum_c (c/n)^2 * n = 10 * (100/2500)^2 * 2500 = 40 */
	CU_ASSERT(adjacent_same < 100);
	scaled_free(&l);
	dist_free(&d);
}

/* Issue 36 item 5: "# zero-blocks: 4" with "0 2", "3 1" (the zero block is the 4-copy content;
 * T = 6, D 50 %, ratio 2) scaled up to 16384 blocks: the zero block is not dominant (4 copies,
 * not above n/64), so it keeps its copies like the rest of its row and the shares hold. It was
 * given two thirds of the run instead (D 66.7 %, ratio 3). A dominant zero block still keeps
 * its share (copies_spread_and_zero_blocks). */
static void zero_block_scaled_up_keeps_the_shares(void)
{
	const struct dist_row rows[] = {{0, 2}, {3, 1}};
	struct dist d;
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, 2, &d, &e) == 0);
	d.zero_blocks = 4;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct scaled_layout l;
		CU_ASSERT_FATAL(scaled_build(&l, &d, 4, 16384, seed) == 0);
		CU_ASSERT_EQUAL(l.zero_copies, 4);
		CU_ASSERT_EQUAL(l.dominant_contents, 0); /* "every row keeps its copies" is true */
		CU_ASSERT_EQUAL(l.rows[0].first_id, CONTENT_ZERO); /* rows in ascending first_id */
		for (size_t i = 1; i < l.nrows; i++)
			CU_ASSERT(l.rows[i].first_id > l.rows[i - 1].first_id);
		struct dist s;
		CU_ASSERT_FATAL(scaled_to_dist(&l, &s) == 0);
		struct dist_rows r;
		dist_compute_rows(&s, &r);
		CU_ASSERT_EQUAL(r.total_blocks, 16384);
		double redundant = (double)(r.total_blocks - r.distinct) / (double)r.total_blocks;
		CU_ASSERT(fabs(redundant - 0.5) < 0.001);
		CU_ASSERT(fabs((double)r.total_blocks / (double)r.distinct - 2.0) < 0.005);
		CU_ASSERT_EQUAL(s.zero_blocks, 4);
		uint64_t zeros = 0;
		for (uint64_t slot = 0; slot < 16384; slot++) {
			uint64_t id = scaled_content(&l, scaled_permute(&l, slot));
			zeros += id == CONTENT_ZERO;
			/* the 4-copy contents other than the zero block are found in their row */
			bool regular = !(id & CONTENT_UNIQUE_BIT) && id != CONTENT_ZERO;
			CU_ASSERT_EQUAL(dupgen_class(&(struct dupgen){.layout = &l}, id), regular ? compmodel_class(4) : 0);
		}
		CU_ASSERT_EQUAL(zeros, 4);
		dist_free(&s);
		scaled_free(&l);
	}
	dist_free(&d);
}

static void overwrites_keep_the_histogram(void)
{
	/* Simulate a 4096-block target laid out, then 4 passes of random overwrites through the
	 * owed-copy rule: the live histogram stays within a few blocks of the layout's, and every
	 * overwrite changes the block's content. */
	const struct dist_row rows[] = {{0, 2000}, {1, 500}, {3, 200}, {15, 16}};
	struct dist d;
	struct dd_err e;
	CU_ASSERT_FATAL(dist_from_rows(rows, 4, &d, &e) == 0);
	const uint64_t n = 4096;
	struct scaled_layout l;
	CU_ASSERT_FATAL(scaled_build(&l, &d, 0, n, 5) == 0);
	uint64_t *live = malloc(n * sizeof *live);
	for (uint64_t b = 0; b < n; b++)
		live[b] = scaled_content(&l, scaled_permute(&l, b));
	struct dupgen g;
	dupgen_init_scaled(&g, &l, 0);
	struct rng r;
	rng_seed(&r, 9);
	uint64_t changed = 0;
	for (uint64_t i = 0; i < 4 * n; i++) {
		uint64_t b = rng_below(&r, n);
		uint64_t id = dupgen_overwrite(&g, live[b]);
		changed += id != live[b];
		live[b] = id;
	}
	CU_ASSERT_EQUAL(changed, 4 * n);
	/* histogram of copies over the live data: count contents by copies */
	struct { uint64_t id, n; } *cnt = calloc(n, sizeof *cnt);
	size_t ncnt = 0;
	uint64_t uniques = 0;
	for (uint64_t b = 0; b < n; b++) {
		if (live[b] & CONTENT_UNIQUE_BIT) {
			uniques++;
			continue;
		}
		size_t k = 0;
		while (k < ncnt && cnt[k].id != live[b])
			k++;
		if (k == ncnt)
			cnt[ncnt++].id = live[b];
		cnt[k].n++;
	}
	uint64_t dup_blocks = n - uniques, distinct_dups = ncnt;
	struct dist_rows want;
	dist_compute_rows(&d, &want);
	uint64_t layout_u0 = 0, layout_dups = 0;
	for (size_t i = 0; i < l.nrows; i++) {
		if (l.rows[i].copies == 1)
			layout_u0 += l.rows[i].contents;
		else
			layout_dups += l.rows[i].contents;
	}
	CU_ASSERT(uniques <= layout_u0 + 4 && uniques + 4 >= layout_u0);
	CU_ASSERT(distinct_dups <= layout_dups + 4 && distinct_dups + 4 >= layout_dups);
	CU_ASSERT_EQUAL(dup_blocks + uniques, n);
	free(cnt);
	free(live);
	scaled_free(&l);
	dist_free(&d);
}

/* A target whose one content fills a contiguous run of half the blocks (an image's free space,
 * one zero block), then 512 contents of 2 copies and 1024 uniques, overwritten in 4 sequential
 * sweeps: after every write each duplicated content's live copies plus those owed equal its
 * target, the uniques exceed theirs by exactly the copies owed, at most DUPGEN_QUEUE are owed,
 * and a block keeps its content only when all that is owed is that content and the queue is full.
 * (The queue used to drop its oldest debt when full: the run's content then lost a copy for each
 * block of the run past the 64th, and a stress run of kernel-trees fell from 3.14:1 to 1.39:1.) */
static void overwrites_exact_through_a_run_of(uint64_t RUN_ID)
{
	enum { N = 4096, RUN = 2048, PAIRS = 512, PAIR_ID0 = 1000 };
	uint64_t *live = malloc(N * sizeof *live);
	CU_ASSERT_PTR_NOT_NULL_FATAL(live);
	for (uint64_t b = 0; b < N; b++)
		live[b] = b < RUN ? RUN_ID : b < RUN + 2 * PAIRS ? PAIR_ID0 + (b - RUN) / 2 : (CONTENT_UNIQUE_BIT | b);
	struct dupgen g;
	dupgen_init_scaled(&g, NULL, 3);
	uint64_t changed = 0, kept = 0, bad_invariant = 0, bad_keep = 0, bad_zero = 0, zero_paid = 0;
	for (uint64_t i = 0; i < 4 * N; i++) {
		uint64_t b = i % N, victim = live[b];
		unsigned owed_before = g.owed_len, zeros = 0;
		bool all_victim = true;
		for (unsigned k = 0; k < g.owed_len; k++) {
			all_victim &= g.owed[k] == victim;
			zeros += g.owed[k] == CONTENT_ZERO;
		}
		uint64_t id = dupgen_overwrite(&g, victim);
		/* a zero block's debt, when one is owed and the victim is not a zero block, is paid
		 * first; the queue's count of them stays true */
		if (zeros && victim != CONTENT_ZERO) {
			bad_zero += id != CONTENT_ZERO;
			zero_paid++;
		}
		zeros = 0;
		for (unsigned k = 0; k < g.owed_len; k++)
			zeros += g.owed[k] == CONTENT_ZERO;
		bad_zero += zeros != g.owed_zero;
		if (id == victim) {
			kept++;
			bad_keep += !(all_victim && owed_before == DUPGEN_QUEUE);
		} else {
			changed++;
		}
		live[b] = id;
		if (b % 256 != 255)
			continue;
		/* the invariants, every 256 writes: copies live + owed per content, uniques */
		uint64_t run = 0, pairs[PAIRS] = {0}, uniques = 0;
		for (uint64_t k = 0; k < N; k++) {
			if (live[k] & CONTENT_UNIQUE_BIT)
				uniques++;
			else if (live[k] == RUN_ID)
				run++;
			else
				pairs[live[k] - PAIR_ID0]++;
		}
		for (unsigned k = 0; k < g.owed_len; k++) {
			if (g.owed[k] == RUN_ID)
				run++;
			else
				pairs[g.owed[k] - PAIR_ID0]++;
		}
		bad_invariant += run != RUN || uniques != N - RUN - 2 * PAIRS + g.owed_len || g.owed_len > DUPGEN_QUEUE;
		for (unsigned k = 0; k < PAIRS; k++)
			bad_invariant += pairs[k] != 2;
	}
	CU_ASSERT_EQUAL(bad_invariant, 0);
	CU_ASSERT_EQUAL(bad_keep, 0);
	CU_ASSERT_EQUAL(bad_zero, 0);
	CU_ASSERT(RUN_ID != CONTENT_ZERO || zero_paid >= DUPGEN_QUEUE); /* the rule was exercised */
	/* the run's blocks past the queue's 64 keep their content on the first sweep; the rest change */
	CU_ASSERT(kept >= RUN - DUPGEN_QUEUE);
	CU_ASSERT(changed > 2 * N);
	free(live);
}

static void overwrites_exact_through_a_long_run(void)
{
	overwrites_exact_through_a_run_of(7);
}

/* the same with free space's content, the zero block, whose debts are paid first */
static void overwrites_exact_through_free_space(void)
{
	overwrites_exact_through_a_run_of(CONTENT_ZERO);
}

static void ledger_persists(void)
{
	char path[] = "/tmp/dedis-unit-ledger-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	unlink(path);
	struct ledger_map m;
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(ledger_open(&m, path, 4096, 2, 1000, 77, &err), 0);
	CU_ASSERT_FALSE(m.existed);
	struct ledger l0, l1;
	ledger_slice(&m, 0, &l0);
	ledger_slice(&m, 1, &l1);
	ledger_set(&l0, 5, 123);
	ledger_set(&l1, 999, CONTENT_ZERO);
	CU_ASSERT_EQUAL(ledger_sync(&m), 0);
	ledger_close(&m);
	uint64_t seed = 0;
	CU_ASSERT_EQUAL(ledger_peek_seed(path, &seed), 0);
	CU_ASSERT_EQUAL(seed, 77);
	CU_ASSERT_EQUAL_FATAL(ledger_open(&m, path, 4096, 2, 1000, 1, &err), 0);
	CU_ASSERT_TRUE(m.existed);
	CU_ASSERT_EQUAL(m.file_seed, 77);
	ledger_slice(&m, 0, &l0);
	ledger_slice(&m, 1, &l1);
	uint64_t id = 0;
	CU_ASSERT_TRUE(ledger_get(&l0, 5, &id));
	CU_ASSERT_EQUAL(id, 123);
	CU_ASSERT_TRUE(ledger_get(&l1, 999, &id));
	CU_ASSERT_EQUAL(id, CONTENT_ZERO);
	CU_ASSERT_FALSE(ledger_get(&l0, 6, &id));
	ledger_close(&m);
	/* another geometry is refused, naming what the ledger was written with */
	CU_ASSERT_NOT_EQUAL(ledger_open(&m, path, 4096, 3, 1000, 1, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "2 workers"));
	unlink(path);
}

static void scaled_as_distribution(void)
{
	/* scaled_to_dist is the layout itself: every bundled distribution at several sizes gives a
	 * distribution of exactly n blocks whose rows are the layout's (equal copies merged), and the
	 * dominant bookkeeping counts exactly the rows of more than n/64 copies in the dataset. */
	static const char *const names[] = {"archival", "personalfiles", "highperf", "kernels", "ubuntuamd"};
	static const uint64_t sizes[] = {1000, 32768, 262139};
	for (size_t k = 0; k < 5; k++) {
		char path[512];
		snprintf(path, sizeof path, DEDIS_SRCDIR "/distributions/%s.dist", names[k]);
		struct dist d;
		struct dd_err e;
		CU_ASSERT_FATAL(dist_load(path, &d, &e) == 0);
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			struct scaled_layout l;
			CU_ASSERT_FATAL(scaled_build(&l, &d, 0, sizes[i], 5 + i) == 0);
			struct dist s;
			CU_ASSERT_FATAL(scaled_to_dist(&l, &s) == 0);
			struct dist_rows r;
			dist_compute_rows(&s, &r);
			CU_ASSERT_EQUAL(r.total_blocks, sizes[i]);
			uint64_t distinct = 0, dominant_blocks = 0, dominant_contents = 0, max_copies = 0;
			for (size_t j = 0; j < l.nrows; j++)
				distinct += l.rows[j].contents;
			CU_ASSERT_EQUAL(r.distinct, distinct);
			/* the dataset's contents above n/64 copies, as the summary counts them */
			for (size_t j = 0; j < d.nrows; j++)
				if (d.rows[j].dups + 1 > l.dominant_above)
					dominant_contents += d.rows[j].blocks;
			/* some may scale below 2 copies and leave their share to the next */
			CU_ASSERT(l.dominant_contents <= dominant_contents);
			CU_ASSERT_EQUAL(l.dominant_above, sizes[i] / 64);
			/* the first rows (the dominant ones) hold dominant_blocks */
			for (size_t j = 0; j < l.dominant_contents && j < l.nrows; j++) {
				dominant_blocks += l.rows[j].copies * l.rows[j].contents;
				if (l.rows[j].copies > max_copies)
					max_copies = l.rows[j].copies;
			}
			CU_ASSERT_EQUAL(dominant_blocks, l.dominant_blocks);
			CU_ASSERT_EQUAL(max_copies, l.dominant_max_copies);
			dist_compute_rows(&d, &r);
			CU_ASSERT_EQUAL(l.dataset_blocks, r.total_blocks);
			dist_free(&s);
			scaled_free(&l);
		}
		dist_free(&d);
	}
}

int suite_dupgen(void)
{
	static const struct unit_test tests[] = {
		{"frequencies follow the distribution (chi-square)", frequencies_follow_distribution},
		{"unique ids are fresh and per worker", unique_ids_are_fresh_per_worker},
		{"bundled kernels: unique share and row search", bundled_distribution_unique_share},
		{"scaled: totals exact at every size", scaler_totals_exact},
		{"scaled: rows within 0.5 point at 65536 blocks", scaler_shares_at_size},
		{"scaled: heavy-tail inclusion probability over seeds", heavy_tail_inclusion_probability},
		{"scaled: the slot permutation is a bijection", permutation_is_a_bijection},
		{"scaled: zero blocks keep their share, copies spread", copies_spread_and_zero_blocks},
		{"scaled: a zero block of few copies keeps them, scaled up", zero_block_scaled_up_keeps_the_shares},
		{"scaled: overwrites keep the live histogram", overwrites_keep_the_histogram},
		{"scaled: overwrites exact through a long run of one content", overwrites_exact_through_a_long_run},
		{"scaled: overwrites exact through free space, zero debts first", overwrites_exact_through_free_space},
		{"scaled: as a distribution, with what scaling did", scaled_as_distribution},
		{"ledger: persists across opens, geometry checked", ledger_persists},
		{NULL, NULL},
	};
	return unit_add_suite("dupgen", tests);
}
