/* test_gen_measure.c - dedisgen's compressibility sampling, granularity curve and locality analysis
 * on synthetic streams whose runs, copies and compressed sizes are known by construction. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/distcmp.h"
#include "gen/compsample.h"
#include "gen/gransample.h"
#include "gen/counter.h"
#include "gen/locstats.h"
#include "gen/genopts.h"
#include "lib/rng.h"
#include "unit.h"

#define FL 20
#define BS 4096
#define NONE UINT64_MAX

/* A distinct fingerprint per content id (any 20 bytes do: the code never hashes them again). */
/* Content ZERO_PREFIX_ID's fingerprint starts with 8 zero bytes: the prefix the resolution
 * table cannot hold (0 marks its empty slots), kept apart. */
#define ZERO_PREFIX_ID 111
static void fp_of(uint64_t id, uint8_t *fp)
{
	struct rng r;
	rng_split(&r, 7, id);
	for (int k = 0; k < FL; k += 4) {
		uint64_t v = rng_next(&r);
		memcpy(fp + k, &v, 4);
	}
	if (id == ZERO_PREFIX_ID)
		memset(fp, 0, 8);
}

/* first(i) of a stream of content ids. */
static void firsts_of(const uint64_t *ids, size_t n, uint64_t *firsts)
{
	for (size_t i = 0; i < n; i++) {
		firsts[i] = i;
		for (size_t j = 0; j < i; j++) {
			if (ids[j] == ids[i]) {
				firsts[i] = j;
				break;
			}
		}
	}
}

static void check_loc(const struct dist_locality *l, uint64_t analysed, uint64_t dups, uint64_t seq)
{
	CU_ASSERT_EQUAL(l->analysed, analysed);
	CU_ASSERT_EQUAL(l->duplicates, dups);
	CU_ASSERT_EQUAL(l->sequential, seq);
	/* and the file format accepts it */
	struct dist d = {0};
	struct dd_err e;
	d.locality = *l;
	d.locality.present = true;
	CU_ASSERT_EQUAL(dist_sections_check(&d, &e), 0);
}

/* A file written once, copied whole, then a few blocks of it again out of order, then zeros. */
static void test_runs_known(void)
{
	/* ids: 1..6 (new), 1..6 (a copy: 6 sequential-but-first), 3 5 (lone duplicates), 0 0 0
	 * (the zero block: its first occurrence is new), 0 0 (a zero run of 2), 7 (new) */
	static const uint64_t ids[] = {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 3, 5, 0, 0, 0, 9, 0, 0, 7};
	size_t n = sizeof ids / sizeof ids[0];
	uint64_t f[32];
	struct dist_locality l = {0};
	firsts_of(ids, n, f);
	loc_runs(f, n, 0, 0, 14, &l); /* the zero block first appears at position 14 */
	/* duplicates: 6 (copy) + 2 (3, 5) + 2 (zeros after 14) + 2 (zeros after 9) = 12 */
	check_loc(&l, n, 12, 5);
	CU_ASSERT_EQUAL(l.window, 0);
	/* new runs: 1..6 (6), 0 at 14 (1), 9 (1), 7 (1) */
	CU_ASSERT(l.new_runs.count[2] == 1 && l.new_runs.blocks[2] == 6);
	CU_ASSERT(l.new_runs.count[0] == 3 && l.new_runs.blocks[0] == 3);
	/* dup runs: positions 6..13 (8), 15..16 (2), 18..19 (2) */
	CU_ASSERT(l.dup_runs.count[3] == 1 && l.dup_runs.blocks[3] == 8);
	CU_ASSERT(l.dup_runs.count[1] == 2 && l.dup_runs.blocks[1] == 4);
	/* copy runs: 1..6 (6), then 3 and 5 alone; zero runs: 2 and 2 */
	CU_ASSERT(l.copy_runs.count[2] == 1 && l.copy_runs.blocks[2] == 6);
	CU_ASSERT(l.copy_runs.count[0] == 2 && l.copy_runs.blocks[0] == 2);
	CU_ASSERT(l.zero_runs.count[1] == 2 && l.zero_runs.blocks[1] == 4);
	struct dist_loc_figures fig;
	dist_loc_figures(&l, &fig);
	CU_ASSERT_DOUBLE_EQUAL(fig.runs_ge8_share, 8.0 / 12, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(fig.sequential_share, 5.0 / 12, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(fig.mean_dup_run, 12.0 / 3, 1e-12);

	/* gaps (blocks not analysed) and windows end runs */
	f[9] = NONE;
	memset(&l, 0, sizeof l);
	loc_runs(f, n, 0, 0, 14, &l);
	check_loc(&l, n - 1, 11, 3); /* the copy is cut in two: 6..8 and 10..13 */
	CU_ASSERT(l.copy_runs.count[1] == 2 && l.copy_runs.blocks[1] == 3 + 2 && l.copy_runs.count[0] == 2);
	firsts_of(ids, n, f);
	memset(&l, 0, sizeof l);
	loc_runs(f, n, 0, 8, 14, &l); /* pieces 0..7, 8..15, 16..20 */
	check_loc(&l, n, 12, 4);
	CU_ASSERT_EQUAL(l.window, 8);
}

/* The zero block's first occurrence right after a block whose copy is later followed by a zero
 * block: that zero duplicate is sequential (blockcomp.py's definition) but in a zero run, not a
 * copy run; likewise the block after a zero run. The file format allows it (two per zero run). */
static void test_runs_zero_sequential(void)
{
	/* ids: 5 0 6 | 5 0 0 6: position 1 is the zero block's first occurrence */
	static const uint64_t ids[] = {5, 0, 6, 5, 0, 0, 6};
	uint64_t f[8];
	struct dist_locality l = {0};
	firsts_of(ids, 7, f);
	loc_runs(f, 7, 0, 0, 1, &l);
	/* 3: dup of 0; 4: zero dup, source 1 = 0 + 1: sequential; 5: zero, source 1: not; 6: dup of 2,
	 * previous source 1: sequential */
	check_loc(&l, 7, 4, 2);
	CU_ASSERT(l.copy_runs.count[0] == 2 && l.copy_runs.blocks[0] == 2); /* 3 and 6, apart */
	CU_ASSERT(l.zero_runs.count[1] == 1 && l.zero_runs.blocks[1] == 2);
}

/* The recorder as a scan drives it: items of consecutive positions recorded by several threads
 * in any order, resolved through an index walk, equal to the direct computation. */
struct resolve_arg {
	struct loc_recorder *r;
};

static int resolve_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	loc_resolve_visit(((struct resolve_arg *)arg)->r, fp, first);
	return 0;
}

static int resolver_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	loc_resolver_visit(arg, fp, count, first);
	return 0;
}

