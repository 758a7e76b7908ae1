/* distfile.c - the dedis-dist(5) reader and writer: records and the optional [compressibility 2] /
 * [locality 1] / [granularity 1] sections, strict line-by-line validation with "FILE:LINE: reason" errors. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/distfile.h"
#include "lib/reserve.h"
#include "lib/errmsg.h"

/* A record as read, with the line it came from (for duplicate-key messages). */
struct prow {
	uint64_t dups;
	uint64_t blocks;
	size_t line;
};

struct parser {
	const char *name;
	struct dd_err *err;
	struct prow *rows;
	size_t n, cap;
	uint64_t total;    /* running T */
	uint64_t distinct; /* running sum of blocks */
	int legacy;        /* no '#' and no section anywhere: original DEDISbench file, repeated keys add up */
	/* the sections (see section_header) */
	int sect;                  /* the one being read, SECT_NONE before the first */
	size_t sect_line[6];       /* line of each section's header; 0: not seen */
	int step;                  /* required keywords of the current section read so far (0..5) */
	size_t kw_line[5];         /* lines of those keywords */
	size_t measured_line[DIST_CLASSES];
	size_t ccap;               /* cells allocated */
	int last_bin[4];           /* locality: last K read per kind */
	int sect_version[6];       /* the version each section's header gave */
	size_t scap;               /* [cdc 1] shifts allocated */
	size_t zero_line;          /* line of the "# zero-blocks:" header; 0: none */
};

