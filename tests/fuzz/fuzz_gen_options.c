/* fuzz_gen_options.c - dedisgen's command line (gen/genopts.c): the input is NUL-separated
 * arguments, parsed as dedisgen's (argv[1] may name scan, merge, show or compare) and as
 * dedisgen-mpi's. Nothing is scanned or opened: parse, check, free. Each parse ends in a one-line
 * error with a reason, or in values within the option table's ranges and the checks the parser
 * promises (argument counts, options that need each other); a parse is the same twice in a row. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "argv_check.h"
#include "gen/genopts.h"

int harness_setup(void)
{
	return 0;
}

/* The kinds of value dedisgen's rows hold (custom rows told apart by their parser). */
enum gen_kind { GT_FLAG, GT_UINT, GT_SIZE, GT_SIZES, GT_ENUM, GT_STRING, GT_PATH, GT_PP, GT_FRACTION, GT_SAMPLE,
		GT_KIND, GT_ACTION };

static enum gen_kind kind_of(const struct opt_row *d)
{
	switch (d->type) {
	case OT_FLAG: return GT_FLAG;
	case OT_UINT: return GT_UINT;
	case OT_SIZE: return GT_SIZE;
	case OT_ENUM: return GT_ENUM;
	case OT_STRING: return GT_STRING;
	case OT_SET: return GT_KIND;
	case OT_CUSTOM:
		return d->parse == gen_parse_sizes_row ? GT_SIZES : d->parse == gen_parse_path ? GT_PATH
		       : d->parse == gen_parse_pp ? GT_PP : d->parse == gen_parse_fraction ? GT_FRACTION : GT_SAMPLE;
	default: return GT_ACTION;
	}
}

static const void *field(const struct gen_options *o, const struct opt_row *d)
{
	return (const char *)o + d->offset;
}

/* Is some row of cmd stored at this offset (-f and -d share one, --json two commands' fields)? */
static bool offset_used(int cmd, size_t offset)
{
	for (size_t i = 0; i < gen_options_table->count; i++) {
		const struct opt_row *d = &gen_options_table->rows[i];
		if ((d->cmds & (unsigned)cmd) && kind_of(d) != GT_PATH && kind_of(d) != GT_ACTION && d->offset == offset)
			return true;
	}
	return false;
}

static bool all_zero(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((const unsigned char *)p)[i])
			return false;
	return true;
}

static size_t type_size(enum gen_kind t)
{
	switch (t) {
	case GT_FLAG: return sizeof(bool);
	case GT_UINT: case GT_SIZE: return sizeof(uint64_t);
	case GT_SIZES: return sizeof(uint64_t) * GEN_MAX_SIZES;
	case GT_ENUM: case GT_KIND: return sizeof(int);
	case GT_STRING: return sizeof(char *);
	case GT_PP: case GT_FRACTION: case GT_SAMPLE: return sizeof(double);
	default: return 0;
	}
}

static void check_row(const struct gen_options *o, const struct opt_row *d)
{
	/* --help and --version return before "-o -" and "--json -" are resolved: nothing is written */
	bool acts = !o->want_help && !o->want_version;
	const char *name = d->name ? d->name : "-";
	const void *p = field(o, d);
	if (!(d->cmds & (unsigned)o->cmd)) {
		/* a row of another command: untouched (no default, nothing parsed into it; the
		 * thresholds of compare read -1, "not given", under every command) */
		if (kind_of(d) == GT_PP || kind_of(d) == GT_FRACTION) {
			if (*(const double *)p != -1)
				harness_fail("--%s holds %g under command %d", name, *(const double *)p, o->cmd);
		} else if (!offset_used(o->cmd, d->offset) && !all_zero(p, type_size(kind_of(d))))
			harness_fail("--%s is set under a command it does not apply to (%d)", name, o->cmd);
		if (kind_of(d) == GT_SIZES && o->nsizes)
			harness_fail("-b holds %d sizes under command %d", o->nsizes, o->cmd);
		return;
	}
	switch (kind_of(d)) {
	case GT_UINT:
	case GT_SIZE: {
		uint64_t v = *(const uint64_t *)p;
		if (v < d->min || (d->max && v > d->max))
			harness_fail("--%s holds %llu, outside %llu..%llu", name, (unsigned long long)v,
				     (unsigned long long)d->min, (unsigned long long)d->max);
		break;
	}
	case GT_SIZES:
		if (o->nsizes < 1 || o->nsizes > GEN_MAX_SIZES)
			harness_fail("-b holds %d sizes", o->nsizes);
		for (int i = 0; i < o->nsizes; i++) {
			uint64_t v = o->sizes[i];
			if (v < 512 || v > (1u << 20) || (v & (v - 1)))
				harness_fail("-b holds %llu, not a power of two from 512 to 1 MiB", (unsigned long long)v);
			if (i && v <= o->sizes[i - 1])
				harness_fail("-b sizes not ascending and distinct: %llu after %llu", (unsigned long long)v,
					     (unsigned long long)o->sizes[i - 1]);
		}
		break;
	case GT_ENUM: {
		int v = *(const int *)p, n = 0;
		while (d->choices[n])
			n++;
		if (v < 0 || v >= n)
			harness_fail("--%s holds choice %d of %d", name, v, n);
		break;
	}
	case GT_STRING: {
		const char *s = *(char *const *)p;
		if (s && !*s)
			harness_fail("--%s holds an empty string", name);
		/* -o - is stored as NULL, --json - as /proc/self/fd/1 (--db and --plot take '-' as a name) */
		if (s && acts && !strcmp(s, "-") && (d->offset == offsetof(struct gen_options, output) ||
						     d->offset == offsetof(struct gen_options, json)))
			harness_fail("--%s holds '-' (standard output is NULL or /proc/self/fd/1)", name);
		break;
	}
	case GT_PP:
	case GT_FRACTION: {
		double v = *(const double *)p, top = kind_of(d) == GT_PP ? 100 : 1;
		if (v != -1 && !(v >= 0 && v <= top))
			harness_fail("--%s holds %g, neither unset (-1) nor in 0..%g", name, v, top);
		break;
	}
	case GT_SAMPLE: {
		double v = *(const double *)p;
		int e;
		/* auto, off, or 1/N with N a power of two up to 2^32: a mantissa of exactly 1/2 */
		if (v != GEN_SAMPLE_AUTO && v != 0 && !(v > 0 && v <= 1 && frexp(v, &e) == 0.5 && e >= -31))
			harness_fail("--%s holds %.17g, not auto, off or 1/2^k (k <= 32)", name, v);
		break;
	}
	case GT_KIND: {
		int v = *(const int *)p;
		if (v != 0 && v != 'f' && v != 'd')
			harness_fail("-f/-d holds %d", v);
		break;
	}
	default:
		break;
	}
}