/* walkers 0: by the records, one walk through loc_resolve_visit (dedisgen-mpi's way); > 0: by the
 * records, that many threads walking with a resolver each (dedisgen's end with -k or windows);
 * < 0: by copies, -walkers threads with a resolver each (dedisgen's end otherwise). keys_bound:
 * the records' table's size hint, BOUND_BY_COUNTER for the counter's bound as dedisgen gives it. */
#define BOUND_BY_COUNTER UINT64_MAX
static void run_recorder(const uint64_t *ids, size_t n, uint64_t stream_blocks, unsigned level_during,
			 struct dist_locality *out, uint64_t *zero_first, int walkers, uint64_t keys_bound)
{
	struct dd_err why = {0};
	struct loc_recorder *r = loc_recorder_new(FL);
	struct counter *c = counter_new(FL, 0, NULL);
	struct loc_local *t[3];
	uint8_t *fps = malloc(n * FL), zero[FL];
	CU_ASSERT_PTR_NOT_NULL_FATAL(fps);
	for (int k = 0; k < 3; k++)
		t[k] = loc_local_new(r);
	for (size_t i = 0; i < n; i++)
		fp_of(ids[i], fps + i * FL);
	fp_of(0, zero);
	loc_recorder_advance(r, level_during ? LOC_BUDGET << level_during : n);
	CU_ASSERT_EQUAL(loc_level_for(level_during ? LOC_BUDGET << level_during : n), level_during);
	/* items of 1000 positions, handed to the threads round robin, the last item first */
	size_t items = (n + 999) / 1000;
	for (size_t j = items; j-- > 0;) {
		size_t start = j * 1000, len = n - start < 1000 ? n - start : 1000;
		CU_ASSERT_EQUAL(counter_add_batch(c, 0, fps + start * FL, len, start, &why), 0);
		CU_ASSERT_EQUAL(loc_local_record(t[j % 3], fps + start * FL, len, start), 0);
	}
	for (int k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(loc_local_flush(t[k]), 0);
	struct dist d;
	struct resolve_arg a = {r};
	if (walkers < 0) {
		CU_ASSERT_EQUAL(loc_resolve_begin_copies(r), 0);
	} else {
		CU_ASSERT_EQUAL(loc_resolve_begin(r, keys_bound == BOUND_BY_COUNTER ? counter_distinct_bound(c) : keys_bound),
				0);
	}
	CU_ASSERT_EQUAL(loc_records_complete(r), level_during == 0);
	CU_ASSERT_EQUAL(counter_settle(c, &why), 0);
	if (walkers == 0) {
		CU_ASSERT_EQUAL(counter_distribution(c, zero, resolve_visit, &a, &d, NULL, zero_first, &why), 0);
	} else {
		int nw = walkers < 0 ? -walkers : walkers;
		void *res[8];
		for (int k = 0; k < nw; k++)
			CU_ASSERT_PTR_NOT_NULL_FATAL(res[k] = loc_resolver_new(r));
		struct counter_walkers w = {nw, resolver_visit, res};
		CU_ASSERT_EQUAL(counter_distribution_by(c, zero, &w, &d, NULL, zero_first, &why), 0);
		for (int k = 0; k < nw; k++)
			CU_ASSERT_EQUAL(loc_resolver_finish(res[k]), 0);
	}
	CU_ASSERT_EQUAL(loc_resolve_end(r), 0);
	CU_ASSERT_EQUAL(loc_compute(r, stream_blocks, *zero_first, 3, out), 0);
	dist_free(&d);
	counter_free(c);
	loc_recorder_free(r);
	free(fps);
}

/* A stream with files written, copied (partly, with edits) and zero stretches. */
static uint64_t *synthetic_stream(size_t n)
{
	uint64_t *ids = malloc(n * sizeof *ids), next = 1;
	struct rng g;
	rng_seed(&g, 2024);
	size_t i = 0;
	while (i < n) {
		uint64_t what = rng_below(&g, 10), len = 1 + rng_below(&g, 300), src = i ? rng_below(&g, i) : 0;
		for (uint64_t k = 0; k < len && i < n; k++, i++) {
			if (what < 4 || i < 1000) /* new data */
				ids[i] = next++;
			else if (what < 8) /* a copy of an earlier stretch (src + k < i), a few blocks edited */
				ids[i] = rng_below(&g, 50) ? ids[src + k] : next++;
			else
				ids[i] = 0; /* zeros */
		}
	}
	return ids;
}

static void test_recorder_exact(void)
{
	size_t n = 300000; /* 5 windows */
	uint64_t *ids = synthetic_stream(n), *f = malloc(n * sizeof *f), zf;
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	struct dist_locality want = {0}, got;
	run_recorder(ids, n, n, 0, &got, &zf, 0, BOUND_BY_COUNTER);
	/* the same resolved by the records by 3 and by 5 threads, each with its own resolver, the
	 * table sized by the contents counted; with a bound far below the distinct prefixes, 16, 1 or
	 * even 0 (the table grows over and over while it is built), by one walk and by 3 threads; and
	 * by copies, by 1, 3 and 5 threads */
	static const struct {
		int walkers;
		uint64_t keys_bound;
	} ways[] = {{3, BOUND_BY_COUNTER}, {5, BOUND_BY_COUNTER}, {0, 16}, {3, 16}, {0, 0}, {3, 1},
		    {-1, 0}, {-3, 0}, {-5, 0}};
	for (size_t k = 0; k < sizeof ways / sizeof ways[0]; k++) {
		struct dist_locality par;
		uint64_t pzf;
		run_recorder(ids, n, n, 0, &par, &pzf, ways[k].walkers, ways[k].keys_bound);
		CU_ASSERT_EQUAL(pzf, zf);
		CU_ASSERT_EQUAL(memcmp(&par, &got, sizeof par), 0);
	}
	/* the direct computation: first occurrence by id */
	uint64_t maxid = 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] > maxid)
			maxid = ids[i];
	uint64_t *first_of_id = malloc((maxid + 1) * sizeof *first_of_id);
	for (uint64_t k = 0; k <= maxid; k++)
		first_of_id[k] = NONE;
	for (size_t i = 0; i < n; i++) {
		if (first_of_id[ids[i]] == NONE)
			first_of_id[ids[i]] = i;
		f[i] = first_of_id[ids[i]];
	}
	CU_ASSERT_EQUAL(zf, first_of_id[0]);
	/* the zero prefix's content is copied: its records resolve through the prefix kept apart */
	size_t zero_prefix_copies = 0;
	for (size_t i = 0; i < n; i++)
		zero_prefix_copies += ids[i] == ZERO_PREFIX_ID && f[i] < i;
	CU_ASSERT(zero_prefix_copies >= 2);
	loc_runs(f, n, 0, 0, first_of_id[0], &want);
	CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
	uint64_t zruns = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++)
		zruns += got.zero_runs.count[k];
	CU_ASSERT(got.duplicates > n / 4 && got.sequential > got.duplicates / 4 && zruns > 10);
	check_loc(&got, n, got.duplicates, got.sequential);

	/* a stream past the budget: windows chosen by hash at its level, runs cut at their edges;
	 * records made at a lower level (the stream was shorter then) are filtered, never missing */
	CU_ASSERT_EQUAL(loc_level_for(LOC_BUDGET * 4 + 1), 3);
	CU_ASSERT_EQUAL(loc_level_for(LOC_BUDGET), 0);
	CU_ASSERT_EQUAL(loc_level_for(LOC_BUDGET + 1), 1);
	unsigned level = 1;
	int kept = 0, windows = (int)((n + LOC_WINDOW - 1) / LOC_WINDOW);
	for (; level < 8; level++) { /* a level that keeps some of the 5 windows and drops some */
		kept = 0;
		for (int w = 0; w < windows; w++)
			kept += loc_window_selected((uint64_t)w, level);
		if (kept > 0 && kept < windows)
			break;
	}
	CU_ASSERT_FATAL(kept > 0 && kept < windows);
	uint64_t big = LOC_BUDGET << level;
	CU_ASSERT_EQUAL(loc_level_for(big), level);
	run_recorder(ids, n, big, level - 1, &got, &zf, 2, BOUND_BY_COUNTER);
	memset(&want, 0, sizeof want);
	for (uint64_t w = 0; w * LOC_WINDOW < n; w++) {
		if (!loc_window_selected(w, level))
			continue;
		size_t start = (size_t)(w * LOC_WINDOW), len = n - start < LOC_WINDOW ? n - start : (size_t)LOC_WINDOW;
		loc_runs(f + start, len, start, LOC_WINDOW, first_of_id[0], &want);
	}
	CU_ASSERT_EQUAL(got.window, LOC_WINDOW);
	CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
	free(first_of_id);
	free(f);
	free(ids);
}

