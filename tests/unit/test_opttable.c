/* test_opttable.c - CUnit suite for lib/opttable.c: every row type through the one parser,
 * ranges and their wording in both styles, subcommand masks in getopt, k=v lists, help lines. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "lib/opttable.h"

struct sample {
	bool flag;
	int mode, kind;
	uint64_t count, size, ns;
	double rate, custom;
	char *name;
	bool help;
};

static const char *const modes[] = {"fast", "safe", "slow", NULL};
static const char *const words[] = {"dist", NULL};

static int parse_half(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		      struct dd_err *err)
{
	if (strcmp(v, "half"))
		return err_fail(err, -1, "%s: '%s' is not half", label, shown);
	((struct sample *)base)->custom = 0.5;
	return 0;
}

#define OFF(f) offsetof(struct sample, f)
static const struct opt_row rows[] = {
	{"flag", 'x', NULL, OT_FLAG, OFF(flag), NULL, NULL, 0, 0, 0, 0, "G", "a flag", 0, NULL},
	{"mode", 0, "M", OT_ENUM, OFF(mode), "fast", modes, 0, 0, 0, 0, "G", "a mode", 1, NULL},
	{NULL, 'f', NULL, OT_SET, OFF(kind), NULL, NULL, 0, 0, 0, 'f', "G", "kind f", 2, NULL},
	{"count", 'c', "N", OT_UINT, OFF(count), "dist", words, 0, 1, 20, 0, "G", "a count", 0, NULL},
	{"size", 's', "SIZE", OT_SIZE, OFF(size), "4096", NULL, 1, 512, 0, 0, "G", "a size", 1, NULL},
	{"time", 't', "DUR", OT_DURATION, OFF(ns), "0", NULL, 1000000000ULL, 0, 86400ULL * 1000000000ULL, 0, "G",
	 "a duration", 2, NULL},
	{"rate", 0, "R", OT_RATE, OFF(rate), "0", NULL, 0, 0, 0, 0, "G", "a rate", 0, NULL},
	{"half", 0, "H", OT_CUSTOM, OFF(custom), NULL, NULL, 0, 0, 0, 0, "G", "custom", 0, parse_half},
	{"name", 'n', "FILE", OT_STRING, OFF(name), NULL, NULL, 0, 0, 0, 0, "G", "a name", 0, NULL},
	{"help", 'h', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'h', "G", "show this help", 0, NULL},
};
static const struct opt_table table = {rows, sizeof rows / sizeof rows[0], 0, 20};
static const struct opt_table gen_style = {rows, sizeof rows / sizeof rows[0],
					   OPT_STYLE_OR_LIST | OPT_STYLE_SIZE_UNITS, 20};

static const struct opt_row *row(const char *name)
{
	return &rows[opt_find_long(&table, name)];
}

static void test_types(void)
{
	struct sample s = {0};
	struct dd_err e;
	CU_ASSERT_EQUAL(opt_defaults(&table, 0, &s, &e), 0);
	CU_ASSERT_EQUAL(s.mode, 0);
	CU_ASSERT_EQUAL(s.count, 0); /* the word "dist": index 0, below the range */
	CU_ASSERT_EQUAL(s.size, 4096);
	CU_ASSERT_EQUAL(opt_apply(&table, row("flag"), &s, NULL, &e), 0);
	CU_ASSERT_TRUE(s.flag);
	CU_ASSERT_EQUAL(opt_apply(&table, row("flag"), &s, "off", &e), 0);
	CU_ASSERT_FALSE(s.flag);
	CU_ASSERT_EQUAL(opt_apply(&table, row("mode"), &s, "slow", &e), 0);
	CU_ASSERT_EQUAL(s.mode, 2);
	CU_ASSERT_EQUAL(opt_apply(&table, &rows[2], &s, NULL, &e), 0);
	CU_ASSERT_EQUAL(s.kind, 'f');
	CU_ASSERT_EQUAL(opt_apply(&table, row("count"), &s, "7", &e), 0);
	CU_ASSERT_EQUAL(s.count, 7);
	CU_ASSERT_EQUAL(opt_apply(&table, row("size"), &s, "8KiB", &e), 0);
	CU_ASSERT_EQUAL(s.size, 8192);
	CU_ASSERT_EQUAL(opt_apply(&table, row("time"), &s, "90", &e), 0);
	CU_ASSERT_EQUAL(s.ns, 90000000000ULL);
	CU_ASSERT_EQUAL(opt_apply(&table, row("rate"), &s, "2.5", &e), 0);
	CU_ASSERT_DOUBLE_EQUAL(s.rate, 2.5, 1e-12);
	CU_ASSERT_EQUAL(opt_apply(&table, row("half"), &s, "half", &e), 0);
	CU_ASSERT_DOUBLE_EQUAL(s.custom, 0.5, 1e-12);
	CU_ASSERT_EQUAL(opt_apply(&table, row("name"), &s, "a/b", &e), 0);
	CU_ASSERT_STRING_EQUAL(s.name, "a/b");
	CU_ASSERT_EQUAL(opt_apply(&table, row("help"), &s, NULL, &e), OPT_ACTION);
	opt_free_strings(&table, &s);
	CU_ASSERT_PTR_NULL(s.name);
}

