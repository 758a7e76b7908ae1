/* test_gen_align.c - dedisgen's [alignment 1] and [cdc 1]: the chunker's boundaries are the
 * content's (resynchronised after an insertion, min and max kept, the same when fed in pieces and as
 * a plain one-byte loop's),
 * records and chunks add up when merged, a known shifted copy is found, the sections round-trip
 * through dist_write / dist_parse and a file without them still loads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/distfile.h"
#include "lib/fingerprint.h"
#include "lib/rng.h"
#include "gen/alignstats.h"
#include "gen/cdcstats.h"
#include "unit.h"

#define DATA_LEN (1u << 20)

static uint8_t *random_bytes(size_t n, uint64_t seed)
{
	struct rng r;
	uint8_t *d = malloc(n);
	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)rng_next(&r);
	return d;
}

/* The cut positions (ends of chunks) of data, at most max of them. */
static size_t cuts(const struct cdc_params *p, const uint8_t *d, size_t n, size_t *out, size_t max)
{
	size_t k = 0, off = 0;
	uint64_t tail;
	while (off < n && k < max) {
		off += cdc_next(p, d + off, n - off, &tail);
		out[k++] = off;
	}
	return k;
}

static void test_chunker_sizes(void)
{
	struct cdc_params p;
	size_t c[4096];
	CU_ASSERT_EQUAL(cdc_params_init(&p, 8192), 0);
	CU_ASSERT(p.min == 4096 && p.max == 65536);
	CU_ASSERT_EQUAL(cdc_params_init(&p, 5000), -1);
	CU_ASSERT_EQUAL(cdc_params_init(&p, 128), -1);
	CU_ASSERT_EQUAL(cdc_params_init(&p, 8192), 0);
	uint8_t *d = random_bytes(DATA_LEN, 38);
	size_t n = cuts(&p, d, DATA_LEN, c, 4096), prev = 0;
	CU_ASSERT(n > DATA_LEN / 16384 && n < DATA_LEN / 4096); /* about one per avg + min */
	for (size_t i = 0; i + 1 < n; i++) { /* the last one may be shorter: the data ends */
		CU_ASSERT(c[i] - prev >= p.min && c[i] - prev <= p.max);
		prev = c[i];
	}
	CU_ASSERT_EQUAL(c[n - 1], DATA_LEN);
	memset(d, 0, DATA_LEN); /* no content-defined cut in zeros: every chunk is max */
	n = cuts(&p, d, DATA_LEN, c, 4096);
	CU_ASSERT_EQUAL(n, DATA_LEN / p.max);
	free(d);
}

/* The chunk cdc_next finds, the plain way: every byte rolled from the chunk's start, one at a
 * time, each position from min - 1 on tested (the strict mask before avg - 1, the loose one from
 * there), max the last. */
static size_t reference_next(const struct cdc_params *p, const uint8_t *d, size_t n)
{
	const uint64_t *gear = cdc_gear();
	uint64_t h = 0;
	for (size_t i = 0; i < n; i++) {
		h = (h << 1) + gear[d[i]];
		if (i + 1 == p->max)
			return i + 1;
		if (i + 1 >= p->min && !(h & (i + 1 < p->avg ? p->mask_strict : p->mask_loose)))
			return i + 1;
	}
	return n;
}

/* Words drawn from a small vocabulary, runs of zeros and of one repeated byte between them: text,
 * a zero-skip to enter and leave, a hash that sits still on other bytes. */
static uint8_t *texty_bytes(size_t n, uint64_t seed)
{
	static const char *const words[] = {"the ", "chunk ", "of ", "data ", "and ", "a ", "copy\n", "shifted ",
					    "by ", "tar ", "header ", "page ", "SQLite ", "ext4 ", "block ", "zero "};
	struct rng r;
	uint8_t *d = malloc(n);
	rng_seed(&r, seed);
	for (size_t i = 0; i < n;) {
		uint64_t v = rng_next(&r), len = 1 + v % 20000;
		int kind = (int)(v >> 60) % 8;
		for (uint64_t k = 0; kind < 2 && k < len && i < n; k++, i++)
			d[i] = kind ? (uint8_t)(v >> 32) : 0;
		for (uint64_t k = 0, w = 0; kind > 1 && k < len && i < n; w = rng_next(&r) % 16)
			for (const char *c = words[w]; *c && i < n; c++, k++)
				d[i++] = (uint8_t)*c;
	}
	return d;
}

