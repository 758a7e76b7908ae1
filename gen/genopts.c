/* genopts.c - dedisgen's option rows (lib/opttable, masked by subcommand), the parsers of its own
 * value kinds (block sizes, paths, percentage points, sampling rates), the checks each subcommand
 * makes of its command line, --help and the man page OPTIONS. */
#include <stdlib.h>
#include <string.h>
#include "lib/distname.h"
#include "lib/errmsg.h"
#include "gen/genopts.h"
#include "lib/units.h"

const char *const gen_hash_names[] = {"sha1", "sha256", NULL};
const char *const gen_read_names[] = {"auto", "pread", "mmap", NULL}; /* in enum scan_read's order */
const char *const gen_cmd_names[] = {"scan", "merge", "show", "compare"};

#define OFF(f) offsetof(struct gen_options, f)
#define fail(err, ...) err_fail(err, -1, __VA_ARGS__)
#define SCAN CMD_SCAN
#define MERGE CMD_MERGE
#define SHOW CMD_SHOW
#define CMP CMD_COMPARE
#define MPI CMD_MPI

static const struct opt_row rows[] = {
	{"block-size", 'b', "SIZES", OT_CUSTOM, OFF(sizes), "4096", NULL, 0, 0, 0, 0, NULL,
	 "block sizes, comma-separated powers of two from 512 B to 1 MiB (4096,8192 or 4KiB,8KiB); "
	 "the data is read once and analysed at every size", SCAN | MPI, gen_parse_sizes_row},
	{"hash", 0, "NAME", OT_ENUM, OFF(hash), "sha1", gen_hash_names, 0, 0, 0, 0, NULL,
	 "fingerprint: sha1 (as DEDISgen) or sha256", SCAN | MPI, NULL},
	{"threads", 't', "N", OT_UINT, OFF(threads), "0", NULL, 0, 0, 1024, 0, NULL,
	 "threads that read and hash (small files, ranges of large ones) beside the one that walks the paths; 0 = one per core", SCAN | MPI, NULL},
	{"read-method", 0, "HOW", OT_ENUM, OFF(read_method), "auto", gen_read_names, 0, 0, 0, 0, NULL,
	 "how files from 1 MiB are read: pread (copied into a buffer that stays in cache), mmap (mapped "
	 "and hashed in place: no copy, but page faults), or auto: the threads time both on their first "
	 "ranges and map if that was cheaper, only ranges in the page cache (data on a device, or in "
	 "files of others, are read by pread)", SCAN | MPI, NULL},
	{"one-file-system", 'x', NULL, OT_FLAG, OFF(one_fs), NULL, NULL, 0, 0, 0, 0, NULL,
	 "do not enter directories on other filesystems", SCAN | MPI, NULL},
	{"skip-tails", 0, NULL, OT_FLAG, OFF(skip_tails), NULL, NULL, 0, 0, 0, 0, NULL,
	 "leave out each file's last partial block (by default it is zero-padded, as stored)", SCAN | MPI, NULL},
	{"strict", 0, NULL, OT_FLAG, OFF(strict), NULL, NULL, 0, 0, 0, 0, NULL,
	 "fail on the first unreadable entry (by default they are counted, reported and skipped)", SCAN | MPI, NULL},
	{"path", 'p', "PATH", OT_CUSTOM, 0, NULL, NULL, 0, 0, 0, 0, NULL,
	 "a path to analyse (the original DEDISgen form; PATHs may also follow the options)", SCAN | MPI, gen_parse_path},
	{NULL, 'f', NULL, OT_SET, OFF(kind), NULL, NULL, 0, 0, 0, 'f', NULL,
	 "the original DEDISgen folder mode: each PATH must be a directory or a file", SCAN | MPI, NULL},
	{NULL, 'd', NULL, OT_SET, OFF(kind), NULL, NULL, 0, 0, 0, 'd', NULL,
	 "the original DEDISgen device mode: each PATH must be a block device or a file", SCAN | MPI, NULL},
	{"db", 'z', "DIR", OT_STRING, OFF(db), NULL, NULL, 0, 0, 0, 0, NULL,
	 "keep the counts in a Berkeley DB environment in DIR (merge: the merged DB)", SCAN | MERGE, NULL},
	{"keep-db", 'k', NULL, OT_FLAG, OFF(keep), NULL, NULL, 0, 0, 0, 0, NULL,
	 "add to the analysis already in --db DIR instead of replacing it (refused where DIR holds none at a block size)", SCAN | MERGE, NULL},
	{"mem-limit", 'm', "SIZE", OT_SIZE, OFF(mem_limit), "0", NULL, 1, 0, 0, 0, NULL,
	 "spill the in-memory index to Berkeley DB (--db DIR, or a temporary one) at SIZE per "
	 "block size; 0 = no limit", SCAN | MERGE | MPI, NULL},
	{"db-cache", 0, "SIZE", OT_SIZE, OFF(db_cache), "64MiB", NULL, 1, 1 << 20, 0, 0, NULL,
	 "Berkeley DB cache per block size", SCAN | MERGE | MPI, NULL},
	{"output", 'o', "FILE", OT_STRING, OFF(output), NULL, NULL, 0, 0, 0, 0, NULL,
	 "write the distribution to FILE (several sizes: FILE.<size>); default, and -: standard output", SCAN | MERGE | MPI, NULL},
	{"json", 'j', "FILE", OT_STRING, OFF(json), NULL, NULL, 0, 0, 0, 0, NULL,
	 "write the figures of each block size as one JSON document (- : standard output, with -o FILE)", SCAN | MERGE | MPI, NULL},
	{"json", 0, NULL, OT_FLAG, OFF(json_stdout), NULL, NULL, 0, 0, 0, 0, NULL,
	 "print JSON instead of text", SHOW | CMP, NULL},
	{"plot", 0, "FILE.png", OT_STRING, OFF(plot), NULL, NULL, 0, 0, 0, 0, NULL,
	 "render the histogram of copies (log-log, power-of-two buckets) with gnuplot; compare overlays both", SCAN | MERGE | SHOW | CMP | MPI, NULL},
	{"top", 0, "N", OT_UINT, OFF(top), "10", NULL, 0, 0, 1000, 0, NULL,
	 "how many of the most-copied contents to list", SHOW, NULL},
	{"max-diff", 0, "PP", OT_CUSTOM, OFF(max_diff), NULL, NULL, 0, 0, 0, 0, NULL,
	 "exit 1 when a row (U0, U1, D) differs by more than PP percentage points", CMP, gen_parse_pp},
	{"compress-sample", 0, "RATE", OT_CUSTOM, OFF(compress_sample), "auto", NULL, 0, 0, 0, 0, NULL,
	 "compressibility: the share of block occurrences compressed (zstd -1 and LZ4, each block "
	 "alone): auto (dense for small data, 1/256 from 8 GiB at 4 KiB blocks), all, 1/N (N a power "
	 "of two) or off", SCAN | MPI, gen_parse_sample},
	{"no-locality", 0, NULL, OT_FLAG, OFF(no_locality), NULL, NULL, 0, 0, 0, 0, NULL,
	 "do not analyse the order of duplicates (the locality section)", SCAN | MPI, NULL},
	{"no-granularity", 0, NULL, OT_FLAG, OFF(no_granularity), NULL, NULL, 0, 0, 0, 0, NULL,
	 "do not measure how compressibility grows with the piece (4 to 128 KiB, the granularity "
	 "section); it follows --compress-sample otherwise (off: none, a rate: that share of 128 KiB "
	 "windows)", SCAN, NULL},
	{"no-alignment", 0, NULL, OT_FLAG, OFF(no_alignment), NULL, NULL, 0, 0, 0, 0, NULL,
	 "do not count fixed dedup at 2 to 32 blocks nor where copies sit modulo 32 blocks (the "
	 "alignment section)", SCAN, NULL},
	{"no-cdc", 0, NULL, OT_FLAG, OFF(no_cdc), NULL, NULL, 0, 0, 0, 0, NULL,
	 "do not chunk the data by content (the cdc section: a backup store's dedup, shifted copies)", SCAN, NULL},
	{"cdc-avg", 0, "SIZE", OT_SIZE, OFF(cdc_avg), "8KiB", NULL, 1, 256, 1 << 24, 0, NULL,
	 "the content-defined chunker's average chunk, a power of two from 256 B to 16 MiB (min a "
	 "quarter of it, max eight times)", SCAN, NULL},
	{"max-ratio-diff", 0, "PCT", OT_CUSTOM, OFF(max_ratio_diff), NULL, NULL, 0, 0, 0, 0, NULL,
	 "exit 1 when an after-dedup compression ratio (zstd -1, LZ4) differs by more than PCT %", CMP, gen_parse_pp},
	{"max-tv", 0, "D", OT_CUSTOM, OFF(max_tv), NULL, NULL, 0, 0, 0, 0, NULL,
	 "exit 1 when the total-variation distance between the zstd -1 size histograms (eighths, "
	 "all contents) exceeds D", CMP, gen_parse_fraction},
	{"max-locality-diff", 0, "PP", OT_CUSTOM, OFF(max_loc_diff), NULL, NULL, 0, 0, 0, 0, NULL,
	 "exit 1 when a locality share (duplicates in runs >= 8, sequential source) differs by more "
	 "than PP percentage points", CMP, gen_parse_pp},
	{"stripe", 0, NULL, OT_FLAG, OFF(stripe), NULL, NULL, 0, 0, 0, 0, NULL,
	 "the one PATH every rank is given is one file or device every host sees (a SAN LUN, a "
	 "cluster file system): each rank reads a stripe of it (on one host, the same PATH is striped "
	 "without it)", MPI, NULL},
	{"quiet", 'q', NULL, OT_FLAG, OFF(quiet), NULL, NULL, 0, 0, 0, 0, NULL,
	 "no progress line, no summary, no warnings", SCAN | MERGE | MPI, NULL},
	{"help", 'h', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'h', NULL,
	 "show this help", SCAN | MERGE | SHOW | CMP | MPI, NULL},
	{"version", 'V', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'V', NULL,
	 "show the version", SCAN | MERGE | SHOW | CMP | MPI, NULL},
};
static const struct opt_table table = {rows, sizeof rows / sizeof rows[0], OPT_STYLE_OR_LIST | OPT_STYLE_SIZE_UNITS, 26};
const struct opt_table *const gen_options_table = &table;

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