static void refused(const struct opt_table *t, const char *name, const char *v, const char *want)
{
	struct sample s = {0};
	struct dd_err e;
	CU_ASSERT_EQUAL(opt_apply(t, row(name), &s, v, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, want);
	if (strcmp(e.msg, want))
		fprintf(stderr, "\n  got '%s'\n  want '%s'\n", e.msg, want);
}

static void test_ranges(void)
{
	refused(&table, "count", "21", "--count: 21 is out of range (1 to 20)");
	refused(&table, "count", "x", "--count: 'x' is neither dist nor a whole number");
	refused(&table, "size", "100", "--size: 100 is out of range (at least 512 bytes)");
	refused(&gen_style, "size", "100", "--size: 100 is out of range (at least 512 B)");
	refused(&table, "size", "1Q", "--size: '1Q' is not a valid size: unknown size suffix (use B, KiB, MiB, GiB, TiB or PiB)");
	refused(&table, "time", "2d", "--time: 2d is longer than 1 days");
	refused(&table, "rate", "0.0001", "--rate: 0.0001 is too small (at least 0.001; 0 for none)");
	refused(&table, "mode", "quick", "--mode: unknown value 'quick' (one of: fast, safe, slow)");
	refused(&gen_style, "mode", "quick", "--mode: unknown value 'quick' (fast, safe or slow)");
	refused(&table, "flag", "maybe", "--flag: 'maybe' is not a boolean (use 1/0, yes/no, true/false)");
	refused(&table, "name", "", "--name: empty value");
	refused(&table, "half", "full", "--half: 'full' is not half");
}

static int count_rows(void *ctx, size_t r, const char *v, struct dd_err *err)
{
	(void)v, (void)err;
	((int *)ctx)[r]++;
	return 0;
}

static void test_masks(void)
{
	char a0[] = "p", a1[] = "--mode", a2[] = "safe", a3[] = "-f", a4[] = "operand", a5[] = "--size=1";
	char *argv[] = {a0, a1, a2, a3, a4, NULL};
	int seen[16] = {0}, operands = 0;
	struct dd_err e;
	/* mask 2: --mode (mask 1) is not an option there; -f (mask 2) is */
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 2, 5, argv, "sub", count_rows, seen, &operands, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "sub: unknown option '--mode' (see --help)");
	char *argv1[] = {a0, a1, a2, a3, a4, NULL};
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 3, 5, argv1, NULL, count_rows, seen, &operands, &e), 0);
	CU_ASSERT_EQUAL(seen[1], 1);
	CU_ASSERT_EQUAL(seen[2], 1);
	CU_ASSERT_EQUAL(operands, 4);
	CU_ASSERT_STRING_EQUAL(argv1[operands], "operand");
	char *argv2[] = {a0, a5, NULL};
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 2, 2, argv2, NULL, count_rows, seen, &operands, &e), -1);
	char a6[] = "-c";
	char *argv3[] = {a0, a6, NULL};
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 0, 2, argv3, NULL, count_rows, seen, &operands, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "option '-c' needs a value");
}

