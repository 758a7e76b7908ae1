/* fuzz_options.c - dedisbench's command line and option values (getopt_long from the option
 * table; sizes, durations, counts and rates through lib/units): the input is NUL-separated
 * arguments. Each parse ends in a one-line error or in values within their rows' ranges; each
 * argument also goes through every units parser, whose results must be self-consistent. */
#include <float.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options_check.h"
#include "lib/units.h"

#define MAX_ARGS 24

int harness_setup(void)
{
	return 0;
}

/* Would this command line read a job file (-f, --config, an abbreviation, a cluster like -kf)?
 * The INI harness covers that path; this one must not open whatever file the input names (a
 * FIFO would block). Asked of getopt_long itself, on a copy of argv (it permutes it). */
static bool reads_a_file(int argc, char **argv)
{
	struct option longs[64 + 1];
	char shorts[3 * 64 + 2];
	options_build_getopt(longs, shorts);
	char *copy[MAX_ARGS + 2];
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *argv);
	optind = 0;
	opterr = 0;
	int c;
	bool file = false;
	while ((c = getopt_long(argc, copy, shorts, longs, NULL)) != -1) {
		long row = c >= 256 ? c - 256 : -1;
		if (c == 'f' || (row >= 0 && bench_option_table[row].name && !strcmp(bench_option_table[row].name, "config")))
			file = true;
	}
	return file;
}

static void check_units(const char *s)
{
	struct dd_err why; /* cleared before each parser, so a reason is that parser's */
	uint64_t v, again;
	err_clear(&why);
	if (units_parse_size(s, 1, &v, &why) == 0) {
		char text[64];
		units_format_size(v, text, sizeof text);
		/* whole binary units print exactly and read back to the same bytes */
		if (!strchr(text, '.') && (units_parse_size(text, 1, &again, &why) || again != v))
			harness_fail("size %s = %llu prints as '%s', which reads back differently", s,
				     (unsigned long long)v, text);
	} else if (!why.msg[0]) {
		harness_fail("size '%s' refused without a reason", s);
	}
	err_clear(&why);
	if (units_parse_duration(s, 1, &v, &why) && !why.msg[0])
		harness_fail("duration '%s' refused without a reason", s);
	err_clear(&why);
	if (units_parse_count(s, &v, &why) && !why.msg[0])
		harness_fail("count '%s' refused without a reason", s);
	double r;
	err_clear(&why);
	if (units_parse_rate(s, &r, &why) == 0) {
		if (!(r >= 0) || r > UNITS_RATE_MAX)
			harness_fail("rate '%s' parsed as %g", s, r);
	} else if (!why.msg[0]) {
		harness_fail("rate '%s' refused without a reason", s);
	}
}

void harness_one(const uint8_t *data, size_t len)
{
	char *text = harness_text(data, len);
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = "dedisbench";
	for (size_t at = 0; at <= len && argc < MAX_ARGS + 1;) {
		char *arg = text + at;
		size_t n = strlen(arg);
		argv[argc++] = arg;
		check_units(arg);
		at += n + 1;
	}
	argv[argc] = NULL;
	if (reads_a_file(argc, argv))
		goto out;
	struct bench_cli cli;
	struct dd_err err;
	if (options_parse(argc, argv, &cli, &err)) {
		options_check_error(&err);
	} else {
		options_check_values(&cli);
	}
	options_free(&cli.o);
out:
	free(text);
}
