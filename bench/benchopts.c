/* benchopts.c - dedisbench's option rows (lib/opttable; the I/O engines' rows and choices from
 * their registry) and what derives from them: the INI reader (new keys and the original
 * DEDISbench keys), the two-pass command line, --help, the man page OPTIONS, the JSON config. */
#include <errno.h>
#include <getopt.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include "lib/distname.h"
#include "lib/errmsg.h"
#include "bench/benchopts.h"
#include "lib/units.h"
#include "bench/ioengine/ioengine.h"
#include "bench/target/target.h"

const char *const mode_names[] = {"write", "read", "mixed", NULL};
/* The first four keep the order of the original `sync = 0..3` codes. */
const char *const sync_names[] = {"none", "direct", "fsync", "direct+fsync", "dsync", NULL};
const char *const populate_names[] = {"default", "none", "content", "zero", NULL};
const char *const content_names[] = {"scaled", "sampled", NULL};
/* The order of the original `integritycheck = 0..3` codes. */
const char *const verify_names[] = {"none", "online", "final", "both", NULL};
const char *const compress_names[] = {"dist", NULL};
const char *const layout_names[] = {"runs", "scattered", NULL};
const char *const rank_content_names[] = {"global", "replica", NULL};
const char *const space_model_names[] = {"auto", "block", "record", "cdc", NULL};
const char *const workload_names[] = {"dist", "backup", NULL};

#define OFF(f) offsetof(struct bench_options, f)
#define MIB (1024ULL * 1024ULL)

/* The longest run: ten years (a deadline past the monotonic clock's range would wrap to "now"). */
#define MAX_RUN_NS (3650ULL * 86400ULL * 1000000000ULL)
/* -n RATE, rRATE (read) or wRATE (write): into the total, read or write rate. */
static int parse_nominal(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			 struct dd_err *err)
{
	struct bench_options *o = base;
	double *dst = &o->rate;
	const char *num = v;
	struct dd_err why;
	if (v[0] == 'r' || v[0] == 'w') {
		dst = v[0] == 'r' ? &o->read_rate : &o->write_rate;
		num = v + 1;
	}
	if (units_parse_rate(num, dst, &why))
		return err_fail(err, -1, "%s: '%s' is not a valid rate (RATE, rRATE or wRATE): %s", label, shown, why.msg);
	/* below OPT_RATE_MIN a worker's due times overflowed 64-bit nanoseconds: peak rate */
	if (*dst > 0 && *dst < OPT_RATE_MIN)
		return err_fail(err, -1, "%s: %s is too small (at least %g, or 0 for peak)", label, shown, OPT_RATE_MIN);
	return 0;
}

