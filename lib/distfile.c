/* distfile.c - the dedis-dist(5) reader and writer: strict line-by-line validation with
 * "FILE:LINE: reason" errors, 64-bit overflow checks, and the derived T/U0/U1/D/ratio figures. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "distfile.h"

/* A record as read, with the line it came from (for duplicate-key messages). */
struct prow {
	uint64_t dups;
	uint64_t blocks;
	size_t line;
};

struct parser {
	const char *name;
	struct dist_error *err;
	struct prow *rows;
	size_t n, cap;
	uint64_t total;    /* running T */
	uint64_t distinct; /* running sum of blocks */
	int legacy;        /* no '#' anywhere: original DEDISbench file, repeated keys add up */
};

static void set_err(struct dist_error *err, const char *name, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_err(struct dist_error *err, const char *name, size_t line, const char *fmt, ...)
{
	char reason[384];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err->msg, sizeof err->msg, "%s:%zu: %s", name, line, reason);
	else
		snprintf(err->msg, sizeof err->msg, "%s: %s", name, reason);
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses a whole field [s, s+len) as an unsigned decimal; returns NULL or a short reason. */
static const char *parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return "missing number";
	if (s[0] == '-')
		return "negative number";
	if (s[0] == '+')
		return "explicit sign";
	if (!is_digit(s[0]))
		return "not a number";
	if (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return "hexadecimal number";
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i])) {
			if (s[i] == '.' || s[i] == ',')
				return "fraction";
			if (s[i] == 'e' || s[i] == 'E')
				return "exponent notation";
			return "junk after number";
		}
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return "overflows 64 bits";
		v = v * 10 + d;
	}
	*out = v;
	return NULL;
}

/* Shortened copy of [s, s+len) for quoting in a message. */
static void quote(char *buf, size_t size, const char *s, size_t len)
{
	if (len > 60) {
		snprintf(buf, size, "%.57s...", s);
		return;
	}
	snprintf(buf, size, "%.*s", (int)len, s);
}