/* The runs computed in pieces of windows (one thread each) equal the serial runs over the whole
 * stream, whatever the cut: a sequential copy spanning whole windows and ending inside a later
 * one, zeros spanning a window into the next, new data filling a window, gaps at window edges,
 * a missing window between two, short random runs across every edge; and, past the budget, by
 * windows. */
static void test_compute_pieces(void)
{
	const size_t W = 9, n = W * LOC_WINDOW, zf = 5;
	uint64_t *f = malloc(n * sizeof *f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	struct rng g;
	rng_seed(&g, 77);
	for (size_t i = 0; i < n;) { /* stretches of 1..40 blocks: new, a sequential copy, zeros, a gap */
		uint64_t what = rng_below(&g, 4), len = 1 + rng_below(&g, 40), src = i ? rng_below(&g, i) : 0;
		for (uint64_t k = 0; k < len && i < n; k++, i++)
			f[i] = what == 0 || i <= zf ? i : what == 1 ? src + k : what == 2 ? zf : NONE;
	}
	for (size_t i = LOC_WINDOW + 3; i < 3 * LOC_WINDOW + 777; i++)
		f[i] = i - LOC_WINDOW - 2; /* one copy run through windows 1 and 2, ending in 3 */
	for (size_t i = 4 * LOC_WINDOW - 10; i < 5 * LOC_WINDOW + 100; i++)
		f[i] = zf; /* zeros from the end of 3 through 4 into 5 */
	f[6 * LOC_WINDOW - 1] = NONE; /* a gap at the last block of 5 and at the first of 6 */
	f[6 * LOC_WINDOW] = NONE;
	for (size_t i = 6 * LOC_WINDOW + 1; i < 7 * LOC_WINDOW; i++)
		f[i] = i; /* new data to the end of 6; 7 is missing, 8 is random again */
	for (size_t i = 7 * LOC_WINDOW; i < 8 * LOC_WINDOW; i++)
		f[i] = NONE;
	struct loc_recorder *r = loc_recorder_new(FL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	for (uint64_t w = 0; w < W; w++)
		if (w != 7)
			CU_ASSERT_EQUAL_FATAL(loc_load_window(r, w, f + w * LOC_WINDOW), 0);
	struct dist_locality want = {0}, got;
	loc_runs(f, n, 0, 0, zf, &want);
	CU_ASSERT(want.copy_runs.count[DIST_LEN_BINS - 1] == 0 && want.duplicates > n / 4);
	for (size_t pieces = 1; pieces <= W + 1; pieces++) {
		CU_ASSERT_EQUAL(loc_compute(r, n, zf, pieces, &got), 0);
		CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
	}
	/* the long runs are there: a copy run of over 2 windows, zeros of over one, new data of one */
	CU_ASSERT(want.copy_runs.count[63 - __builtin_clzll(2 * LOC_WINDOW + 772)] >= 1);
	CU_ASSERT(want.zero_runs.count[63 - __builtin_clzll(LOC_WINDOW + 110)] >= 1);
	CU_ASSERT(want.new_runs.count[63 - __builtin_clzll(LOC_WINDOW - 2)] >= 1);
	/* past the budget: the selected windows alone, runs cut at their edges */
	unsigned level = 1;
	while (level < 8 && (loc_window_selected(0, level) + loc_window_selected(1, level) + loc_window_selected(2, level) == 0 ||
			     loc_window_selected(0, level) + loc_window_selected(1, level) + loc_window_selected(2, level) == 3))
		level++;
	memset(&want, 0, sizeof want);
	for (uint64_t w = 0; w < W; w++)
		if (w != 7 && loc_window_selected(w, level))
			loc_runs(f + w * LOC_WINDOW, LOC_WINDOW, w * LOC_WINDOW, LOC_WINDOW, zf, &want);
	CU_ASSERT_EQUAL(loc_compute(r, LOC_BUDGET << level, zf, 3, &got), 0);
	CU_ASSERT_EQUAL(got.window, LOC_WINDOW);
	CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
	loc_recorder_free(r);
	free(f);
}

static void test_window_selection(void)
{
	/* nested: a window selected at level L+1 is selected at L; about 2^-L of them */
	int at[5] = {0};
	for (uint64_t w = 0; w < 100000; w++) {
		for (unsigned l = 0; l < 5; l++) {
			bool s = loc_window_selected(w, l);
			at[l] += s;
			if (l && s)
				CU_ASSERT(loc_window_selected(w, l - 1));
		}
	}
	CU_ASSERT_EQUAL(at[0], 100000);
	for (unsigned l = 1; l < 5; l++) /* binomial: 5 sigma of 100000 * 2^-l */
		CU_ASSERT(fabs(at[l] - 100000.0 / (1 << l)) < 5 * sqrt(100000.0 / (1 << l)));
}

/* ---- compressibility ---- */

/* Blocks whose compressed sizes are known: random bytes (incompressible: capped at the block,
 * bucket 31), half random half zeros (just over half: bucket 16), one repeated byte (bucket 0). */
static void block_of(int kind, uint64_t id, uint8_t *b)
{
	struct rng r;
	rng_split(&r, 99, id);
	if (kind == 2) {
		memset(b, (int)(1 + id % 250), BS);
		return;
	}
	size_t n = kind == 0 ? BS : BS / 2;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = rng_next(&r);
		memcpy(b + i, &v, 8);
	}
	memset(b + n, 0, BS - n);
}

struct content {
	int kind;
	uint64_t id, copies;
};

static int join_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	return comp_join_visit(arg, fp, count);
}

