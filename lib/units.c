/* units.c - strict parsers and printers for sizes, durations, counts and rates: exact integer
 * arithmetic (fractions included), every overflow and every stray character is an error. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/errmsg.h"
#include "lib/units.h"

#define FRAC_MAX_DIGITS 18

/* A decimal number "123" or "123.456" at *p; advances *p past it. The fraction is kept as
 * frac / 10^frac_digits (at most FRAC_MAX_DIGITS significant digits, the rest must be 0). */
struct decnum {
	uint64_t whole;
	uint64_t frac;
	uint64_t frac_scale; /* 10^frac_digits; 1 when there is no fraction */
};

static const char *scan_decimal(const char **p, struct decnum *n, int allow_fraction)
{
	const char *s = *p;
	int digits = 0;

	n->whole = 0;
	n->frac = 0;
	n->frac_scale = 1;
	if (*s == '-')
		return "negative values are not allowed";
	if (*s == '+')
		return "a sign is not allowed";
	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');
		if (n->whole > (UINT64_MAX - d) / 10)
			return "value too large (overflows 64 bits)";
		n->whole = n->whole * 10 + d;
		s++;
		digits++;
	}
	if (*s == '.' && allow_fraction) {
		int fdigits = 0;
		s++;
		while (isdigit((unsigned char)*s)) {
			if (n->frac_scale < 1000000000000000000ULL) {
				n->frac = n->frac * 10 + (uint64_t)(*s - '0');
				n->frac_scale *= 10;
			} else if (*s != '0') {
				return "too many digits in the fraction";
			}
			s++;
			fdigits++;
		}
		if (fdigits == 0)
			return "a digit must follow the decimal point";
		digits += fdigits;
	}
	if (digits == 0)
		return "not a number";
	*p = s;
	return NULL;
}

/* n * mult, exactly; *exact set to 0 when a fraction of the unit remains (truncated). */
static const char *scale(const struct decnum *n, uint64_t mult, uint64_t *out, int *exact)
{
	unsigned __int128 w = (unsigned __int128)n->whole * mult;
	unsigned __int128 f = (unsigned __int128)n->frac * mult;
	unsigned __int128 total = w + f / n->frac_scale;

	if (total > UINT64_MAX)
		return "value too large (overflows 64 bits)";
	*exact = (f % n->frac_scale) == 0;
	*out = (uint64_t)total;
	return NULL;
}

static int fail(struct dd_err *err, const char *reason)
{
	return err_fail(err, -1, "%s", reason);
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Length of the alphabetic suffix at p. */
static size_t suffix_len(const char *p)
{
	size_t n = 0;
	while (isalpha((unsigned char)p[n]))
		n++;
	return n;
}

static int suffix_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(p, name, n) == 0;
}

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{"b", 1},
	{"k", 1ULL << 10}, {"kb", 1ULL << 10}, {"kib", 1ULL << 10},
	{"m", 1ULL << 20}, {"mb", 1ULL << 20}, {"mib", 1ULL << 20},
	{"g", 1ULL << 30}, {"gb", 1ULL << 30}, {"gib", 1ULL << 30},
	{"t", 1ULL << 40}, {"tb", 1ULL << 40}, {"tib", 1ULL << 40},
	{"p", 1ULL << 50}, {"pb", 1ULL << 50}, {"pib", 1ULL << 50},
	{NULL, 0},
};

static const struct unit *find_unit(const struct unit *tab, const char *p, size_t n)
{
	for (; tab->name; tab++)
		if (suffix_is(p, n, tab->name))
			return tab;
	return NULL;
}