static void set_err(struct dd_err *err, const char *name, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_err(struct dd_err *err, const char *name, size_t line, const char *fmt, ...)
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

/* Memory ran out: the machine failed, not the file (err->resource tells the caller). */
static int out_of_memory(struct parser *ps, size_t line)
{
	set_err(ps->err, ps->name, line, "out of memory");
	if (ps->err)
		ps->err->resource = true;
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
			return out_of_memory(ps, line);
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
	if (!rows)
		return out_of_memory(ps, 0);
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
			ps->zero_line = line;
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

/* ---- The optional sections: [compressibility 2] (1 read too) and [locality 1] (dedis-dist(5)). ---- */

enum sect { SECT_NONE, SECT_COMP, SECT_LOC, SECT_GRAN, SECT_ALIGN, SECT_CDC, SECT_COUNT };
static const char *const sect_names[SECT_COUNT] = {"", "compressibility", "locality", "granularity", "alignment",
						   "cdc"};
/* the newest version of each section this reader knows; [compressibility 2] keeps mean sizes
 * in 1/2^20 of the block (1: 1/1024, which rounded a tiny size to 0) */
static const int sect_max_version[SECT_COUNT] = {0, 2, 1, 1, 1, 1};
#define SECT_VERSION (ps->sect_version[ps->sect])
#define V1_UNIT 1024 /* [compressibility 1]'s unit of mean sizes, 1/1024 of the block */

/* Locality histogram kinds, in the order they are written. */
static const char *const loc_kinds[4] = {"new", "dup", "copy", "zero"};

static struct dist_len_hist *loc_hist(struct dist_locality *l, int kind)
{
	struct dist_len_hist *h[4] = {&l->new_runs, &l->dup_runs, &l->copy_runs, &l->zero_runs};
	return h[kind];
}

static const struct dist_len_hist *loc_chist(const struct dist_locality *l, int kind)
{
	return loc_hist((struct dist_locality *)l, kind);
}

/* Whole-struct checks, shared by the reader (at the end of a section) and the writer (which never
 * writes what it could not read back). Each returns NULL or a reason in why. */
/* One cell's ranges, its means against its buckets, and its order after prev (may be NULL). */
static const char *cell_check(const struct dist_comp_cell *x, const struct dist_comp_cell *prev, uint32_t unit,
			      char *why, size_t len)
{
	const uint32_t means[2] = {x->zstd_mean, x->lz4_mean};
	const unsigned buckets[2] = {x->zstd_bucket, x->lz4_bucket};
	if (x->cls >= DIST_CLASSES || x->zstd_bucket >= DIST_COMP_BUCKETS || x->lz4_bucket >= DIST_COMP_BUCKETS)
		return snprintf(why, len, "cell %u %u %u: class or bucket out of range", x->cls, x->zstd_bucket,
				x->lz4_bucket), why;
	if (x->contents == 0)
		return snprintf(why, len, "cell %u %u %u: CONTENTS is 0 (leave the cell out)", x->cls, x->zstd_bucket,
				x->lz4_bucket), why;
	if (unit == DIST_COMP_UNIT && (x->zstd_mean == 0 || x->lz4_mean == 0))
		return snprintf(why, len, "cell %u %u %u: a mean size of 0 (a compressed block holds at least a byte)",
				x->cls, x->zstd_bucket, x->lz4_bucket), why;
	for (int k = 0; k < 2; k++) {
		uint32_t lo = buckets[k] * (unit / DIST_COMP_BUCKETS);
		uint32_t hi = buckets[k] + 1 == DIST_COMP_BUCKETS ? unit : lo + unit / DIST_COMP_BUCKETS;
		if (means[k] < lo || means[k] > hi)
			return snprintf(why, len, "cell %u %u %u: the %s mean %u is outside its bucket (%u..%u)", x->cls,
					x->zstd_bucket, x->lz4_bucket, k ? "LZ4" : "zstd", means[k], lo, hi), why;
	}
	if (prev) {
		uint32_t kp = (uint32_t)prev->cls << 16 | (uint32_t)prev->zstd_bucket << 8 | prev->lz4_bucket;
		uint32_t kx = (uint32_t)x->cls << 16 | (uint32_t)x->zstd_bucket << 8 | x->lz4_bucket;
		if (kp >= kx)
			return snprintf(why, len, "cell %u %u %u %s cell %u %u %u (cells are sorted by class, zstd bucket, "
					"LZ4 bucket, without repeats)", x->cls, x->zstd_bucket, x->lz4_bucket,
					kp == kx ? "repeats" : "comes after", prev->cls, prev->zstd_bucket,
					prev->lz4_bucket), why;
	}
	return NULL;
}

/* Whole-struct checks, shared by the reader (at the end of a section) and the writer (which never
 * writes what it could not read back). Each returns NULL or a reason in why. */
static const char *comp_check(const struct dist_comp *c, char *why, size_t len)
{
	uint64_t msum = 0, contents[DIST_CLASSES] = {0};
	bool has_cells[DIST_CLASSES] = {false};

	if (!(c->sample_rate > 0 && c->sample_rate <= 1))
		return snprintf(why, len, "sample probability %g is not in (0, 1]", c->sample_rate), why;
	if (c->ncells == 0 || !c->cells)
		return snprintf(why, len, "no cells (a section holds at least one)"), why;
	for (size_t i = 0; i < c->ncells; i++) {
		const struct dist_comp_cell *x = &c->cells[i];
		if (cell_check(x, i ? x - 1 : NULL, DIST_COMP_UNIT, why, len))
			return why;
		if (__builtin_add_overflow(contents[x->cls], x->contents, &contents[x->cls]))
			return snprintf(why, len, "the contents of class %u overflow 64 bits", x->cls), why;
		has_cells[x->cls] = true;
	}
	for (int k = 0; k < DIST_CLASSES; k++) {
		uint64_t m = c->class_measured[k];
		if (__builtin_add_overflow(msum, m, &msum))
			return snprintf(why, len, "the measured contents overflow 64 bits"), why;
		if (m && !has_cells[k])
			return snprintf(why, len, "class %d: %" PRIu64 " contents measured but no cell", k, m), why;
		if (!m && has_cells[k])
			return snprintf(why, len, "class %d has cells but no 'measured' line", k), why;
		/* each measured content stands for at least itself (weight >= 1; exactly 1 when p = 1) */
		if (contents[k] < m || (c->sample_rate == 1 && contents[k] != m))
			return snprintf(why, len, "class %d: the cells hold %" PRIu64 " contents, %s the %" PRIu64
					" measured", k, contents[k], contents[k] < m ? "fewer than" : "but sample 1 means all",
					m), why;
	}
	if (msum != c->measured)
		return snprintf(why, len, "sample says %" PRIu64 " contents measured, the 'measured' lines sum to %" PRIu64,
				c->measured, msum), why;
	return NULL;
}

/* Σ over a histogram's bins of blocks and of counts; NULL or a reason. (Runs may be longer than
 * WINDOW: a merge's parts can mix a whole stream and windows, WINDOW being the larger.) */
static const char *hist_check(const struct dist_len_hist *h, const char *kind, uint64_t *blocks, uint64_t *count,
			      char *why, size_t len)
{
	*blocks = *count = 0;
	for (int k = 0; k < DIST_LEN_BINS; k++) {
		uint64_t c = h->count[k], b = h->blocks[k];
		if (!c && !b)
			continue;
		unsigned __int128 lo = (unsigned __int128)c << k, hi = (unsigned __int128)c * ((UINT64_C(2) << k) - 1);
		if (!c || b < lo || b > hi)
			return snprintf(why, len, "%s %d: %" PRIu64 " runs of %" PRIu64 " to %" PRIu64 " blocks cannot hold %"
					PRIu64 " blocks", kind, k, c, UINT64_C(1) << k, (UINT64_C(2) << k) - 1, b), why;
		if (__builtin_add_overflow(*blocks, b, blocks) || __builtin_add_overflow(*count, c, count))
			return snprintf(why, len, "the %s runs overflow 64 bits", kind), why;
	}
	return NULL;
}

static const char *loc_check(const struct dist_locality *l, char *why, size_t len)
{
	uint64_t blocks[4], count[4], sum;
	for (int k = 0; k < 4; k++)
		if (hist_check(loc_chist(l, k), loc_kinds[k], &blocks[k], &count[k], why, len))
			return why;
	if (l->duplicates > l->analysed)
		return snprintf(why, len, "%" PRIu64 " duplicates among %" PRIu64 " blocks analysed", l->duplicates,
				l->analysed), why;
	if (blocks[1] != l->duplicates)
		return snprintf(why, len, "the dup runs hold %" PRIu64 " blocks, not the %" PRIu64 " duplicates", blocks[1],
				l->duplicates), why;
	if (__builtin_add_overflow(blocks[2], blocks[3], &sum) || sum != l->duplicates)
		return snprintf(why, len, "the copy runs (%" PRIu64 ") and zero runs (%" PRIu64 ") do not add up to the %"
				PRIu64 " duplicates", blocks[2], blocks[3], l->duplicates), why;
	if (__builtin_add_overflow(blocks[0], l->duplicates, &sum) || sum != l->analysed)
		return snprintf(why, len, "the new runs (%" PRIu64 " blocks) and the %" PRIu64 " duplicates do not add up "
				"to the %" PRIu64 " blocks analysed", blocks[0], l->duplicates, l->analysed), why;
	/* Inside a copy run every block but the first is sequential. A zero-block duplicate can also
	 * be sequential to the block before it (when that block's source sits just before the zero
	 * block's first occurrence), and so can the block after a zero run: at most two per zero run. */
	uint64_t base = blocks[2] - count[2];
	unsigned __int128 top = (unsigned __int128)base + 2 * (unsigned __int128)count[3];
	if (l->sequential < base || l->sequential > top)
		return snprintf(why, len, "%" PRIu64 " sequential duplicates, but the copy runs make %" PRIu64
				"%s", l->sequential, base, count[3] ? " (plus at most two per zero run)" : ""), why;
	return NULL;
}

/* Each size's compressed sums within its bytes, nonzero with them, and bytes whole pieces of at
 * most one per window measured. */
static const char *gran_check(const struct dist_gran *g, char *why, size_t len)
{
	if (!(g->sample_rate > 0 && g->sample_rate <= 1))
		return snprintf(why, len, "sample probability %g is not in (0, 1]", g->sample_rate), why;
	for (int k = 0; k < DIST_GRAN_SIZES; k++) {
		uint64_t size = (uint64_t)DIST_GRAN_MIN << k, b = g->bytes[k];
		const uint64_t out[3] = {g->zstd1[k], g->zstd3[k], g->lz4[k]};
		if (b % size || b / size > g->windows)
			return snprintf(why, len, "piece %" PRIu64 ": %" PRIu64 " bytes are not whole pieces of at most "
					"one per window (%" PRIu64 " windows)", size, b, g->windows), why;
		for (int c = 0; c < 3; c++)
			if (out[c] > b || (out[c] == 0) != (b == 0))
				return snprintf(why, len, "piece %" PRIu64 ": %" PRIu64 " compressed bytes of %" PRIu64
						" (each piece compresses to 1 byte or more, at most its size)", size,
						out[c], b), why;
	}
	return NULL;
}

/* Distinct records at most the records and nonzero with them; shift residues' runs within their
 * blocks and nonzero with them. */
static const char *align_check(const struct dist_align *a, char *why, size_t len)
{
	if (!(a->sample_rate > 0 && a->sample_rate <= 1))
		return snprintf(why, len, "sample probability %g is not in (0, 1]", a->sample_rate), why;
	for (int i = 0; i < DIST_ALIGN_SIZES; i++)
		if (a->distinct[i] > a->records[i] || (a->distinct[i] == 0) != (a->records[i] == 0))
			return snprintf(why, len, "record %d: %" PRIu64 " distinct of %" PRIu64 " records (at most "
					"as many, and some when there are records)", 2 << i, a->distinct[i],
					a->records[i]), why;
	for (int r = 0; r < DIST_ALIGN_MOD; r++)
		if (a->shift_runs[r] > a->shift_blocks[r] || (a->shift_runs[r] == 0) != (a->shift_blocks[r] == 0))
			return snprintf(why, len, "shift %d: %" PRIu64 " runs of %" PRIu64 " blocks (a run holds a block "
					"or more)", r, a->shift_runs[r], a->shift_blocks[r]), why;
	return NULL;
}

/* a + b + c + d == want, without overflow. */
static bool sum4_is(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t want)
{
	uint64_t t;
	return !__builtin_add_overflow(a, b, &t) && !__builtin_add_overflow(t, c, &t) &&
	       !__builtin_add_overflow(t, d, &t) && t == want;
}

/* The runs' bins and sums, the shifts' order and sums. */
static const char *cdc_runs_shifts_check(const struct dist_cdc *c, char *why, size_t len)
{
	uint64_t rb = 0, rc = 0, sc = 0, sb = 0;
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++) {
		uint64_t n = c->run_count[k], b = c->run_bytes[k], lo, hi;
		if (!n && !b)
			continue;
		bool bad = (n == 0) != (b == 0) || (k < 63 && (__builtin_mul_overflow(n, UINT64_C(1) << k, &lo) || b < lo)) ||
			   (k < 62 && !__builtin_mul_overflow(n, UINT64_C(2) << k, &hi) && b >= hi);
		if (bad || __builtin_add_overflow(rb, b, &rb) || __builtin_add_overflow(rc, n, &rc))
			return snprintf(why, len, "run %d: %" PRIu64 " runs of %" PRIu64 " bytes (lengths 2^%d..2^%d-1 "
					"each)", k, n, b, k, k + 1), why;
	}
	if (rb < c->shifted_bytes || (c->sample_rate == 1 && rb != c->shifted_bytes) || rc > c->shifted_chunks)
		return snprintf(why, len, "the runs hold %" PRIu64 " bytes in %" PRIu64 " runs, the shifted duplicates "
				"%" PRIu64 " bytes in %" PRIu64 " chunks", rb, rc, c->shifted_bytes, c->shifted_chunks), why;
	for (size_t i = 0; i < c->nshifts; i++) {
		const struct dist_cdc_shift *x = &c->shifts[i];
		if (!x->shift || x->shift >= c->block_size || (i && x->shift <= x[-1].shift) || !x->chunks ||
		    x->bytes < x->chunks || __builtin_add_overflow(sc, x->chunks, &sc) ||
		    __builtin_add_overflow(sb, x->bytes, &sb))
			return snprintf(why, len, "shift %u: out of range (1..%" PRIu64 "), out of order, repeated or "
					"empty", x->shift, c->block_size - 1), why;
	}
	if (sc != c->shifted_chunks || sb != c->shifted_bytes)
		return snprintf(why, len, "the shifts hold %" PRIu64 " chunks of %" PRIu64 " bytes, the shifted "
				"duplicates %" PRIu64 " of %" PRIu64, sc, sb, c->shifted_chunks, c->shifted_bytes), why;
	return NULL;
}

/* Version 1's chunker sizes, the sample within the chunks, its parts adding up. */
static const char *cdc_check(const struct dist_cdc *c, char *why, size_t len)
{
	/* MIN AVG/2 since dedisgen's chunker took borg's 4 KiB minimum; AVG/4 in the files written before */
	if (c->avg < 256 || c->avg > (1u << 24) || (c->avg & (c->avg - 1)) ||
	    (c->min != c->avg / 2 && c->min != c->avg / 4) || c->max != c->avg * 8)
		return snprintf(why, len, "chunker %u %u %u: AVG a power of two from 256 to 2^24, MIN AVG/2 (or AVG/4), "
				"MAX AVG*8", c->avg, c->min, c->max), why;
	if (!(c->sample_rate > 0 && c->sample_rate <= 1) || c->block_size < 2 || c->block_size > (1u << 30))
		return snprintf(why, len, "sample probability %g is not in (0, 1], or BLOCK %" PRIu64 " not in 2..2^30",
				c->sample_rate, c->block_size), why;
	uint64_t most, nonzero_chunks = c->chunks - c->zero_chunks, nonzero_bytes = c->bytes - c->zero_bytes;
	if (c->zero_chunks > c->chunks || c->zero_bytes > c->bytes || c->zero_distinct_bytes > c->zero_bytes ||
	    (c->zero_chunks == 0) != (c->zero_bytes == 0) || (c->zero_bytes == 0) != (c->zero_distinct_bytes == 0))
		return snprintf(why, len, "chunks %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 ": the zero "
				"chunks are a part of the chunks, their distinct bytes a part of theirs", c->chunks,
				c->bytes, c->zero_chunks, c->zero_bytes, c->zero_distinct_bytes), why;
	if (c->sampled_chunks > nonzero_chunks || c->sampled_bytes > nonzero_bytes || (c->chunks == 0) != (c->bytes == 0) ||
	    c->bytes < c->chunks || (!__builtin_mul_overflow(c->chunks, (uint64_t)c->max, &most) && c->bytes > most) ||
	    (c->sampled_chunks == 0) != (c->sampled_bytes == 0) || c->sampled_bytes < c->sampled_chunks)
		return snprintf(why, len, "chunks %" PRIu64 " %" PRIu64 " sampled %" PRIu64 " %" PRIu64 ": the sample "
				"is a part of the non-zero chunks, each 1..MAX bytes", c->chunks, c->bytes,
				c->sampled_chunks, c->sampled_bytes), why;
	if (!sum4_is(c->distinct_chunks, 0, c->aligned_chunks, c->shifted_chunks, c->sampled_chunks) ||
	    !sum4_is(c->distinct_bytes, 0, c->aligned_bytes, c->shifted_bytes, c->sampled_bytes) ||
	    (c->sampled_chunks && !c->distinct_chunks))
		return snprintf(why, len, "distinct, aligned and shifted chunks (and bytes) do not add up to the "
				"sampled ones"), why;
	return cdc_runs_shifts_check(c, why, len);
}

int dist_sections_check(const struct dist *d, struct dd_err *err)
{
	char why[384];
	err_clear(err);
	if (d->comp.present && comp_check(&d->comp, why, sizeof why)) {
		set_err(err, "[compressibility 2]", 0, "%s", why);
		return -1;
	}
	if (d->locality.present && loc_check(&d->locality, why, sizeof why)) {
		set_err(err, "[locality 1]", 0, "%s", why);
		return -1;
	}
	if (d->gran.present && gran_check(&d->gran, why, sizeof why)) {
		set_err(err, "[granularity 1]", 0, "%s", why);
		return -1;
	}
	if (d->align.present && align_check(&d->align, why, sizeof why)) {
		set_err(err, "[alignment 1]", 0, "%s", why);
		return -1;
	}
	if (d->cdc.present && cdc_check(&d->cdc, why, sizeof why)) {
		set_err(err, "[cdc 1]", 0, "%s", why);
		return -1;
	}
	return 0;
}

/* A probability written as a plain decimal ("1", "0.0625"): digits, at most one '.', no sign or
 * exponent. NULL or a reason. */
static const char *parse_prob(const char *s, size_t len, double *out)
{
	char buf[80];
	size_t dots = 0, digits = 0;
	if (len == 0)
		return "missing number";
	if (s[0] == '-')
		return "negative number";
	if (s[0] == '+')
		return "explicit sign";
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.')
			dots++;
		else if (is_digit(s[i]))
			digits++;
		else if (s[i] == 'e' || s[i] == 'E')
			return "exponent notation (write a plain decimal such as 0.0625)";
		else
			return "not a decimal number";
	}
	if (dots > 1 || digits == 0)
		return "not a decimal number";
	if (len >= sizeof buf)
		return "too many digits";
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, NULL);
	if (!(*out > 0 && *out <= 1))
		return "out of range (a probability in (0, 1])";
	return NULL;
}

