/* genopts.c - dedisgen's option table and what derives from it: per-subcommand getopt_long
 * arrays, the value parsers (defaults go through them too), --help and the man page OPTIONS. */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "lib/optdoc.h"
#include "gen/genopts.h"
#include "lib/units.h"

const char *const gen_hash_names[] = {"sha1", "sha256", NULL};
const char *const gen_read_names[] = {"auto", "pread", "mmap", NULL}; /* in enum scan_read's order */
const char *const gen_cmd_names[] = {"scan", "merge", "show", "compare"};

#define OFF(f) offsetof(struct gen_options, f)
#define SCAN CMD_SCAN
#define MERGE CMD_MERGE
#define SHOW CMD_SHOW
#define CMP CMD_COMPARE
#define MPI CMD_MPI

const struct gen_opt_def gen_option_table[] = {
	{"block-size", 'b', "SIZES", GT_SIZES, OFF(sizes), "4096", NULL, 0, 0, SCAN | MPI,
	 "block sizes, comma-separated powers of two from 512 B to 1 MiB (4096,8192 or 4KiB,8KiB); "
	 "the data is read once and analysed at every size"},
	{"hash", 0, "NAME", GT_ENUM, OFF(hash), "sha1", gen_hash_names, 0, 0, SCAN | MPI,
	 "fingerprint: sha1 (as DEDISgen) or sha256"},
	{"threads", 't', "N", GT_UINT, OFF(threads), "0", NULL, 0, 1024, SCAN | MPI,
	 "threads that read and hash (small files, ranges of large ones) beside the one that walks the paths; 0 = one per core"},
	{"read-method", 0, "HOW", GT_ENUM, OFF(read_method), "auto", gen_read_names, 0, 0, SCAN | MPI,
	 "how files from 1 MiB are read: pread (copied into a buffer that stays in cache), mmap (mapped "
	 "and hashed in place: no copy, but page faults), or auto: the threads time both on their first "
	 "ranges and map if that was cheaper, only ranges in the page cache (data on a device, or in "
	 "files of others, are read by pread)"},
	{"one-file-system", 'x', NULL, GT_FLAG, OFF(one_fs), NULL, NULL, 0, 0, SCAN | MPI,
	 "do not enter directories on other filesystems"},
	{"skip-tails", 0, NULL, GT_FLAG, OFF(skip_tails), NULL, NULL, 0, 0, SCAN | MPI,
	 "leave out each file's last partial block (by default it is zero-padded, as stored)"},
	{"strict", 0, NULL, GT_FLAG, OFF(strict), NULL, NULL, 0, 0, SCAN | MPI,
	 "fail on the first unreadable entry (by default they are counted, reported and skipped)"},
	{"path", 'p', "PATH", GT_PATH, 0, NULL, NULL, 0, 0, SCAN | MPI,
	 "a path to analyse (the original DEDISgen form; PATHs may also follow the options)"},
	{NULL, 'f', NULL, GT_KIND, OFF(kind), NULL, NULL, 0, 0, SCAN | MPI,
	 "the original DEDISgen folder mode: each PATH must be a directory or a file"},
	{NULL, 'd', NULL, GT_KIND, OFF(kind), NULL, NULL, 0, 0, SCAN | MPI,
	 "the original DEDISgen device mode: each PATH must be a block device or a file"},
	{"db", 'z', "DIR", GT_STRING, OFF(db), NULL, NULL, 0, 0, SCAN | MERGE,
	 "keep the counts in a Berkeley DB environment in DIR (merge: the merged DB)"},
	{"keep-db", 'k', NULL, GT_FLAG, OFF(keep), NULL, NULL, 0, 0, SCAN | MERGE,
	 "add to the analysis already in --db DIR instead of replacing it (refused where DIR holds none at a block size)"},
	{"mem-limit", 'm', "SIZE", GT_SIZE, OFF(mem_limit), "0", NULL, 0, 0, SCAN | MERGE | MPI,
	 "spill the in-memory index to Berkeley DB (--db DIR, or a temporary one) at SIZE per "
	 "block size; 0 = no limit"},
	{"db-cache", 0, "SIZE", GT_SIZE, OFF(db_cache), "64MiB", NULL, 1 << 20, 0, SCAN | MERGE | MPI,
	 "Berkeley DB cache per block size"},
	{"output", 'o', "FILE", GT_STRING, OFF(output), NULL, NULL, 0, 0, SCAN | MERGE | MPI,
	 "write the distribution to FILE (several sizes: FILE.<size>); default, and -: standard output"},
	{"json", 'j', "FILE", GT_STRING, OFF(json), NULL, NULL, 0, 0, SCAN | MERGE | MPI,
	 "write the figures of each block size as one JSON document (- : standard output, with -o FILE)"},
	{"json", 0, NULL, GT_FLAG, OFF(json_stdout), NULL, NULL, 0, 0, SHOW | CMP,
	 "print JSON instead of text"},
	{"plot", 0, "FILE.png", GT_STRING, OFF(plot), NULL, NULL, 0, 0, SCAN | MERGE | SHOW | CMP | MPI,
	 "render the histogram of copies (log-log, power-of-two buckets) with gnuplot; compare overlays both"},
	{"top", 0, "N", GT_UINT, OFF(top), "10", NULL, 0, 1000, SHOW,
	 "how many of the most-copied contents to list"},
	{"max-diff", 0, "PP", GT_PP, OFF(max_diff), NULL, NULL, 0, 0, CMP,
	 "exit 1 when a row (U0, U1, D) differs by more than PP percentage points"},
	{"compress-sample", 0, "RATE", GT_SAMPLE, OFF(compress_sample), "auto", NULL, 0, 0, SCAN | MPI,
	 "compressibility: the share of block occurrences compressed (zstd -1 and LZ4, each block "
	 "alone): auto (dense for small data, 1/256 from 8 GiB at 4 KiB blocks), all, 1/N (N a power "
	 "of two) or off"},
	{"no-locality", 0, NULL, GT_FLAG, OFF(no_locality), NULL, NULL, 0, 0, SCAN | MPI,
	 "do not analyse the order of duplicates (the locality section)"},
	{"max-ratio-diff", 0, "PCT", GT_PP, OFF(max_ratio_diff), NULL, NULL, 0, 0, CMP,
	 "exit 1 when an after-dedup compression ratio (zstd -1, LZ4) differs by more than PCT %"},
	{"max-tv", 0, "D", GT_FRACTION, OFF(max_tv), NULL, NULL, 0, 0, CMP,
	 "exit 1 when the total-variation distance between the zstd -1 size histograms (eighths, "
	 "all contents) exceeds D"},
	{"max-locality-diff", 0, "PP", GT_PP, OFF(max_loc_diff), NULL, NULL, 0, 0, CMP,
	 "exit 1 when a locality share (duplicates in runs >= 8, sequential source) differs by more "
	 "than PP percentage points"},
	{"stripe", 0, NULL, GT_FLAG, OFF(stripe), NULL, NULL, 0, 0, MPI,
	 "the one PATH every rank is given is one file or device every host sees (a SAN LUN, a "
	 "cluster file system): each rank reads a stripe of it (on one host, the same PATH is striped "
	 "without it)"},
	{"quiet", 'q', NULL, GT_FLAG, OFF(quiet), NULL, NULL, 0, 0, SCAN | MERGE | MPI,
	 "no progress line, no summary, no warnings"},
	{"help", 'h', NULL, GT_ACTION, 0, NULL, NULL, 0, 0, SCAN | MERGE | SHOW | CMP | MPI, "show this help"},
	{"version", 'V', NULL, GT_ACTION, 0, NULL, NULL, 0, 0, SCAN | MERGE | SHOW | CMP | MPI, "show the version"},
};
const size_t gen_option_count = sizeof gen_option_table / sizeof gen_option_table[0];

