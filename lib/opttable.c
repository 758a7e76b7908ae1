/* opttable.c - the option rows' one value parser (command line, INI, k=v lists and defaults all
 * come through opt_apply), the getopt_long arrays built from them, and their --help, man and
 * completion lines. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/optdoc.h"
#include "lib/opttable.h"
#include "lib/units.h"

#define fail(err, ...) err_fail(err, -1, __VA_ARGS__)

static void *field(void *base, const struct opt_row *r)
{
	return (char *)base + r->offset;
}

const char *opt_label(const struct opt_row *r, char *buf, size_t len)
{
	if (r->name)
		snprintf(buf, len, "--%s", r->name);
	else
		snprintf(buf, len, "-%c", r->short_opt);
	return buf;
}

int opt_parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(v, no[i]))
			return *out = false, 0;
	}
	return -1;
}

static int choice_index(const char *const *choices, const char *v)
{
	for (int i = 0; choices[i]; i++)
		if (!strcmp(choices[i], v))
			return i;
	return -1;
}

/* "a, b, c", or with OPT_STYLE_OR_LIST "a, b or c". */
static void list_choices(const char *const *choices, bool or_last, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; choices[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0 ? "" : or_last && !choices[i + 1] ? " or " : ", ", choices[i]);
}

/* The refusal of n outside [min, max] (max 0: no upper bound) in the table's wording. */
static int out_of_range(const struct opt_table *t, const struct opt_row *r, const char *lb, const char *sv,
			struct dd_err *err)
{
	unsigned long long lo = r->min, hi = r->max;
	bool size = r->type == OT_SIZE;
	if (t->style & OPT_STYLE_SIZE_UNITS) {
		if (hi)
			return fail(err, "%s: %s is out of range (%llu to %llu)", lb, sv, lo, hi);
		char least[32];
		if (size)
			units_format_size(lo, least, sizeof least);
		else
			snprintf(least, sizeof least, "%llu", lo);
		return fail(err, "%s: %s is out of range (at least %s)", lb, sv, least);
	}
	if (hi)
		return fail(err, "%s: %s is out of range (%llu to %llu%s)", lb, sv, lo, hi, size ? " bytes" : "");
	return fail(err, "%s: %s is out of range (at least %llu%s)", lb, sv, lo,
		    !size ? "" : lo == 1 ? " byte" : " bytes");
}

static int apply_count(const struct opt_table *t, const struct opt_row *r, void *base, const char *v,
		       const char *lb, const char *sv, struct dd_err *err)
{
	uint64_t n;
	struct dd_err why;
	int word = r->choices ? choice_index(r->choices, v) : -1;
	if (word >= 0) {
		*(uint64_t *)field(base, r) = (uint64_t)word;
		return 0;
	}
	if (units_parse_count(v, &n, &why)) {
		if (!r->choices)
			return fail(err, "%s: '%s' is not a valid count: %s", lb, sv, why.msg);
		char list[256];
		list_choices(r->choices, false, list, sizeof list);
		return fail(err, "%s: '%s' is neither %s nor a whole number", lb, sv, list);
	}
	if (n < r->min || (r->max && n > r->max))
		return out_of_range(t, r, lb, sv, err);
	*(uint64_t *)field(base, r) = n;
	return 0;
}

static int apply_size(const struct opt_table *t, const struct opt_row *r, void *base, const char *v,
		      const char *lb, const char *sv, struct dd_err *err)
{
	uint64_t n;
	struct dd_err why;
	if (units_parse_size(v, r->unit ? r->unit : 1, &n, &why))
		return fail(err, "%s: '%s' is not a valid size: %s", lb, sv, why.msg);
	if (n < r->min || (r->max && n > r->max))
		return out_of_range(t, r, lb, sv, err);
	*(uint64_t *)field(base, r) = n;
	return 0;
}

static int apply_duration(const struct opt_row *r, void *base, const char *v, const char *lb, const char *sv,
			  struct dd_err *err)
{
	uint64_t ns;
	struct dd_err why;
	if (units_parse_duration(v, r->unit, &ns, &why))
		return fail(err, "%s: '%s' is not a valid duration: %s", lb, sv, why.msg);
	if (r->max && ns > r->max)
		return fail(err, "%s: %s is longer than %llu days", lb, sv,
			    (unsigned long long)(r->max / (86400ULL * 1000000000ULL)));
	*(uint64_t *)field(base, r) = ns;
	return 0;
}

