/* opttable.h - the one option row type of the three tools: typed rows (value, range, choices,
 * subcommands, help), one value parser behind getopt_long, INI keys and "k=v,k=v" lists, and the
 * --help lines, man page items and shell completion words printed from the same rows. */
#ifndef DEDIS_OPTTABLE_H
#define DEDIS_OPTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/errmsg.h"

enum opt_type {
	OT_FLAG,     /* no argument; sets a bool (INI / k=v: 1/0, yes/no, true/false, on/off) */
	OT_SET,      /* no argument; stores `set_value` into an int field (-w, -r, -m; -f, -d) */
	OT_UINT,     /* uint64_t count, decimal with optional k/M/G; `choices` may name values 0, 1, ... */
	OT_SIZE,     /* uint64_t bytes; a bare number times `unit` */
	OT_DURATION, /* uint64_t ns; a bare number times `unit`; max: the longest */
	OT_RATE,     /* double ops/s; a non-zero rate below OPT_RATE_MIN is refused */
	OT_ENUM,     /* int: the index of one of `choices` */
	OT_STRING,   /* char *, strdup'ed (the old value freed) */
	OT_CUSTOM,   /* the row's `parse` stores the value */
	OT_ACTION,   /* --help, --version: opt_apply returns OPT_ACTION, the caller acts on set_value */
};

/* The smallest non-zero OT_RATE, one operation every 1000 s (below about 5e-11 a worker's due
 * times overflowed 64-bit nanoseconds). */
#define OPT_RATE_MIN 1e-3

/* What opt_apply returns for an OT_ACTION row. */
#define OPT_ACTION 1

struct opt_row;
/* An OT_CUSTOM row's parser: store v (label: "--name" or "-c"; shown: v quoted shortened for
 * messages) into base, or return -1 with err set. */
typedef int opt_parse_fn(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			 struct dd_err *err);

struct opt_row {
	const char *name;   /* long option, also the INI / k=v key; NULL for a short-only alias */
	int short_opt;      /* 0 for none */
	const char *arg;    /* metavariable in --help; NULL: takes no argument */
	enum opt_type type;
	size_t offset;      /* of the value in the tool's option struct */
	const char *def;    /* default, as text fed through the same parser; NULL = zero */
	const char *const *choices; /* OT_ENUM, NULL-terminated; OT_UINT: words for 0, 1, ... */
	uint64_t unit;      /* OT_SIZE / OT_DURATION: the bare-number multiplier */
	uint64_t min, max;  /* OT_UINT / OT_SIZE range (max 0: none); OT_DURATION: max */
	int set_value;      /* OT_SET: the value; OT_ACTION: which action ('h', 'V') */
	const char *group;  /* --help section (NULL: none) */
	const char *help;
	unsigned cmds;      /* subcommands it applies to, a mask; 0: all */
	opt_parse_fn *parse; /* OT_CUSTOM */
};

/* How a table words some refusals (each tool kept its own wording). */
#define OPT_STYLE_OR_LIST 1u    /* unknown value 'x' (a, b or c), not (one of: a, b, c) */
#define OPT_STYLE_SIZE_UNITS 2u /* a size's range as "(at least 1 MiB)" / "(A to B)", not in bytes */
#define OPT_STYLE_ALL_DEFAULTS 4u /* --help and man show every default given ("0" too) */

struct opt_table {
	const struct opt_row *rows;
	size_t count;
	unsigned style;     /* OPT_STYLE_* */
	int help_width;     /* --help: the option column's width */
};

/* The most rows a table may have (callers keep a `given` flag per row). */
#define OPT_MAX_ROWS 64

/* "--name", or "-c" for a short-only row. */
const char *opt_label(const struct opt_row *r, char *buf, size_t len);
/* Parse v (NULL for an option without argument) into base by row r: 0, OPT_ACTION, or -1 with
 * err set ("--name: 'v' is not ..."). */