/* The shortest plain decimal that reads back as exactly p. */
static void format_prob(char *buf, size_t size, double p)
{
	for (int prec = 0; prec <= 80; prec++) {
		snprintf(buf, size, "%.*f", prec, p);
		if (strtod(buf, NULL) == p)
			break;
	}
	if (strchr(buf, '.')) {
		size_t n = strlen(buf);
		while (n > 1 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[n - 1] = '\0';
	}
}

#define MAX_FIELDS 8

/* Splits [s, s+len) at blanks; returns the number of fields (those past MAX_FIELDS are counted,
 * not kept). */
static size_t split(const char *s, size_t len, const char **f, size_t *fl)
{
	size_t nf = 0, i = 0;
	while (i < len) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		size_t start = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (nf < MAX_FIELDS) {
			f[nf] = s + start;
			fl[nf] = i - start;
		}
		nf++;
	}
	return nf;
}

static bool field_is(const char *f, size_t fl, const char *word)
{
	return fl == strlen(word) && memcmp(f, word, fl) == 0;
}

/* Reads the unsigned fields f[1..n-1] named by names[] (one per field) into v[]; checks each
 * against max[] (0: no maximum). */
static int section_numbers(struct parser *ps, size_t line, const char *kw, const char **f, const size_t *fl,
			   size_t nf, const char *const *names, const uint64_t *max, uint64_t *v)
{
	size_t want = 0;
	while (names[want])
		want++;
	if (nf != want + 1) {
		char usage[160];
		size_t u = (size_t)snprintf(usage, sizeof usage, "%s", kw);
		for (size_t i = 0; i < want && u < sizeof usage; i++)
			u += (size_t)snprintf(usage + u, sizeof usage - u, " %s", names[i]);
		return parse_fail(ps, line, "[%s %d] '%s' expects %zu value%s ('%s'), got %zu",
				  sect_names[ps->sect], SECT_VERSION, kw, want, want == 1 ? "" : "s", usage, nf - 1);
	}
	for (size_t i = 0; i < want; i++) {
		char shown[80];
		const char *why = parse_u64(f[i + 1], fl[i + 1], &v[i]);
		quote(shown, sizeof shown, f[i + 1], fl[i + 1]);
		if (why)
			return parse_fail(ps, line, "[%s %d] %s: %s '%s': %s", sect_names[ps->sect], SECT_VERSION, kw,
					  names[i], shown, why);
		if (max && max[i] && v[i] > max[i])
			return parse_fail(ps, line, "[%s %d] %s: %s %s is out of range (at most %" PRIu64 ")",
					  sect_names[ps->sect], SECT_VERSION, kw, names[i], shown, max[i]);
	}
	return 0;
}

