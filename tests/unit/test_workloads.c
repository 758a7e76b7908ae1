/* test_workloads.c - issue 14's workloads: the backup generations' mutation (size kept, order
 * kept, the configured share carried over, fresh ids new) and the FIU trace reader (MD5s to ids,
 * the zero block, what the trace leaves live, file:line on a malformed line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench/workload/backup.h"
#include "lib/rng.h"
#include "bench/workload/trace.h"
#include "unit.h"

static void rates_parse(void)
{
	struct backup_rates r;
	CU_ASSERT_EQUAL_FATAL(backup_parse_rates("2:3.5:10", &r), 0);
	CU_ASSERT_DOUBLE_EQUAL(r.add, 0.02, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.del, 0.035, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.move, 0.10, 1e-12);
	CU_ASSERT_EQUAL(backup_parse_rates("2:2", &r), -1);
	CU_ASSERT_EQUAL(backup_parse_rates("2:2:5x", &r), -1);
	CU_ASSERT_EQUAL(backup_parse_rates("2:101:5", &r), -1);
	CU_ASSERT_EQUAL(backup_parse_rates("-1:2:5", &r), -1);
}

static void mutation(void)
{
	enum { N = 64 * 1024 };
	uint64_t *prev = malloc(N * sizeof *prev), *out = malloc(N * sizeof *out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(prev);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	for (uint64_t i = 0; i < N; i++)
		prev[i] = i + 1;
	uint64_t next = N + 1;
	struct rng rs;
	rng_seed(&rs, 42);
	/* no move: what is kept keeps its order; fresh ids are new and consecutive */
	struct backup_rates r = {0.03, 0.05, 0}; /* more deleted than added: the end is topped up */
	backup_mutate(prev, out, N, &r, &rs, &next);
	uint64_t kept = 0, fresh = 0, last_old = 0, last_new = N;
	int in_order = 1;
	for (uint64_t i = 0; i < N; i++) {
		if (out[i] <= N) {
			kept++;
			in_order &= out[i] > last_old;
			last_old = out[i];
		} else {
			fresh++;
			in_order &= out[i] == last_new + 1;
			last_new = out[i];
		}
	}
	CU_ASSERT_TRUE(in_order);
	CU_ASSERT_EQUAL(kept + fresh, N);
	CU_ASSERT_EQUAL(next, N + 1 + fresh);
	/* 8192 segments, 5 % deleted: 95 % kept (binomial sd 0.24 point; 3.3 sd) */
	CU_ASSERT_DOUBLE_EQUAL((double)kept / N, 0.95, 0.008);
	/* moves permute whole segments and change nothing else */
	struct backup_rates m = {0, 0, 0.5};
	next = N + 1;
	backup_mutate(prev, out, N, &m, &rs, &next);
	CU_ASSERT_EQUAL(next, N + 1);
	uint64_t moved = 0, sum = 0;
	for (uint64_t s = 0; s < N; s += BACKUP_SEGMENT) {
		moved += out[s] != prev[s];
		for (uint64_t k = 1; k < BACKUP_SEGMENT; k++)
			CU_ASSERT_EQUAL(out[s + k], out[s] + k); /* a segment stays whole */
		for (uint64_t k = 0; k < BACKUP_SEGMENT; k++)
			sum += out[s + k];
	}
	CU_ASSERT_EQUAL(sum, (uint64_t)N * (N + 1) / 2); /* the same blocks, each once */
	CU_ASSERT(moved > N / BACKUP_SEGMENT / 4);
	free(prev);
	free(out);
}

static int write_trace(char *path, const char *text)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	return fclose(f);
}

#define MD5A "0123456789abcdef0123456789abcdef"
#define MD5B "fedcba9876543210fedcba9876543210"
#define MD5Z "620f0b67a91f7f74151bc5be745b7110"

static void trace_reader(void)
{
	char path[] = "/tmp/dedis-unit-trace-XXXXXX";
	CU_ASSERT_EQUAL_FATAL(write_trace(path, "# a comment\n\n"
					       "100 1 cp 0 8 W 8 0 " MD5A "\n"
					       "200 1 cp 8 16 W 8 0 " MD5B " " MD5A "\n"
					       "300 2 dd 16 8 W 8 0 " MD5Z "\n"
					       "400 2 cat 0 8 R 8 0 " MD5A "\n"
					       "500 1 cp 8 8 W 8 0 " MD5A "\n"),
			      0);
	struct trace t;
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(trace_load(path, &t, &err), 0);
	CU_ASSERT_EQUAL(t.n, 5);
	CU_ASSERT_EQUAL(t.writes, 4);
	CU_ASSERT_EQUAL(t.reads, 1);
	CU_ASSERT_EQUAL(t.write_blocks, 5);
	CU_ASSERT_EQUAL(t.distinct, 3);
	CU_ASSERT_EQUAL(t.end_bytes, 24 * 512);
	CU_ASSERT_EQUAL(t.req[1].block, 1);
	CU_ASSERT_EQUAL(t.req[1].nblocks, 2);
	/* equal MD5s, equal ids; the zero block's is id 0 */
	uint64_t a = t.ids[0], b = t.ids[1];
	CU_ASSERT_NOT_EQUAL(a, b);
	CU_ASSERT_EQUAL(t.ids[2], a);
	CU_ASSERT_EQUAL(t.ids[3], TRACE_ZERO_ID);
	CU_ASSERT_EQUAL(t.ids[4], a);
	CU_ASSERT(a != TRACE_ZERO_ID && b != TRACE_ZERO_ID);
	/* live: blocks 0, 1, 2 written; last writes A, A (line 5 overwrote B), A, zero: {A, zero} */
	uint64_t blocks, distinct;
	CU_ASSERT_EQUAL_FATAL(trace_live(&t, &blocks, &distinct), 0);
	CU_ASSERT_EQUAL(blocks, 3);
	CU_ASSERT_EQUAL(distinct, 2);
	trace_free(&t);
	unlink(path);

	/* a malformed line: named by file and line */
	char bad[] = "/tmp/dedis-unit-trace-XXXXXX";
	CU_ASSERT_EQUAL_FATAL(write_trace(bad, "100 1 cp 0 8 W 8 0 " MD5A "\n100 1 cp 0 8 W 8 0 " MD5A " " MD5B "\n"), 0);
	CU_ASSERT_EQUAL(trace_load(bad, &t, &err), -1);
	char want[128];
	snprintf(want, sizeof want, "%s:2: 2 MD5s for 8 sectors, want 1", bad);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
	trace_free(&t);
	unlink(bad);
}

int suite_workloads(void)
{
	static const struct unit_test tests[] = {
		{"backup rates", rates_parse},
		{"backup generation mutation", mutation},
		{"FIU trace reader", trace_reader},
		{NULL, NULL},
	};
	return unit_add_suite("workloads", tests);
}