/* The samples of one half of the fingerprint space (by the last digest byte's parity) into a
 * sampler of its own: how dedisgen-mpi's owners each get theirs. */
struct half {
	struct comp_sampler *to;
	int parity;
};

static int load_half(const uint8_t *fp, const struct comp_sample *v, void *arg)
{
	struct half *h = arg;
	return (fp[FL - 1] & 1) == h->parity ? comp_sampler_load(h->to, fp, v) : 0;
}

static int join_both(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct comp_sampler **two = arg;
	(void)first;
	return comp_join_visit(two[0], fp, count) || comp_join_visit(two[1], fp, count);
}

/* The join made apart: two samplers each joined with the contents it holds, their sums added into
 * a third (comp_join_export / comp_join_add), which gives the section. */
static void join_apart(struct comp_sampler *s, struct counter *c, const uint8_t *zero_fp, struct dist_comp *out)
{
	struct dd_err why = {0};
	double p = comp_sampler_rate(s);
	struct comp_sampler *two[2] = {comp_sampler_new(FL, BS, p, zero_fp), comp_sampler_new(FL, BS, p, zero_fp)};
	struct comp_sampler *sum = comp_sampler_new(FL, BS, p, zero_fp);
	comp_sum *sums = malloc(COMP_JOIN_SUMS * sizeof *sums);
	for (int k = 0; k < 2; k++) {
		struct half h = {two[k], k};
		CU_ASSERT_EQUAL(comp_sampler_each(s, load_half, &h), 0);
	}
	struct dist d;
	CU_ASSERT_EQUAL(counter_distribution(c, zero_fp, join_both, two, &d, NULL, NULL, &why), 0);
	dist_free(&d);
	for (int k = 0; k < 2; k++) {
		comp_join_export(two[k], sums);
		CU_ASSERT_EQUAL(comp_join_add(sum, sums), 0);
		comp_sampler_free(two[k]);
	}
	CU_ASSERT_EQUAL(comp_join_finish(sum, out), 0);
	comp_sampler_free(sum);
	free(sums);
}

/* Contents of three kinds and copy counts, their occurrences in a shuffled stream, measured by
 * two threads at rate p; returns the joined section (apart: joined in two halves, then added). */