/* A `cell` line: its numbers checked against the previous cell's, kept in this version's unit. */
static int comp_cell_line(struct parser *ps, struct dist_comp *c, const char **f, const size_t *fl, size_t nf,
			  size_t line)
{
	const int cv = ps->sect_version[SECT_COMP];
	static const char *const names[] = {"CLASS", "ZB", "LB", "CONTENTS", "ZMEAN", "LMEAN", NULL};
	const uint64_t unit = cv == 1 ? V1_UNIT : DIST_COMP_UNIT;
	const uint64_t max[] = {DIST_CLASSES - 1, DIST_COMP_BUCKETS - 1, DIST_COMP_BUCKETS - 1, 0, unit, unit};
	uint64_t v[6];
	char why[384];
	if (section_numbers(ps, line, "cell", f, fl, nf, names, max, v))
		return -1;
	if (c->ncells == ps->ccap) {
		size_t cap = ps->ccap ? 2 * ps->ccap : 64;
		struct dist_comp_cell *nc = cap > SIZE_MAX / sizeof *nc ? NULL : realloc(c->cells, cap * sizeof *nc);
		if (!nc)
			return out_of_memory(ps, line);
		c->cells = nc;
		ps->ccap = cap;
	}
	c->cells[c->ncells++] = (struct dist_comp_cell){(uint8_t)v[0], (uint8_t)v[1], (uint8_t)v[2], v[3],
							 (uint32_t)v[4], (uint32_t)v[5]};
	struct dist_comp_cell *x = &c->cells[c->ncells - 1];
	if (cell_check(x, c->ncells > 1 ? x - 1 : NULL, (uint32_t)unit, why, sizeof why))
		return parse_fail(ps, line, "[compressibility %d] %s", cv, why);
	if (cv == 1) { /* to this version's unit; a mean of 0 stood for under 1/2048 of the block */
		x->zstd_mean = x->zstd_mean ? x->zstd_mean * (DIST_COMP_UNIT / V1_UNIT) : DIST_COMP_UNIT / V1_UNIT / 4;
		x->lz4_mean = x->lz4_mean ? x->lz4_mean * (DIST_COMP_UNIT / V1_UNIT) : DIST_COMP_UNIT / V1_UNIT / 4;
	}
	return 0;
}

static int comp_line(struct parser *ps, struct dist_comp *c, const char **f, const size_t *fl, size_t nf, size_t line)
{
	static const char *const kws[] = {"codecs", "sample", "measured", "cell"};
	const int cv = ps->sect_version[SECT_COMP];
	int kw = -1;
	for (int i = 0; i < 4; i++)
		if (field_is(f[0], fl[0], kws[i]))
			kw = i;
	if (kw < 0) {
		char shown[80];
		quote(shown, sizeof shown, f[0], fl[0]);
		return parse_fail(ps, line, "[compressibility %d] unknown keyword '%s' (codecs, sample, measured, cell)", cv,
				  shown);
	}
	/* codecs first, sample second, then measured and cell lines */
	if (kw < 2 && ps->step > kw)
		return parse_fail(ps, line, "[compressibility %d] '%s' repeated (first on line %zu)", cv, kws[kw],
				  ps->kw_line[kw]);
	if (ps->step < 2 && kw != ps->step)
		return parse_fail(ps, line, "[compressibility %d] '%s' before '%s' (the section starts with 'codecs', "
				  "then 'sample')", cv, kws[kw], kws[ps->step]);
	if (kw == 0) {
		if (nf != 3 || !field_is(f[1], fl[1], "zstd-1") || !field_is(f[2], fl[2], "lz4"))
			return parse_fail(ps, line, "[compressibility %d] codecs: version %d measures exactly "
					  "'codecs zstd-1 lz4'", cv, cv);
	} else if (kw == 1) {
		if (nf != 3)
			return parse_fail(ps, line, "[compressibility %d] 'sample' expects 2 values ('sample P MEASURED'), "
					  "got %zu", cv, nf - 1);
		char shown[80];
		const char *why = parse_prob(f[1], fl[1], &c->sample_rate);
		quote(shown, sizeof shown, f[1], fl[1]);
		if (why)
			return parse_fail(ps, line, "[compressibility %d] sample: P '%s': %s", cv, shown, why);
		why = parse_u64(f[2], fl[2], &c->measured);
		quote(shown, sizeof shown, f[2], fl[2]);
		if (why)
			return parse_fail(ps, line, "[compressibility %d] sample: MEASURED '%s': %s", cv, shown, why);
	} else if (kw == 2) {
		static const char *const names[] = {"CLASS", "N", NULL};
		static const uint64_t max[] = {DIST_CLASSES - 1, 0};
		uint64_t v[2];
		if (section_numbers(ps, line, "measured", f, fl, nf, names, max, v))
			return -1;
		if (v[1] == 0)
			return parse_fail(ps, line, "[compressibility %d] measured: class %" PRIu64 " with 0 contents "
					  "(leave the class out)", cv, v[0]);
		if (c->class_measured[v[0]])
			return parse_fail(ps, line, "[compressibility %d] measured: class %" PRIu64 " repeated (first on "
					  "line %zu)", cv, v[0], ps->measured_line[v[0]]);
		c->class_measured[v[0]] = v[1];
		ps->measured_line[v[0]] = line;
	} else if (comp_cell_line(ps, c, f, fl, nf, line)) {
		return -1;
	}
	if (kw < 2) {
		ps->kw_line[kw] = line;
		ps->step = kw + 1;
	}
	return 0;
}

static int loc_line(struct parser *ps, struct dist_locality *l, const char **f, const size_t *fl, size_t nf,
		    size_t line)
{
	static const char *const kws[] = {"analysed", "duplicates", "new", "dup", "copy", "zero"};
	int kw = -1;
	for (int i = 0; i < 6; i++)
		if (field_is(f[0], fl[0], kws[i]))
			kw = i;
	if (kw < 0) {
		char shown[80];
		quote(shown, sizeof shown, f[0], fl[0]);
		return parse_fail(ps, line, "[locality 1] unknown keyword '%s' (analysed, duplicates, new, dup, copy, zero)",
				  shown);
	}
	if (kw < 2 && ps->step > kw)
		return parse_fail(ps, line, "[locality 1] '%s' repeated (first on line %zu)", kws[kw], ps->kw_line[kw]);
	if (ps->step < 2 && kw != ps->step)
		return parse_fail(ps, line, "[locality 1] '%s' before '%s' (the section starts with 'analysed', then "
				  "'duplicates')", kws[kw], kws[ps->step]);
	uint64_t v[3];
	if (kw == 0) {
		static const char *const names[] = {"BLOCKS", "WINDOW", NULL};
		if (section_numbers(ps, line, kws[kw], f, fl, nf, names, NULL, v))
			return -1;
		l->analysed = v[0];
		l->window = v[1];
	} else if (kw == 1) {
		static const char *const names[] = {"DUPS", "SEQUENTIAL", NULL};
		if (section_numbers(ps, line, kws[kw], f, fl, nf, names, NULL, v))
			return -1;
		l->duplicates = v[0];
		l->sequential = v[1];
	} else {
		static const char *const names[] = {"K", "COUNT", "BLOCKS", NULL};
		static const uint64_t max[] = {DIST_LEN_BINS - 1, 0, 0};
		int kind = kw - 2;
		char why[384];
		if (section_numbers(ps, line, kws[kw], f, fl, nf, names, max, v))
			return -1;
		int k = (int)v[0];
		if (ps->last_bin[kind] >= k)
			return parse_fail(ps, line, "[locality 1] %s %d %s %s %d (each kind's bins are sorted by K, "
					  "without repeats)", kws[kw], k, ps->last_bin[kind] == k ? "repeats" : "comes after",
					  kws[kw], ps->last_bin[kind]);
		ps->last_bin[kind] = k;
		struct dist_len_hist one = {0}, *h = loc_hist(l, kind);
		uint64_t b, c;
		one.count[k] = v[1];
		one.blocks[k] = v[2];
		if (v[1] == 0)
			return parse_fail(ps, line, "[locality 1] %s %d: COUNT is 0 (leave the bin out)", kws[kw], k);
		if (hist_check(&one, kws[kw], &b, &c, why, sizeof why))
			return parse_fail(ps, line, "[locality 1] %s", why);
		h->count[k] = v[1];
		h->blocks[k] = v[2];
	}
	if (kw < 2) {
		ps->kw_line[kw] = line;
		ps->step = kw + 1;
	}
	return 0;
}