static void check_values(const struct gen_options *o, int expect_cmd)
{
	if (o->cmd != expect_cmd)
		harness_fail("parsed as command %d, expected %d", o->cmd, expect_cmd);
	if (o->npaths < 0 || (o->npaths && !o->paths))
		harness_fail("%d paths", o->npaths);
	for (int i = 0; i < o->npaths; i++)
		if (!o->paths[i])
			harness_fail("path %d is NULL", i);
	for (size_t i = 0; i < gen_options_table->count; i++)
		check_row(o, &gen_options_table->rows[i]);
	if (o->want_help || o->want_version)
		return; /* the command's own checks are skipped: it only prints */
	if (o->json && !strcmp(o->json, "/proc/self/fd/1") && !o->output && o->nsizes <= 1)
		harness_fail("--json - kept although standard output takes the distribution");
	switch (o->cmd) {
	case CMD_SCAN:
	case CMD_MPI:
		if (o->npaths < 1)
			harness_fail("a scan without a PATH");
		if (o->nsizes > 1 && !o->output && (o->cmd == CMD_MPI || !o->db))
			harness_fail("%d block sizes and nowhere to write them", o->nsizes);
		if (o->keep && !o->db)
			harness_fail("--keep-db without --db");
		break;
	case CMD_MERGE:
		if (o->npaths < 1 || (!o->db && !o->output) || (o->keep && !o->db))
			harness_fail("merge: %d DBs, db %s, output %s, keep %d", o->npaths, o->db ? o->db : "-",
				     o->output ? o->output : "-", o->keep);
		break;
	case CMD_SHOW:
		if (o->npaths != 1)
			harness_fail("show with %d files", o->npaths);
		break;
	case CMD_COMPARE:
		if (o->npaths != 2)
			harness_fail("compare with %d files", o->npaths);
		break;
	default:
		harness_fail("unknown command %d", o->cmd);
	}
}

/* The subcommand argv[1] names (the parser's rule), CMD_SCAN otherwise. */
static int expected_cmd(int argc, char **argv)
{
	for (int c = 0; argc > 1 && c < 4; c++)
		if (!strcmp(argv[1], gen_cmd_names[c]))
			return 1 << c;
	return CMD_SCAN;
}

/* Parses a copy of argv (getopt permutes it) twice: the same answer both times. */
static void one_parse(int argc, char **argv, bool mpi)
{
	char *copy[ARGV_MAX + 2];
	struct gen_options o, again;
	struct dd_err err, err2;
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *argv);
	int rc = mpi ? gen_options_parse_mpi(argc, copy, &o, &err) : gen_options_parse(argc, copy, &o, &err);
	if (rc)
		argv_check_error(err.msg, sizeof err.msg, argc, argv);
	else
		check_values(&o, mpi ? CMD_MPI : expected_cmd(argc, argv));
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *argv);
	int rc2 = mpi ? gen_options_parse_mpi(argc, copy, &again, &err2) : gen_options_parse(argc, copy, &again, &err2);
	if (rc != rc2 || (rc && strcmp(err.msg, err2.msg)))
		harness_fail("parsed twice, answered %d then %d (%s / %s)", rc, rc2, rc ? err.msg : "", rc2 ? err2.msg : "");
	if (!rc && (o.npaths != again.npaths || o.nsizes != again.nsizes ||
		    memcmp(o.sizes, again.sizes, sizeof o.sizes) || o.threads != again.threads))
		harness_fail("parsed twice, different values");
	gen_options_free(&o);
	gen_options_free(&again);
}

void harness_one(const uint8_t *data, size_t len)
{
	char *text = harness_text(data, len);
	char *argv[ARGV_MAX + 2];
	int argc = argv_split(text, len, "dedisgen", argv);
	one_parse(argc, argv, false);
	argv[0] = "dedisgen-mpi";
	one_parse(argc, argv, true);
	free(text);
}