/* cdc_next (rolled only from min - 64, unrolled, skipping zero words) cuts where the plain
 * one-byte loop does: random bytes, text with zero runs, at three averages. */
static void test_chunker_reference(void)
{
	const uint32_t avgs[] = {256, 4096, 8192};
	for (int kind = 0; kind < 2; kind++) {
		uint8_t *d = kind ? texty_bytes(DATA_LEN, 41) : random_bytes(DATA_LEN, 41);
		for (size_t a = 0; a < sizeof avgs / sizeof *avgs; a++) {
			struct cdc_params p;
			size_t off = 0, chunks = 0, differ = 0;
			uint64_t tail;
			CU_ASSERT_EQUAL_FATAL(cdc_params_init(&p, avgs[a]), 0);
			while (off < DATA_LEN) {
				size_t got = cdc_next(&p, d + off, DATA_LEN - off, &tail);
				differ += got != reference_next(&p, d + off, DATA_LEN - off);
				off += got;
				chunks++;
			}
			CU_ASSERT_EQUAL(differ, 0);
			CU_ASSERT(chunks > DATA_LEN / p.max); /* some content-defined cuts were compared */
		}
		free(d);
	}
}

/* 100 bytes inserted at the front: after the first few chunks the cuts are the same places of
 * the content, 100 bytes later. */
static void test_chunker_resync(void)
{
	struct cdc_params p;
	size_t a[4096], b[4096], same = 0, na, nb;
	cdc_params_init(&p, 8192);
	uint8_t *d = random_bytes(DATA_LEN + 100, 39);
	na = cuts(&p, d + 100, DATA_LEN, a, 4096);
	nb = cuts(&p, d, DATA_LEN + 100, b, 4096);
	for (size_t i = 0, j = 0; i < na && j < nb;) {
		if (b[j] == a[i] + 100)
			same++, i++, j++;
		else if (b[j] < a[i] + 100)
			j++;
		else
			i++;
	}
	CU_ASSERT(same + 3 >= na); /* all but the first ones */
	free(d);
}

/* Fed in pieces of odd sizes, the chunker cuts where it cuts the whole. */
static void test_chunker_resumable(void)
{
	struct cdc_params p;
	size_t whole[4096], n, k = 0, done = 0, off = 0;
	cdc_params_init(&p, 4096);
	uint8_t *d = random_bytes(DATA_LEN, 40);
	n = cuts(&p, d, DATA_LEN, whole, 4096);
	uint64_t h = 0;
	for (size_t piece = 1; off < DATA_LEN; piece = piece * 7 % 9973 + 1) {
		size_t len = DATA_LEN - off < piece ? DATA_LEN - off : piece, used = 0;
		while (used < len) {
			bool cut;
			size_t t = cdc_scan(&p, &h, done, d + off + used, len - used, &cut);
			used += t;
			done += t;
			if (cut) {
				CU_ASSERT(k < n && whole[k] == off + used);
				k++;
				done = 0;
				h = 0;
			}
		}
		off += len;
	}
	CU_ASSERT_EQUAL(k + (done > 0), n);
	free(d);
}

/* R (256 KiB), 1000 random bytes, R again: one shifted run at shift 1000, split over two sets
 * (threads) merged; every chunk sampled at rate 1. */