int opt_apply(const struct opt_table *t, const struct opt_row *r, void *base, const char *v, struct dd_err *err);
/* Every row in mask (with a default) set to its default; -1 with err when one is broken. */
int opt_defaults(const struct opt_table *t, unsigned mask, void *base, struct dd_err *err);
/* Free every OT_STRING value in base. */
void opt_free_strings(const struct opt_table *t, void *base);
/* The row of a long name / of a short letter in mask; -1 when none. */
long opt_find_long(const struct opt_table *t, const char *name);
long opt_find_short(const struct opt_table *t, unsigned mask, int c);
/* The long name (without "--") of the row in mask nearest to typed ("--porcs", "blocksize=4k":
 * dashes and a value ignored) by edit distance, when it is close enough to be the one meant
 * (one slip in a name under 6 characters, a third of a longer one); NULL when none is. */
const char *opt_nearest_long(const struct opt_table *t, unsigned mask, const char *typed);
/* A boolean word: 1/0, yes/no, true/false, on/off (any case); 0, or -1. */
int opt_parse_bool(const char *v, bool *out);

/* The command line. Each option of a row in mask is handed to on_row(ctx, row, value, err);
 * messages name `who` first when given ("scan: unknown option ..."). Returns 0 with *operands
 * the index of the first argument that is not an option (getopt permutes), or -1 with err set.
 * The getopt_long arrays are built here, from the rows. */
/* getopt_long's arrays from the rows in mask (longs: OPT_MAX_ROWS + 1 entries, shorts: 3 *
 * OPT_MAX_ROWS + 2 characters): long options return 256 + row; shorts start with ':' (a missing
 * value is told apart from an unknown option). */
struct option;
void opt_build_getopt(const struct opt_table *t, unsigned mask, struct option *longs, char *shorts);
typedef int opt_row_fn(void *ctx, size_t row, const char *value, struct dd_err *err);
int opt_parse_argv(const struct opt_table *t, unsigned mask, int argc, char **argv, const char *who,
		   opt_row_fn *on_row, void *ctx, int *operands, struct dd_err *err);

/* A "k=v<sep>k=v" list (e.g. "index=bdb,compress=lz4") applied to base through the rows; a key
 * that no row names, or a part without '=', is refused ("unknown key 'k'", "'p' is not
 * key=value"); with given (a flag per row, may be NULL) a key set twice is too ("k given
 * twice"), and the rows set are marked. what, when not NULL, is what the refusals call a key
 * ("engine option": "unknown engine option 'k'", "engine option k given twice"). A value's
 * refusal is its row's ("--k: ..."; an OT_CUSTOM row words its own). */
int opt_parse_kv(const struct opt_table *t, void *base, const char *list, char sep, bool *given, const char *what,
		 struct dd_err *err);

/* Does --help / the man page show row r's default? (not for flags, "0" or "default", unless
 * the table says OPT_STYLE_ALL_DEFAULTS) */
bool opt_shows_default(const struct opt_table *t, const struct opt_row *r);
/* The width --help fits its lines to (a terminal's 80 columns). */
#define OPT_HELP_COLUMNS 80
/* One --help entry: the option column, the help, " [default]", then suffix (may be NULL),
 * wrapped at spaces into OPT_HELP_COLUMNS, the lines after the first indented to the help's
 * column (deeper than any option: a reader tells an entry's own line by its indent of 2 or 6). */
void opt_print_help_row(FILE *f, const struct opt_table *t, const struct opt_row *r, const char *suffix);
/* One man page item of row r (see optdoc_man_item); tail is roff appended to the help. */
void opt_print_man_row(FILE *f, const struct opt_table *t, const struct opt_row *r, const char *tail);
/* The completion data of the rows in mask, one line each: "OPTION METAVAR CHOICE..." (a dash
 * for no metavariable), a long and a short option each on its own line. */
void opt_print_completion(FILE *f, const struct opt_table *t, unsigned mask);
/* The same of a "k=v" list's rows: "PREFIXKEY= METAVAR CHOICE..." (prefix names where the list
 * goes, e.g. "engine:,"). */
void opt_print_kv_completion(FILE *f, const struct opt_table *t, const char *prefix);

#endif