#define fail(err, ...) errmsg_set((err)->msg, sizeof (err)->msg, -1, __VA_ARGS__)

static void *field(struct gen_options *o, const struct gen_opt_def *d)
{
	return (char *)o + d->offset;
}

static int add_path(struct gen_options *o, const char *p)
{
	char **n = realloc(o->paths, (size_t)(o->npaths + 1) * sizeof *n);
	if (!n)
		return -1;
	o->paths = n;
	if (!(n[o->npaths] = strdup(p)))
		return -1;
	o->npaths++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int gen_parse_sizes(const char *s, uint64_t *sizes, int *n, const char **why)
{
	char *copy = strdup(s), *next = copy;
	int k = 0;
	if (!copy)
		return *why = "out of memory", -1;
	while (next) { /* every item between commas counts: "4096," is a mistake, not one size */
		char *t = next, *comma = strchr(next, ',');
		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = 0;
		if (!*t) {
			*why = "an empty block size (a comma too many)";
			goto bad;
		}
		uint64_t v;
		if (units_parse_size(t, 1, &v, why))
			goto bad;
		if (v < 512 || v > (1u << 20) || (v & (v - 1))) {
			*why = "a block size must be a power of two from 512 B to 1 MiB";
			goto bad;
		}
		if (k == GEN_MAX_SIZES) {
			*why = "too many block sizes (at most 16)";
			goto bad;
		}
		for (int i = 0; i < k; i++) {
			if (sizes[i] == v) {
				*why = "a block size given twice";
				goto bad;
			}
		}
		sizes[k++] = v;
	}
	free(copy);
	if (k == 0)
		return *why = "no block size", -1;
	qsort(sizes, (size_t)k, sizeof *sizes, cmp_u64);
	*n = k;
	return 0;
bad:
	free(copy);
	return -1;
}

static const char *label(const struct gen_opt_def *d, char *buf, size_t len)
{
	if (d->name)
		snprintf(buf, len, "--%s", d->name);
	else
		snprintf(buf, len, "-%c", d->short_opt);
	return buf;
}

static int apply(struct gen_options *o, const struct gen_opt_def *d, const char *v, struct gen_opt_error *err)
{
	char lb[64], shown[72];
	const char *why = NULL;
	label(d, lb, sizeof lb);
	/* a value is quoted shortened: a long one (a pasted path) once filled the 512-byte message
	 * and cut off the reason that follows it (found by tests/fuzz/fuzz_gen_options) */
	const char *sv = v ? errmsg_quote(v, shown, sizeof shown) : NULL;
	switch (d->type) {
	case GT_FLAG:
		*(bool *)field(o, d) = true;
		break;
	case GT_UINT:
	case GT_SIZE: {
		uint64_t n;
		int bad = d->type == GT_UINT ? units_parse_count(v, &n, &why) : units_parse_size(v, 1, &n, &why);
		if (bad)
			return fail(err, "%s: '%s' is not a valid %s: %s", lb, sv, d->type == GT_UINT ? "count" : "size", why);
		if (n < d->min && !d->max) { /* a max of 0: no upper limit */
			char least[32];
			if (d->type == GT_SIZE)
				units_format_size(d->min, least, sizeof least);
			else
				snprintf(least, sizeof least, "%llu", (unsigned long long)d->min);
			return fail(err, "%s: %s is out of range (at least %s)", lb, sv, least);
		}
		if (n < d->min || (d->max && n > d->max))
			return fail(err, "%s: %s is out of range (%llu to %llu)", lb, sv, (unsigned long long)d->min,
				    (unsigned long long)d->max);
		*(uint64_t *)field(o, d) = n;
		break;
	}
	case GT_SIZES:
		if (gen_parse_sizes(v, o->sizes, &o->nsizes, &why))
			return fail(err, "%s: '%s': %s", lb, sv, why);
		break;
	case GT_ENUM: {
		for (int i = 0; d->choices[i]; i++) {
			if (!strcmp(d->choices[i], v)) {
				*(int *)field(o, d) = i;
				return 0;
			}
		}
		char list[128] = "";
		for (int i = 0; d->choices[i]; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i == 0 ? "" : !d->choices[i + 1] ? " or " : ", ",
				 d->choices[i]);
		return fail(err, "%s: unknown value '%s' (%s)", lb, sv, list);
	}
	case GT_STRING: {
		char **s = field(o, d);
		if (!*v)
			return fail(err, "%s: empty value", lb);
		free(*s);
		if (!(*s = strdup(v)))
			return fail(err, "out of memory");
		break;
	}
	case GT_PATH:
		if (!*v)
			return fail(err, "%s: empty path", lb);
		if (add_path(o, v))
			return fail(err, "out of memory");
		break;
	case GT_PP: {
		double r;
		if (units_parse_rate(v, &r, &why))
			return fail(err, "%s: '%s' is not a number of percentage points: %s", lb, sv, why);
		if (r > 100)
			return fail(err, "%s: %s is out of range (0 to 100)", lb, sv);
		*(double *)field(o, d) = r;
		break;
	}
	case GT_FRACTION: {
		double r;
		if (units_parse_rate(v, &r, &why))
			return fail(err, "%s: '%s' is not a number: %s", lb, sv, why);
		if (r > 1)
			return fail(err, "%s: %s is out of range (0 to 1)", lb, sv);
		*(double *)field(o, d) = r;
		break;
	}
	case GT_SAMPLE: {
		double *p = field(o, d);
		char *end;
		if (!strcmp(v, "auto")) {
			*p = GEN_SAMPLE_AUTO;
		} else if (!strcmp(v, "all") || !strcmp(v, "1")) {
			*p = 1;
		} else if (!strcmp(v, "off")) {
			*p = 0;
		} else if (!strncmp(v, "1/", 2) && v[2] >= '1' && v[2] <= '9') {
			unsigned long long n = strtoull(v + 2, &end, 10);
			if (*end || n > (1ULL << 32) || (n & (n - 1)))
				return fail(err, "%s: '%s': N in 1/N must be a power of two from 1 to 2^32", lb, sv);
			*p = 1.0 / (double)n;
		} else {
			return fail(err, "%s: '%s' is not a rate (auto, all, off or 1/N with N a power of two)", lb, sv);
		}
		break;
	}
	case GT_KIND:
		o->kind = d->short_opt;
		break;
	case GT_ACTION:
		if (d->short_opt == 'h')
			o->want_help = true;
		else
			o->want_version = true;
		break;
	}
	return 0;
}

void gen_options_free(struct gen_options *o)
{
	for (int i = 0; i < o->npaths; i++)
		free(o->paths[i]);
	free(o->paths);
	free(o->output);
	free(o->json);
	free(o->plot);
	free(o->db);
	memset(o, 0, sizeof *o);
}

static int cmd_bit(int cmd)
{
	return __builtin_ctz((unsigned)cmd);
}

/* cmd: CMD_MPI (dedisgen-mpi: no subcommand), else 0 (argv[1] may name one). */
static int parse(int argc, char **argv, int cmd, struct gen_options *o, struct gen_opt_error *err)
{
	struct option longs[64];
	char shorts[3 * 64 + 2];
	size_t nl = 0, ns = 0;
	int first = 1;

	memset(o, 0, sizeof *o);
	o->cmd = cmd ? cmd : CMD_SCAN;
	o->max_diff = o->max_ratio_diff = o->max_tv = o->max_loc_diff = -1;
	for (int c = 0; !cmd && argc > 1 && c < 4; c++) {
		if (!strcmp(argv[1], gen_cmd_names[c])) {
			o->cmd = 1 << c;
			first = 2;
		}
	}
	for (size_t i = 0; i < gen_option_count; i++) {
		const struct gen_opt_def *d = &gen_option_table[i];
		if ((d->cmds & o->cmd) && d->def && apply(o, d, d->def, err))
			abort(); /* a broken table default: a programming error the unit tests catch */
	}
	shorts[ns++] = ':'; /* options and PATHs may come in any order (getopt permutes) */
	for (size_t i = 0; i < gen_option_count; i++) {
		const struct gen_opt_def *d = &gen_option_table[i];
		if (!(d->cmds & o->cmd))
			continue;
		if (d->name)
			longs[nl++] = (struct option){d->name, d->arg ? required_argument : no_argument, NULL, 256 + (int)i};
		if (d->short_opt) {
			shorts[ns++] = (char)d->short_opt;
			if (d->arg)
				shorts[ns++] = ':';
		}
	}
	longs[nl] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = 0;

	/* getopt sees argv from the subcommand on (argv[first - 1] plays the program name). */
	int sargc = argc - first + 1;
	char **sargv = argv + first - 1;
	const char *cmdname = o->cmd == CMD_MPI ? "dedisgen-mpi" : gen_cmd_names[cmd_bit(o->cmd)];
	optind = 0;
	opterr = 0;
	int c;
	char shown[72];
	while ((c = getopt_long(sargc, sargv, shorts, longs, NULL)) != -1) {
		if (c == '?') {
			if (optopt && optopt < 256)
				return fail(err, "%s: unknown option '-%c' (see --help)", cmdname, optopt);
			return fail(err, "%s: unknown option '%s' (see --help)", cmdname,
				    errmsg_quote(sargv[optind - 1], shown, sizeof shown));
		}
		if (c == ':') {
			if (optopt && optopt < 256)
				return fail(err, "option '-%c' needs a value", optopt);
			return fail(err, "option '%s' needs a value", errmsg_quote(sargv[optind - 1], shown, sizeof shown));
		}
		const struct gen_opt_def *d = NULL;
		if (c >= 256)
			d = &gen_option_table[c - 256];
		else
			for (size_t i = 0; i < gen_option_count && !d; i++)
				if (gen_option_table[i].short_opt == c && (gen_option_table[i].cmds & o->cmd))
					d = &gen_option_table[i];
		if (!d)
			return fail(err, "unknown option (see --help)");
		if (apply(o, d, optarg, err))
			return -1;
	}
	for (int i = optind; i < sargc; i++)
		if (add_path(o, sargv[i]))
			return fail(err, "out of memory");
	if (o->want_help || o->want_version)
		return 0;

	/* "-o -" is standard output, as the default: one distribution, which standard output takes. */
	if (o->output && !strcmp(o->output, "-")) {
		if (o->nsizes > 1 || o->cmd == CMD_MPI || o->cmd == CMD_MERGE)
			return fail(err, "-o -: standard output takes one distribution of a scan (one block size)");
		free(o->output);
		o->output = NULL;
	}
	/* "--json -" too, where standard output is not already the distribution's (a file named "-"
	 * was a trap); written through in place, as to any character device. Named by /proc, not
	 * /dev/stdout: a /dev/stdout that something replaced by a regular file (as root, any tool
	 * that renames a temp file over it) would take the JSON instead. */
	if (o->json && !strcmp(o->json, "-")) {
		if (!o->output && o->nsizes <= 1) /* the distribution goes there (several sizes: to --db only) */
			return fail(err, "--json -: standard output takes the distribution; give -o FILE for it");
		free(o->json);
		if (!(o->json = strdup("/proc/self/fd/1")))
			return fail(err, "out of memory");
	}
	switch (o->cmd) {
	case CMD_SCAN:
		if (o->npaths == 0)
			return fail(err, "no PATH to analyse (dedisgen PATH..., see --help)");
		if (o->keep && !o->db)
			return fail(err, "-k/--keep-db needs --db DIR");
		if (o->nsizes > 1 && !o->output && !o->db)
			return fail(err, "several block sizes need -o OUT (written as OUT.<size>)");
		break;
	case CMD_MPI:
		if (o->npaths == 0)
			return fail(err, "no PATH to analyse (dedisgen-mpi PATH..., see --help)");
		if (o->nsizes > 1 && !o->output)
			return fail(err, "several block sizes need -o OUT (written as OUT.<size>)");
		break;
	case CMD_MERGE:
		if (o->npaths == 0)
			return fail(err, "merge: no DB directory to merge (dedisgen merge DBDIR... --db OUT | -o OUT)");
		if (!o->db && !o->output)
			return fail(err, "merge: say where the result goes: --db OUT and/or -o OUT.dist");
		if (o->keep && !o->db)
			return fail(err, "-k/--keep-db needs --db DIR");
		break;
	case CMD_SHOW:
		if (o->npaths != 1)
			return fail(err, "show: expected one distribution file, got %d", o->npaths);
		break;
	case CMD_COMPARE:
		if (o->npaths != 2)
			return fail(err, "compare: expected two distribution files, got %d", o->npaths);
		break;
	}
	return 0;
}

int gen_options_parse(int argc, char **argv, struct gen_options *o, struct gen_opt_error *err)
{
	return parse(argc, argv, 0, o, err);
}

int gen_options_parse_mpi(int argc, char **argv, struct gen_options *o, struct gen_opt_error *err)
{
	return parse(argc, argv, CMD_MPI, o, err);
}

double gen_auto_sample_rate(uint64_t blocks)
{
	double p = 1;
	if (!blocks)
		return 1.0 / 64;
	while (p > 1.0 / 256 && p * (double)blocks > 8192)
		p /= 2;
	return p;
}

static int cmds_text(int cmds, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int c = 0; c < 4; c++)
		if (cmds & (1 << c))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", gen_cmd_names[c]);
	return (int)used;
}

