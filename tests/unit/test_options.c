/* test_options.c - the option table: every option set on the command line and in the INI file
 * gives the same configuration, original DEDISbench keys translate, units and errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench/benchopts.h"
#include "bench/target/target.h"
#include "unit.h"

/* A valid non-default value for a row, as text. */
static const char *sample_value(const struct opt_row *d)
{
	switch (d->type) {
	case OT_FLAG: return "1";
	case OT_UINT: return d->max && d->max < 3 ? "1" : "3";
	case OT_SIZE: return "8KiB";
	case OT_DURATION: return "90s";
	case OT_RATE:
	case OT_CUSTOM: return "250";
	case OT_ENUM: return d->choices[1];
	case OT_STRING: return "some/path";
	default: return NULL;
	}
}

static int parse(struct bench_cli *cli, int argc, char **argv, struct dd_err *e)
{
	return options_parse(argc, argv, cli, e);
}

static int same_options(const struct bench_options *a, const struct bench_options *b)
{
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		const char *pa = (const char *)a + d->offset, *pb = (const char *)b + d->offset;
		switch (d->type) {
		case OT_FLAG: if (*(const bool *)pa != *(const bool *)pb) return 0; break;
		case OT_SET:
		case OT_ENUM: if (*(const int *)pa != *(const int *)pb) return 0; break;
		case OT_UINT:
		case OT_SIZE:
		case OT_DURATION: if (*(const uint64_t *)pa != *(const uint64_t *)pb) return 0; break;
		case OT_RATE:
		case OT_CUSTOM: if (*(const double *)pa != *(const double *)pb) return 0; break;
		case OT_STRING: {
			const char *x = *(char *const *)pa, *y = *(char *const *)pb;
			if ((x == NULL) != (y == NULL) || (x && strcmp(x, y)))
				return 0;
			break;
		}
		case OT_ACTION: break;
		}
	}
	return 1;
}

static void cli_equals_ini(void)
{
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		const char *v = sample_value(d);
		if (!d->name || !v || !strcmp(d->name, "config"))
			continue;
		char arg[256];
		if (d->arg)
			snprintf(arg, sizeof arg, "--%s=%s", d->name, v);
		else
			snprintf(arg, sizeof arg, "--%s", d->name);
		char *argv[] = {"dedisbench", arg, NULL};
		struct bench_cli from_cli, from_ini;
		struct dd_err e;
		CU_ASSERT_EQUAL_FATAL(parse(&from_cli, 2, argv, &e), 0);
		CU_ASSERT_TRUE(from_cli.given[i]);
		options_defaults(&from_ini);
		CU_ASSERT_EQUAL_FATAL(options_apply_ini(&from_ini, "dedisbench", d->name, v, &e), 0);
		CU_ASSERT_TRUE(same_options(&from_cli.o, &from_ini.o));
		/* and the value changed something: the default is not the sample */
		struct bench_cli defaults;
		options_defaults(&defaults);
		CU_ASSERT_FALSE(same_options(&defaults.o, &from_cli.o));
		options_free(&from_cli.o);
		options_free(&from_ini.o);
		options_free(&defaults.o);
	}
}

static void short_forms_and_units(void)
{
	char *argv[] = {"dedisbench", "-m", "-nr100", "-nw50", "-t", "5", "-s", "100", "-b", "8192", "-P", "2", NULL};
	struct bench_cli c;
	struct dd_err e;
	CU_ASSERT_EQUAL_FATAL(parse(&c, 12, argv, &e), 0);
	CU_ASSERT_EQUAL(c.o.mode, MODE_MIXED);
	CU_ASSERT_DOUBLE_EQUAL(c.o.read_rate, 100, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(c.o.write_rate, 50, 1e-9);
	CU_ASSERT_EQUAL(c.o.time_ns, 5ULL * 60 * 1000000000ULL); /* bare -t is minutes, as DEDISbench */
	CU_ASSERT_EQUAL(c.o.size, 100ULL << 20);                 /* bare -s is MiB */
	CU_ASSERT_EQUAL(c.o.block_size, 8192);
	CU_ASSERT_EQUAL(c.o.procs, 2);
	options_free(&c.o);
}

static void legacy_ini_keys(void)
{
	char path[] = "/tmp/dedis-unit-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("[execution]\ndistfile=kernels\naccess_type=2\nnprocs=3\nfilesize=16\nblocksize=8192\n"
	      "populate=1\nsync=1\nseed=5\n[results]\ntempfilespath=/var/tmp\n[structural]\ncleantemp=0\n", f);
	fclose(f);
	char cfgarg[64];
	snprintf(cfgarg, sizeof cfgarg, "--config=%s", path);
	char *argv[] = {"dedisbench", cfgarg, "--procs", "5", NULL};
	struct bench_cli c;
	struct dd_err e;
	CU_ASSERT_EQUAL_FATAL(parse(&c, 4, argv, &e), 0);
	CU_ASSERT_STRING_EQUAL(c.o.dist, "kernels");
	CU_ASSERT_EQUAL(c.o.access, ACCESS_NURAND);
	CU_ASSERT_EQUAL(c.o.procs, 5); /* the command line wins */
	CU_ASSERT_EQUAL(c.o.file_size, 16ULL << 20);
	CU_ASSERT_EQUAL(c.o.block_size, 8192);
	CU_ASSERT_EQUAL(c.o.populate, POPULATE_CONTENT);
	CU_ASSERT_EQUAL(c.o.sync, SYNC_DIRECT);
	CU_ASSERT_EQUAL(c.o.seed, 5);
	CU_ASSERT_STRING_EQUAL(c.o.target, "/var/tmp");
	CU_ASSERT_TRUE(c.o.keep);
	options_free(&c.o);
	unlink(path);
}

