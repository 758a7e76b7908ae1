/* test_space.c - issue 14's readers: zram's mm_stat and --space-cmd output parsed, the source a
 * target gets, the host's CPU and memory shares from /proc files of known content; issue 38's
 * record and CDC store arithmetic on small ledgers and sections counted by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hostload.h"
#include "bench/content/physical.h"
#include "bench/report/spacecheck.h"
#include "bench/target/target.h"
#include "unit.h"

static void mm_stat_fields(void)
{
	struct zram_mm_stat m;
	/* orig compr mem_used limit used_max same_pages compacted huge huge_since (6.x has 9 fields) */
	CU_ASSERT_EQUAL_FATAL(space_parse_mm_stat("67108864 18740549 19193856        0 19193856       12        0        0        0\n", &m), 0);
	CU_ASSERT_EQUAL(m.orig_data_size, 67108864);
	CU_ASSERT_EQUAL(m.compr_data_size, 18740549);
	CU_ASSERT_EQUAL(m.mem_used_total, 19193856);
	CU_ASSERT_EQUAL(m.same_pages, 12);
	CU_ASSERT_EQUAL(space_parse_mm_stat("1 2 3\n", &m), -1); /* too few fields */
	CU_ASSERT_EQUAL(space_parse_mm_stat("", &m), -1);
}