static const struct opt_row own_rows[] = {
	/* Target */
	{"target", 'T', "PATH", OT_STRING, OFF(target), NULL, NULL, 0, 0, 0, 0, "Target",
	 NULL /* target_help */, 0, NULL},
	{"procs", 'P', "N", OT_UINT, OFF(procs), "4", NULL, 0, 1, 1024, 0, "Target",
	 "worker processes, each on its own file or disjoint region", 0, NULL},
	{"file-size", 'F', "SIZE", OT_SIZE, OFF(file_size), "1GiB", NULL, MIB, 1, 0, 0, "Target",
	 "size of each worker's file or region (bare number: MiB)", 0, NULL},
	{"block-size", 'b', "SIZE", OT_SIZE, OFF(block_size), "4096", NULL, 1, 512, 1048576, 0, "Target",
	 "I/O and dedup block size, a power of two from 512 B to 1 MiB; without -b, the one the --dist "
	 "file was extracted at (its # block-size), else", 0, NULL},
	{"keep", 'k', NULL, OT_FLAG, OFF(keep), NULL, NULL, 0, 0, 0, 0, "Target",
	 "keep the files created in a directory target, and the volume an engine: run formatted", 0, NULL},
	{"force", 0, NULL, OT_FLAG, OFF(force), NULL, NULL, 0, 0, 0, 0, "Target",
	 "write to a block device even if it holds a filesystem or partition signature, or over an "
	 "existing file holding data dedisbench did not write (never through a symbolic link in a "
	 "directory target; a --target path that is a link is followed, as /dev/disk/by-id names are)", 0, NULL},
	{"hints", 0, NULL, OT_FLAG, OFF(hints), NULL, NULL, 0, 0, 0, 0, "Target",
	 "engine targets: pass a NODEDUP hint with every write of fresh unique content, which the engine "
	 "stores without fingerprinting or indexing it", 0, NULL},
	/* Workload */
	{"mode", 0, "MODE", OT_ENUM, OFF(mode), "write", mode_names, 0, 0, 0, 0, "Workload",
	 "write, read or mixed", 0, NULL},
	{NULL, 'w', NULL, OT_SET, OFF(mode), NULL, NULL, 0, 0, 0, MODE_WRITE, "Workload", "same as --mode write", 0, NULL},
	{NULL, 'r', NULL, OT_SET, OFF(mode), NULL, NULL, 0, 0, 0, MODE_READ, "Workload", "same as --mode read", 0, NULL},
	{NULL, 'm', NULL, OT_SET, OFF(mode), NULL, NULL, 0, 0, 0, MODE_MIXED, "Workload", "same as --mode mixed", 0, NULL},
	{"read-pct", 0, "P", OT_UINT, OFF(read_pct), "50", NULL, 0, 0, 100, 0, "Workload",
	 "share of reads in a mixed run, percent", 0, NULL},
	{"access", 'a', "KIND", OT_ENUM, OFF(access), "seq", access_names, 0, 0, 0, 0, "Workload",
	 "seq (wraps around), uniform, or nurand (TPC-C hotspot)", 0, NULL},
	{"nurand-a", 0, "A", OT_UINT, OFF(nurand_a), "0", NULL, 0, 0, 0, 0, "Workload",
	 "NURand's A; 0 means N/10 of each worker's blocks, as DEDISbench", 0, NULL},
	{"dist", 'd', "NAME|FILE", OT_STRING, OFF(dist), "personalfiles", NULL, 0, 0, 0, 0, "Workload",
	 "duplicate distribution: " DISTNAME_BUNDLED ", or a file", 0, NULL},
	{"populate", 0, "HOW", OT_ENUM, OFF(populate), "default", populate_names, 0, 0, 0, 0, "Workload",
	 "fill the target first: none, content, zero, or default (content for read/mixed, none for write) [default]", 0, NULL},
	{"content", 'c', "MODEL", OT_ENUM, OFF(content), "scaled", content_names, 0, 0, 0, 0, "Workload",
	 "scaled: the target holds the distribution scaled to its size; sampled: per-write draws (DEDISbench)", 0, NULL},
	{"compress", 0, "dist|R", OT_UINT, OFF(compress), "dist", compress_names, 0, 1, 20, 0, "Workload",
	 "dist: each content compresses (zstd -1, LZ4, block alone) as the distribution's copy class "
	 "does, when it carries that, else not at all; R: every block compresses about R:1 "
	 "(1 = incompressible)", 0, NULL},
	{"layout", 0, "HOW", OT_ENUM, OFF(layout), "runs", layout_names, 0, 0, 0, 0, "Workload",
	 "runs: duplicates come in copied runs as in the dataset's stream, when the distribution carries "
	 "its locality; scattered: copies spread evenly over the run", 0, NULL},
	{"seed", 0, "N", OT_UINT, OFF(seed), "0", NULL, 0, 0, (1ULL << 53) - 1, 0, "Workload",
	 "seed for offsets and content, below 2^53 so JSON carries it exactly; the same seed repeats "
	 "a run (default: random, reported)", 0, NULL},
	{"workload", 0, "KIND", OT_ENUM, OFF(workload), "dist", workload_names, 0, 0, 0, 0, "Workload",
	 "dist: the options above; backup: Data Domain's synthetic backups, each worker a stream writing "
	 "--generations modified copies, one file or region each", 0, NULL},
	{"generations", 0, "G", OT_UINT, OFF(generations), "10", NULL, 0, 1, 1000, 0, "Workload",
	 "backup: generations per stream (--file-size each)", 0, NULL},
	{"backup-rates", 0, "A:D:M", OT_STRING, OFF(backup_rates), "2:2:5", NULL, 0, 0, 0, 0, "Workload",
	 "backup: percent of the previous generation's 8-block segments (32 KiB at 4 KiB) followed by new data (A), "
	 "deleted (D), moved (M); 2:2:5 approaches 30:1 cumulative after about 80 generations", 0, NULL},
	/* Load and end */
	{"peak", 'p', NULL, OT_FLAG, OFF(peak), NULL, NULL, 0, 0, 0, 0, "Load",
	 "stress: closed loop, as fast as possible (the default)", 0, NULL},
	{"rate", 'n', "RATE", OT_CUSTOM, OFF(rate), "0", NULL, 0, 0, 0, 0, "Load",
	 "nominal: RATE ops/s in total, open loop: 0.001 to 1e12, or 0 for peak (as -p); -n rR / -n wW "
	 "set the read / write rates of a mixed run", 0,
	 parse_nominal},
	{"read-rate", 0, "RATE", OT_RATE, OFF(read_rate), "0", NULL, 0, 0, 0, 0, "Load",
	 "nominal read ops/s of a mixed run (as --rate; with --write-rate)", 0, NULL},
	{"write-rate", 0, "RATE", OT_RATE, OFF(write_rate), "0", NULL, 0, 0, 0, 0, "Load",
	 "nominal write ops/s of a mixed run (as --rate; with --read-rate)", 0, NULL},
	{"time", 't', "DUR", OT_DURATION, OFF(time_ns), "0", NULL, NS_PER_MIN, 0, MAX_RUN_NS, 0, "Load",
	 "run for DUR (30s, 5m; bare number: minutes)", 0, NULL},
	{"size", 's', "SIZE", OT_SIZE, OFF(size), "0", NULL, MIB, 0, 0, 0, "Load",
	 "move SIZE bytes in total (bare number: MiB); default: one pass over the target", 0, NULL},
	/* I/O path */
	{"sync", 0, "MODE", OT_ENUM, OFF(sync), "none", sync_names, 0, 0, 0, 0, "I/O",
	 "none, direct (O_DIRECT), fsync (after each write), dsync (O_DSYNC), direct+fsync", 0, NULL},
	/* choices, default and help from the engine registry: rows_build */
	{"ioengine", 'e', "NAME", OT_ENUM, OFF(ioengine), NULL, NULL, 0, 0, 0, 0, "I/O", NULL, 0, NULL},
	{"iodepth", 0, "N", OT_UINT, OFF(iodepth), "1", NULL, 0, 1, 4096, 0, "I/O", NULL, 0, NULL},
	/* Verification */
	{"verify", 'v', "MODE", OT_ENUM, OFF(verify), "none", verify_names, 0, 0, 0, 0, "Verification",
	 "none, online (every read checked), final (re-read everything after the run), both; blocks no "
	 "ledger describes are identified from their bytes (with --seed: against that seed's layout)", 0, NULL},
	{"ledger", 0, "FILE", OT_STRING, OFF(ledger), NULL, NULL, 0, 0, 0, 0, "Verification",
	 "keep the content ledger in FILE, so a later run (same FILE) can verify what this one wrote", 0, NULL},
	/* Results */
	{"json", 'j', "FILE", OT_STRING, OFF(json), NULL, NULL, 0, 0, 0, 0, "Results",
	 "write the results as one JSON document", 0, NULL},
	{"output-dir", 'o', "DIR", OT_STRING, OFF(output_dir), NULL, NULL, 0, 0, 0, 0, "Results",
	 "write the 1 s time series (timeseries.csv), the latency percentiles, the distribution buckets, "
	 "the accesses per block and the scaled target (scaled-target.dist) here", 0, NULL},
	{"dist-report", 0, "FILE", OT_STRING, OFF(dist_report), NULL, NULL, 0, 0, 0, 0, "Results",
	 "write the distribution the target holds after the run (dedis-dist format)", 0, NULL},
	{"access-report", 0, "FILE", OT_STRING, OFF(access_report), NULL, NULL, 0, 0, 0, 0, "Results",
	 "write accesses per block (how many blocks got each count) and the hottest-10 % share", 0, NULL},
	{"latency-log", 0, NULL, OT_FLAG, OFF(latency_log), NULL, NULL, 0, 0, 0, 0, "Results",
	 "with --output-dir, log every operation's latency (latency.<worker>.csv)", 0, NULL},
	{"plot", 0, NULL, OT_FLAG, OFF(plot), NULL, NULL, 0, 0, 0, 0, "Results",
	 "with --output-dir, render PNG plots there (gnuplot): throughput and p99 over time, latency "
	 "percentiles, distribution written vs target, accesses per block", 0, NULL},
	{"quiet", 'q', NULL, OT_FLAG, OFF(quiet), NULL, NULL, 0, 0, 0, 0, "Results",
	 "print only errors (no summary, no progress line)", 0, NULL},
	{"space-cmd", 0, "CMD", OT_STRING, OFF(space_cmd), NULL, NULL, 0, 0, 0, 0, "Results",
	 "measure the target's used space with CMD, run by sh before and after the run: it prints the "
	 "used bytes first on its first line (vdostats, zpool list -Hp, dmsetup status through awk); "
	 "default: statfs for a directory or file, mm_stat for zram, the counters for engine:", 0, NULL},
	{"space-model", 0, "KIND", OT_ENUM, OFF(space_model), "auto", space_model_names, 0, 0, 0, 0, "Results",
	 "the ideal store the observed space is judged against: block (4 KiB dedup, each block "
	 "compressed alone: VDO), record (128 KiB records deduplicated whole, zstd -3: ZFS, btrfs), cdc "
	 "(content-defined chunks: backup stores); auto: record on btrfs, else block", 0, NULL},
	/* dedisbench-mpi */
	{"rank-content", 0, "HOW", OT_ENUM, OFF(rank_content), "global", rank_content_names, 0, 0, 0, 0, "MPI",
	 "dedisbench-mpi: global: one content space over all ranks, the distribution scaled to the whole "
	 "run (duplicates cross ranks, as they cross the clients of a shared store); replica: each rank "
	 "holds the distribution scaled to its own blocks, with contents of its own (a dedup domain per "
	 "client)", 0, NULL},
	{"peer-timeout", 0, "DUR", OT_DURATION, OFF(peer_timeout_ns), "500ms", NULL, NS_PER_SEC, 0, 0, 0, "MPI",
	 "dedisbench-mpi: a rank not heard from for DUR (at least 0.2 s; rank 0 included, by the others) is lost, and the run stops (bare number: seconds)", 0, NULL},
	/* Replay (dedisbench replay TRACE is --trace TRACE) */
	{"trace", 0, "FILE", OT_STRING, OFF(trace), NULL, NULL, 0, 0, 0, 0, "Replay",
	 "replay an FIU IODedup block trace onto --target instead of generating a workload: each MD5 "
	 "is written as the same bytes (dedisbench replay FILE)", 0, NULL},
	{"speed", 0, "X", OT_RATE, OFF(speed), "0", NULL, 0, 0, 0, 0, "Replay",
	 "replay at the trace's recorded timing sped up X times (1: as recorded); 0: as fast as possible", 0, NULL},
	/* Program */
	{"config", 'f', "FILE", OT_STRING, OFF(config), NULL, NULL, 0, 0, 0, 0, "Program",
	 "read options from an INI file (the original DEDISbench keys too); the command line wins", 0, NULL},
	{"help", 'h', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'h', "Program", "show this help", 0, NULL},
	{"version", 'V', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'V', "Program", "show the version", 0, NULL},
};