static int cmp_prow(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;
	if (x->dups != y->dups)
		return x->dups < y->dups ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorts rows; if a dups value repeats, returns 1 and the earliest repeating line (and the line
 * of its first occurrence). */
static int find_repeat(struct prow *rows, size_t n, size_t *line, size_t *first, uint64_t *dups)
{
	int found = 0;

	if (n < 2)
		return 0;
	qsort(rows, n, sizeof *rows, cmp_prow);
	for (size_t i = 1; i < n; i++) {
		if (rows[i].dups != rows[i - 1].dups)
			continue;
		size_t g = i - 1; /* the group's first occurrence */
		while (g > 0 && rows[g - 1].dups == rows[i].dups)
			g--;
		if (!found || rows[i].line < *line) {
			*line = rows[i].line;
			*first = rows[g].line;
			*dups = rows[i].dups;
			found = 1;
		}
	}
	return found;
}

/* Reports an error at `line`, unless a repeated key on an earlier line comes first. */
static int parse_fail(struct parser *ps, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int parse_fail(struct parser *ps, size_t line, const char *fmt, ...)
{
	char reason[384];
	size_t rline = 0, rfirst = 0;
	uint64_t rdups = 0;
	va_list ap;

	if (!ps->legacy && find_repeat(ps->rows, ps->n, &rline, &rfirst, &rdups) && rline < line) {
		set_err(ps->err, ps->name, rline,
			"duplicates value %" PRIu64 " repeated (first on line %zu)", rdups, rfirst);
		return -1;
	}
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	set_err(ps->err, ps->name, line, "%s", reason);
	return -1;
}

/* Validates one record and appends it. */
static int add_row(struct parser *ps, uint64_t dups, uint64_t blocks, size_t line)
{
	uint64_t copies, product;

	if (blocks == 0)
		return parse_fail(ps, line, "blocks is 0: a record must describe at least one block");
	if (__builtin_add_overflow(dups, 1, &copies) || __builtin_mul_overflow(blocks, copies, &product))
		return parse_fail(ps, line, "row size blocks*(duplicates+1) = %" PRIu64 "*(%" PRIu64
				  "+1) overflows 64 bits", blocks, dups);
	if (__builtin_add_overflow(ps->total, product, &ps->total))
		return parse_fail(ps, line, "total logical blocks T = sum blocks*(duplicates+1) "
				  "overflows 64 bits");
	if (__builtin_add_overflow(ps->distinct, blocks, &ps->distinct))
		return parse_fail(ps, line, "total distinct blocks overflows 64 bits");
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct prow *r = cap > SIZE_MAX / sizeof *r ? NULL : realloc(ps->rows, cap * sizeof *r);
		if (!r)
			return parse_fail(ps, line, "out of memory");
		ps->rows = r;
		ps->cap = cap;
	}
	ps->rows[ps->n++] = (struct prow){dups, blocks, line};
	return 0;
}

/* Turns the validated rows into the sorted, key-unique form of struct dist. */
static int finish(struct parser *ps, struct dist *out, size_t last_line, int allow_merge)
{
	size_t rline = 0, rfirst = 0;
	uint64_t rdups = 0;

	if (ps->n == 0) {
		set_err(ps->err, ps->name, last_line ? last_line : 1, "%s",
			last_line ? "no records (only comments and blank lines)" : "empty file: no records");
		return -1;
	}
	if (find_repeat(ps->rows, ps->n, &rline, &rfirst, &rdups) && !allow_merge) {
		set_err(ps->err, ps->name, rline, "duplicates value %" PRIu64 " repeated (first on line %zu)",
			rdups, rfirst);
		return -1;
	}
	struct dist_row *rows = malloc(ps->n * sizeof *rows);
	if (!rows) {
		set_err(ps->err, ps->name, 0, "out of memory");
		return -1;
	}
	size_t m = 0;
	for (size_t i = 0; i < ps->n; i++) {
		/* sums cannot overflow: the total of all blocks was checked */
		if (m > 0 && rows[m - 1].dups == ps->rows[i].dups)
			rows[m - 1].blocks += ps->rows[i].blocks;
		else
			rows[m++] = (struct dist_row){ps->rows[i].dups, ps->rows[i].blocks};
	}
	out->rows = rows;
	out->nrows = m;
	out->merged_rows = ps->n - m;
	return 0;
}

static size_t trim_len(const char *s, size_t len)
{
	while (len > 0 && is_space(s[len - 1]))
		len--;
	return len;
}

/* A comment line: recognises the dedisgen headers, ignores anything else. */
static int parse_comment(struct parser *ps, struct dist *out, const char *c, size_t len, size_t line)
{
	static const struct {
		const char *key;
		int which;
	} keys[] = {{"zero-blocks:", 0}, {"block-size:", 1}, {"hash:", 2}};
	char shown[80];

	while (len > 0 && is_space(*c))
		c++, len--;
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		size_t kl = strlen(keys[k].key);
		if (len < kl || memcmp(c, keys[k].key, kl) != 0)
			continue;
		const char *v = c + kl;
		size_t vl = len - kl;
		while (vl > 0 && is_space(*v))
			v++, vl--;
		vl = trim_len(v, vl);
		quote(shown, sizeof shown, c, trim_len(c, len));
		if (keys[k].which == 2) {
			int ok = vl > 0 && vl < sizeof out->hash;
			for (size_t i = 0; ok && i < vl; i++)
				ok = is_digit(v[i]) || (v[i] >= 'a' && v[i] <= 'z') ||
				     (v[i] >= 'A' && v[i] <= 'Z') || v[i] == '-' || v[i] == '_';
			if (!ok)
				return parse_fail(ps, line, "malformed header '# %s': expected a hash name "
						  "(letters, digits, '-', '_', at most %zu characters)",
						  shown, sizeof out->hash - 1);
			memcpy(out->hash, v, vl);
			out->hash[vl] = '\0';
			return 0;
		}
		uint64_t n;
		const char *why = parse_u64(v, vl, &n);
		if (why)
			return parse_fail(ps, line, "malformed header '# %s': expected an unsigned integer (%s)",
					  shown, why);
		if (keys[k].which == 0) {
			out->zero_blocks = n;
		} else {
			if (n == 0)
				return parse_fail(ps, line, "malformed header '# %s': block-size must be > 0", shown);
			out->block_size = n;
		}
		return 0;
	}
	return 0;
}

/* One record "<dups> <blocks>" in [s, s+len) (comment already cut off). */
static int parse_record(struct parser *ps, const char *s, size_t len, size_t line)
{
	const char *f[3];
	size_t fl[3], nf = 0, i = 0;
	char shown[80];

	while (i < len) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		size_t start = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (nf < 3) {
			f[nf] = s + start;
			fl[nf] = i - start;
		}
		nf++;
	}
	if (nf == 0)
		return 0; /* blank line */
	while (len > 0 && is_space(*s))
		s++, len--;
	quote(shown, sizeof shown, s, trim_len(s, len));
	if (nf != 2)
		return parse_fail(ps, line, "expected two unsigned integers '<duplicates> <blocks>', got '%s' "
				  "(%zu field%s)", shown, nf, nf == 1 ? "" : "s");
	uint64_t v[2];
	for (size_t k = 0; k < 2; k++) {
		const char *why = parse_u64(f[k], fl[k], &v[k]);
		if (why) {
			char field[80];
			quote(field, sizeof field, f[k], fl[k]);
			if (!strcmp(why, "overflows 64 bits"))
				return parse_fail(ps, line, "%s value '%s' overflows 64 bits",
						  k ? "blocks" : "duplicates", field);
			return parse_fail(ps, line, "expected two unsigned integers '<duplicates> <blocks>', "
					  "got '%s' (%s: '%s')", shown, why, field);
		}
	}
	return add_row(ps, v[0], v[1], line);
}

