/* units.h - parse and print human quantities: sizes ("4KiB", "2GiB", "512"), durations
 * ("30s", "5m", "1h30m"), rates ("500", "2k"); strict: trailing junk or overflow is an error. */
#ifndef DEDIS_UNITS_H
#define DEDIS_UNITS_H

#include <stdint.h>
#include <stddef.h>
#include "lib/errmsg.h"

/* Size in bytes. A bare number is multiplied by `bare_unit` (1 for bytes, 1048576 where the
 * original DEDISbench took MB; 0 = a suffix is required). Suffixes, case-insensitive: B,
 * K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, P/PB/PiB, all binary (1024-based), optionally after
 * spaces ("4 KiB"). A fraction is allowed when the result is whole bytes ("1.5KiB").
 * No sign, no surrounding whitespace. Returns 0 (*out set), or -1 with err (if not NULL) holding
 * the reason alone (the caller names the option and the value) and *out untouched. The other
 * parsers follow the same convention. */
int units_parse_size(const char *s, uint64_t bare_unit, uint64_t *out, struct dd_err *err);

/* Duration in nanoseconds. A bare number is multiplied by `bare_unit_ns` (0 = a suffix is
 * required). Suffixes (case-insensitive): ns, us, ms, s, m (minutes), h, d; components may be
 * chained ("1h30m", "2 m 30 s"), each with a unit; fractions allowed ("1.5s"), sub-ns truncated. */
int units_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns, struct dd_err *err);

/* Unsigned integer, decimal (or 0x hex, no suffix), with optional k/K/M/G decimal (1000-based)
 * suffix; "1.5k" is accepted as it is whole. */
int units_parse_count(const char *s, uint64_t *out, struct dd_err *err);

/* The largest rate accepted, operations a second. */
#define UNITS_RATE_MAX 1e12
/* Non-negative finite double (decimal, optional exponent; no inf/nan/hex) with optional
 * k/K/M decimal suffix ("2.5k" = 2500), at most UNITS_RATE_MAX. */
int units_parse_rate(const char *s, double *out, struct dd_err *err);

/* "4 KiB", "1.50 GiB": exact binary units when whole, else two decimals. */
void units_format_size(uint64_t bytes, char *buf, size_t len);
/* "250 ms", "1.5 s", "2 m 30 s" (up to 3 decimals, trailing zeros dropped; d/h/m/s from 1 min) */
void units_format_duration(uint64_t ns, char *buf, size_t len);

#define NS_PER_SEC 1000000000ULL
#define NS_PER_MIN (60ULL * NS_PER_SEC)

#endif