static struct opt_row rows[OPT_MAX_ROWS]; /* bench_cli.given has one flag per row */
const struct opt_row *const bench_option_table = rows;
size_t bench_option_count;
static struct opt_table table = {.rows = rows, .help_width = 26};
const struct opt_table *const bench_options_table = &table;

static const char *ioengine_choices[16 + 1];
static char ioengine_help[512], iodepth_help[128], target_help_text[768];

/* "sync (pread/pwrite), libaio or io_uring (both imply O_DIRECT)": the engines that allow
 * buffered I/O first, then those always direct. */
static void ioengine_help_build(char *buf, size_t len)
{
	size_t n = 0, k = 0, direct = 0, total = 0;
	while (ioengine_choice(total))
		direct += (ioengine_choice(total++)->flags & IOENGINE_NEEDS_DIRECT) != 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; ioengine_choice(i); i++) {
			const struct ioengine_ops *e = ioengine_choice(i);
			if (((e->flags & IOENGINE_NEEDS_DIRECT) != 0) != pass)
				continue;
			const char *sep = k == 0 ? "" : k + 1 == total ? " or " : ", ";
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s%s%s%s", sep, e->name,
					      e->help ? " (" : "", e->help ? e->help : "", e->help ? ")" : "");
			k++;
		}
	if (direct)
		snprintf(buf + n, n < len ? len - n : 0, " (%s O_DIRECT)",
			 direct == 1 ? "implies" : direct == 2 ? "both imply" : "all imply");
}

