/* units.h - parse and print human quantities: sizes ("4KiB", "2GiB", "512"), durations
 * ("30s", "5m", "1h30m"), rates ("500", "2k"); strict: trailing junk or overflow is an error. */
#ifndef DEDIS_UNITS_H
#define DEDIS_UNITS_H

#include <stdint.h>
#include <stddef.h>

/* Size in bytes. A bare number is multiplied by `bare_unit` (1 for bytes, 1048576 where the
 * original DEDISbench took MB). Suffixes, case-insensitive: B, K/KB/KiB, M/MB/MiB, G/GB/GiB,
 * T/TB/TiB, P/PiB, all binary (1024-based). Returns 0, or -1 with *why set to a static reason. */
int units_parse_size(const char *s, uint64_t bare_unit, uint64_t *out, const char **why);

/* Duration in nanoseconds. A bare number is multiplied by `bare_unit_ns`. Suffixes: ns, us,
 * ms, s, m (minutes), h, d; components may be chained ("1h30m"); fractions allowed ("1.5s"). */
int units_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns, const char **why);

/* Unsigned integer, decimal (or 0x hex), with optional k/M/G decimal (1000-based) suffix. */
int units_parse_count(const char *s, uint64_t *out, const char **why);

/* Non-negative finite double with optional k/M decimal suffix ("2.5k" = 2500). */
int units_parse_rate(const char *s, double *out, const char **why);

/* "4 KiB", "1.50 GiB": exact binary units when whole, else two decimals. */
void units_format_size(uint64_t bytes, char *buf, size_t len);
/* "250 ms", "1.5 s", "2 m 30 s" */
void units_format_duration(uint64_t ns, char *buf, size_t len);

#define NS_PER_SEC 1000000000ULL
#define NS_PER_MIN (60ULL * NS_PER_SEC)

#endif