/* One line per row of cmd (0: every dedisgen row, each tagged with its subcommands). */
static void print_rows(FILE *f, int cmd)
{
	for (size_t i = 0; i < gen_option_count; i++) {
		const struct gen_opt_def *d = &gen_option_table[i];
		char left[64], cmds[64];
		int n;
		if (cmd ? !(d->cmds & cmd) : !(d->cmds & ~CMD_MPI))
			continue;
		if (d->short_opt && d->name)
			n = snprintf(left, sizeof left, "  -%c, --%s", d->short_opt, d->name);
		else if (d->name)
			n = snprintf(left, sizeof left, "      --%s", d->name);
		else
			n = snprintf(left, sizeof left, "  -%c", d->short_opt);
		if (d->arg && n < (int)sizeof left)
			snprintf(left + n, sizeof left - (size_t)n, " %s", d->arg);
		cmds_text(d->cmds, cmds, sizeof cmds);
		/* two blanks at least between an option that fills the column and its help, as
		 * everywhere else: one would make the help's first word look like the metavariable */
		fprintf(f, "%-26s %s%s", left, strlen(left) >= 26 ? " " : "", d->help);
		if (d->def && d->type != GT_FLAG && strcmp(d->def, "0"))
			fprintf(f, " [%s]", d->def);
		if (d->type != GT_ACTION && !cmd)
			fprintf(f, " (%s)", cmds);
		fputc('\n', f);
	}
}