/* Our rows in order, each engine's rows after the last row of their group. */
__attribute__((constructor)) static void rows_build(void)
{
	size_t nown = sizeof own_rows / sizeof own_rows[0], opts_used;
	for (size_t i = 0; ioengine_choice(i) && i < 16; i++)
		ioengine_choices[i] = ioengine_choice(i)->name;
	ioengine_help_build(ioengine_help, sizeof ioengine_help);
	char kinds[sizeof target_help_text - 64];
	target_help(kinds, sizeof kinds);
	snprintf(target_help_text, sizeof target_help_text, "where the run goes (required; . for the current "
		 "directory): %s", kinds);
	char async[64];
	ioengine_names_with(IOENGINE_ASYNC, ", ", async, sizeof async);
	snprintf(iodepth_help, sizeof iodepth_help, "operations in flight per worker (%s)", async);
	for (size_t i = 0; i < nown; i++) {
		rows[bench_option_count++] = own_rows[i];
		struct opt_row *r = &rows[bench_option_count - 1];
		if (r->offset == OFF(ioengine) && r->type == OT_ENUM)
			r->choices = ioengine_choices, r->def = ioengine_choices[0], r->help = ioengine_help;
		if (r->offset == OFF(iodepth))
			r->help = iodepth_help;
		if (r->offset == OFF(target))
			r->help = target_help_text; /* the kinds from their registry */
		bool last_of_group = i + 1 == nown || strcmp(own_rows[i + 1].group, r->group);
		for (size_t e = 0; last_of_group && ioengine_at(e); e++) {
			const struct ioengine_ops *eng = ioengine_at(e);
			for (size_t k = 0; k < eng->noptions; k++) {
				if (strcmp(eng->options[k].group, own_rows[i].group) || bench_option_count == OPT_MAX_ROWS)
					continue;
				rows[bench_option_count] = eng->options[k];
				rows[bench_option_count++].offset += OFF(ioengine_opts) + ioengine_opts_offset(eng);
			}
		}
	}
	opts_used = ioengine_opts_offset(NULL); /* past the last engine's slice */
	if (bench_option_count == OPT_MAX_ROWS || opts_used > BENCH_IOENGINE_OPTS_BYTES)
		abort(); /* grow OPT_MAX_ROWS or BENCH_IOENGINE_OPTS_BYTES */
	table.count = bench_option_count;
}