int dist_parse(const char *text, size_t len, const char *name, struct dist *out, struct dist_error *err)
{
	struct parser ps = {.name = name ? name : "<distribution>", .err = err};
	struct dist d;
	size_t line = 0, pos = 0;
	int rc = -1;

	memset(&d, 0, sizeof d);
	memset(out, 0, sizeof *out);
	if (err)
		err->msg[0] = '\0';
	if (!text && len) {
		set_err(err, ps.name, 0, "no text");
		goto done;
	}
	ps.legacy = len == 0 || memchr(text, '#', len) == NULL;
	while (pos < len) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - s) : len - pos;
		pos += ll + (nl ? 1 : 0);
		line++;
		if (ll > 0 && s[ll - 1] == '\r')
			ll--; /* CRLF */
		for (size_t i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c == '\0') {
				parse_fail(&ps, line, "NUL byte at column %zu (binary file?)", i + 1);
				goto done;
			}
			if (c == '\r') {
				parse_fail(&ps, line, "carriage return not followed by a newline at column %zu "
					   "(CR-only line endings?)", i + 1);
				goto done;
			}
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				parse_fail(&ps, line, "control character 0x%02x at column %zu", c, i + 1);
				goto done;
			}
		}
		const char *hash = memchr(s, '#', ll);
		size_t rl = hash ? (size_t)(hash - s) : ll;
		size_t lead = 0;
		while (lead < rl && is_space(s[lead]))
			lead++;
		if (hash && lead == rl) {
			if (parse_comment(&ps, &d, hash + 1, ll - rl - 1, line) != 0)
				goto done;
			continue;
		}
		if (parse_record(&ps, s, rl, line) != 0)
			goto done;
	}
	if (finish(&ps, &d, line, ps.legacy) != 0)
		goto done;
	*out = d;
	rc = 0;
done:
	free(ps.rows);
	return rc;
}

int dist_load(const char *path, struct dist *out, struct dist_error *err)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	memset(out, 0, sizeof *out);
	if (err)
		err->msg[0] = '\0';
	if (!(f = fopen(path, "rb"))) {
		set_err(err, path, 0, "cannot open: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = ncap < cap ? NULL : realloc(buf, ncap);
			if (!nb) {
				set_err(err, path, 0, "out of memory");
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				set_err(err, path, 0, "cannot read: %s", strerror(errno));
				goto fail;
			}
			break;
		}
	}
	fclose(f);
	rc = dist_parse(buf, len, path, out, err);
	free(buf);
	return rc;
fail:
	fclose(f);
	free(buf);
	return -1;
}

int dist_from_rows(const struct dist_row *rows, size_t n, struct dist *out, struct dist_error *err)
{
	struct parser ps = {.name = "rows", .err = err};
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (err)
		err->msg[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (add_row(&ps, rows[i].dups, rows[i].blocks, i + 1) != 0)
			goto done;
	if (n == 0) {
		set_err(err, ps.name, 0, "no rows");
		goto done;
	}
	rc = finish(&ps, out, n, 0);
done:
	free(ps.rows);
	return rc;
}

static int cmp_row(const void *a, const void *b)
{
	const struct dist_row *x = a, *y = b;
	return x->dups < y->dups ? -1 : x->dups > y->dups;
}

int dist_write(FILE *f, const struct dist *d, const char *const *header_lines, size_t nheader)
{
	const struct dist_row *rows = d->rows;
	struct dist_row *sorted = NULL;

	for (size_t i = 0; i < nheader; i++) {
		if (header_lines[i] && strpbrk(header_lines[i], "\r\n")) {
			errno = EINVAL;
			return -1;
		}
	}
	for (size_t i = 1; i < d->nrows; i++) {
		if (d->rows[i - 1].dups > d->rows[i].dups) {
			if (!(sorted = malloc(d->nrows * sizeof *sorted)))
				return -1;
			memcpy(sorted, d->rows, d->nrows * sizeof *sorted);
			qsort(sorted, d->nrows, sizeof *sorted, cmp_row);
			rows = sorted;
			break;
		}
	}
	for (size_t i = 0; i < nheader; i++)
		fprintf(f, "# %s\n", header_lines[i] ? header_lines[i] : "");
	for (size_t i = 0; i < d->nrows; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", rows[i].dups, rows[i].blocks);
	free(sorted);
	if (fflush(f) != 0 || ferror(f))
		return -1;
	return 0;
}

void dist_compute_rows(const struct dist *d, struct dist_rows *r)
{
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct dist_row *w = &d->rows[i];
		r->total_blocks += w->blocks * (w->dups + 1);
		r->distinct += w->blocks;
		r->redundant += w->blocks * w->dups;
		if (w->dups == 0)
			r->unique_blocks += w->blocks;
		else
			r->first_copies += w->blocks;
	}
	if (r->total_blocks) {
		double t = (double)r->total_blocks;
		r->u0 = (double)r->unique_blocks / t;
		r->u1 = (double)r->first_copies / t;
		r->d = (double)r->redundant / t;
	}
	if (r->distinct)
		r->ratio = (double)r->total_blocks / (double)r->distinct;
}

void dist_free(struct dist *d)
{
	if (!d)
		return;
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
	free(d->comp.cells);
	memset(&d->comp, 0, sizeof d->comp);
	memset(&d->locality, 0, sizeof d->locality);
}