static int apply_rate(const struct opt_row *r, void *base, const char *v, const char *lb, const char *sv,
		      struct dd_err *err)
{
	double x;
	struct dd_err why;
	if (units_parse_rate(v, &x, &why))
		return fail(err, "%s: '%s' is not a valid rate: %s", lb, sv, why.msg);
	if (x > 0 && x < OPT_RATE_MIN)
		return fail(err, "%s: %s is too small (at least %g; 0 for none)", lb, sv, OPT_RATE_MIN);
	*(double *)field(base, r) = x;
	return 0;
}

static int apply_text(const struct opt_table *t, const struct opt_row *r, void *base, const char *v,
		      const char *lb, const char *sv, struct dd_err *err)
{
	if (r->type == OT_ENUM) {
		int i = choice_index(r->choices, v);
		if (i >= 0)
			return *(int *)field(base, r) = i, 0;
		char list[256];
		bool or_list = t->style & OPT_STYLE_OR_LIST;
		list_choices(r->choices, or_list, list, sizeof list);
		return fail(err, "%s: unknown value '%s' (%s%s)", lb, sv, or_list ? "" : "one of: ", list);
	}
	char **s = field(base, r);
	if (!v || !*v)
		return fail(err, "%s: empty value", lb);
	char *copy = strdup(v);
	if (!copy) {
		fail(err, "out of memory");
		err->resource = true;
		return -1;
	}
	free(*s);
	*s = copy;
	return 0;
}

int opt_apply(const struct opt_table *t, const struct opt_row *r, void *base, const char *v, struct dd_err *err)
{
	char lb[64], shown[72]; /* a value is quoted shortened: a long one would cut off the reason */
	const char *sv = v ? errmsg_quote(v, shown, sizeof shown) : NULL;
	opt_label(r, lb, sizeof lb);
	switch (r->type) {
	case OT_FLAG: {
		bool b = true;
		if (v && opt_parse_bool(v, &b))
			return fail(err, "%s: '%s' is not a boolean (use 1/0, yes/no, true/false)", lb, sv);
		*(bool *)field(base, r) = b;
		return 0;
	}
	case OT_SET: *(int *)field(base, r) = r->set_value; return 0;
	case OT_UINT: return apply_count(t, r, base, v, lb, sv, err);
	case OT_SIZE: return apply_size(t, r, base, v, lb, sv, err);
	case OT_DURATION: return apply_duration(r, base, v, lb, sv, err);
	case OT_RATE: return apply_rate(r, base, v, lb, sv, err);
	case OT_ENUM:
	case OT_STRING: return apply_text(t, r, base, v, lb, sv, err);
	case OT_CUSTOM: return r->parse(base, r, v, lb, sv, err);
	case OT_ACTION: return OPT_ACTION;
	}
	return fail(err, "%s: a row of unknown type", lb);
}

int opt_defaults(const struct opt_table *t, unsigned mask, void *base, struct dd_err *err)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct opt_row *r = &t->rows[i];
		if (r->def && r->type != OT_SET && r->type != OT_ACTION && (!r->cmds || !mask || (r->cmds & mask)) &&
		    opt_apply(t, r, base, r->def, err) < 0)
			return -1;
	}
	return 0;
}

void opt_free_strings(const struct opt_table *t, void *base)
{
	for (size_t i = 0; i < t->count; i++) {
		if (t->rows[i].type == OT_STRING) {
			char **s = field(base, &t->rows[i]);
			free(*s);
			*s = NULL;
		}
	}
}

static bool in_mask(const struct opt_row *r, unsigned mask)
{
	return !mask || !r->cmds || (r->cmds & mask);
}

long opt_find_long(const struct opt_table *t, const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->rows[i].name && !strcmp(t->rows[i].name, name))
			return (long)i;
	return -1;
}

long opt_find_short(const struct opt_table *t, unsigned mask, int c)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->rows[i].short_opt == c && in_mask(&t->rows[i], mask))
			return (long)i;
	return -1;
}