static void test_cdc_shifted_copy(void)
{
	struct cdc_params p;
	struct cdc_cursor cur;
	struct fp_ctx *fc = fp_new("sha1");
	size_t r = 256 << 10, n = 2 * r + 1000;
	uint8_t *d = random_bytes(n, 41);
	memcpy(d + r + 1000, d, r);
	cdc_params_init(&p, 8192);
	struct cdc_set *a = cdc_set_new(&p, 1), *b = cdc_set_new(&p, 1);
	CU_ASSERT_EQUAL(cdc_cursor_init(&cur, &p), 0);
	/* the stream in two pieces (two files), the second fed in buffers of 5000 bytes */
	CU_ASSERT_EQUAL(cdc_feed(a, &cur, fc, d, r + 1000, 0), 0);
	CU_ASSERT_EQUAL(cdc_end(a, &cur, fc), 0);
	for (size_t off = r + 1000; off < n; off += 5000)
		CU_ASSERT_EQUAL(cdc_feed(b, &cur, fc, d + off, n - off < 5000 ? n - off : 5000, off), 0);
	CU_ASSERT_EQUAL(cdc_end(b, &cur, fc), 0);
	CU_ASSERT_EQUAL(cdc_set_merge(a, b), 0);
	struct dist_cdc out;
	CU_ASSERT_EQUAL(cdc_set_result(a, 4096, 0, &out), 0);
	CU_ASSERT_EQUAL(out.bytes, n);
	CU_ASSERT_EQUAL(out.sampled_bytes, n);
	CU_ASSERT(out.shifted_bytes >= r - 2 * p.max && out.aligned_bytes == 0 && out.zero_bytes == 0);
	CU_ASSERT(out.nshifts == 1 && out.shifts[0].shift == 1000);
	int runs = 0;
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++)
		runs += (int)out.run_count[k];
	CU_ASSERT_EQUAL(runs, 1);
	struct dist dd = {0};
	dd.cdc = out;
	CU_ASSERT(dist_cdc_ratio(&out) > 1.7);
	dist_free(&dd);
	cdc_cursor_free(&cur);
	cdc_set_free(a);
	cdc_set_free(b);
	fp_free(fc);
	free(d);
}

/* Block fingerprints 8 bytes each: ids 1..4 then 1..4 again, then 3 blocks (a file's end): records
 * of 2 blocks 4 + 2, distinct 3 (the padded (x, zero) one differs); merging two such sets adds the
 * records and keeps the distinct. */
static void test_align_records(void)
{
	uint64_t ids[11] = {11, 12, 13, 14, 11, 12, 13, 14, 11, 12, 13};
	uint8_t fps[11 * 8];
	memcpy(fps, ids, sizeof fps);
	struct align_set *a = align_set_new(), *b = align_set_new();
	CU_ASSERT_EQUAL(align_set_add(a, fps, 8, 8, 0, 0), 0);
	CU_ASSERT_EQUAL(align_set_add(b, fps + 8 * 8, 8, 3, 0, 0), 0);
	CU_ASSERT_EQUAL(align_set_merge(a, b), 0);
	struct dist_align out = {0};
	CU_ASSERT_EQUAL(align_set_result(a, &out), 0);
	CU_ASSERT_EQUAL(out.records[0], 6);  /* 4 + 2 */
	CU_ASSERT_EQUAL(out.distinct[0], 3); /* (11,12) (13,14) (13,zero) */
	CU_ASSERT_EQUAL(out.records[1], 3);  /* 2 + 1 */
	CU_ASSERT_EQUAL(out.distinct[1], 2); /* (11..14) and (11,12,13,zero) */
	CU_ASSERT_EQUAL(out.records[4], 2);
	CU_ASSERT_EQUAL(out.distinct[4], 2);
	CU_ASSERT(out.sample_rate == 1);
	CU_ASSERT(align_pair_id(1, 2) != align_pair_id(2, 1));
	align_set_free(a);
	align_set_free(b);
}

/* Past ALIGN_KEEP distinct records a size is sampled by identity: records stay exact, distinct
 * is estimated (3 * 2^20 random blocks: 1.5 * 2^20 distinct records of 2 blocks, within 2 %). */