int gen_parse_sizes(const char *s, uint64_t *sizes, int *n, struct dd_err *err)
{
	char *copy = strdup(s), *next = copy;
	int k = 0;
	if (!copy)
		return err_fail(err, -1, "out of memory");
	while (next) { /* every item between commas counts: "4096," is a mistake, not one size */
		char *t = next, *comma = strchr(next, ',');
		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = 0;
		if (!*t) {
			err_fail(err, -1, "an empty block size (a comma too many)");
			goto bad;
		}
		uint64_t v;
		if (units_parse_size(t, 1, &v, err))
			goto bad;
		if (v < 512 || v > (1u << 20) || (v & (v - 1))) {
			err_fail(err, -1, "a block size must be a power of two from 512 B to 1 MiB");
			goto bad;
		}
		if (k == GEN_MAX_SIZES) {
			err_fail(err, -1, "too many block sizes (at most 16)");
			goto bad;
		}
		for (int i = 0; i < k; i++) {
			if (sizes[i] == v) {
				err_fail(err, -1, "a block size given twice");
				goto bad;
			}
		}
		sizes[k++] = v;
	}
	free(copy);
	if (k == 0)
		return err_fail(err, -1, "no block size");
	qsort(sizes, (size_t)k, sizeof *sizes, cmp_u64);
	*n = k;
	return 0;
bad:
	free(copy);
	return -1;
}

