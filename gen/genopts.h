/* genopts.h - dedisgen's single option table: every option is one row (with the subcommands it
 * applies to), and getopt_long, --help and the man page's OPTIONS section derive from it. */
#ifndef DEDIS_GEN_OPTIONS_H
#define DEDIS_GEN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/opttable.h"

/* CMD_MPI: dedisgen-mpi, a scan over the ranks of an MPI job (no subcommands). */
enum gen_cmd { CMD_SCAN = 1, CMD_MERGE = 2, CMD_SHOW = 4, CMD_COMPARE = 8, CMD_MPI = 16 };

#define GEN_MAX_SIZES 16
#define GEN_SAMPLE_AUTO (-1.0)

struct gen_options {
	int cmd;                 /* enum gen_cmd */
	char **paths;            /* scan: PATHs (positional and -p); merge: DB dirs; show/compare: files */
	int npaths;
	uint64_t sizes[GEN_MAX_SIZES]; /* ascending, distinct */
	int nsizes;
	char *output;            /* -o */
	char *json;              /* scan/merge: --json FILE */
	bool json_stdout;        /* show/compare: --json */
	char *plot;
	int hash;                /* index into gen_hash_names */
	int read_method;         /* index into gen_read_names: the scan_read values */
	uint64_t threads;        /* 0: all cores */
	char *db;
	bool keep;
	uint64_t mem_limit;      /* 0: none */
	uint64_t db_cache;
	bool one_fs, skip_tails, strict, quiet;
	double max_diff;         /* percentage points; < 0: not given */
	double max_ratio_diff;   /* compare: after-dedup compression ratios, %; < 0: not given */
	double max_tv;           /* compare: TV distance of the zstd size eighths; < 0: not given */
	double max_loc_diff;     /* compare: locality shares, percentage points; < 0: not given */
	double compress_sample;  /* scan: occurrence sampling rate; GEN_SAMPLE_AUTO, 0 = off */
	bool no_locality;
	bool no_granularity;     /* scan: no [granularity 1] (it follows --compress-sample otherwise) */
	bool no_alignment;       /* scan: no [alignment 1] */
	bool no_cdc;             /* scan: no [cdc 1] */
	uint64_t cdc_avg;        /* scan: the chunker's average chunk (bytes, a power of two) */
	bool stripe;             /* dedisgen-mpi: the one PATH is one file or device every host sees */
	uint64_t top;
	int kind;                /* 0, 'f' (folder) or 'd' (device): the original DEDISgen flags */
	bool want_help, want_version;
};

/* The rows (lib/opttable), each with the mask of enum gen_cmd it applies to. */
extern const struct opt_table *const gen_options_table;
/* The values of the custom rows: -b SIZES, -p PATH, percentage points, a fraction, --compress-sample. */
opt_parse_fn gen_parse_sizes_row, gen_parse_path, gen_parse_pp, gen_parse_fraction, gen_parse_sample;
extern const char *const gen_hash_names[];
extern const char *const gen_read_names[];
extern const char *const gen_cmd_names[]; /* by bit index: scan, merge, show, compare (not mpi) */

/* argv[1] may name a subcommand (scan, merge, show, compare); otherwise it is scan. Checks what
 * can be checked without touching the filesystem (values, ranges, argument counts, options that
 * need each other). Returns 0, or -1 with err set (struct dd_err). Free with gen_options_free. */
int gen_options_parse(int argc, char **argv, struct gen_options *o, struct dd_err *err);
/* dedisgen-mpi's command line: the rows marked CMD_MPI, no subcommand; checked as a scan's. */
int gen_options_parse_mpi(int argc, char **argv, struct gen_options *o, struct dd_err *err);
void gen_options_free(struct gen_options *o);
/* The automatic compressibility sampling rate for a scan of `blocks` blocks (0: unknown): the
 * largest power of two <= 1 with p * blocks <= 2^13, never below 1/256 (1/64 when unknown). */
double gen_auto_sample_rate(uint64_t blocks);
/* Parses "4096,8192" / "4KiB,1MiB" into sorted distinct sizes. Returns 0 or -1 (err: the reason
 * alone; the caller names the option). */
int gen_parse_sizes(const char *s, uint64_t *sizes, int *n, struct dd_err *err);

void gen_options_print_help(FILE *f);
void gen_options_print_man(FILE *f);
void gen_options_print_help_mpi(FILE *f);
void gen_options_print_man_mpi(FILE *f);

#endif