static void test_kv(void)
{
	struct sample s = {0};
	struct dd_err e;
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "mode=safe,size=1MiB,flag=yes,name=x", ',', NULL, NULL, &e), 0);
	CU_ASSERT_EQUAL(s.mode, 1);
	CU_ASSERT_EQUAL(s.size, 1048576);
	CU_ASSERT_TRUE(s.flag);
	CU_ASSERT_STRING_EQUAL(s.name, "x");
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "mode=safe,bogus=1", ',', NULL, NULL, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "unknown key 'bogus'");
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "mode", ',', NULL, NULL, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "'mode' is not key=value");
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "size=1", ',', NULL, NULL, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "--size: 1 is out of range (at least 512 bytes)");
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "help=1", ',', NULL, NULL, &e), -1);
	bool given[16] = {false};
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "mode=fast;mode=slow", ';', given, NULL, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "mode given twice");
	CU_ASSERT_TRUE(given[1]);
	CU_ASSERT_EQUAL(s.mode, 0);
	/* a caller's own word for a key */
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "bogus=1", ',', NULL, "engine option", &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "unknown engine option 'bogus'");
	memset(given, 0, sizeof given);
	CU_ASSERT_EQUAL(opt_parse_kv(&table, &s, "mode=fast,mode=fast", ',', given, "engine option", &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "engine option mode given twice");
	opt_free_strings(&table, &s);
}

static void test_docs(void)
{
	char buf[1024];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	opt_print_help_row(f, &table, row("size"), " (x)");
	opt_print_help_row(f, &table, row("flag"), NULL);
	opt_print_completion(f, &table, 1);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  -s, --size SIZE    a size [4096] (x)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  -x, --flag         a flag\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--mode M fast safe slow\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "-x -\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "-f -\n")); /* mask 2 only */
	CU_ASSERT_PTR_NULL(strstr(buf, "--time"));
	f = fmemopen(buf, sizeof buf, "w");
	opt_print_kv_completion(f, &table, "vol:,");
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "vol:,mode= M fast safe slow\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "vol:,flag= -\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "help="));
}

/* An unknown long option names the nearest one when it is close, and nothing otherwise. */
static void test_nearest(void)
{
	CU_ASSERT_STRING_EQUAL(opt_nearest_long(&table, 0, "--szie"), "size"); /* two letters swapped */
	CU_ASSERT_STRING_EQUAL(opt_nearest_long(&table, 0, "--counts=3"), "count");
	CU_ASSERT_STRING_EQUAL(opt_nearest_long(&table, 0, "nmae"), "name");
	CU_ASSERT_PTR_NULL(opt_nearest_long(&table, 0, "--bogus"));
	CU_ASSERT_PTR_NULL(opt_nearest_long(&table, 0, "--"));
	CU_ASSERT_PTR_NULL(opt_nearest_long(&table, 2, "--mdoe")); /* --mode is not in mask 2 */
	CU_ASSERT_STRING_EQUAL(opt_nearest_long(&table, 1, "--mdoe"), "mode");
	char a0[] = "p", a1[] = "--szie=1", a2[] = "--zzzzzz";
	char *argv[] = {a0, a1, NULL}, *argv2[] = {a0, a2, NULL};
	int seen[16] = {0}, operands;
	struct dd_err e;
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 0, 2, argv, "sub", count_rows, seen, &operands, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "sub: unknown option '--szie=1' (did you mean --size?)");
	CU_ASSERT_EQUAL(opt_parse_argv(&table, 0, 2, argv2, NULL, count_rows, seen, &operands, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.msg, "unknown option '--zzzzzz' (see --help)");
}

/* A long help is wrapped at spaces within OPT_HELP_COLUMNS, its further lines at the help's
 * column. */
static void test_help_wrap(void)
{
	static const struct opt_row longer = {"long-one", 'l', "VALUE", OT_STRING, 0, "x", NULL, 0, 0, 0, 0, "G",
		"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
		"sixteen seventeen", 0, NULL};
	char buf[1024];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	opt_print_help_row(f, &table, &longer, " (scan, merge)");
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "  -l, --long-one VALUE  one two three four five six seven eight nine ten eleven\n"
				    "                     twelve thirteen fourteen fifteen sixteen seventeen [x]\n"
				    "                     (scan, merge)\n");
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		CU_ASSERT(strlen(line) <= OPT_HELP_COLUMNS);
}

int suite_opttable(void)
{
	static const struct unit_test tests[] = {
		{"every row type through the one parser; defaults; strings freed", test_types},
		{"ranges and refusals, in both wordings", test_ranges},
		{"an unknown long option: the nearest name when close", test_nearest},
		{"--help entries wrapped to 80 columns", test_help_wrap},
		{"getopt from the rows of a subcommand mask; operands; missing values", test_masks},
		{"k=v lists against the rows", test_kv},
		{"--help lines and completion data from the rows", test_docs},
		{NULL, NULL},
	};
	return unit_add_suite("opttable", tests);
}