int units_parse_size(const char *s, uint64_t bare_unit, uint64_t *out, struct dd_err *err)
{
	struct decnum n;
	const char *p = s, *reason;
	uint64_t mult = bare_unit, v;
	int exact;

	if (!s || !*s)
		return fail(err, "empty value");
	if ((reason = scan_decimal(&p, &n, 1)))
		return fail(err, reason);
	if (isalpha((unsigned char)*skip_spaces(p)))
		p = skip_spaces(p);
	size_t sl = suffix_len(p);
	if (sl) {
		const struct unit *u = find_unit(size_units, p, sl);
		if (!u)
			return fail(err, "unknown size suffix (use B, KiB, MiB, GiB, TiB or PiB)");
		mult = u->mult;
		p += sl;
	} else if (bare_unit == 0) {
		return fail(err, "a unit suffix is required (B, KiB, MiB, GiB, TiB, PiB)");
	}
	if (*p)
		return fail(err, "unexpected characters after the size");
	if ((reason = scale(&n, mult, &v, &exact)))
		return fail(err, reason);
	if (!exact)
		return fail(err, "not a whole number of bytes");
	*out = v;
	return 0;
}

static const struct unit time_units[] = {
	{"ns", 1},
	{"us", 1000ULL},
	{"ms", 1000000ULL},
	{"s", NS_PER_SEC},
	{"m", NS_PER_MIN},
	{"h", 60ULL * NS_PER_MIN},
	{"d", 24ULL * 60ULL * NS_PER_MIN},
	{NULL, 0},
};

int units_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns, struct dd_err *err)
{
	const char *p = s, *reason;
	uint64_t total = 0;
	int ncomp = 0;

	if (!s || !*s)
		return fail(err, "empty value");
	while (*p) {
		struct decnum n;
		uint64_t v, mult;
		int exact;

		if (ncomp > 0)
			p = skip_spaces(p);
		if ((reason = scan_decimal(&p, &n, 1)))
			return fail(err, ncomp && !strcmp(reason, "not a number")
				? "unexpected characters in the duration" : reason);
		if (isalpha((unsigned char)*skip_spaces(p)))
			p = skip_spaces(p);
		size_t sl = suffix_len(p);
		if (sl) {
			const struct unit *u = find_unit(time_units, p, sl);
			if (!u)
				return fail(err, "unknown duration suffix (use ns, us, ms, s, m, h or d)");
			mult = u->mult;
			p += sl;
		} else if (ncomp == 0 && *p == '\0') {
			if (bare_unit_ns == 0)
				return fail(err, "a unit suffix is required (ns, us, ms, s, m, h, d)");
			mult = bare_unit_ns;
		} else if (*p == '\0') {
			return fail(err, "missing unit after the last number");
		} else {
			return fail(err, "unexpected characters in the duration");
		}
		if ((reason = scale(&n, mult, &v, &exact)))
			return fail(err, reason);
		if (v > UINT64_MAX - total)
			return fail(err, "value too large (overflows 64 bits)");
		total += v;
		ncomp++;
	}
	*out_ns = total;
	return 0;
}

int units_parse_count(const char *s, uint64_t *out, struct dd_err *err)
{
	const char *p = s, *reason;
	uint64_t v = 0;

	if (!s || !*s)
		return fail(err, "empty value");
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		if (!isxdigit((unsigned char)*p))
			return fail(err, "a hex digit must follow 0x");
		for (; isxdigit((unsigned char)*p); p++) {
			unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
				: (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
			if (v > (UINT64_MAX >> 4))
				return fail(err, "value too large (overflows 64 bits)");
			v = (v << 4) | d;
		}
		if (*p)
			return fail(err, "unexpected characters after the number");
		*out = v;
		return 0;
	}

	struct decnum n;
	uint64_t mult = 1;
	int exact;
	if ((reason = scan_decimal(&p, &n, 1)))
		return fail(err, reason);
	switch (*p) {
	case 'k': case 'K': mult = 1000ULL; p++; break;
	case 'M': mult = 1000000ULL; p++; break;
	case 'G': mult = 1000000000ULL; p++; break;
	default: break;
	}
	if (*p)
		return fail(err, "unexpected characters after the number (suffixes: k, M, G)");
	if ((reason = scale(&n, mult, &v, &exact)))
		return fail(err, reason);
	if (!exact)
		return fail(err, "not a whole number");
	*out = v;
	return 0;
}