void opt_build_getopt(const struct opt_table *t, unsigned mask, struct option *longs, char *shorts)
{
	size_t nl = 0, ns = 0;
	shorts[ns++] = ':';
	for (size_t i = 0; i < t->count; i++) {
		const struct opt_row *r = &t->rows[i];
		if (!in_mask(r, mask))
			continue;
		if (r->name)
			longs[nl++] = (struct option){r->name, r->arg ? required_argument : no_argument, NULL, 256 + (int)i};
		if (r->short_opt) {
			shorts[ns++] = (char)r->short_opt;
			if (r->arg)
				shorts[ns++] = ':';
		}
	}
	longs[nl] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = 0;
}

/* The optimal-string-alignment distance of a and b (insertions, deletions, substitutions and
 * swaps of neighbours cost 1; "porcs" is one from "procs"), or limit + 1 once above limit. */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	enum { LONGEST = 48 };
	size_t la = strlen(a), lb = strlen(b);
	if (la > LONGEST || lb > LONGEST || (la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	size_t d[LONGEST + 1][LONGEST + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *opt_nearest_long(const struct opt_table *t, unsigned mask, const char *typed)
{
	char name[64];
	while (*typed == '-')
		typed++;
	snprintf(name, sizeof name, "%.*s", (int)strcspn(typed, "="), typed);
	/* close: a slip of one character in a short name, up to a third of a longer one ("blocksize",
	 * "numjob"); farther, a suggestion is a guess that misleads more than it helps */
	size_t limit = strlen(name) < 6 ? 1 : strlen(name) / 3, best = limit + 1;
	const char *nearest = NULL;
	for (size_t i = 0; *name && i < t->count; i++) {
		const struct opt_row *r = &t->rows[i];
		if (!r->name || !in_mask(r, mask))
			continue;
		size_t d = edit_distance(name, r->name, limit);
		if (d < best)
			best = d, nearest = r->name;
	}
	return nearest;
}

/* The refusal of an unknown long option: the nearest option's name when one is close. */
static int unknown_long(const struct opt_table *t, unsigned mask, const char *arg, const char *w, const char *sep,
			struct dd_err *err)
{
	char shown[72];
	const char *near = opt_nearest_long(t, mask, arg);
	if (near)
		return fail(err, "%s%sunknown option '%s' (did you mean --%s?)", w, sep,
			    errmsg_quote(arg, shown, sizeof shown), near);
	return fail(err, "%s%sunknown option '%s' (see --help)", w, sep, errmsg_quote(arg, shown, sizeof shown));
}

int opt_parse_argv(const struct opt_table *t, unsigned mask, int argc, char **argv, const char *who,
		   opt_row_fn *on_row, void *ctx, int *operands, struct dd_err *err)
{
	struct option longs[OPT_MAX_ROWS + 1];
	char shorts[3 * OPT_MAX_ROWS + 2], shown[72];
	const char *w = who ? who : "", *sep = who ? ": " : "";
	if (t->count > OPT_MAX_ROWS)
		return fail(err, "%s%stoo many option rows", w, sep);
	opt_build_getopt(t, mask, longs, shorts);
	optind = 0; /* glibc: full re-initialisation, so every pass sees all of argv */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == '?') {
			if (optopt && optopt < 256)
				return fail(err, "%s%sunknown option '-%c' (see --help)", w, sep, optopt);
			return unknown_long(t, mask, argv[optind - 1], w, sep, err);
		}
		if (c == ':') {
			if (optopt && optopt < 256)
				return fail(err, "option '-%c' needs a value", optopt);
			return fail(err, "option '%s' needs a value", errmsg_quote(argv[optind - 1], shown, sizeof shown));
		}
		long row = c >= 256 ? c - 256 : opt_find_short(t, mask, c);
		if (row < 0)
			return fail(err, "unknown option (see --help)");
		if (on_row(ctx, (size_t)row, optarg, err) < 0)
			return -1;
	}
	*operands = optind;
	return 0;
}

int opt_parse_kv(const struct opt_table *t, void *base, const char *list, char sep, bool *given, const char *what,
		 struct dd_err *err)
{
	char shown[72];
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, sep), *eq = strchr(p, '=');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char part[256];
		snprintf(part, sizeof part, "%.*s", (int)(len < sizeof part ? len : sizeof part - 1), p);
		if (!eq || eq >= p + len)
			return fail(err, "'%s' is not key=value", errmsg_quote(part, shown, sizeof shown));
		part[eq - p] = 0;
		long row = opt_find_long(t, part);
		if (row < 0 || t->rows[row].type == OT_ACTION)
			return fail(err, "unknown %s '%s'", what ? what : "key", errmsg_quote(part, shown, sizeof shown));
		if (given && given[row])
			return fail(err, "%s%s%s given twice", what ? what : "", what ? " " : "", t->rows[row].name);
		if (given)
			given[row] = true;
		if (opt_apply(t, &t->rows[row], base, part + (eq - p) + 1, err) < 0)
			return -1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

bool opt_shows_default(const struct opt_table *t, const struct opt_row *r)
{
	if (t->style & OPT_STYLE_ALL_DEFAULTS)
		return r->def != NULL;
	return r->def && r->type != OT_FLAG && strcmp(r->def, "0") && strcmp(r->def, "default");
}

/* Text from column `at` on, wrapped at spaces to OPT_HELP_COLUMNS, each further line indented
 * by `indent` (a word longer than a line gets one of its own). */
static void print_wrapped(FILE *f, const char *text, size_t at, size_t indent)
{
	size_t col = at;
	bool line_empty = true;
	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		size_t len = strcspn(p, " ");
		if (!len)
			break;
		if (!line_empty && col + 1 + len > OPT_HELP_COLUMNS) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			line_empty = true;
		}
		if (!line_empty)
			fputc(' ', f), col++;
		fwrite(p, 1, len, f);
		col += len;
		line_empty = false;
		p += len;
	}
	fputc('\n', f);
}