static void test_align_sampled(void)
{
	size_t n = 3u << 20;
	struct rng r;
	uint64_t *ids = malloc(n * sizeof *ids);
	rng_seed(&r, 42);
	for (size_t i = 0; i < n; i++)
		ids[i] = rng_next(&r);
	struct align_set *a = align_set_new();
	CU_ASSERT_EQUAL(align_set_add(a, (const uint8_t *)ids, 8, n, 0, 0), 0);
	struct dist_align out = {0};
	CU_ASSERT_EQUAL(align_set_result(a, &out), 0);
	CU_ASSERT(out.sample_rate < 1);
	CU_ASSERT_EQUAL(out.records[0], n / 2);
	CU_ASSERT(out.distinct[0] > n / 2 * 0.98 && out.distinct[0] <= n / 2);
	CU_ASSERT(out.distinct[4] > n / 32 * 0.9 && out.distinct[4] <= n / 32);
	align_set_free(a);
	free(ids);
}

static const char base_text[] = "# dedisgen test\n# block-size: 4096\n0 10\n1 2\n";

static void test_sections_round_trip(void)
{
	struct dist d, back, old;
	struct dd_err err;
	CU_ASSERT_EQUAL(dist_parse(base_text, strlen(base_text), "old", &old, &err), 0); /* no section: loads */
	CU_ASSERT(!old.align.present && !old.cdc.present);
	CU_ASSERT_EQUAL(dist_parse(base_text, strlen(base_text), "t", &d, &err), 0);
	d.align = (struct dist_align){.present = true, .sample_rate = 1, .records = {7, 4, 2, 1, 1},
				      .distinct = {6, 4, 2, 1, 1}, .shift_runs = {[2] = 1}, .shift_blocks = {[2] = 3}};
	struct dist_cdc_shift *sh = calloc(1, sizeof *sh);
	*sh = (struct dist_cdc_shift){1000, 2, 20000};
	d.cdc = (struct dist_cdc){.present = true, .avg = 8192, .min = 2048, .max = 65536, .block_size = 4096,
				  .range = 4194304, .sample_rate = 0.5, .chunks = 10, .bytes = 100000, .zero_chunks = 1,
				  .zero_bytes = 65536, .zero_distinct_bytes = 65536, .sampled_chunks = 5,
				  .sampled_bytes = 30000, .distinct_chunks = 3, .distinct_bytes = 10000,
				  .shifted_chunks = 2, .shifted_bytes = 20000, .run_count = {[14] = 1},
				  .run_bytes = {[14] = 20000}, .shifts = sh, .nshifts = 1};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(dist_write(f, &d, NULL, 0), 0);
	fclose(f);
	CU_ASSERT_EQUAL(dist_parse(buf, len, "rt", &back, &err), 0);
	CU_ASSERT(memcmp(&back.align, &d.align, sizeof d.align) == 0);
	CU_ASSERT(back.cdc.nshifts == 1 && back.cdc.shifts[0].shift == 1000 && back.cdc.shifted_bytes == 20000 &&
		  back.cdc.zero_distinct_bytes == 65536 && back.cdc.sample_rate == 0.5 && back.cdc.run_bytes[14] == 20000);
	dist_free(&back);
	free(buf);
	d.cdc.shifted_bytes = 20001; /* the parts no longer add up: refused, nothing written */
	f = open_memstream(&buf, &len);
	CU_ASSERT_NOT_EQUAL(dist_write(f, &d, NULL, 0), 0);
	fclose(f);
	free(buf);
	dist_free(&d);
	dist_free(&old);
}

int suite_gen_align(void)
{
	static const struct unit_test tests[] = {
		{"chunker min, max, zeros", test_chunker_sizes},
		{"chunker resynchronises after an insertion", test_chunker_resync},
		{"chunker fed in pieces cuts the same", test_chunker_resumable},
		{"the chunker cuts where a plain one-byte loop cuts", test_chunker_reference},
		{"a shifted copy: one run at its shift, sets merged", test_cdc_shifted_copy},
		{"records of 2..32 blocks, padded, merged", test_align_records},
		{"records past the memory bound: sampled by identity", test_align_sampled},
		{"[alignment 1] and [cdc 1] round-trip; old files load", test_sections_round_trip},
		{NULL, NULL},
	};
	return unit_add_suite("gen_align", tests);
}
