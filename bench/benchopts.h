/* benchopts.h - dedisbench's single option table: every option is one row, and getopt_long, the
 * INI config file, --help, the man page's OPTIONS section and the JSON `config` derive from it. */
#ifndef DEDIS_BENCH_OPTIONS_H
#define DEDIS_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "lib/opttable.h"

enum bench_mode { MODE_WRITE, MODE_READ, MODE_MIXED };
enum access_kind { ACCESS_SEQ, ACCESS_UNIFORM, ACCESS_NURAND };
enum sync_mode { SYNC_NONE, SYNC_DIRECT, SYNC_FSYNC, SYNC_DIRECT_FSYNC, SYNC_DSYNC };
enum populate_mode { POPULATE_DEFAULT, POPULATE_NONE, POPULATE_CONTENT, POPULATE_ZERO };
enum content_model { CONTENT_SCALED, CONTENT_SAMPLED };
enum verify_mode { VERIFY_NONE, VERIFY_ONLINE, VERIFY_FINAL, VERIFY_BOTH };
enum layout_kind { LAYOUT_RUNS, LAYOUT_SCATTERED };
enum rank_content { RANK_CONTENT_GLOBAL, RANK_CONTENT_REPLICA };
enum workload_kind { WORKLOAD_DIST, WORKLOAD_BACKUP };
/* Which ideal store the observed space is judged against (bench/report/spacecheck.c). */
enum space_model { SPACE_MODEL_AUTO, SPACE_MODEL_BLOCK, SPACE_MODEL_RECORD, SPACE_MODEL_CDC };
#define COMPRESS_DIST 0 /* --compress dist: each content's compressibility from the distribution */

#define BENCH_IOENGINE_OPTS_BYTES 64

/* The raw values of every option, as the table fills them. */
struct bench_options {
	char *target;
	uint64_t procs;
	uint64_t file_size;   /* bytes */
	uint64_t block_size;  /* bytes */
	int access;           /* enum access_kind */
	uint64_t nurand_a;    /* 0: N/10 */
	int mode;             /* enum bench_mode */
	uint64_t read_pct;
	bool peak;            /* -p: closed loop (the default when no rate is given) */
	double rate;          /* ops/s, 0 = peak */
	double read_rate;
	double write_rate;
	uint64_t time_ns;     /* 0 = no time bound */
	uint64_t size;        /* bytes, 0 = no size bound */
	int sync;             /* enum sync_mode */
	int ioengine;         /* index of ioengine_choice() */
	uint64_t iodepth;
	/* the I/O engines' own options (their rows), a slice each: ioengine_options() */
	unsigned char ioengine_opts[BENCH_IOENGINE_OPTS_BYTES] __attribute__((aligned(8)));
	char *dist;
	int populate;         /* enum populate_mode */
	int content;          /* enum content_model */
	uint64_t compress;    /* COMPRESS_DIST, or R: blocks compress about R:1 */
	int layout;           /* enum layout_kind */
	int verify;           /* enum verify_mode */
	char *ledger;         /* file keeping the content ledger across runs */
	uint64_t seed;
	char *config;
	bool keep;
	bool force;
	bool hints;           /* engine targets: NODEDUP on fresh unique content */
	char *json;
	char *output_dir;
	char *dist_report;
	char *access_report;
	bool latency_log;
	bool plot;
	bool quiet;
	int rank_content;     /* enum rank_content (dedisbench-mpi) */
	uint64_t peer_timeout_ns; /* dedisbench-mpi: a rank silent this long is lost */
	char *space_cmd;      /* issue 14: the target's used bytes from a command (space.h) */
	int space_model;      /* issue 38: enum space_model */
	char *trace;          /* issue 14: replay this block trace (dedisbench replay TRACE) */
	double speed;         /* replay: recorded gaps / speed; 0 = as fast as possible */
	int workload;         /* issue 14: enum workload_kind */
	uint64_t generations; /* backup: generations per stream */
	char *backup_rates;   /* backup: "ADD:DEL:MOVE" percent of segments per generation */
};