static void command_output(void)
{
	uint64_t v = 7;
	CU_ASSERT_EQUAL(space_parse_bytes("123456789012\n", &v), 0);
	CU_ASSERT_EQUAL(v, 123456789012ULL);
	CU_ASSERT_EQUAL(space_parse_bytes("  4096\tpool0\n", &v), 0); /* `zpool list -Hp -o alloc,name` */
	CU_ASSERT_EQUAL(v, 4096);
	CU_ASSERT_EQUAL(space_parse_bytes("0", &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	v = 7;
	CU_ASSERT_EQUAL(space_parse_bytes("12k", &v), -1);      /* a unit is not a byte count */
	CU_ASSERT_EQUAL(space_parse_bytes("-5", &v), -1);
	CU_ASSERT_EQUAL(space_parse_bytes("used: 5", &v), -1);
	CU_ASSERT_EQUAL(space_parse_bytes("", &v), -1);
	CU_ASSERT_EQUAL(space_parse_bytes("99999999999999999999999", &v), -1); /* overflow */
	CU_ASSERT_EQUAL(v, 7);                                  /* untouched on error */
}

static void source_per_target(void)
{
	struct target t;
	memset(&t, 0, sizeof t);
	t.ops = &target_dir_ops;
	CU_ASSERT_EQUAL(space_source_of(&t, NULL), SPACE_STATFS);
	t.ops = &target_file_ops;
	CU_ASSERT_EQUAL(space_source_of(&t, NULL), SPACE_STATFS);
	t.ops = &target_engine_ops;
	CU_ASSERT_EQUAL(space_source_of(&t, NULL), SPACE_ENGINE);
	t.ops = &target_null_ops;
	CU_ASSERT_EQUAL(space_source_of(&t, NULL), SPACE_NONE);
	t.ops = &target_blockdev_ops; /* not zram: nothing measures it unless a command does */
	snprintf(t.path, sizeof t.path, "/dev/null");
	CU_ASSERT_EQUAL(space_source_of(&t, NULL), SPACE_NONE);
	CU_ASSERT_EQUAL(space_source_of(&t, "echo 1"), SPACE_COMMAND);
	t.ops = &target_dir_ops;
	CU_ASSERT_EQUAL(space_source_of(&t, "echo 1"), SPACE_COMMAND); /* the command wins */
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void host_cpu_and_memory(void)
{
	char dir[] = "/tmp/dedis-unit-proc-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	write_file(dir, "stat", "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\n");
	write_file(dir, "meminfo", "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    600 kB\n");
	struct host_usage u;
	hostload_begin(&u, dir);
	CU_ASSERT_TRUE_FATAL(u.have);
	CU_ASSERT_EQUAL(u.cpu_start.total, 1000);
	CU_ASSERT_EQUAL(u.mem_start.total, 1000 * 1024);
	CU_ASSERT_EQUAL(u.mem_start.used, 400 * 1024); /* MemTotal - MemAvailable */
	/* one second later: +100 ticks, 60 busy, 30 idle, 10 iowait; more memory in use */
	write_file(dir, "stat", "cpu  140 0 120 730 110 0 0 0 0 0\n");
	write_file(dir, "meminfo", "MemTotal:       1000 kB\nMemAvailable:    300 kB\n");
	struct host_cpu prev = u.cpu_start, now;
	struct host_mem mem;
	hostload_sample(&u, dir, &prev, &now, &mem);
	CU_ASSERT_DOUBLE_EQUAL(hostload_busy_pct(&prev, &now), 60.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(hostload_iowait_pct(&prev, &now), 10.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(u.busy_pct_max, 60.0, 1e-9);
	CU_ASSERT_EQUAL(u.mem_used_max, 700 * 1024);
	/* then idle; memory back down: the maximum stays, the run's mean covers both seconds */
	write_file(dir, "stat", "cpu  140 0 120 830 110 0 0 0 0 0\n");
	write_file(dir, "meminfo", "MemTotal:       1000 kB\nMemAvailable:    900 kB\n");
	prev = now;
	hostload_sample(&u, dir, &prev, &now, &mem);
	hostload_end(&u, dir);
	CU_ASSERT_DOUBLE_EQUAL(u.busy_pct_max, 60.0, 1e-9);
	CU_ASSERT_EQUAL(u.mem_used_max, 700 * 1024);
	CU_ASSERT_DOUBLE_EQUAL(hostload_busy_pct(&u.cpu_start, &u.cpu_end), 30.0, 1e-9);
	CU_ASSERT_EQUAL(u.samples, 2);
	/* a run with no sample (shorter than one): its busiest second is its mean, not 0 */
	write_file(dir, "stat", "cpu  100 0 100 700 100 0 0 0 0 0\n");
	hostload_begin(&u, dir);
	write_file(dir, "stat", "cpu  170 0 120 790 120 0 0 0 0 0\n");
	hostload_end(&u, dir);
	CU_ASSERT_EQUAL(u.samples, 0);
	CU_ASSERT_DOUBLE_EQUAL(u.busy_pct_max, 45.0, 1e-9);
	/* no tick between readings: 0, not a division by zero */
	CU_ASSERT_DOUBLE_EQUAL(hostload_busy_pct(&now, &now), 0.0, 1e-12);
	/* a /proc without meminfo: no host figures rather than invented ones */
	char path[512];
	snprintf(path, sizeof path, "%s/meminfo", dir);
	unlink(path);
	hostload_begin(&u, dir);
	CU_ASSERT_FALSE(u.have);
	snprintf(path, sizeof path, "%s/stat", dir);
	unlink(path);
	rmdir(dir);
}


/* Ledger words (id + 1) of one 32-block record: ids first, first + 1, ... (0: all never written). */
static void fill_record(uint64_t *w, uint64_t first)
{
	for (unsigned i = 0; i < 32; i++)
		w[i] = first ? first + i + 1 : 0;
}

static void record_dedup_by_hand(void)
{
	uint64_t w[4 * 32];
	fill_record(w, 100);          /* record 0 */
	fill_record(w + 32, 100);     /* record 1: record 0 again */
	fill_record(w + 64, 0);       /* record 2: never written, a hole */
	w[64 + 5] = CONTENT_ZERO + 1; /* ... with a block written zero: still a hole */
	fill_record(w + 96, 100);     /* record 3: record 0 with one block changed */
	w[96 + 31] = 7;
	struct record_estimate e;
	struct record_tally t;
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 4096, 4, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 128, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_TRUE(e.have);
	CU_ASSERT_EQUAL(e.records, 4);
	CU_ASSERT_EQUAL(e.zero_records, 1);
	CU_ASSERT_DOUBLE_EQUAL(e.distinct, 2, 1e-12); /* {0, 1}, {3}: dedup 3/2 */
	CU_ASSERT_DOUBLE_EQUAL(e.sample_rate, 1, 1e-12);

	/* 128 KiB of zstd -3 input that came out as 32 KiB: 4:1, a mean record of 32 KiB, allocated
	 * 32 KiB + half a 4 KiB sector; 3 non-zero records, 2 distinct */
	struct dist_gran g = {.present = true, .windows = 4};
	g.bytes[DIST_GRAN_SIZES - 1] = 4 * 131072;
	g.zstd3[DIST_GRAN_SIZES - 1] = 131072;
	record_sizes(&e, &g, NULL);
	CU_ASSERT_TRUE(e.have_zstd3);
	CU_ASSERT_DOUBLE_EQUAL(e.zstd3_ratio, 4, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.alloc_per_record, 32768 + 2048, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(e.alloc_bytes, 3 * 34816, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_alloc_bytes, 2 * 34816, 1e-6);
	/* saving less than 1/8 (10 %): stored raw, a whole record each */
	g.zstd3[DIST_GRAN_SIZES - 1] = 4 * 131072 * 9 / 10;
	record_sizes(&e, &g, NULL);
	CU_ASSERT_DOUBLE_EQUAL(e.alloc_per_record, 131072, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_alloc_bytes, 2 * 131072, 1e-6);
	/* no [granularity 1]: no figure, and why */
	g.present = false;
	record_sizes(&e, &g, NULL);
	CU_ASSERT_FALSE(e.have_zstd3);
	CU_ASSERT_PTR_NOT_NULL(e.why_no_zstd3);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_alloc_bytes, 0, 1e-12);
	record_sizes(&e, NULL, "because");
	CU_ASSERT_STRING_EQUAL(e.why_no_zstd3, "because");
}

static void record_edges_by_hand(void)
{
	uint64_t w[96];
	for (unsigned i = 0; i < 96; i++)
		w[i] = 1000 + i;
	struct record_estimate e;
	struct record_tally t;
	/* a region at block 16 of its file: records cut at 32, 64 -> [16,32) [32,64) [64,80) */
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 4096, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 64, 16, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_EQUAL(e.records, 3);
	/* two regions of 48 blocks in one file: a record spans both ([0,32) [32,64) [64,96)) */
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 4096, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 48, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w + 48, 48, 48, true), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_EQUAL(e.records, 3);
	CU_ASSERT_DOUBLE_EQUAL(e.distinct, 3, 1e-12);
	/* ... in two files (a directory's worker files): the second starts a record of its own */
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 4096, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 48, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w + 48, 48, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_EQUAL(e.records, 4); /* [0,32) [32,48) | [0,32) [32,48) */
	CU_ASSERT_DOUBLE_EQUAL(e.distinct, 4, 1e-12);
	/* the same 16 blocks as a short record and as the head of a zero-tailed full one differ */
	uint64_t a[64] = {0};
	for (unsigned i = 0; i < 16; i++)
		a[i] = a[32 + i] = 5 + i;
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 4096, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, a, 16, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, a + 32, 32, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_DOUBLE_EQUAL(e.distinct, 2, 1e-12);
	/* 8 KiB blocks: 16 to a record; 256 KiB blocks: no record store figure */
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 8192, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 96, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_EQUAL(e.records, 6);
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 262144, 8, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, 96, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_FALSE(e.have);
	CU_ASSERT_EQUAL(e.records, 0);
}

/* A target with 8x more records than identities held: a hashed 1/8 of them, scaled back. 65536
 * records (128 KiB blocks: one per record), 32768 distinct, about 4096 held: the count's relative
 * error is about 1/sqrt(4096) ~ 1.6 %; 10 % is 6 sigma (the hash is fixed: so is the result). */
static void record_sample_scaled(void)
{
	enum { N = 65536 };
	uint64_t *w = malloc(N * sizeof *w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	for (uint64_t i = 0; i < N; i++)
		w[i] = i / 2 * 2 + 2; /* pairs: 32768 distinct */
	struct record_estimate e;
	struct record_tally t;
	CU_ASSERT_EQUAL_FATAL(record_tally_init(&t, 131072, 8ULL * PHYSICAL_RECORD_SAMPLE, &e), 0);
	CU_ASSERT_EQUAL(record_tally_add(&t, w, N, 0, false), 0);
	CU_ASSERT_EQUAL(record_tally_end(&t), 0);
	CU_ASSERT_DOUBLE_EQUAL(e.sample_rate, 1.0 / 8, 1e-12);
	CU_ASSERT_EQUAL(e.records, N);
	CU_ASSERT_DOUBLE_EQUAL(e.distinct, N / 2, 0.10 * N / 2);
	free(w);
}

/* The dataset's CDC ratio on the run's bytes; LZ4 from the granularity curve at the average chunk. */
static void cdc_by_hand(void)
{
	struct dist_cdc cdc = {.present = true, .avg = 8192, .bytes = 1000000, .sampled_bytes = 1000000,
			       .distinct_bytes = 800000, .shifted_bytes = 50000};
	struct dist_gran g = {.present = true};
	g.bytes[1] = 10 * 8192; /* 8 KiB pieces: LZ4 2:1 */
	g.lz4[1] = 5 * 8192;
	struct cdc_estimate e;
	cdc_sizes(&e, &cdc, &g, 10485760);
	CU_ASSERT_TRUE(e.have);
	CU_ASSERT_EQUAL(e.avg, 8192);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_ratio, 1.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.shifted_share, 0.05, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_bytes, 8388608, 1e-6);
	CU_ASSERT_TRUE(e.have_lz4);
	CU_ASSERT_DOUBLE_EQUAL(e.lz4_ratio, 2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.lz4_bytes, 4194304, 1e-6);
	/* as much again of zeros, 8 KiB of them distinct: 2e6 / (8192 + 1e6 * 0.8) */
	cdc.bytes = 2000000;
	cdc.zero_bytes = 1000000;
	cdc.zero_distinct_bytes = 8192;
	cdc_sizes(&e, &cdc, &g, 10485760);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_ratio, 2000000.0 / 808192, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.shifted_share, 0.025, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(e.dedup_bytes, 10485760.0 * 808192 / 2000000, 1e-6);
	cdc.avg = 16384; /* no 16 KiB pieces measured: dedup alone */
	cdc_sizes(&e, &cdc, &g, 10485760);
	CU_ASSERT_TRUE(e.have);
	CU_ASSERT_FALSE(e.have_lz4);
	cdc_sizes(&e, &cdc, NULL, 10485760); /* content not the dataset's: no LZ4 either */
	CU_ASSERT_FALSE(e.have_lz4);
	cdc.bytes = 0; /* no chunk */
	cdc_sizes(&e, &cdc, &g, 10485760);
	CU_ASSERT_FALSE(e.have);
	CU_ASSERT_STRING_EQUAL(e.why_not, "[cdc 1] measured no chunk");
	cdc.present = false;
	cdc_sizes(&e, &cdc, &g, 10485760);
	CU_ASSERT_FALSE(e.have);
	CU_ASSERT_STRING_EQUAL(e.why_not, "no [cdc 1] in the distribution");
	cdc_sizes(&e, NULL, NULL, 1);
	CU_ASSERT_FALSE(e.have);
}

/* recipe 9 learns the file system from /proc/self/mountinfo: the longest mount point above the
 * path (the last of equals: a mount over another), escapes undone, mount and super options. */
static void mountinfo_lookup(void)
{
	const char *text =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
		"40 22 0:35 / /mnt/b rw,relatime shared:20 - btrfs /dev/loop0 rw,compress-force=zstd:3,space_cache=v2\n"
		"41 22 0:36 / /mnt/b\\040c rw - xfs /dev/loop1 rw,attr2\n"
		"42 40 0:37 / /mnt/b/sub rw - tmpfs tmpfs rw\n"
		"43 22 0:38 / /mnt/b rw,noatime - btrfs /dev/loop2 rw,space_cache=v2\n"
		"garbage line\n";
	char type[32], opts[256], forced[32];
	CU_ASSERT_EQUAL_FATAL(space_parse_mountinfo(text, "/home/x", type, sizeof type, opts, sizeof opts), 0);
	CU_ASSERT_STRING_EQUAL(type, "ext4");
	CU_ASSERT_EQUAL(space_parse_mountinfo(text, "/mnt/b c/f", type, sizeof type, opts, sizeof opts), 0);
	CU_ASSERT_STRING_EQUAL(type, "xfs"); /* "\040" is a space */
	CU_ASSERT_EQUAL(space_parse_mountinfo(text, "/mnt/bc", type, sizeof type, opts, sizeof opts), 0);
	CU_ASSERT_STRING_EQUAL(type, "ext4"); /* /mnt/b is not above /mnt/bc */
	CU_ASSERT_EQUAL(space_parse_mountinfo(text, "/mnt/b/sub/d", type, sizeof type, opts, sizeof opts), 0);
	CU_ASSERT_STRING_EQUAL(type, "tmpfs");
	/* /mnt/b twice: the later mount hides the earlier (no forced compression there) */
	CU_ASSERT_EQUAL(space_parse_mountinfo(text, "/mnt/b/d", type, sizeof type, opts, sizeof opts), 0);
	CU_ASSERT_STRING_EQUAL(type, "btrfs");
	CU_ASSERT_STRING_EQUAL(opts, "rw,noatime,rw,space_cache=v2");
	space_forced_compression(opts, forced, sizeof forced);
	CU_ASSERT_STRING_EQUAL(forced, "");
	space_forced_compression("rw,compress-force=zstd:3,space_cache=v2", forced, sizeof forced);
	CU_ASSERT_STRING_EQUAL(forced, "zstd:3");
	space_forced_compression("rw,compress=zstd:1", forced, sizeof forced);
	CU_ASSERT_STRING_EQUAL(forced, ""); /* not forced */
	space_forced_compression("compress-force=lzo", forced, sizeof forced);
	CU_ASSERT_STRING_EQUAL(forced, "lzo");
	CU_ASSERT_EQUAL(space_parse_mountinfo("", "/x", type, sizeof type, opts, sizeof opts), -1);
}

int suite_space(void)
{
	static const struct unit_test tests[] = {
		{"mm_stat fields", mm_stat_fields},
		{"--space-cmd output", command_output},
		{"source per target", source_per_target},
		{"host CPU and memory from /proc", host_cpu_and_memory},
		{"record store: dedup and sizes by hand", record_dedup_by_hand},
		{"record store: record edges in files", record_edges_by_hand},
		{"record store: a sample of identities", record_sample_scaled},
		{"CDC store: the dataset's ratio by hand", cdc_by_hand},
		{"the file system from mountinfo", mountinfo_lookup},
		{NULL, NULL},
	};
	return unit_add_suite("space", tests);
}