/* The bytes a row's value takes in struct bench_options. */
static size_t value_size(enum opt_type t)
{
	switch (t) {
	case OT_FLAG: return sizeof(bool);
	case OT_SET:
	case OT_ENUM: return sizeof(int);
	case OT_RATE:
	case OT_CUSTOM: return sizeof(double); /* (-n, the one custom row: a rate) */
	case OT_STRING: return sizeof(char *);
	case OT_ACTION: return 0;
	default: return sizeof(uint64_t);
	}
}

const void *ioengine_options(const struct bench_options *o, const struct ioengine_ops *e)
{
	return o->ioengine_opts + ioengine_opts_offset(e);
}

const char *ioengine_foreign_option(const struct bench_options *o, const struct ioengine_ops *chosen,
				    const struct ioengine_ops **owner)
{
	for (size_t e = 0; ioengine_at(e); e++) {
		const struct ioengine_ops *eng = ioengine_at(e);
		const unsigned char *opts = ioengine_options(o, eng);
		for (size_t k = 0; eng != chosen && k < eng->noptions; k++) {
			const struct opt_row *d = &eng->options[k];
			for (size_t b = 0; b < value_size(d->type); b++)
				if (opts[d->offset + b]) {
					*owner = eng;
					return d->name;
				}
		}
	}
	return NULL;
}

/* The original DEDISbench INI keys, translated into the table's options. A non-NULL `codes`
 * maps the original numeric codes to this option's names; `invert` flips a 0/1 flag. */
struct legacy_key {
	const char *section, *key, *option;
	const char *const *codes;
	bool invert;
};
static const char *const legacy_populate[] = {"none", "content", NULL};
static const struct legacy_key legacy_keys[] = {
	{"execution", "distfile", "dist", NULL, false},
	{"execution", "access_type", "access", access_names, false},
	{"execution", "nprocs", "procs", NULL, false},
	{"execution", "filesize", "file-size", NULL, false},
	{"execution", "blocksize", "block-size", NULL, false},
	{"execution", "populate", "populate", legacy_populate, false},
	{"execution", "sync", "sync", sync_names, false},
	{"execution", "rawdevice", "target", NULL, false},
	{"execution", "seed", "seed", NULL, false},
	{"execution", "integritycheck", "verify", verify_names, false},
	{"results", "tempfilespath", "target", NULL, false},
	{"results", "logging", "latency-log", NULL, false},
	{"results", "general_results", "output-dir", NULL, false},
	{"structural", "cleantemp", "keep", NULL, true},
};

#define fail(err, ...) err_fail(err, -1, __VA_ARGS__)

/* The one value parser: command line, INI and defaults all come through here. */
static int apply_value(struct bench_cli *cli, size_t row, const char *v, struct dd_err *err)
{
	int rc = opt_apply(&table, &rows[row], &cli->o, v, err);
	if (rc < 0)
		return -1;
	if (rc == OPT_ACTION && rows[row].set_value == 'h')
		cli->want_help = true;
	else if (rc == OPT_ACTION)
		cli->want_version = true;
	cli->given[row] = true;
	return 0;
}

void options_defaults(struct bench_cli *cli)
{
	memset(cli, 0, sizeof *cli);
	struct dd_err e;
	if (opt_defaults(&table, 0, &cli->o, &e))
		abort(); /* a broken table default is a programming error, caught by the unit tests */
}