/* The sample line of [granularity 1]: "sample P WINDOWS". */
static int gran_sample_line(struct parser *ps, struct dist_gran *g, const char **f, const size_t *fl, size_t nf,
			    size_t line)
{
	char shown[80];
	if (nf != 3)
		return parse_fail(ps, line, "[granularity 1] 'sample' expects 2 values ('sample P WINDOWS'), got %zu",
				  nf - 1);
	const char *why = parse_prob(f[1], fl[1], &g->sample_rate);
	quote(shown, sizeof shown, f[1], fl[1]);
	if (why)
		return parse_fail(ps, line, "[granularity 1] sample: P '%s': %s", shown, why);
	why = parse_u64(f[2], fl[2], &g->windows);
	quote(shown, sizeof shown, f[2], fl[2]);
	if (why)
		return parse_fail(ps, line, "[granularity 1] sample: WINDOWS '%s': %s", shown, why);
	return 0;
}

/* codecs first, sample second, then a piece line per size (sorted, each at most once; a size
 * left out measured nothing). */
static int gran_line(struct parser *ps, struct dist_gran *g, const char **f, const size_t *fl, size_t nf,
		     size_t line)
{
	static const char *const kws[] = {"codecs", "sample", "piece"};
	int kw = -1;
	for (int i = 0; i < 3; i++)
		if (field_is(f[0], fl[0], kws[i]))
			kw = i;
	if (kw < 0) {
		char shown[80];
		quote(shown, sizeof shown, f[0], fl[0]);
		return parse_fail(ps, line, "[granularity 1] unknown keyword '%s' (codecs, sample, piece)", shown);
	}
	if (kw < 2 && ps->step > kw)
		return parse_fail(ps, line, "[granularity 1] '%s' repeated (first on line %zu)", kws[kw], ps->kw_line[kw]);
	if (ps->step < 2 && kw != ps->step)
		return parse_fail(ps, line, "[granularity 1] '%s' before '%s' (the section starts with 'codecs', then "
				  "'sample')", kws[kw], kws[ps->step]);
	if (kw == 0 && (nf != 4 || !field_is(f[1], fl[1], "zstd-1") || !field_is(f[2], fl[2], "zstd-3") ||
			!field_is(f[3], fl[3], "lz4")))
		return parse_fail(ps, line, "[granularity 1] codecs: version 1 measures exactly 'codecs zstd-1 zstd-3 lz4'");
	if (kw == 1 && gran_sample_line(ps, g, f, fl, nf, line))
		return -1;
	if (kw == 2) {
		static const char *const names[] = {"SIZE", "BYTES", "ZSTD1", "ZSTD3", "LZ4", NULL};
		uint64_t v[5];
		if (section_numbers(ps, line, "piece", f, fl, nf, names, NULL, v))
			return -1;
		int k = 0;
		while (k < DIST_GRAN_SIZES && ((uint64_t)DIST_GRAN_MIN << k) != v[0])
			k++;
		if (k == DIST_GRAN_SIZES)
			return parse_fail(ps, line, "[granularity 1] piece: SIZE %" PRIu64 " is not one of 4096, 8192, "
					  "16384, 32768, 65536, 131072", v[0]);
		if (ps->last_bin[0] >= k)
			return parse_fail(ps, line, "[granularity 1] piece %" PRIu64 " %s (sizes are sorted, without "
					  "repeats)", v[0], ps->last_bin[0] == k ? "repeated" : "out of order");
		ps->last_bin[0] = k;
		g->bytes[k] = v[1];
		g->zstd1[k] = v[2];
		g->zstd3[k] = v[3];
		g->lz4[k] = v[4];
	}
	if (kw < 2) {
		ps->kw_line[kw] = line;
		ps->step = kw + 1;
	}
	return 0;
}

/* The keyword of a section line among kws (n of them), or -1 with the error said. */
static int section_keyword(struct parser *ps, const char *const *kws, int n, const char *list, const char **f,
			   const size_t *fl, size_t line)
{
	for (int i = 0; i < n; i++)
		if (field_is(f[0], fl[0], kws[i]))
			return i;
	char shown[80];
	quote(shown, sizeof shown, f[0], fl[0]);
	parse_fail(ps, line, "[%s 1] unknown keyword '%s' (%s)", sect_names[ps->sect], shown, list);
	return -1;
}

/* The first `required` keywords come once each, in order, before the others; the others each
 * after them (any number). 0, or -1 with the error said. */
static int section_order(struct parser *ps, const char *const *kws, int kw, int required, size_t line)
{
	if (kw < required && ps->step > kw)
		return parse_fail(ps, line, "[%s 1] '%s' repeated (first on line %zu)", sect_names[ps->sect], kws[kw],
				  ps->kw_line[kw]);
	if (ps->step < required && kw != ps->step)
		return parse_fail(ps, line, "[%s 1] '%s' before '%s' (the section starts with '%s')",
				  sect_names[ps->sect], kws[kw], kws[ps->step], kws[ps->step]);
	if (kw < required) {
		ps->kw_line[kw] = line;
		ps->step = kw + 1;
	}
	return 0;
}

/* records (the sizes, fixed by the version), sample, then record and shift lines (each sorted). */
static int align_line(struct parser *ps, struct dist_align *a, const char **f, const size_t *fl, size_t nf,
		      size_t line)
{
	static const char *const kws[] = {"records", "sample", "record", "shift"};
	int kw = section_keyword(ps, kws, 4, "records, sample, record, shift", f, fl, line);
	if (kw < 0 || section_order(ps, kws, kw, 2, line))
		return -1;
	if (kw == 0 && (nf != 6 || !field_is(f[1], fl[1], "2") || !field_is(f[2], fl[2], "4") ||
			!field_is(f[3], fl[3], "8") || !field_is(f[4], fl[4], "16") || !field_is(f[5], fl[5], "32")))
		return parse_fail(ps, line, "[alignment 1] records: version 1 counts exactly 'records 2 4 8 16 32'");
	if (kw == 1) {
		char shown[80];
		if (nf != 2)
			return parse_fail(ps, line, "[alignment 1] 'sample' expects 1 value ('sample P'), got %zu", nf - 1);
		const char *why = parse_prob(f[1], fl[1], &a->sample_rate);
		quote(shown, sizeof shown, f[1], fl[1]);
		if (why)
			return parse_fail(ps, line, "[alignment 1] sample: P '%s': %s", shown, why);
	}
	if (kw >= 2) {
		static const char *const rnames[] = {"K", "RECORDS", "DISTINCT", NULL}, *snames[] = {"R", "RUNS", "BLOCKS", NULL};
		static const uint64_t smax[] = {DIST_ALIGN_MOD - 1, 0, 0};
		uint64_t v[3];
		if (section_numbers(ps, line, kws[kw], f, fl, nf, kw == 2 ? rnames : snames, kw == 2 ? NULL : smax, v))
			return -1;
		int k = (int)v[0];
		if (kw == 2) {
			k = 0;
			while (k < DIST_ALIGN_SIZES && (UINT64_C(2) << k) != v[0])
				k++;
			if (k == DIST_ALIGN_SIZES)
				return parse_fail(ps, line, "[alignment 1] record: K %" PRIu64 " is not one of 2, 4, 8, 16, 32",
						  v[0]);
		}
		if (ps->last_bin[kw] >= k)
			return parse_fail(ps, line, "[alignment 1] %s %" PRIu64 " %s (sorted, without repeats)", kws[kw], v[0],
					  ps->last_bin[kw] == k ? "repeated" : "out of order");
		ps->last_bin[kw] = k;
		(kw == 2 ? a->records : a->shift_runs)[k] = v[1];
		(kw == 2 ? a->distinct : a->shift_blocks)[k] = v[2];
	}
	return 0;
}

