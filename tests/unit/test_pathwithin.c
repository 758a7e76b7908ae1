/* test_pathwithin.c - path_parent by name, path_entry_of (one entry by any of its names), and
 * path_within: a directory itself, files and new names under it (through a
 * symbolic link and a "..", too) are within; a sibling whose name starts the same, a missing
 * parent and the directory's parent are not. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/pathwithin.h"
#include "unit.h"

static void test_within(void)
{
	char base[] = "/tmp/dedis-unit-within-XXXXXX", p[PATH_MAX], q[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
	snprintf(p, sizeof p, "%s/vol", base);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
	snprintf(q, sizeof q, "%s/volume", base); /* shares "vol" as a prefix, not a directory */
	CU_ASSERT_EQUAL_FATAL(mkdir(q, 0755), 0);
	snprintf(q, sizeof q, "%s/vol/sub", base);
	CU_ASSERT_EQUAL_FATAL(mkdir(q, 0755), 0);
	snprintf(q, sizeof q, "%s/link", base);
	CU_ASSERT_EQUAL_FATAL(symlink(p, q), 0);

	CU_ASSERT_EQUAL(path_within(p, p), 1);
	snprintf(q, sizeof q, "%s/vol/sub", base);
	CU_ASSERT_EQUAL(path_within(q, p), 1);
	snprintf(q, sizeof q, "%s/vol/sub/new-file", base); /* not there yet */
	CU_ASSERT_EQUAL(path_within(q, p), 1);
	snprintf(q, sizeof q, "%s/link/new-file", base); /* through a link to it */
	CU_ASSERT_EQUAL(path_within(q, p), 1);
	snprintf(q, sizeof q, "%s/volume/../vol/x", base);
	CU_ASSERT_EQUAL(path_within(q, p), 1);
	snprintf(q, sizeof q, "%s/volume/x", base);
	CU_ASSERT_EQUAL(path_within(q, p), 0);
	CU_ASSERT_EQUAL(path_within(base, p), 0);
	snprintf(q, sizeof q, "%s/missing/x", base);
	CU_ASSERT_EQUAL(path_within(q, p), 0);
	snprintf(q, sizeof q, "%s/gone", base);
	CU_ASSERT(path_within(p, q) < 0);

	snprintf(q, sizeof q, "rm -rf '%s'", base);
	CU_ASSERT_EQUAL(system(q), 0);
}

static void test_parent(void)
{
	char out[64];
	const char *cases[][2] = {{"a/b", "a"}, {"a/b/", "a"}, {"/a", "/"}, {"b", "."}, {"/a/b//", "/a"}, {"/", "/"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		path_parent(cases[i][0], out, sizeof out);
		CU_ASSERT_STRING_EQUAL(out, cases[i][1]);
	}
}

/* One entry by any of its names (".", a link to its directory, trailing slashes); another base
 * name, or another directory, is another entry; a missing directory has none. */
static void test_entry(void)
{
	char base[] = "/tmp/dedis-unit-entry-XXXXXX", p[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
	snprintf(p, sizeof p, "%s/d", base);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/ld", base);
	CU_ASSERT_EQUAL_FATAL(symlink("d", p), 0);
	struct path_entry a, b;
	snprintf(p, sizeof p, "%s/d/x", base);
	CU_ASSERT_FATAL(path_entry_of(p, &a));
	CU_ASSERT_STRING_EQUAL(a.base, "x");
	snprintf(p, sizeof p, "%s/d/./x/", base);
	CU_ASSERT_FATAL(path_entry_of(p, &b));
	CU_ASSERT(path_entry_same(&a, &b));
	snprintf(p, sizeof p, "%s/ld/x", base); /* through a link to its directory */
	CU_ASSERT_FATAL(path_entry_of(p, &b));
	CU_ASSERT(path_entry_same(&a, &b));
	snprintf(p, sizeof p, "%s/d/y", base);
	CU_ASSERT_FATAL(path_entry_of(p, &b));
	CU_ASSERT(!path_entry_same(&a, &b));
	snprintf(p, sizeof p, "%s/x", base); /* same name, another directory */
	CU_ASSERT_FATAL(path_entry_of(p, &b));
	CU_ASSERT(!path_entry_same(&a, &b));
	snprintf(p, sizeof p, "%s/missing/x", base);
	CU_ASSERT(!path_entry_of(p, &b));

	snprintf(p, sizeof p, "rm -rf '%s'", base);
	CU_ASSERT_EQUAL(system(p), 0);
}

int suite_pathwithin(void)
{
	static const struct unit_test tests[] = {
		{"a directory, names under it (links, ..) within; a prefix sibling not", test_within},
		{"a path's parent by name", test_parent},
		{"a path's directory entry: one by any of its names", test_entry},
		{NULL, NULL},
	};
	return unit_add_suite("path_within", tests);
}