void options_free(struct bench_options *o)
{
	opt_free_strings(&table, o);
}

static long find_long(const char *name)
{
	return opt_find_long(&table, name);
}

bool options_given(const bool *given, const char *name)
{
	long row = find_long(name);
	return row >= 0 && given[row];
}

/* The original DEDISbench key [section] key, or NULL. */
static const struct legacy_key *find_legacy(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof legacy_keys / sizeof legacy_keys[0]; i++) {
		const struct legacy_key *l = &legacy_keys[i];
		if (section && !strcmp(section, l->section) && !strcmp(key, l->key))
			return l;
	}
	return NULL;
}

/* The table row an INI key sets (an original key through its translation), or -1. */
static long ini_key_row(const char *section, const char *key)
{
	const struct legacy_key *l = find_legacy(section, key);
	long row = find_long(l ? l->option : key);
	if (row < 0 || bench_option_table[row].type == OT_ACTION || !strcmp(bench_option_table[row].name, "config"))
		return -1;
	return row;
}

int options_apply_ini(struct bench_cli *cli, const char *section, const char *key, const char *value,
		      struct dd_err *err)
{
	const struct legacy_key *l = find_legacy(section, key);
	char shown[72], kshown[72]; /* quoted shortened: the reason after them is kept */
	const char *sv = errmsg_quote(value, shown, sizeof shown), *sk = errmsg_quote(key, kshown, sizeof kshown);
	if (l) {
		long row = find_long(l->option);
		char translated[32];
		const char *v = value;
		if (l->codes) {
			char *end;
			unsigned long code = strtoul(value, &end, 10);
			size_t n = 0;
			while (l->codes[n])
				n++;
			if (end == value || *end || code >= n)
				return fail(err, "[%s] %s: '%s' is not a valid code (0 to %zu)", section, key, sv, n - 1);
			v = l->codes[code];
		} else if (l->invert) {
			bool b;
			if (opt_parse_bool(value, &b))
				return fail(err, "[%s] %s: '%s' is not 0 or 1", section, key, sv);
			snprintf(translated, sizeof translated, "%d", !b);
			v = translated;
		}
		if (apply_value(cli, (size_t)row, v, err) == 0)
			return 0;
		char inner[sizeof err->msg];
		snprintf(inner, sizeof inner, "%s", err->msg);
		return fail(err, "[%s] %s, read as %s", section, key, inner);
	}
	long row = ini_key_row(section, key);
	if (row < 0) {
		/* the option nearest to it, as on the command line (never one a job file cannot set) */
		const char *near = opt_nearest_long(&table, 0, key);
		bool settable = near && ini_key_row(NULL, near) >= 0;
		return fail(err, "unknown key '%s'%s%s%s%s%s%s", sk, section && *section ? " in [" : "",
			    section && *section ? section : "", section && *section ? "]" : "",
			    settable ? " (did you mean " : "", settable ? near : "", settable ? "?)" : "");
	}
	return apply_value(cli, (size_t)row, value, err);
}

struct ini_ctx {
	struct bench_cli *cli;
	struct dd_err *err;
	bool failed;
	bool seen[OPT_MAX_ROWS]; /* rows this file set: a second line for one is refused, not silently the last */
};

static int ini_on_key(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;
	if (c->failed)
		return 0;
	long row = ini_key_row(section, name);
	/* rate = rRATE / wRATE sets the read / write rate: the same option as read-rate = RATE */
	if (row >= 0 && bench_option_table[row].type == OT_CUSTOM && (value[0] == 'r' || value[0] == 'w'))
		row = find_long(value[0] == 'r' ? "read-rate" : "write-rate");
	if (row >= 0 && c->seen[row]) {
		const char *opt = bench_option_table[row].name;
		fail(c->err, "'%s': --%s is set a second time (an earlier line of this file set it; one line per option)",
		     name, opt);
		c->failed = true;
		return 0;
	}
	if (row >= 0)
		c->seen[row] = true;
	if (options_apply_ini(c->cli, section, name, value, c->err)) {
		c->failed = true;
		return 0;
	}
	return 1;
}

/* The longest line libinih reads whole (its INI_MAX_LINE, 200 bytes with the newline and NUL): a
 * longer one was cut, its rest read as the next line ("line 3: not an INI line" of a 2-line
 * file). */
#define INI_LINE_MAX 198

/* text without the spaces and tabs that start its lines, into out (as long as text): libinih
 * takes an indented line after a key for the continuation of its value, so "[d]\n  procs = 2\n
 * block-size = 4096" read as procs set twice. No option takes a value of several lines. Returns
 * the first line longer than INI_LINE_MAX, else 0. */