/* chunker, sample, chunks, sampled, duplicates, then run and shift lines (each sorted). */
static int cdc_line(struct parser *ps, struct dist_cdc *c, const char **f, const size_t *fl, size_t nf, size_t line)
{
	static const char *const kws[] = {"chunker", "sample", "chunks", "sampled", "duplicates", "run", "shift"};
	static const char *const names[][7] = {
		{"gear", "AVG", "MIN", "MAX", NULL},
		{"P", "BLOCK", "RANGE", NULL},
		{"CHUNKS", "BYTES", "ZERO_CHUNKS", "ZERO_BYTES", "ZERO_DISTINCT_BYTES", NULL},
		{"CHUNKS", "BYTES", "DISTINCT_CHUNKS", "DISTINCT_BYTES", NULL},
		{"ALIGNED_CHUNKS", "ALIGNED_BYTES", "SHIFTED_CHUNKS", "SHIFTED_BYTES", NULL},
		{"K", "COUNT", "BYTES", NULL},
		{"SHIFT", "CHUNKS", "BYTES", NULL}};
	static const uint64_t chunker_max[] = {1u << 24, 1u << 22, 1u << 27};
	static const uint64_t run_max[] = {DIST_CDC_RUN_BINS - 1, 0, 0}, shift_max[] = {UINT32_MAX, 0, 0};
	int kw = section_keyword(ps, kws, 7, "chunker, sample, chunks, sampled, duplicates, run, shift", f, fl, line);
	if (kw < 0 || section_order(ps, kws, kw, 5, line))
		return -1;
	uint64_t v[6];
	if (kw == 0) {
		if (nf != 5 || !field_is(f[1], fl[1], "gear"))
			return parse_fail(ps, line, "[cdc 1] chunker: version 1 reads 'chunker gear AVG MIN MAX'");
		if (section_numbers(ps, line, kws[kw], f + 1, fl + 1, nf - 1, names[0] + 1, chunker_max, v))
			return -1;
		c->avg = (uint32_t)v[0], c->min = (uint32_t)v[1], c->max = (uint32_t)v[2];
	} else if (kw == 1) {
		char shown[80];
		if (nf != 4)
			return parse_fail(ps, line, "[cdc 1] 'sample' expects 3 values ('sample P BLOCK RANGE'), got %zu",
					  nf - 1);
		const char *why = parse_prob(f[1], fl[1], &c->sample_rate);
		quote(shown, sizeof shown, f[1], fl[1]);
		if (why)
			return parse_fail(ps, line, "[cdc 1] sample: P '%s': %s", shown, why);
		if (section_numbers(ps, line, kws[kw], f + 1, fl + 1, nf - 1, names[1] + 1, NULL, v))
			return -1;
		c->block_size = v[0], c->range = v[1];
	} else if (section_numbers(ps, line, kws[kw], f, fl, nf, names[kw], kw == 5 ? run_max : kw == 6 ? shift_max : NULL, v)) {
		return -1;
	}
	if (kw == 2)
		c->chunks = v[0], c->bytes = v[1], c->zero_chunks = v[2], c->zero_bytes = v[3], c->zero_distinct_bytes = v[4];
	if (kw == 3)
		c->sampled_chunks = v[0], c->sampled_bytes = v[1], c->distinct_chunks = v[2], c->distinct_bytes = v[3];
	if (kw == 4)
		c->aligned_chunks = v[0], c->aligned_bytes = v[1], c->shifted_chunks = v[2], c->shifted_bytes = v[3];
	if (kw == 5) {
		if (ps->last_bin[0] >= (int)v[0])
			return parse_fail(ps, line, "[cdc 1] run %" PRIu64 " %s (sorted, without repeats)", v[0],
					  ps->last_bin[0] == (int)v[0] ? "repeated" : "out of order");
		ps->last_bin[0] = (int)v[0];
		c->run_count[v[0]] = v[1];
		c->run_bytes[v[0]] = v[2];
	}
	if (kw == 6) {
		if (c->nshifts == ps->scap && array_reserve((void **)&c->shifts, &ps->scap, c->nshifts + 1,
							    sizeof *c->shifts, 64))
			return parse_fail(ps, line, "out of memory");
		c->shifts[c->nshifts++] = (struct dist_cdc_shift){(uint32_t)v[0], v[1], v[2]};
	}
	return 0;
}

/* Ends the current section: required lines present, the whole section consistent. */
static int section_close(struct parser *ps, struct dist *d, size_t line)
{
	char why[384];
	const char *name = sect_names[ps->sect];
	static const char *const first[SECT_COUNT][5] = {{"", ""}, {"codecs", "sample"}, {"analysed", "duplicates"},
								 {"codecs", "sample"}, {"records", "sample"},
								 {"chunker", "sample", "chunks", "sampled", "duplicates"}};
	const int required = ps->sect == SECT_CDC ? 5 : 2;
	size_t at = ps->sect_line[ps->sect];

	if (ps->sect == SECT_NONE)
		return 0;
	if (ps->step < required)
		return parse_fail(ps, at, "[%s %d] has no '%s' line (ends on line %zu)", name, SECT_VERSION,
				  first[ps->sect][ps->step], line);
	if (ps->sect == SECT_COMP && comp_check(&d->comp, why, sizeof why))
		return parse_fail(ps, at, "[%s %d] %s", name, SECT_VERSION, why);
	if (ps->sect == SECT_LOC && loc_check(&d->locality, why, sizeof why))
		return parse_fail(ps, at, "[%s %d] %s", name, SECT_VERSION, why);
	if (ps->sect == SECT_GRAN && gran_check(&d->gran, why, sizeof why))
		return parse_fail(ps, at, "[%s %d] %s", name, SECT_VERSION, why);
	if (ps->sect == SECT_ALIGN && align_check(&d->align, why, sizeof why))
		return parse_fail(ps, at, "[%s %d] %s", name, SECT_VERSION, why);
	if (ps->sect == SECT_CDC && cdc_check(&d->cdc, why, sizeof why))
		return parse_fail(ps, at, "[%s %d] %s", name, SECT_VERSION, why);
	ps->sect = SECT_NONE;
	return 0;
}

/* A "[NAME VERSION]" line in [s, s+len) (a trailing comment already cut off). */
static int section_header(struct parser *ps, struct dist *d, const char *s, size_t len, size_t line)
{
	char shown[80];
	size_t tl = trim_len(s, len);
	const char *sp = memchr(s, ' ', tl);
	quote(shown, sizeof shown, s, tl);
	if (tl < 5 || s[tl - 1] != ']' || !sp || sp == s + 1)
		return parse_fail(ps, line, "malformed section header '%s': expected '[NAME VERSION]'", shown);
	const char *name = s + 1, *ver = sp + 1;
	size_t nl = (size_t)(sp - name), vl = (size_t)(s + tl - 1 - ver);
	for (size_t i = 0; i < nl; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || is_digit(name[i]) || name[i] == '-' || name[i] == '_'))
			return parse_fail(ps, line, "malformed section header '%s': expected '[NAME VERSION]'", shown);
	uint64_t version;
	if (parse_u64(ver, vl, &version) || version == 0)
		return parse_fail(ps, line, "malformed section header '%s': the version is a positive integer", shown);
	int which = SECT_NONE;
	for (int k = 1; k < SECT_COUNT; k++)
		if (nl == strlen(sect_names[k]) && !memcmp(name, sect_names[k], nl))
			which = k;
	if (which == SECT_NONE) {
		quote(shown, sizeof shown, name, nl);
		return parse_fail(ps, line, "unknown section '%s' (this dedis reads compressibility 1 and 2, locality 1, "
				  "granularity 1, alignment 1, cdc 1)", shown);
	}
	if (version > (uint64_t)sect_max_version[which])
		return parse_fail(ps, line, "section '%s' version %" PRIu64 " is newer than this dedis reads (%d); use a "
				  "newer dedis", sect_names[which], version, sect_max_version[which]);
	if (section_close(ps, d, line - 1))
		return -1;
	if (ps->sect_line[which])
		return parse_fail(ps, line, "section '%s' given twice (first on line %zu)", sect_names[which],
				  ps->sect_line[which]);
	for (int k = which + 1; k < SECT_COUNT; k++)
		if (ps->sect_line[k])
			return parse_fail(ps, line, "section '%s' after '%s' (the order is compressibility, "
					  "locality, granularity, alignment, then cdc)", sect_names[which], sect_names[k]);
	ps->sect = which;
	ps->sect_version[which] = (int)version;
	ps->sect_line[which] = line;
	ps->step = 0;
	for (int k = 0; k < 4; k++)
		ps->last_bin[k] = -1;
	if (which == SECT_COMP)
		d->comp.present = true;
	else if (which == SECT_LOC)
		d->locality.present = true;
	else if (which == SECT_GRAN)
		d->gran.present = true;
	else if (which == SECT_ALIGN)
		d->align.present = true;
	else
		d->cdc.present = true;
	return 0;
}