int units_parse_rate(const char *s, double *out, struct dd_err *err)
{
	const char *p = s;
	char num[64];
	double mult = 1.0, v;
	size_t len;

	if (!s || !*s)
		return fail(err, "empty value");
	if (*p == '-')
		return fail(err, "negative values are not allowed");
	if (*p == '+')
		return fail(err, "a sign is not allowed");
	/* digits [. digits] [e [+-] digits]: no hex, inf, nan or whitespace for strtod to accept */
	const char *start = p;
	int digits = 0;
	while (isdigit((unsigned char)*p)) p++, digits++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) p++, digits++;
	}
	if (digits == 0)
		return fail(err, "not a number");
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		if (*q == '+' || *q == '-')
			q++;
		if (!isdigit((unsigned char)*q))
			return fail(err, "malformed exponent");
		while (isdigit((unsigned char)*q))
			q++;
		p = q;
	}
	len = (size_t)(p - start);
	if (len >= sizeof num)
		return fail(err, "number too long");
	memcpy(num, start, len);
	num[len] = '\0';
	switch (*p) {
	case 'k': case 'K': mult = 1e3; p++; break;
	case 'M': mult = 1e6; p++; break;
	default: break;
	}
	if (*p)
		return fail(err, "unexpected characters after the number (suffixes: k, M)");
	errno = 0;
	v = strtod(num, NULL) * mult;
	if (!isfinite(v) || errno == ERANGE)
		return fail(err, errno == ERANGE && v < 1.0 ? "value out of range" : "value too large");
	/* no storage does 10^12 operations a second; beyond, the schedule's arithmetic loses meaning */
	if (v > UNITS_RATE_MAX)
		return fail(err, "value too large (at most 1e12 a second)");
	*out = v;
	return 0;
}

/* "whole[.fff]" of num/den with up to 3 decimals, trailing zeros trimmed; integer arithmetic. */
static void format_fixed(char *buf, size_t len, uint64_t num, uint64_t den, const char *unit)
{
	uint64_t whole = num / den;
	uint64_t frac = (uint64_t)(((unsigned __int128)(num % den) * 1000) / den);
	if (frac == 0) {
		snprintf(buf, len, "%llu %s", (unsigned long long)whole, unit);
		return;
	}
	int digits = 3;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu %s", (unsigned long long)whole, digits,
		 (unsigned long long)frac, unit);
}

void units_format_size(uint64_t bytes, char *buf, size_t len)
{
	/* up to PiB, the largest unit the parser takes: every size printed reads back the same */
	static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	unsigned i = 0;

	if (!buf || len == 0)
		return;
	while (i + 1 < sizeof names / sizeof names[0] && bytes >= (1ULL << (10 * (i + 1))))
		i++;
	uint64_t unit = 1ULL << (10 * i);
	if (bytes % unit == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / unit), names[i]);
	else
		snprintf(buf, len, "%.2f %s", (double)bytes / (double)unit, names[i]);
}

void units_format_duration(uint64_t ns, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	if (ns < 1000ULL) {
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	} else if (ns < 1000000ULL) {
		format_fixed(buf, len, ns, 1000ULL, "us");
	} else if (ns < NS_PER_SEC) {
		format_fixed(buf, len, ns, 1000000ULL, "ms");
	} else if (ns < NS_PER_MIN) {
		format_fixed(buf, len, ns, NS_PER_SEC, "s");
	} else {
		static const struct unit parts[] = {
			{"d", 24ULL * 60ULL * NS_PER_MIN}, {"h", 60ULL * NS_PER_MIN},
			{"m", NS_PER_MIN}, {NULL, 0},
		};
		size_t off = 0;
		buf[0] = '\0';
		for (const struct unit *u = parts; u->name && off < len; u++) {
			uint64_t q = ns / u->mult;
			if (q == 0)
				continue;
			int w = snprintf(buf + off, len - off, "%s%llu %s", off ? " " : "",
					 (unsigned long long)q, u->name);
			if (w < 0)
				return;
			off += (size_t)w;
			ns %= u->mult;
		}
		if (ns && off < len) {
			char sec[48];
			format_fixed(sec, sizeof sec, ns, NS_PER_SEC, "s");
			if (strcmp(sec, "0 s") != 0)
				snprintf(buf + off, len - off, " %s", sec);
		}
	}
}