/* The join split over walking threads, each into a part of its own (dedisgen's end). */
static int part_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	(void)first;
	return comp_join_part_visit(arg, fp, count);
}

enum join_how { JOIN_ONE, JOIN_APART, JOIN_THREADS };

static void sample_stream(const struct content *cs, size_t ncs, double p, double lower_to, struct dist_comp *out,
			  enum join_how how)
{
	struct dd_err why = {0};
	uint8_t zero_fp[FL], fp[FL], block[BS];
	fp_of(0, zero_fp);
	struct comp_sampler *s = comp_sampler_new(FL, BS, p, zero_fp);
	struct compmodel_codecs *codec = compmodel_codecs_new(BS);
	struct comp_local t[2];
	struct counter *c = counter_new(FL, 0, NULL);
	CU_ASSERT_EQUAL(comp_local_init(&t[0], s), 0);
	CU_ASSERT_EQUAL(comp_local_init(&t[1], s), 0);
	uint64_t pos = 0;
	for (size_t i = 0; i < ncs; i++) {
		fp_of(cs[i].id, fp);
		block_of(cs[i].kind, cs[i].id, block);
		for (uint64_t k = 0; k < cs[i].copies; k++, pos++) {
			uint64_t where = rng_mix64(pos) % 1000000007; /* a scrambled stream position */
			uint64_t h;
			CU_ASSERT_EQUAL(counter_add(c, fp, 1, where, &why), 0);
			if (comp_local_selected(&t[pos % 2], fp, where, &h))
				CU_ASSERT_EQUAL(comp_local_measure(&t[pos % 2], codec, fp, block, h, &why), 0);
		}
	}
	CU_ASSERT_EQUAL(comp_local_flush(&t[0]), 0);
	CU_ASSERT_EQUAL(comp_local_flush(&t[1]), 0);
	if (lower_to < p)
		comp_sampler_lower_rate(s, lower_to);
	if (how == JOIN_APART) {
		join_apart(s, c, zero_fp, out);
	} else if (how == JOIN_THREADS) {
		void *parts[4];
		CU_ASSERT_EQUAL(comp_join_begin(s), 0); /* every sample is in: their bitmap, as dedisgen's end */
		for (int k = 0; k < 4; k++)
			CU_ASSERT_PTR_NOT_NULL_FATAL(parts[k] = comp_join_part_new(s));
		struct counter_walkers w = {4, part_visit, parts};
		struct dist d;
		CU_ASSERT_EQUAL(counter_distribution_by(c, zero_fp, &w, &d, NULL, NULL, &why), 0);
		for (int k = 0; k < 4; k++) {
			CU_ASSERT_EQUAL(comp_join_part_add(s, parts[k]), 0);
			comp_join_part_free(parts[k]);
		}
		CU_ASSERT_EQUAL(comp_join_finish(s, out), 0);
		dist_free(&d);
	} else {
		struct dist d;
		CU_ASSERT_EQUAL(counter_distribution(c, zero_fp, join_visit, s, &d, NULL, NULL, &why), 0);
		CU_ASSERT_EQUAL(comp_join_finish(s, out), 0);
		dist_free(&d);
	}
	counter_free(c);
	compmodel_codecs_free(codec);
	comp_sampler_free(s);
}

static struct content *three_kinds(size_t *n)
{
	/* 3000 random blocks stored once, 1500 half-random stored 3 times (class 1), 200 one-byte
	 * patterns stored 20 times (class 4), the zero block stored 50 times */
	struct content *cs = malloc(4701 * sizeof *cs);
	size_t k = 0;
	for (uint64_t i = 0; i < 3000; i++)
		cs[k++] = (struct content){0, 1000 + i, 1};
	for (uint64_t i = 0; i < 1500; i++)
		cs[k++] = (struct content){1, 10000 + i, 3};
	for (uint64_t i = 0; i < 200; i++)
		cs[k++] = (struct content){2, 20000 + i, 20};
	cs[k++] = (struct content){2, 0, 50}; /* fp_of(0) is the zero fingerprint here */
	*n = k;
	return cs;
}

static uint64_t class_contents(const struct dist_comp *c, int cls, int *zb)
{
	uint64_t n = 0;
	for (size_t i = 0; i < c->ncells; i++) {
		if (c->cells[i].cls == cls) {
			n += c->cells[i].contents;
			*zb = c->cells[i].zstd_bucket;
		}
	}
	return n;
}