int gen_parse_sizes_row(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			struct dd_err *err)
{
	struct gen_options *o = base;
	if (gen_parse_sizes(v, o->sizes, &o->nsizes, err))
		return err_forward(err, -1, "%s: '%s'", label, shown);
	return 0;
}

int gen_parse_path(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		   struct dd_err *err)
{
	if (!*v)
		return err_fail(err, -1, "%s: empty path", label);
	if (add_path(base, v))
		return err_fail(err, -1, "out of memory");
	return 0;
}

/* A double from 0 to top; `what` names it in a refusal ("a number of percentage points"). */
static int parse_bounded(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			 double top, const char *what, struct dd_err *err)
{
	double x;
	struct dd_err why;
	if (units_parse_rate(v, &x, &why))
		return err_fail(err, -1, "%s: '%s' is not %s: %s", label, shown, what, why.msg);
	if (x > top)
		return err_fail(err, -1, "%s: %s is out of range (0 to %g)", label, shown, top);
	*(double *)((char *)base + r->offset) = x;
	return 0;
}

int gen_parse_pp(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		 struct dd_err *err)
{
	return parse_bounded(base, r, v, label, shown, 100, "a number of percentage points", err);
}

int gen_parse_fraction(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		       struct dd_err *err)
{
	return parse_bounded(base, r, v, label, shown, 1, "a number", err);
}