void gen_options_print_help(FILE *f)
{
	fputs("Usage: dedisgen [scan] PATH... [OPTION]...\n"
	      "       dedisgen merge DBDIR... (--db OUT | -o OUT.dist) [OPTION]...\n"
	      "       dedisgen show FILE.dist [--json] [--top N] [--plot FILE.png]\n"
	      "       dedisgen compare A.dist B.dist [--json] [--max-diff PP] [--plot FILE.png]\n"
	      "Extract the duplicate distribution of a directory tree, files or a block device (scan),\n"
	      "merge analyses kept in Berkeley DB, show or compare distribution files.\n\nOptions:\n",
	      f);
	print_rows(f, 0);
	fputs("\nSizes take B, KiB, MiB, GiB. Exit status: 0 success, 1 a failure while reading or writing\n"
	      "(compare: a row beyond --max-diff), 2 bad input (nothing written).\n",
	      f);
}

void gen_options_print_help_mpi(FILE *f)
{
	fputs("Usage: mpirun [-n N] dedisgen-mpi PATH... [OPTION]...\n"
	      "Extract the duplicate distribution of data read by the ranks of an MPI job: each rank reads\n"
	      "its own PATHs (%r: the rank, %h: the host), or a stripe of one file or device given to every\n"
	      "rank (across hosts: --stripe); rank 0 writes the distribution of all the data, as one\n"
	      "dedisgen of it in rank order.\n"
	      "--threads is per rank (0: the host's cores shared by its ranks).\n\n"
	      "Options:\n",
	      f);
	print_rows(f, CMD_MPI);
	fputs("\nSizes take B, KiB, MiB, GiB. Exit status: 0 success, 1 a failure while reading or writing\n"
	      "(on any rank), 2 bad input (on any rank; nothing written).\n",
	      f);
}

static void print_man_rows(FILE *f, int cmd)
{
	for (size_t i = 0; i < gen_option_count; i++) {
		const struct gen_opt_def *d = &gen_option_table[i];
		char cmds[64], tail[80] = "";
		if (cmd ? !(d->cmds & cmd) : !(d->cmds & ~CMD_MPI))
			continue;
		if (d->type != GT_ACTION && !cmd) {
			cmds_text(d->cmds, cmds, sizeof cmds);
			snprintf(tail, sizeof tail, " [%s]", cmds);
		}
		bool shows_default = d->def && d->type != GT_FLAG && strcmp(d->def, "0");
		optdoc_man_item(f, d->short_opt, d->name, d->arg, d->help, shows_default ? d->def : NULL, tail);
	}
}

void gen_options_print_man(FILE *f)
{
	print_man_rows(f, 0);
}

void gen_options_print_man_mpi(FILE *f)
{
	print_man_rows(f, CMD_MPI);
}