static int ini_unindent(const char *text, char *out)
{
	int line = 1, too_long = 0;
	size_t len = 0;
	bool start = true;
	for (const char *p = text; *p; p++) {
		if (start && (*p == ' ' || *p == '\t'))
			continue;
		start = *p == '\n';
		if (start) {
			line++;
			len = 0;
		} else if (++len > INI_LINE_MAX && !too_long) {
			too_long = line;
		}
		*out++ = *p;
	}
	*out = 0;
	return too_long;
}

/* Does line `line` (from 1) of text start a section header ('[', column 1 once unindented)? */
static bool ini_line_opens_section(const char *text, int line)
{
	for (int n = 1; n < line && text; n++)
		if ((text = strchr(text, '\n')))
			text++;
	return text && *text == '[';
}

int options_parse_ini_text(struct bench_cli *cli, const char *text, const char *name, struct dd_err *err)
{
	struct dd_err inner = {.resource = false};
	struct ini_ctx c = {.cli = cli, .err = &inner};
	char *flat = malloc(strlen(text) + 1);
	if (!flat)
		return fail(err, "config file %s: out of memory", name);
	int line = ini_unindent(text, flat);
	if (line) {
		free(flat);
		return fail(err, "config file %s:%d: the line is longer than %d characters (give a value that long on the "
				 "command line)", name, line, INI_LINE_MAX);
	}
	line = ini_parse_string(flat, ini_on_key, &c);
	bool open_section = line > 0 && ini_line_opens_section(flat, line);
	free(flat);
	if (line == 0)
		return 0;
	/* libinih reports the first bad line, and reads on: "[execution" without its ']' is line 1,
	 * whatever a key under it got wrong later */
	if (open_section)
		return fail(err, "config file %s:%d: a section header without its ']' (expected [section])", name, line);
	if (c.failed)
		return fail(err, "config file %s:%d: %s", name, line, inner.msg);
	return fail(err, "config file %s:%d: not an INI line (expected [section] or key = value)", name, line);
}

/* A job file is small; reading a bounded amount keeps -f /dev/zero (or a stuck pipe's
 * endless output) from running forever. */
#define CONFIG_MAX (1u << 20)

int options_load_ini(struct bench_cli *cli, const char *path, struct dd_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f) /* (out of descriptors or memory: not the file's fault, resource is set) */
		return err_fail_errno(err, -1, errno, "config file %s", path);
	char *text = malloc(CONFIG_MAX + 1);
	if (!text) {
		fclose(f);
		fail(err, "config file %s: out of memory", path);
		err->resource = true;
		return -1;
	}
	size_t n = fread(text, 1, CONFIG_MAX + 1, f);
	int e = ferror(f) ? errno : 0;
	fclose(f);
	int rc;
	const char *nul = memchr(text, 0, n);
	if (e)
		rc = fail(err, "config file %s: %s", path, strerror(e));
	else if (n > CONFIG_MAX)
		rc = fail(err, "config file %s is larger than %u KiB: not a job file", path, CONFIG_MAX >> 10);
	else if (nul)
		rc = fail(err, "config file %s: a NUL byte at offset %zu: not a text file", path, (size_t)(nul - text));
	else {
		text[n] = 0;
		rc = options_parse_ini_text(cli, text, path, err);
	}
	free(text);
	return rc;
}

void options_build_getopt(struct option *longs, char *shorts)
{
	opt_build_getopt(&table, 0, longs, shorts);
}

static int on_row(void *cli, size_t row, const char *value, struct dd_err *err)
{
	return apply_value(cli, row, value, err);
}

static int parse_argv(int argc, char **argv, struct bench_cli *cli, struct dd_err *err)
{
	int operands;
	char shown[72]; /* an argument quoted shortened in an error */
	if (opt_parse_argv(&table, 0, argc, argv, NULL, on_row, cli, &operands, err))
		return -1;
	if (operands < argc)
		return fail(err, "unexpected argument '%s' (options only; the target is --target PATH)",
			    errmsg_quote(argv[operands], shown, sizeof shown));
	return 0;
}

int options_parse(int argc, char **argv, struct bench_cli *cli, struct dd_err *err)
{
	return options_parse_with(argc, argv, NULL, NULL, cli, err);
}

