/* test_space.c - issue 14's readers: zram's mm_stat and --space-cmd output parsed, the source a
 * target gets, and the host's CPU and memory shares computed from /proc files of known content. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hostload.h"
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

int suite_space(void)
{
	static const struct unit_test tests[] = {
		{"mm_stat fields", mm_stat_fields},
		{"--space-cmd output", command_output},
		{"source per target", source_per_target},
		{"host CPU and memory from /proc", host_cpu_and_memory},
		{NULL, NULL},
	};
	return unit_add_suite("space", tests);
}