/* A line inside a section (comment cut off). */
static int section_line(struct parser *ps, struct dist *d, const char *s, size_t len, size_t line)
{
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS];
	size_t nf = split(s, len, f, fl);
	if (nf == 0)
		return 0;
	if (nf > MAX_FIELDS)
		return parse_fail(ps, line, "[%s %d] %zu fields: no line of this section has more than 7",
				  sect_names[ps->sect], SECT_VERSION, nf);
	if (is_digit(f[0][0]))
		return parse_fail(ps, line, "a record inside section '%s' (started on line %zu): records come before "
				  "the first section", sect_names[ps->sect], ps->sect_line[ps->sect]);
	if (ps->sect == SECT_GRAN)
		return gran_line(ps, &d->gran, f, fl, nf, line);
	if (ps->sect == SECT_ALIGN)
		return align_line(ps, &d->align, f, fl, nf, line);
	if (ps->sect == SECT_CDC)
		return cdc_line(ps, &d->cdc, f, fl, nf, line);
	return ps->sect == SECT_COMP ? comp_line(ps, &d->comp, f, fl, nf, line)
				     : loc_line(ps, &d->locality, f, fl, nf, line);
}

static int write_comp(FILE *f, const struct dist_comp *c)
{
	char p[96];
	format_prob(p, sizeof p, c->sample_rate);
	fprintf(f, "[compressibility 2]\n"
		   "# copy class k: contents stored 2^k..2^(k+1)-1 times; sizes: each distinct block compressed\n"
		   "# alone, in 1/32 of the block (bucket) and 1/1048576 of the block (means)\n"
		   "codecs zstd-1 lz4\n"
		   "sample %s %" PRIu64 "\n", p, c->measured);
	for (int k = 0; k < DIST_CLASSES; k++)
		if (c->class_measured[k])
			fprintf(f, "measured %d %" PRIu64 "\n", k, c->class_measured[k]);
	for (size_t i = 0; i < c->ncells; i++) {
		const struct dist_comp_cell *x = &c->cells[i];
		fprintf(f, "cell %u %u %u %" PRIu64 " %u %u\n", x->cls, x->zstd_bucket, x->lz4_bucket, x->contents,
			x->zstd_mean, x->lz4_mean);
	}
	return 0;
}

static int write_locality(FILE *f, const struct dist_locality *l)
{
	fprintf(f, "[locality 1]\n"
		   "# stream order: new = first occurrences, dup = duplicates, copy = copied sequences\n"
		   "# (source +1 each block), zero = duplicates of the zero block; bin k = lengths 2^k..2^(k+1)-1\n"
		   "analysed %" PRIu64 " %" PRIu64 "\n"
		   "duplicates %" PRIu64 " %" PRIu64 "\n", l->analysed, l->window, l->duplicates, l->sequential);
	for (int kind = 0; kind < 4; kind++) {
		const struct dist_len_hist *h = loc_chist(l, kind);
		for (int k = 0; k < DIST_LEN_BINS; k++)
			if (h->count[k])
				fprintf(f, "%s %d %" PRIu64 " %" PRIu64 "\n", loc_kinds[kind], k, h->count[k], h->blocks[k]);
	}
	return 0;
}

static int write_align(FILE *f, const struct dist_align *a)
{
	char p[96];
	format_prob(p, sizeof p, a->sample_rate);
	fprintf(f, "[alignment 1]\n"
		   "# record K RECORDS DISTINCT: records of K blocks aligned in their file, the last padded with\n"
		   "# zero blocks (fixed dedup ratio = RECORDS / DISTINCT); shift R RUNS BLOCKS: copied runs\n"
		   "# whose (copy - source) mod 32 blocks is R\n"
		   "records 2 4 8 16 32\n"
		   "sample %s\n", p);
	for (int i = 0; i < DIST_ALIGN_SIZES; i++)
		if (a->records[i])
			fprintf(f, "record %d %" PRIu64 " %" PRIu64 "\n", 2 << i, a->records[i], a->distinct[i]);
	for (int r = 0; r < DIST_ALIGN_MOD; r++)
		if (a->shift_runs[r])
			fprintf(f, "shift %d %" PRIu64 " %" PRIu64 "\n", r, a->shift_runs[r], a->shift_blocks[r]);
	return 0;
}

static int write_cdc(FILE *f, const struct dist_cdc *c)
{
	char p[96];
	format_prob(p, sizeof p, c->sample_rate);
	fprintf(f, "[cdc 1]\n"
		   "# content-defined chunks (gear hash, normalised): all and the all-zero ones (exact); the\n"
		   "# sampled non-zero ones, distinct; their duplicates aligned (shift 0 mod BLOCK) or shifted;\n"
		   "# runs of shifted duplicates by bytes (bin k = 2^k..2^(k+1)-1); shifted duplicates per shift\n"
		   "chunker gear %u %u %u\n"
		   "sample %s %" PRIu64 " %" PRIu64 "\n"
		   "chunks %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n"
		   "sampled %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n"
		   "duplicates %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		c->avg, c->min, c->max, p, c->block_size, c->range, c->chunks, c->bytes, c->zero_chunks, c->zero_bytes,
		c->zero_distinct_bytes, c->sampled_chunks, c->sampled_bytes, c->distinct_chunks, c->distinct_bytes,
		c->aligned_chunks, c->aligned_bytes, c->shifted_chunks, c->shifted_bytes);
	for (int k = 0; k < DIST_CDC_RUN_BINS; k++)
		if (c->run_count[k])
			fprintf(f, "run %d %" PRIu64 " %" PRIu64 "\n", k, c->run_count[k], c->run_bytes[k]);
	for (size_t i = 0; i < c->nshifts; i++)
		fprintf(f, "shift %u %" PRIu64 " %" PRIu64 "\n", c->shifts[i].shift, c->shifts[i].chunks,
			c->shifts[i].bytes);
	return 0;
}

static int write_gran(FILE *f, const struct dist_gran *g)
{
	char p[96];
	format_prob(p, sizeof p, g->sample_rate);
	fprintf(f, "[granularity 1]\n"
		   "# 128 KiB windows aligned in their file; the first SIZE bytes of each compressed alone,\n"
		   "# all-zero pieces left out: bytes in, bytes out per codec (ratio = BYTES / out)\n"
		   "codecs zstd-1 zstd-3 lz4\n"
		   "sample %s %" PRIu64 "\n", p, g->windows);
	for (int k = 0; k < DIST_GRAN_SIZES; k++)
		fprintf(f, "piece %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", DIST_GRAN_MIN << k, g->bytes[k],
			g->zstd1[k], g->zstd3[k], g->lz4[k]);
	return 0;
}