int options_parse_with(int argc, char **argv, options_loader *load, void *ctx, struct bench_cli *cli,
		       struct dd_err *err)
{
	/* Pass 1 validates the command line and finds --config; pass 2 lets it override the file. */
	struct bench_cli first;
	options_defaults(&first);
	int rc = parse_argv(argc, argv, &first, err);
	char *config = first.o.config ? strdup(first.o.config) : NULL;
	bool actions = first.want_help || first.want_version;
	options_free(&first.o);
	options_defaults(cli);
	if (rc)
		goto out;
	if (actions) {
		rc = parse_argv(argc, argv, cli, err);
		goto out;
	}
	if (config && (rc = load ? load(cli, config, ctx, err) : options_load_ini(cli, config, err)))
		goto out;
	/* The load is one choice made by two kinds of option: peak on the command line replaces the
	 * file's rates, and a rate there the file's peak (they were refused as excluding each other,
	 * although the command line wins over the file). */
	bool cli_peak = options_given(first.given, "peak"),
	     cli_rate = options_given(first.given, "rate") || options_given(first.given, "read-rate") ||
			options_given(first.given, "write-rate");
	if (cli_peak && !cli_rate)
		cli->o.rate = cli->o.read_rate = cli->o.write_rate = 0;
	if (cli_rate && !cli_peak)
		cli->o.peak = false;
	rc = parse_argv(argc, argv, cli, err);
out:
	free(config);
	return rc;
}

const struct bench_subcommand bench_subcommands[] = {
	{"replay", "replay TRACE --target PATH [OPTION]...", "replay an FIU IODedup block trace (--trace)"},
	{"suite", "suite --target PATH --output-dir DIR [OPTION]...",
	 "the DEDISbench paper's phases, a run each, then compared"},
	{"compare", "compare RESULT... [--output-dir DIR [--plot]]",
	 "runs' or suites' results (JSON, suite directories) side by side"},
	{"backup", "--workload backup --target PATH [OPTION]...",
	 "Data Domain's synthetic backups: generations of each stream"},
	{NULL, NULL, NULL},
};

void options_print_usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s --target PATH [OPTION]...\n", prog);
	for (size_t i = 0; bench_subcommands[i].name; i++)
		fprintf(f, "       %s %s\n", prog, bench_subcommands[i].synopsis);
}

void options_print_help(FILE *f, const char *prog)
{
	options_print_usage(f, prog);
	fputs("Benchmark block storage with I/O whose content follows a real duplicate\n"
	      "distribution.\n\nCommands:\n", f);
	for (size_t i = 0; bench_subcommands[i].name; i++)
		fprintf(f, "  %-9s %s\n", bench_subcommands[i].name, bench_subcommands[i].about);
	const char *group = NULL;
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		if (!group || strcmp(group, d->group)) {
			group = d->group;
			fprintf(f, "\n%s:\n", group);
		}
		opt_print_help_row(f, &table, d, NULL);
	}
	fprintf(f, "\nSizes take B, KiB, MiB, GiB, TiB; durations s, m, h. Exit status: 0 success,\n"
		   "1 a failure during the run (I/O error, worker lost), 2 bad input (nothing\n"
		   "written).\n");
}

void options_print_man(FILE *f)
{
	const char *group = NULL;
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		if (!group || strcmp(group, d->group)) {
			group = d->group;
			fprintf(f, ".SS %s\n", group);
		}
		char tail[96] = "";
		if (d->name && d->type != OT_ACTION && strcmp(d->name, "config"))
			snprintf(tail, sizeof tail, ". Config key: \\fB%s\\fR", d->name);
		opt_print_man_row(f, &table, d, tail);
	}
}

void options_print_completion(FILE *f)
{
	opt_print_completion(f, &table, 0);
	target_print_completion(f); /* --target engine:DIR,KEY=VALUE */
}

json_t *options_to_json(const struct bench_options *o)
{
	json_t *j = json_object();
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		const void *p = (const char *)o + d->offset;
		json_t *v = NULL;
		if (!d->name)
			continue;
		switch (d->type) {
		case OT_FLAG: v = json_boolean(*(const bool *)p); break;
		case OT_UINT:
			if (d->choices && *(const uint64_t *)p < d->min) {
				v = json_string(d->choices[*(const uint64_t *)p]);
				break;
			}
			/* fall through */
		case OT_SIZE: v = json_integer((json_int_t) * (const uint64_t *)p); break;
		case OT_DURATION: v = json_real((double)*(const uint64_t *)p / 1e9); break;
		case OT_RATE:
		case OT_CUSTOM: v = json_real(*(const double *)p); break; /* -n: a rate */
		case OT_ENUM: v = json_string(d->choices[*(const int *)p]); break;
		case OT_STRING: v = *(char *const *)p ? json_string(*(char *const *)p) : json_null(); break;
		case OT_SET:
		case OT_ACTION: continue;
		}
		json_object_set_new(j, d->name, v);
	}
	return j;
}
