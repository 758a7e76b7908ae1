/* test_gen_options.c - dedisgen's option table: subcommands, the original DEDISgen flags,
 * block-size lists, and the refusals (bad sizes, missing arguments). */
#include <string.h>
#include "gen/genopts.h"
#include "unit.h"

static int parse(struct gen_options *o, struct dd_err *e, int argc, char **argv)
{
	return gen_options_parse(argc, argv, o, e);
}

#define ARGV(...) ((char *[]){"dedisgen", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"dedisgen", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, e, ...) parse(o, e, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_defaults_and_original(void)
{
	struct gen_options o;
	struct dd_err e;
	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "/data"), 0);
	CU_ASSERT_EQUAL(o.cmd, CMD_SCAN);
	CU_ASSERT_EQUAL(o.nsizes, 1);
	CU_ASSERT_EQUAL(o.sizes[0], 4096);
	CU_ASSERT_STRING_EQUAL(gen_hash_names[o.hash], "sha1");
	CU_ASSERT_EQUAL(o.npaths, 1);
	gen_options_free(&o);

	/* the original DEDISgen form */
	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "-f", "-p/data", "-oout.dist", "-b8192,4096", "-z/var/tmp/db", "-k"), 0);
	CU_ASSERT_EQUAL(o.kind, 'f');
	CU_ASSERT_STRING_EQUAL(o.paths[0], "/data");
	CU_ASSERT_STRING_EQUAL(o.output, "out.dist");
	CU_ASSERT_EQUAL(o.nsizes, 2);
	CU_ASSERT_EQUAL(o.sizes[0], 4096);
	CU_ASSERT_EQUAL(o.sizes[1], 8192);
	CU_ASSERT_STRING_EQUAL(o.db, "/var/tmp/db");
	CU_ASSERT(o.keep);
	gen_options_free(&o);

	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "scan", "a", "--hash", "sha256", "-b", "4KiB,1MiB,512", "-o", "x", "b"), 0);
	CU_ASSERT_EQUAL(o.npaths, 2);
	CU_ASSERT_EQUAL(o.nsizes, 3);
	CU_ASSERT_EQUAL(o.sizes[0], 512);
	CU_ASSERT_EQUAL(o.sizes[2], 1048576);
	gen_options_free(&o);
}

static void test_subcommands(void)
{
	struct gen_options o;
	struct dd_err e;
	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "compare", "a.dist", "b.dist", "--json", "--max-diff", "0.5"), 0);
	CU_ASSERT_EQUAL(o.cmd, CMD_COMPARE);
	CU_ASSERT(o.json_stdout);
	CU_ASSERT(o.max_diff > 0.49 && o.max_diff < 0.51);
	gen_options_free(&o);
	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "show", "a.dist"), 0);
	CU_ASSERT_EQUAL(o.top, 10);
	gen_options_free(&o);
	CU_ASSERT_EQUAL_FATAL(PARSE(&o, &e, "merge", "d1", "d2", "-o", "m.dist"), 0);
	CU_ASSERT_EQUAL(o.npaths, 2);
	gen_options_free(&o);
}

static void test_refusals(void)
{
	struct gen_options o;
	struct dd_err e;
	const char *bad[] = {"3000", "256", "2MiB", "4096,x", "0", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT_EQUAL(PARSE(&o, &e, "-b", (char *)bad[i], "/data"), -1);
		gen_options_free(&o);
	}
	CU_ASSERT_EQUAL(PARSE(&o, &e, "--hash", "md5", "/data"), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "md5"));
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "-q"), -1); /* no PATH */
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "-b", "4096,8192", "/data"), -1); /* several sizes, no -o */
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "-k", "/data"), -1); /* -k without --db */
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "show", "a", "b"), -1);
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "compare", "a", "--max-diff", "x", "b"), -1);
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "show", "--max-diff", "1", "a"), -1); /* not a show option */
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "merge", "d1"), -1); /* no destination */
	gen_options_free(&o);
	CU_ASSERT_EQUAL(PARSE(&o, &e, "/data", "--threads", "5000"), -1);
	gen_options_free(&o);
}

int suite_gen_options(void)
{
	static const struct unit_test tests[] = {
		{"defaults and original flags", test_defaults_and_original},
		{"subcommands", test_subcommands},
		{"refusals", test_refusals},
		{NULL, NULL},
	};
	return unit_add_suite("gen_options", tests);
}