/* Whether a record of `dups` duplicates is among d's (sorted) rows. */
static bool dist_has_dups(const struct dist *d, uint64_t dups)
{
	size_t lo = 0, hi = d->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->rows[mid].dups == dups)
			return true;
		if (d->rows[mid].dups < dups)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A line (its newline and a CRLF's CR left off) holds text: no NUL byte, lone CR or other
 * control character. 0, or -1 naming the first one. */
static int check_chars(struct parser *ps, const char *s, size_t ll, size_t line)
{
	for (size_t i = 0; i < ll; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\0')
			return parse_fail(ps, line, "NUL byte at column %zu (binary file?)", i + 1);
		if (c == '\r')
			return parse_fail(ps, line, "carriage return not followed by a newline at column %zu "
					  "(CR-only line endings?)", i + 1);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return parse_fail(ps, line, "control character 0x%02x at column %zu", c, i + 1);
	}
	return 0;
}

/* The next line of text[*pos, len): its start and length (without the newline, or a CRLF's CR);
 * *pos moves past it. */
static const char *next_line(const char *text, size_t len, size_t *pos, size_t *ll)
{
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	*ll = nl ? (size_t)(nl - s) : len - *pos;
	*pos += *ll + (nl ? 1 : 0);
	if (*ll > 0 && s[*ll - 1] == '\r')
		(*ll)--; /* CRLF */
	return s;
}

int dist_parse(const char *text, size_t len, const char *name, struct dist *out, struct dd_err *err)
{
	struct parser ps = {.name = name ? name : "<distribution>", .err = err};
	struct dist d;
	size_t line = 0, pos = 0;
	int rc = -1;

	memset(&d, 0, sizeof d);
	memset(out, 0, sizeof *out);
	err_clear(err);
	if (!text && len) {
		set_err(err, ps.name, 0, "no text");
		goto done;
	}
	/* A file with a section is a dedis file even without a comment. */
	ps.legacy = len == 0 || (memchr(text, '#', len) == NULL && text[0] != '[' && !memmem(text, len, "\n[", 2));
	while (pos < len) {
		size_t ll;
		const char *s = next_line(text, len, &pos, &ll);
		line++;
		if (check_chars(&ps, s, ll, line))
			goto done;
		const char *hash = memchr(s, '#', ll);
		size_t rl = hash ? (size_t)(hash - s) : ll;
		size_t lead = 0;
		while (lead < rl && is_space(s[lead]))
			lead++;
		if (hash && lead == rl) {
			/* header comments are read before the records; inside a section a comment is one */
			if (ps.sect == SECT_NONE && parse_comment(&ps, &d, hash + 1, ll - rl - 1, line) != 0)
				goto done;
			continue;
		}
		if (rl > 0 && s[0] == '[') {
			if (section_header(&ps, &d, s, rl, line) != 0)
				goto done;
			continue;
		}
		if (lead < rl && s[lead] == '[') {
			parse_fail(&ps, line, "a section header starts in column 1 ('[NAME VERSION]', no leading blanks)");
			goto done;
		}
		if (ps.sect != SECT_NONE) {
			if (section_line(&ps, &d, s, rl, line) != 0)
				goto done;
			continue;
		}
		if (parse_record(&ps, s, rl, line) != 0)
			goto done;
	}
	if (section_close(&ps, &d, line) != 0 || finish(&ps, &d, line, ps.legacy) != 0)
		goto done;
	/* The zero block is one of the contents the records count: "# zero-blocks: N" names the
	 * record of N - 1 duplicates. Without one, the header would add N zero blocks the records
	 * do not hold, and a replay would write them on top of the distribution. */
	if (d.zero_blocks && !dist_has_dups(&d, d.zero_blocks - 1)) {
		set_err(err, ps.name, ps.zero_line,
			"'# zero-blocks: %" PRIu64 "' does not match the records: the zero block, one content "
			"stored %" PRIu64 " times, needs a record '%" PRIu64 " <blocks>'",
			d.zero_blocks, d.zero_blocks, d.zero_blocks - 1);
		free(d.rows);
		d.rows = NULL;
		goto done;
	}
	*out = d;
	rc = 0;
done:
	if (rc) {
		free(d.comp.cells);
		free(d.cdc.shifts);
	}
	free(ps.rows);
	return rc;
}

/* What a file that is not a distribution is (dist_load refuses all but regular files). */
static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* A file over DIST_FILE_MAX: what its first DIST_FILE_MAX bytes show it is, when a character
 * says (a NUL byte: a disk image, a sparse file), else its size. */
static void too_large(const char *text, size_t len, const char *path, struct dd_err *err)
{
	struct parser ps = {.name = path, .err = err, .legacy = 1};
	size_t pos = 0, line = 0;
	while (pos < len) {
		size_t ll;
		const char *s = next_line(text, len, &pos, &ll);
		if (check_chars(&ps, s, ll, ++line))
			return;
	}
	set_err(err, path, 0, "larger than %u MiB: not a distribution file (the largest hold a few thousand "
		"lines)", DIST_FILE_MAX >> 20);
}

/* path's bytes, up to DIST_FILE_MAX + 1 (one more says it is over), into *buf (malloc'd). */
static int read_bounded(int fd, const char *path, char **buf, size_t *len, struct dd_err *err)
{
	size_t cap = 0;
	*buf = NULL;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			if (cap > DIST_FILE_MAX)
				return 0;
			size_t ncap = cap ? cap * 2 : 65536;
			ncap = ncap > (size_t)DIST_FILE_MAX + 1 ? (size_t)DIST_FILE_MAX + 1 : ncap;
			char *nb = realloc(*buf, ncap);
			if (!nb) {
				set_err(err, path, 0, "out of memory");
				err->resource = true;
				return -1;
			}
			*buf = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, *buf + *len, cap - *len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			set_err(err, path, 0, "cannot read: %s", strerror(errno));
			err->resource = errno == ENOMEM;
			return -1;
		}
		if (got == 0)
			return 0;
		*len += (size_t)got;
	}
}

int dist_load(const char *path, struct dist *out, struct dd_err *err)
{
	struct dd_err spare;
	err = err ? err : &spare;
	memset(out, 0, sizeof *out);
	err_clear(err);
	/* Not blocked by a FIFO without a writer: it is refused below, as any file not regular is
	 * (a device's endless bytes, a FIFO's wait). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		set_err(err, path, 0, "cannot open: %s", strerror(e));
		err->resource = errmsg_resource(e);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, path, 0, "%s, not a regular file", file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	char *buf;
	size_t len;
	int rc = read_bounded(fd, path, &buf, &len, err);
	close(fd);
	if (!rc && len > DIST_FILE_MAX) {
		too_large(buf, DIST_FILE_MAX, path, err);
		rc = -1;
	} else if (!rc) {
		rc = dist_parse(buf, len, path, out, err);
	}
	free(buf);
	return rc;
}

int dist_from_rows(const struct dist_row *rows, size_t n, struct dist *out, struct dd_err *err)
{
	struct parser ps = {.name = "rows", .err = err};
	int rc = -1;

	memset(out, 0, sizeof *out);
	err_clear(err);
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
	if (dist_sections_check(d, NULL)) { /* never write what would not read back */
		errno = EINVAL;
		return -1;
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
	if (d->comp.present)
		write_comp(f, &d->comp);
	if (d->locality.present)
		write_locality(f, &d->locality);
	if (d->gran.present)
		write_gran(f, &d->gran);
	if (d->align.present)
		write_align(f, &d->align);
	if (d->cdc.present)
		write_cdc(f, &d->cdc);
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

double dist_cdc_ratio(const struct dist_cdc *c)
{
	double nonzero = (double)(c->bytes - c->zero_bytes), stored = (double)c->zero_distinct_bytes;
	if (c->sampled_bytes)
		stored += nonzero * (double)c->distinct_bytes / (double)c->sampled_bytes;
	else
		stored += nonzero; /* nothing sampled: nothing known to repeat */
	return stored > 0 ? (double)c->bytes / stored : 0;
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
	memset(&d->gran, 0, sizeof d->gran);
	memset(&d->align, 0, sizeof d->align);
	free(d->cdc.shifts);
	memset(&d->cdc, 0, sizeof d->cdc);
}