static void test_comp_all(void)
{
	size_t n;
	struct content *cs = three_kinds(&n);
	struct dist_comp c;
	sample_stream(cs, n, 1, 1, &c, JOIN_ONE);
	CU_ASSERT(c.present);
	CU_ASSERT_EQUAL(c.sample_rate, 1);
	CU_ASSERT_EQUAL(c.measured, 4700); /* every content but the zero block */
	CU_ASSERT_EQUAL(c.class_measured[0], 3000);
	CU_ASSERT_EQUAL(c.class_measured[1], 1500);
	CU_ASSERT_EQUAL(c.class_measured[4], 200);
	CU_ASSERT_EQUAL(c.class_measured[5], 0); /* 50 copies: the zero block, left out */
	/* one cell per class: the kinds compress alike */
	CU_ASSERT_EQUAL_FATAL(c.ncells, 3);
	CU_ASSERT(c.cells[0].cls == 0 && c.cells[0].zstd_bucket == 31 && c.cells[0].lz4_bucket == 31 &&
		  c.cells[0].contents == 3000 && c.cells[0].zstd_mean == DIST_COMP_UNIT && c.cells[0].lz4_mean == DIST_COMP_UNIT);
	CU_ASSERT(c.cells[1].cls == 1 && c.cells[1].zstd_bucket == 16 && c.cells[1].lz4_bucket == 16 &&
		  c.cells[1].contents == 1500);
	CU_ASSERT(c.cells[1].zstd_mean >= DIST_COMP_UNIT / 2 && c.cells[1].zstd_mean <= DIST_COMP_UNIT / 1024 * 530);
	CU_ASSERT(c.cells[2].cls == 4 && c.cells[2].zstd_bucket == 0 && c.cells[2].lz4_bucket == 0 &&
		  c.cells[2].contents == 200 && c.cells[2].zstd_mean >= 1 && c.cells[2].zstd_mean < 10 * DIST_COMP_UNIT / 1024);
	struct dist d = {.comp = c};
	struct dd_err e;
	CU_ASSERT_EQUAL(dist_sections_check(&d, &e), 0);
	/* the figures: Σ contents / Σ contents * mean */
	struct dist_comp_figures f;
	dist_comp_figures(&c, &f);
	double stored = 3000.0 * DIST_COMP_UNIT + 1500.0 * c.cells[1].zstd_mean + 200.0 * c.cells[2].zstd_mean;
	CU_ASSERT_DOUBLE_EQUAL(f.zstd_ratio, 4700.0 * DIST_COMP_UNIT / stored, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[0][7], 3000.0 / 4700, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[0][4], 1500.0 / 4700, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[0][0], 200.0 / 4700, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[1][7], 1.0, 1e-12); /* once: all incompressible */
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[2][4], 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.eighths[4][0], 1.0, 1e-12); /* 16+: the patterns */
	free(c.cells);
	free(cs);
}

/* Sampled: the Horvitz-Thompson estimates per class are unbiased; with this fixed stream they
 * fall within 4 standard deviations of the truth. A content stored c times is measured with
 * probability 1 - (1 - p)^c, so frequent contents are nearly always measured. */
static void test_comp_sampled(void)
{
	size_t n;
	struct content *cs = three_kinds(&n);
	struct dist_comp c, low;
	int zb = -1;
	double p = 1.0 / 8;
	sample_stream(cs, n, p, p, &c, JOIN_ONE);
	CU_ASSERT(c.present);
	CU_ASSERT_EQUAL(c.sample_rate, p);
	double pi[3] = {p, 1 - pow(1 - p, 3), 1 - pow(1 - p, 20)}, truth[3] = {3000, 1500, 200};
	int cls[3] = {0, 1, 4}, bucket[3] = {31, 16, 0};
	for (int k = 0; k < 3; k++) {
		double est = (double)class_contents(&c, cls[k], &zb);
		double sd = sqrt(truth[k] * (1 - pi[k]) / pi[k]);
		CU_ASSERT(fabs(est - truth[k]) <= 4 * sd + 1);
		CU_ASSERT_EQUAL(zb, bucket[k]);
		/* measured: binomial around truth * pi */
		CU_ASSERT(fabs((double)c.class_measured[cls[k]] - truth[k] * pi[k]) <= 4 * sqrt(truth[k] * pi[k]) + 1);
	}
	/* lowering the rate afterwards (merge, -k) re-selects exactly: measuring at 1/8 then
	 * lowering to 1/32 is measuring at 1/32 */
	sample_stream(cs, n, p, p / 4, &low, JOIN_ONE);
	free(c.cells);
	sample_stream(cs, n, p / 4, p / 4, &c, JOIN_ONE);
	CU_ASSERT_EQUAL(low.measured, c.measured);
	CU_ASSERT_EQUAL(low.ncells, c.ncells);
	for (size_t i = 0; i < c.ncells && i < low.ncells; i++) {
		const struct dist_comp_cell *x = &low.cells[i], *y = &c.cells[i];
		CU_ASSERT(x->cls == y->cls && x->zstd_bucket == y->zstd_bucket && x->lz4_bucket == y->lz4_bucket &&
			  x->contents == y->contents && x->zstd_mean == y->zstd_mean && x->lz4_mean == y->lz4_mean);
	}
	CU_ASSERT_EQUAL(c.sample_rate, p / 4);
	free(low.cells);
	free(c.cells);
	free(cs);
}

/* Joined apart over disjoint contents and added up (dedisgen-mpi's owners, then rank 0), the
 * cells are those of one join: sums before rounding, not rounded cells, are what is added. */
static void test_comp_apart(void)
{
	size_t n;
	struct content *cs = three_kinds(&n);
	double rates[2] = {1, 1.0 / 8};
	for (int r = 0; r < 2; r++) {
		for (int how = JOIN_APART; how <= JOIN_THREADS; how++) {
		struct dist_comp one, apart;
		sample_stream(cs, n, rates[r], rates[r], &one, JOIN_ONE);
		sample_stream(cs, n, rates[r], rates[r], &apart, (enum join_how)how);
		CU_ASSERT(one.present && apart.present);
		CU_ASSERT_EQUAL(apart.sample_rate, one.sample_rate);
		CU_ASSERT_EQUAL(apart.measured, one.measured);
		CU_ASSERT_EQUAL(memcmp(apart.class_measured, one.class_measured, sizeof one.class_measured), 0);
		CU_ASSERT_EQUAL_FATAL(apart.ncells, one.ncells);
		for (size_t i = 0; i < one.ncells; i++) {
			const struct dist_comp_cell *x = &apart.cells[i], *y = &one.cells[i];
			CU_ASSERT(x->cls == y->cls && x->zstd_bucket == y->zstd_bucket && x->lz4_bucket == y->lz4_bucket &&
				  x->contents == y->contents && x->zstd_mean == y->zstd_mean && x->lz4_mean == y->lz4_mean);
		}
		free(one.cells);
		free(apart.cells);
		}
	}
	/* sums of nothing add nothing: no cells, not an empty table */
	uint8_t zero_fp[FL];
	fp_of(0, zero_fp);
	struct comp_sampler *s = comp_sampler_new(FL, BS, 1, zero_fp);
	comp_sum *zeros = calloc(COMP_JOIN_SUMS, sizeof *zeros);
	struct dist_comp none;
	CU_ASSERT_EQUAL(comp_join_add(s, zeros), 0);
	CU_ASSERT_EQUAL(comp_join_finish(s, &none), 0);
	CU_ASSERT(!none.present && none.ncells == 0);
	free(none.cells);
	free(zeros);
	comp_sampler_free(s);
	free(cs);
}

