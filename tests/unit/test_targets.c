/* test_targets.c - the target kinds' contract (target.h): every registry entry has the ops the
 * core calls unguarded, its flags have the ops they promise, and each --target spelling matches
 * exactly one kind. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "bench/ioengine/ioengine.h"
#include "bench/target/target.h"
#include "unit.h"

static void every_kind_has_its_ops(void)
{
	CU_ASSERT_EQUAL(target_kind_count, 5);
	for (size_t i = 0; i < target_kind_count; i++) {
		const struct target_ops *k = target_kinds[i];
		CU_ASSERT_PTR_NOT_NULL_FATAL(k);
		CU_ASSERT_PTR_NOT_NULL(k->name);
		CU_ASSERT_PTR_NOT_NULL(k->match);
		CU_ASSERT_PTR_NOT_NULL(k->probe);
		for (size_t j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(k->name, target_kinds[j]->name);
		/* what a flag promises, an op delivers */
		if (k->flags & TARGET_VALIDATED)
			CU_ASSERT_PTR_NOT_NULL(k->observe);
		if (k->flags & TARGET_FILE_PER_WORKER)
			CU_ASSERT_PTR_NOT_NULL(k->worker_path);
		char path[64] = "";
		struct target t;
		memset(&t, 0, sizeof t);
		t.ops = k;
		if (k->space && k->space(&t, path, sizeof path) == TARGET_SPACE_SELF)
			CU_ASSERT_PTR_NOT_NULL(k->observe);
		/* a kind that stores nothing has no I/O of its own to a file: its path is forced */
		if (k->flags & TARGET_STORES_NOTHING) {
			CU_ASSERT_PTR_NOT_NULL(k->io);
			CU_ASSERT_PTR_NULL(k->prepare);
		}
	}
}

/* The kinds --target matches, in both rounds (by spelling, then by what stat says). */
static unsigned matches(const char *path, const struct stat *st, const struct target_ops **which)
{
	unsigned n = 0;
	for (size_t i = 0; i < target_kind_count; i++)
		if (target_kinds[i]->match(path, st)) {
			*which = target_kinds[i];
			n++;
		}
	return n;
}

static void each_spelling_one_kind(void)
{
	const struct target_ops *k = NULL;
	CU_ASSERT_EQUAL(matches("null", NULL, &k), 1);
	CU_ASSERT_PTR_EQUAL(k, &target_null_ops);
	CU_ASSERT_EQUAL(matches("engine:/tmp/vol,index=mem", NULL, &k), 1);
	CU_ASSERT_PTR_EQUAL(k, &target_engine_ops);
	CU_ASSERT_EQUAL(matches("/tmp", NULL, &k), 0);
	struct stat st = {.st_mode = S_IFDIR | 0755};
	CU_ASSERT_EQUAL(matches("/tmp", &st, &k), 1);
	CU_ASSERT_PTR_EQUAL(k, &target_dir_ops);
	st.st_mode = S_IFREG | 0644;
	CU_ASSERT_EQUAL(matches("/tmp/f", &st, &k), 1);
	CU_ASSERT_PTR_EQUAL(k, &target_file_ops);
	st.st_mode = S_IFBLK | 0660;
	CU_ASSERT_EQUAL(matches("/dev/x", &st, &k), 1);
	CU_ASSERT_PTR_EQUAL(k, &target_blockdev_ops);
	st.st_mode = S_IFCHR | 0666;
	CU_ASSERT_EQUAL(matches("/dev/null", &st, &k), 0);
}

/* null has one meaning: the kind whose ops take the null I/O path, whatever --ioengine says. */
static void null_forces_its_io_path(void)
{
	struct target t;
	struct dd_err err;
	struct target_request req = {.path = "null", .procs = 2, .file_size = 1 << 20, .block_size = 4096};
	CU_ASSERT_EQUAL_FATAL(target_probe_for_run(&req, false, ioengine_find("sync"), &t, &err), 0);
	CU_ASSERT_PTR_EQUAL(t.ops, &target_null_ops);
	CU_ASSERT_PTR_EQUAL(t.io, &ioengine_null);
	CU_ASSERT_FALSE(t.direct);
	CU_ASSERT_FALSE(target_zeros_known(&t, false, false));
	CU_ASSERT_TRUE(target_zeros_known(&t, true, false));
	target_release(&t);
	/* an engine that needs O_DIRECT makes the run direct even where the target forces its own path */
	CU_ASSERT_EQUAL_FATAL(target_probe_for_run(&req, false, ioengine_find("libaio"), &t, &err), 0);
	CU_ASSERT_TRUE(t.direct);
	CU_ASSERT_PTR_EQUAL(t.io, &ioengine_null);
	target_release(&t);
}

int suite_targets(void)
{
	static const struct unit_test tests[] = {
		{"every kind has its ops", every_kind_has_its_ops},
		{"each --target spelling is one kind", each_spelling_one_kind},
		{"null forces its I/O path", null_forces_its_io_path},
		{NULL, NULL},
	};
	return unit_add_suite("targets", tests);
}