int gen_parse_sample(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		     struct dd_err *err)
{
	double *p = (double *)((char *)base + r->offset);
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
			return err_fail(err, -1, "%s: '%s': N in 1/N must be a power of two from 1 to 2^32", label, shown);
		*p = 1.0 / (double)n;
	} else {
		return err_fail(err, -1, "%s: '%s' is not a rate (auto, all, off or 1/N with N a power of two)", label,
				shown);
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

static int on_row(void *o, size_t row, const char *value, struct dd_err *err)
{
	struct gen_options *g = o;
	int rc = opt_apply(&table, &rows[row], o, value, err);
	if (rc == OPT_ACTION && rows[row].set_value == 'h')
		g->want_help = true;
	else if (rc == OPT_ACTION)
		g->want_version = true;
	return rc < 0 ? -1 : 0;
}

/* "-o -" and "--json -": standard output, where it is free to take them. */
static int resolve_stdout(struct gen_options *o, struct dd_err *err)
{
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
	return 0;
}

/* The argument counts and the options that need each other, per command. */
static int check_command(const struct gen_options *o, struct dd_err *err)
{
	switch (o->cmd) {
	case CMD_SCAN:
		if (o->npaths == 0)
			return fail(err, "no PATH to analyse (dedisgen PATH..., see --help)");
		if (o->keep && !o->db)
			return fail(err, "-k/--keep-db needs --db DIR");
		if (o->nsizes > 1 && !o->output && !o->db)
			return fail(err, "several block sizes need -o OUT (written as OUT.<size>)");
		if (o->cdc_avg & (o->cdc_avg - 1))
			return fail(err, "--cdc-avg: %llu B is not a power of two (the chunker's masks are whole bits)",
				    (unsigned long long)o->cdc_avg);
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

/* cmd: CMD_MPI (dedisgen-mpi: no subcommand), else 0 (argv[1] may name one). */
static int parse(int argc, char **argv, int cmd, struct gen_options *o, struct dd_err *err)
{
	int first = 1, operands;
	memset(o, 0, sizeof *o);
	o->cmd = cmd ? cmd : CMD_SCAN;
	o->max_diff = o->max_ratio_diff = o->max_tv = o->max_loc_diff = -1;
	for (int c = 0; !cmd && argc > 1 && c < 4; c++) {
		if (!strcmp(argv[1], gen_cmd_names[c])) {
			o->cmd = 1 << c;
			first = 2;
		}
	}
	if (opt_defaults(&table, (unsigned)o->cmd, o, err))
		abort(); /* a broken table default: a programming error the unit tests catch */
	/* getopt sees argv from the subcommand on (argv[first - 1] plays the program name); options
	 * and PATHs may come in any order (getopt permutes) */
	int sargc = argc - first + 1;
	char **sargv = argv + first - 1;
	const char *cmdname = o->cmd == CMD_MPI ? "dedisgen-mpi" : gen_cmd_names[cmd_bit(o->cmd)];
	if (opt_parse_argv(&table, (unsigned)o->cmd, sargc, sargv, cmdname, on_row, o, &operands, err))
		return -1;
	for (int i = operands; i < sargc; i++)
		if (add_path(o, sargv[i]))
			return fail(err, "out of memory");
	if (o->want_help || o->want_version)
		return 0;
	if (resolve_stdout(o, err))
		return -1;
	return check_command(o, err);
}

int gen_options_parse(int argc, char **argv, struct gen_options *o, struct dd_err *err)
{
	return parse(argc, argv, 0, o, err);
}

int gen_options_parse_mpi(int argc, char **argv, struct gen_options *o, struct dd_err *err)
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
	for (size_t i = 0; i < table.count; i++) {
		const struct opt_row *d = &rows[i];
		char cmds[64], suffix[72] = "";
		if (cmd ? !(d->cmds & (unsigned)cmd) : !(d->cmds & ~(unsigned)CMD_MPI))
			continue;
		cmds_text((int)d->cmds, cmds, sizeof cmds);
		if (d->type != OT_ACTION && !cmd)
			snprintf(suffix, sizeof suffix, " (%s)", cmds);
		opt_print_help_row(f, &table, d, suffix);
	}
}

void gen_options_print_help(FILE *f)
{
	fputs("Usage: dedisgen [scan] PATH... [OPTION]...\n"
	      "       dedisgen merge DBDIR... (--db OUT | -o OUT.dist) [OPTION]...\n"
	      "       dedisgen show FILE.dist [--json] [--top N] [--plot FILE.png]\n"
	      "       dedisgen compare A.dist B.dist [--json] [--max-diff PP] [--plot FILE.png]\n"
	      "Extract the duplicate distribution of a directory tree, files or a block device\n"
	      "(scan), merge analyses kept in Berkeley DB, show or compare distribution files\n"
	      "(a file, or a bundled distribution by name:\n" DISTNAME_BUNDLED ").\n\nOptions:\n",
	      f);
	print_rows(f, 0);
	fputs("\nSizes take B, KiB, MiB, GiB. Exit status: 0 success, 1 a failure while reading\n"
	      "or writing (compare: a row beyond --max-diff), 2 bad input (nothing written).\n",
	      f);
}

void gen_options_print_help_mpi(FILE *f)
{
	fputs("Usage: mpirun [-n N] dedisgen-mpi PATH... [OPTION]...\n"
	      "Extract the duplicate distribution of data read by the ranks of an MPI job: each\n"
	      "rank reads its own PATHs (%r: the rank, %h: the host), or a stripe of one file\n"
	      "or device given to every rank (across hosts: --stripe); rank 0 writes the\n"
	      "distribution of all the data, as one dedisgen of it in rank order.\n"
	      "--threads is per rank (0: the host's cores shared by its ranks).\n\n"
	      "Options:\n",
	      f);
	print_rows(f, CMD_MPI);
	fputs("\nSizes take B, KiB, MiB, GiB. Exit status: 0 success, 1 a failure while reading\n"
	      "or writing (on any rank), 2 bad input (on any rank; nothing written).\n",
	      f);
}

static void print_man_rows(FILE *f, int cmd)
{
	for (size_t i = 0; i < table.count; i++) {
		const struct opt_row *d = &rows[i];
		char cmds[64], tail[80] = "";
		if (cmd ? !(d->cmds & (unsigned)cmd) : !(d->cmds & ~(unsigned)CMD_MPI))
			continue;
		if (d->type != OT_ACTION && !cmd) {
			cmds_text((int)d->cmds, cmds, sizeof cmds);
			snprintf(tail, sizeof tail, " [%s]", cmds);
		}
		opt_print_man_row(f, &table, d, tail);
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