static void test_select_hash(void)
{
	uint8_t fp[FL];
	uint64_t t = comp_threshold(1.0 / 16), hits = 0, n = 200000;
	CU_ASSERT_EQUAL(comp_threshold(1), UINT64_MAX);
	CU_ASSERT_EQUAL(comp_threshold(0.5), (UINT64_C(1) << 63) - 1);
	fp_of(1, fp);
	CU_ASSERT_EQUAL(comp_select_hash(fp, 5), comp_select_hash(fp, 5)); /* a pure function */
	CU_ASSERT_NOT_EQUAL(comp_select_hash(fp, 5), comp_select_hash(fp, 6));
	for (uint64_t i = 0; i < n; i++) {
		fp_of(i % 1000, fp); /* one content at many positions is selected at about p too */
		hits += comp_select_hash(fp, i) <= t;
	}
	CU_ASSERT(fabs((double)hits - n / 16.0) < 5 * sqrt(n / 16.0));
	/* the automatic rate */
	CU_ASSERT_EQUAL(gen_auto_sample_rate(1000), 1.0);
	CU_ASSERT_EQUAL(gen_auto_sample_rate(UINT64_C(1) << 19), 1.0 / 64);  /* 2 GiB of 4 KiB */
	CU_ASSERT_EQUAL(gen_auto_sample_rate(UINT64_C(1) << 21), 1.0 / 256); /* 8 GiB */
	CU_ASSERT_EQUAL(gen_auto_sample_rate(UINT64_C(1) << 40), 1.0 / 256); /* floor */
	CU_ASSERT_EQUAL(gen_auto_sample_rate(0), 1.0 / 64);                  /* unknown */
	CU_ASSERT_EQUAL(gen_auto_sample_rate(8192), 1.0);
	CU_ASSERT_EQUAL(gen_auto_sample_rate(8193), 0.5);
}

/* ---- the granularity curve ---- */

/* Window selection: one per run of P windows, a pure function of the position; rates rounded. */
static void test_gran_selection(void)
{
	for (uint64_t period = 1; period <= 64; period *= 4)
		for (uint64_t run = 0; run < 500; run++) {
			int hits = 0;
			for (uint64_t w = run * period; w < (run + 1) * period; w++)
				hits += gran_selected(period, w * DIST_GRAN_WINDOW + (w & 7) * 4096); /* any byte of it */
			CU_ASSERT_EQUAL(hits, 1);
		}
	struct gran_sampler *g = gran_sampler_new(1.0 / 16);
	CU_ASSERT_EQUAL(gran_sampler_period(g), 16);
	gran_sampler_free(g);
	g = gran_sampler_new(1);
	CU_ASSERT_EQUAL(gran_sampler_period(g), 1);
	gran_sampler_free(g);
	CU_ASSERT_EQUAL(gran_auto_rate(UINT64_C(128) << 20), 1.0);           /* 1024 windows */
	CU_ASSERT_EQUAL(gran_auto_rate(UINT64_C(1) << 30), 1.0 / 8);         /* 1 GiB: 8192 */
	CU_ASSERT_EQUAL(gran_auto_rate(UINT64_C(1) << 40), 1.0 / 1024);      /* floor */
	CU_ASSERT_EQUAL(gran_auto_rate(0), 1.0 / 64);                        /* unknown */
}

/* Repeated text compresses better as the piece grows; random bytes stay at 1 (never above their
 * size); zero pieces are left out; threads' sums add up to one sampler's. */
static void test_gran_measure(void)
{
	uint8_t *w = malloc(DIST_GRAN_WINDOW);
	struct compmodel_codecs *c = compmodel_codecs_new(DIST_GRAN_WINDOW);
	struct dist_gran text = {0}, rnd = {0}, holes = {0}, out;
	struct dd_err err;
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (size_t i = 0; i < DIST_GRAN_WINDOW; i++) /* lines of a small vocabulary, numbered */
		w[i] = (uint8_t)("the quick brown fox jumps over the lazy dog 0123456789\n"[(i * 7 / 5 + i / 97) % 55]);
	CU_ASSERT_EQUAL_FATAL(compmodel_measure_window(c, w, &text, &err), 0);
	struct rng r;
	rng_split(&r, 3, 38);
	for (size_t i = 0; i < DIST_GRAN_WINDOW; i += 8) {
		uint64_t v = rng_next(&r);
		memcpy(w + i, &v, 8);
	}
	CU_ASSERT_EQUAL_FATAL(compmodel_measure_window(c, w, &rnd, &err), 0);
	memset(w, 0, 20000); /* the 4, 8 and 16 KiB pieces are holes now */
	CU_ASSERT_EQUAL_FATAL(compmodel_measure_window(c, w, &holes, &err), 0);
	for (int k = 0; k < DIST_GRAN_SIZES; k++) {
		uint64_t size = (uint64_t)DIST_GRAN_MIN << k;
		CU_ASSERT(text.bytes[k] == size && rnd.bytes[k] == size);
		CU_ASSERT(rnd.zstd1[k] == size && rnd.zstd3[k] == size && rnd.lz4[k] == size);
		CU_ASSERT_EQUAL(holes.bytes[k], k < 3 ? 0 : size);
		if (k)
			CU_ASSERT((double)text.bytes[k] / text.zstd1[k] > (double)text.bytes[k - 1] / text.zstd1[k - 1]);
	}
	/* two threads' parts and one sampler: the sums add up, and the section checks */
	struct gran_sampler *g = gran_sampler_new(0.5);
	gran_sampler_add(g, &text);
	gran_sampler_add(g, &holes);
	gran_sampler_result(g, &out);
	CU_ASSERT(out.present && out.windows == 2 && out.sample_rate == 0.5);
	CU_ASSERT(out.bytes[5] == 2 * DIST_GRAN_WINDOW && out.zstd3[0] == text.zstd3[0] && out.lz4[5] == text.lz4[5] + holes.lz4[5]);
	struct dist d = {.gran = out};
	CU_ASSERT_EQUAL(dist_sections_check(&d, &err), 0);
	gran_sampler_free(g);
	compmodel_codecs_free(c);
	free(w);
}