void opt_print_help_row(FILE *f, const struct opt_table *t, const struct opt_row *r, const char *suffix)
{
	char left[64], text[2048];
	int n;
	if (r->short_opt && r->name)
		n = snprintf(left, sizeof left, "  -%c, --%s", r->short_opt, r->name);
	else if (r->name)
		n = snprintf(left, sizeof left, "      --%s", r->name);
	else
		n = snprintf(left, sizeof left, "  -%c", r->short_opt);
	if (r->arg && n < (int)sizeof left)
		snprintf(left + n, sizeof left - (size_t)n, " %s", r->arg);
	snprintf(text, sizeof text, "%s%s%s%s%s", r->help, opt_shows_default(t, r) ? " [" : "",
		 opt_shows_default(t, r) ? r->def : "", opt_shows_default(t, r) ? "]" : "", suffix ? suffix : "");
	/* two blanks at least between an option that fills the column and its help: one would make
	 * the help's first word look like the metavariable */
	size_t width = (size_t)t->help_width, at = strlen(left) >= width ? strlen(left) + 2 : width + 1;
	fprintf(f, "%-*s %s", t->help_width, left, strlen(left) >= width ? " " : "");
	print_wrapped(f, text, at, width + 1);
}

void opt_print_man_row(FILE *f, const struct opt_table *t, const struct opt_row *r, const char *tail)
{
	optdoc_man_item(f, r->short_opt, r->name, r->arg, r->help, opt_shows_default(t, r) ? r->def : NULL, tail);
}

void opt_print_completion(FILE *f, const struct opt_table *t, unsigned mask)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct opt_row *r = &t->rows[i];
		if (!in_mask(r, mask))
			continue;
		for (int form = 0; form < 2; form++) {
			if (form == 0 ? !r->name : !r->short_opt)
				continue;
			if (form == 0)
				fprintf(f, "--%s %s", r->name, r->arg ? r->arg : "-");
			else
				fprintf(f, "-%c %s", r->short_opt, r->arg ? r->arg : "-");
			for (int k = 0; r->arg && r->choices && r->choices[k]; k++)
				fprintf(f, " %s", r->choices[k]);
			fputc('\n', f);
		}
	}
}

void opt_print_kv_completion(FILE *f, const struct opt_table *t, const char *prefix)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct opt_row *r = &t->rows[i];
		if (!r->name || r->type == OT_ACTION)
			continue;
		fprintf(f, "%s%s= %s", prefix, r->name, r->arg ? r->arg : "-");
		for (int k = 0; r->arg && r->choices && r->choices[k]; k++)
			fprintf(f, " %s", r->choices[k]);
		fputc('\n', f);
	}
}