static void errors_name_what_and_where(void)
{
	struct bench_cli c;
	struct dd_err e;
	options_defaults(&c);
	CU_ASSERT_NOT_EQUAL(options_apply_ini(&c, "execution", "bogus", "1", &e), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "bogus"));
	CU_ASSERT_NOT_EQUAL(options_apply_ini(&c, "execution", "access_type", "7", &e), 0);
	CU_ASSERT_NOT_EQUAL(options_apply_ini(&c, "dedisbench", "block-size", "100", &e), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "block-size"));
	CU_ASSERT_NOT_EQUAL(options_apply_ini(&c, "dedisbench", "access", "random", &e), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "nurand"));
	options_free(&c.o);
	char *bad1[] = {"dedisbench", "--no-such", NULL};
	CU_ASSERT_NOT_EQUAL(parse(&c, 2, bad1, &e), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--no-such"));
	options_free(&c.o);
	char *bad2[] = {"dedisbench", "--time", "5x", NULL};
	CU_ASSERT_NOT_EQUAL(parse(&c, 3, bad2, &e), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--time"));
	options_free(&c.o);
	char *bad3[] = {"dedisbench", "stray", NULL};
	CU_ASSERT_NOT_EQUAL(parse(&c, 2, bad3, &e), 0);
	options_free(&c.o);
}

/* dedisbench --help unwrapped (each run of blanks and line ends one space), every line checked to
 * be at most 80 columns. Free it. */
static char *help_unwrapped(void)
{
	char *text = NULL, *flat;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CU_ASSERT_FATAL(f != NULL);
	options_print_help(f, "dedisbench");
	fclose(f);
	flat = malloc(len + 1);
	CU_ASSERT_FATAL(flat != NULL);
	size_t n = 0, line = 0;
	for (size_t i = 0; i < len; i++) {
		line = text[i] == '\n' ? 0 : line + 1;
		CU_ASSERT(line <= 80);
		char c = text[i] == '\n' ? ' ' : text[i];
		if (c != ' ' || (n && flat[n - 1] != ' '))
			flat[n++] = c;
	}
	flat[n] = 0;
	free(text);
	return flat;
}

/* --help names every target kind of the registry (its form and words) and every subcommand. */
static void help_names_kinds_and_subcommands(void)
{
	char *flat = help_unwrapped();
	for (size_t i = 0; i < target_kind_count; i++) {
		CU_ASSERT_PTR_NOT_NULL(strstr(flat, target_kinds[i]->usage));
		CU_ASSERT_PTR_NOT_NULL(strstr(flat, target_kinds[i]->about));
	}
	for (size_t i = 0; bench_subcommands[i].name; i++) {
		char want[96];
		snprintf(want, sizeof want, " %s %s", bench_subcommands[i].name, bench_subcommands[i].about);
		CU_ASSERT_PTR_NOT_NULL(strstr(flat, want));
		CU_ASSERT_PTR_NOT_NULL(strstr(flat, bench_subcommands[i].synopsis));
	}
	free(flat);
}

static void help_and_man_list_every_option(void)
{
	char *buf = help_unwrapped(), *man = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&man, &mlen);
	options_print_man(f);
	fclose(f);
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		char want[64], mwant[96];
		if (d->name) {
			snprintf(want, sizeof want, "--%s", d->name);
			/* roff escapes every '-' */
			size_t k = (size_t)snprintf(mwant, sizeof mwant, "\\fB\\-\\-");
			for (const char *p = d->name; *p && k + 3 < sizeof mwant; p++) {
				if (*p == '-')
					mwant[k++] = '\\';
				mwant[k++] = *p;
			}
			mwant[k] = 0;
		} else {
			snprintf(want, sizeof want, "-%c", d->short_opt);
			snprintf(mwant, sizeof mwant, "\\fB\\-%c\\fR", d->short_opt);
		}
		CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
		CU_ASSERT_PTR_NOT_NULL(strstr(buf, d->help));
		if (!strstr(man, mwant))
			fprintf(stderr, "man page lacks %s\n", mwant);
		CU_ASSERT_PTR_NOT_NULL(strstr(man, mwant));
	}
	free(buf);
	free(man);
}

static void json_config_has_every_option(void)
{
	struct bench_cli c;
	options_defaults(&c);
	json_t *j = options_to_json(&c.o);
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		if (d->name && d->type != OT_ACTION)
			CU_ASSERT_PTR_NOT_NULL(json_object_get(j, d->name));
	}
	json_decref(j);
	options_free(&c.o);
}

int suite_options(void)
{
	static const struct unit_test tests[] = {
		{"every option: command line == INI", cli_equals_ini},
		{"short forms, -nrR/-nwW, bare units", short_forms_and_units},
		{"original DEDISbench INI keys; CLI wins", legacy_ini_keys},
		{"errors name the option and the reason", errors_name_what_and_where},
		{"--help and the man page list every option", help_and_man_list_every_option},
		{"JSON config lists every option", json_config_has_every_option},
		{"--help names every target kind and subcommand, in 80 columns", help_names_kinds_and_subcommands},
		{NULL, NULL},
	};
	return unit_add_suite("options", tests);
}