/* -k's case, by the records: the index also holds contents of a stream before this one (positions
 * below BASE), so the walk's offers lower some records below their first record. A short stream
 * in three parts, each with fewer new keys than the shared table build counts in one batch: the
 * build must count them all, or the table reads as empty and every offer is skipped. */
static void test_recorder_prior(void)
{
	enum { N = 1500, BASE = 10000, ITEM = 100 };
	struct dd_err why = {0};
	uint64_t *ids = synthetic_stream(N), *f = malloc(N * sizeof *f), maxid = 0;
	struct loc_recorder *r = loc_recorder_new(FL);
	struct counter *c = counter_new(FL, 0, NULL);
	struct loc_local *t[3];
	uint8_t fps[ITEM * FL], zero[FL];
	CU_ASSERT_PTR_NOT_NULL_FATAL(ids && f && r && c);
	fp_of(0, zero);
	/* no zero-prefix content: the table's key count alone then says whether offers are taken */
	for (size_t i = 0; i < N; i++)
		maxid = ids[i] > maxid ? ids[i] : maxid;
	uint64_t stand_in = maxid + 1;
	for (size_t i = 0; i < N; i++)
		if (ids[i] == ZERO_PREFIX_ID)
			ids[i] = stand_in;
	for (int k = 0; k < 3; k++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(t[k] = loc_local_new(r));
	loc_recorder_advance(r, BASE + N);
	for (size_t j = 0; j < N; j += ITEM) {
		size_t n = N - j < ITEM ? N - j : ITEM;
		for (size_t i = 0; i < n; i++)
			fp_of(ids[j + i], fps + i * FL);
		CU_ASSERT_EQUAL(counter_add_batch(c, 0, fps, n, BASE + j, &why), 0);
		CU_ASSERT_EQUAL(loc_local_record(t[j / ITEM % 3], fps, n, BASE + j), 0);
	}
	for (int k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(loc_local_flush(t[k]), 0);
	for (size_t i = 0; i < N; i++)
		maxid = ids[i] > maxid ? ids[i] : maxid;
	/* the earlier stream held every odd content at id % BASE */
	bool *seen = calloc(maxid + 1, sizeof *seen);
	CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
	size_t from_before = 0;
	for (size_t i = 0; i < N; i++) {
		if (!seen[ids[i]] && (ids[i] & 1)) {
			fp_of(ids[i], fps);
			CU_ASSERT_EQUAL(counter_add(c, fps, 1, ids[i] % BASE, &why), 0);
			from_before++;
		}
		seen[ids[i]] = true;
	}
	CU_ASSERT(from_before > 100);
	/* the direct computation: a first position in the earlier stream, else the first occurrence */
	firsts_of(ids, N, f);
	for (size_t i = 0; i < N; i++)
		f[i] = ids[i] & 1 ? ids[i] % BASE : BASE + f[i];

	CU_ASSERT_EQUAL(loc_resolve_begin(r, counter_distinct_bound(c)), 0);
	CU_ASSERT_EQUAL(counter_settle(c, &why), 0);
	void *res[2];
	for (int k = 0; k < 2; k++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(res[k] = loc_resolver_new(r));
	struct counter_walkers w = {2, resolver_visit, res};
	struct dist d;
	uint64_t zf = 0;
	CU_ASSERT_EQUAL(counter_distribution_by(c, zero, &w, &d, NULL, &zf, &why), 0);
	for (int k = 0; k < 2; k++)
		CU_ASSERT_EQUAL(loc_resolver_finish(res[k]), 0);
	CU_ASSERT_EQUAL(loc_resolve_end(r), 0);
	struct dist_locality got, want = {0};
	CU_ASSERT_EQUAL(loc_compute(r, BASE + N, zf, 2, &got), 0);
	loc_runs(f, N, BASE, 0, zf, &want);
	CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
	CU_ASSERT(got.duplicates >= from_before); /* each odd content's first block here is a copy */
	dist_free(&d);
	counter_free(c);
	loc_recorder_free(r);
	free(seen);
	free(ids);
	free(f);
}

int suite_gen_measure(void)
{
	static const struct unit_test tests[] = {
		{"locality: a known stream's runs", test_runs_known},
		{"locality: zero-block sequential edge", test_runs_zero_sequential},
		{"locality: recorder == direct, exact and windows", test_recorder_exact},
		{"locality: runs in pieces == serial runs, any cut", test_compute_pieces},
		{"locality: records lowered by an earlier stream's contents (-k)", test_recorder_prior},
		{"locality: window selection nested, about 2^-level", test_window_selection},
		{"compressibility: every content measured", test_comp_all},
		{"compressibility: sampled estimates, lowered rate", test_comp_sampled},
		{"compressibility: selection hash and auto rate", test_select_hash},
		{"compressibility: joins apart (ranks, threads) add up to one join", test_comp_apart},
		{"granularity: one window per run of the period, rates", test_gran_selection},
		{"granularity: text grows, random stays 1, holes left out, sums add up", test_gran_measure},
		{NULL, NULL},
	};
	return unit_add_suite("gen_measure", tests);
}