/* The rows: dedisbench's own, with each I/O engine's rows after the last of their group and
 * --ioengine's choices and help taken from the engine registry (built before main). */
extern const struct opt_row *const bench_option_table;
extern size_t bench_option_count;
struct option;
/* The rows as a table for lib/opttable. */
extern const struct opt_table *const bench_options_table;
/* getopt_long's arrays built from the table (long options return 256 + row): longs holds at
 * least OPT_MAX_ROWS + 1 entries, shorts 3 * OPT_MAX_ROWS + 2 characters. */
void options_build_getopt(struct option *longs, char *shorts);

/* Parse state: the options and which rows were given explicitly (by INI or command line). */
struct bench_cli {
	struct bench_options o;
	bool given[OPT_MAX_ROWS];
	bool want_help, want_version;
};

/* Errors: struct dd_err, "what: why" (the caller prefixes the program name); resource set when
 * memory or descriptors ran out (the exit status is then a run's failure, 1, not bad input's). */

/* Fill defaults, then the config file (-f/--config, if any), then the command line (which
 * wins). Returns 0, or -1 with err set. Allocates strings: options_free(). */
int options_parse(int argc, char **argv, struct bench_cli *cli, struct dd_err *err);
/* options_parse with the --config file's options applied by load (cli, the file's path, ctx)
 * instead of options_load_ini: one job of a job file of several (bench/jobfile.h). */
typedef int options_loader(struct bench_cli *cli, const char *path, void *ctx, struct dd_err *err);
int options_parse_with(int argc, char **argv, options_loader *load, void *ctx, struct bench_cli *cli,
		       struct dd_err *err);
/* Apply one "key = value" from an INI file (section may be NULL); the same path the config
 * reader uses. Exposed so tests can prove CLI == INI. */
int options_apply_ini(struct bench_cli *cli, const char *section, const char *key, const char *value,
		      struct dd_err *err);
int options_load_ini(struct bench_cli *cli, const char *path, struct dd_err *err);
/* The same on a file's text (NUL-terminated); `name` stands for the file in messages. */
int options_parse_ini_text(struct bench_cli *cli, const char *text, const char *name, struct dd_err *err);
/* Was the option with this long name given (command line or INI)? */
bool options_given(const bool *given, const char *name);
void options_defaults(struct bench_cli *cli);
void options_free(struct bench_options *o);
struct ioengine_ops;
/* Engine e's option values in o (what io_ctx.opts points to). */
const void *ioengine_options(const struct bench_options *o, const struct ioengine_ops *e);
/* The first option row of an engine other than the chosen one that is set in o (its long
 * name, and that engine in *owner), or NULL: such a row needs its engine. */
const char *ioengine_foreign_option(const struct bench_options *o, const struct ioengine_ops *chosen,
				    const struct ioengine_ops **owner);

/* What dedisbench does besides a run of the options' workload: the word (argv[1]; backup: the
 * --workload), its synopsis after the program name, and a few words for --help. NULL-ended. */
struct bench_subcommand {
	const char *name, *synopsis, *about;
};
extern const struct bench_subcommand bench_subcommands[];
/* The synopsis lines: a run, then each subcommand's. */
void options_print_usage(FILE *f, const char *prog);
void options_print_help(FILE *f, const char *prog);
/* The OPTIONS section of the man page (roff), generated from the table. */
void options_print_man(FILE *f);
/* The bash completion's data (lib/opttable's opt_print_completion): "OPTION METAVAR CHOICE...". */
void options_print_completion(FILE *f);
/* Every option's effective value, keyed by long name. */
json_t *options_to_json(const struct bench_options *o);

extern const char *const access_names[];
extern const char *const mode_names[];
extern const char *const sync_names[];
extern const char *const populate_names[];
extern const char *const content_names[];
extern const char *const verify_names[];
extern const char *const compress_names[];
extern const char *const layout_names[];
extern const char *const rank_content_names[];
extern const char *const workload_names[];
extern const char *const space_model_names[];

#endif
