/* test_units.c - CUnit suite for lib/units.c: every size suffix, the bare-number unit, chained
 * and fractional durations, counts, rates, the printers, and the error classes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "lib/units.h"

static uint64_t size_ok(const char *s, uint64_t bare)
{
	uint64_t v = 0xdeadbeef;
	struct dd_err why;
	int rc = units_parse_size(s, bare, &v, &why);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n  units_parse_size(\"%s\") failed: %s\n", s, why.msg);
	return v;
}

static const char *size_bad(const char *s, uint64_t bare)
{
	uint64_t v = 12345;
	static struct dd_err why; /* its reason is returned */
	err_clear(&why);
	CU_ASSERT_EQUAL(units_parse_size(s, bare, &v, &why), -1);
	CU_ASSERT(why.msg[0] != 0);
	CU_ASSERT_EQUAL(v, 12345); /* untouched on error */
	return why.msg;
}

static uint64_t dur_ok(const char *s, uint64_t bare)
{
	uint64_t v = 0xdeadbeef;
	struct dd_err why;
	int rc = units_parse_duration(s, bare, &v, &why);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n  units_parse_duration(\"%s\") failed: %s\n", s, why.msg);
	return v;
}

static const char *dur_bad(const char *s, uint64_t bare)
{
	uint64_t v = 12345;
	static struct dd_err why; /* its reason is returned */
	err_clear(&why);
	CU_ASSERT_EQUAL(units_parse_duration(s, bare, &v, &why), -1);
	CU_ASSERT(why.msg[0] != 0);
	CU_ASSERT_EQUAL(v, 12345);
	return why.msg;
}

static void test_size_suffixes(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} cases[] = {
		{"512", 512}, {"0", 0}, {"7B", 7}, {"7b", 7},
		{"4K", 4096}, {"4k", 4096}, {"4KB", 4096}, {"4kb", 4096}, {"4KiB", 4096}, {"4kib", 4096},
		{"4KIB", 4096}, {"4 KiB", 4096},
		{"3M", 3ULL << 20}, {"3MB", 3ULL << 20}, {"3MiB", 3ULL << 20}, {"3mib", 3ULL << 20},
		{"2G", 2ULL << 30}, {"2GB", 2ULL << 30}, {"2GiB", 2ULL << 30}, {"2gib", 2ULL << 30},
		{"5T", 5ULL << 40}, {"5TB", 5ULL << 40}, {"5TiB", 5ULL << 40},
		{"6P", 6ULL << 50}, {"6PiB", 6ULL << 50}, {"6pib", 6ULL << 50},
		{"1.5KiB", 1536}, {"0.5M", 1ULL << 19}, {"1.25GiB", 5ULL << 28},
		{"15PiB", 15ULL << 50}, {"18446744073709551615", UINT64_MAX},
		{"18446744073709551615B", UINT64_MAX},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CU_ASSERT_EQUAL(size_ok(cases[i].s, 1), cases[i].v);
}

static void test_size_bare_unit(void)
{
	CU_ASSERT_EQUAL(size_ok("512", 1), 512);
	CU_ASSERT_EQUAL(size_ok("512", 1048576), 512ULL << 20);
	CU_ASSERT_EQUAL(size_ok("4K", 1048576), 4096); /* a suffix wins over bare_unit */
	CU_ASSERT_EQUAL(size_ok("4B", 1048576), 4);
	CU_ASSERT_EQUAL(size_ok("1.5", 1048576), 3ULL << 19);
	CU_ASSERT_EQUAL(size_ok("16", 4096), 65536);
	/* bare_unit 0: a suffix is required */
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("512", 0), "suffix"));
	CU_ASSERT_EQUAL(size_ok("512B", 0), 512);
	/* bare number overflow through the multiplier */
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("17592186044416", 1048576), "overflow"));
}

static void test_size_errors(void)
{
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("", 1), "empty"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("-1", 1), "negative"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("-4KiB", 1), "negative"));
	size_bad("+4", 1);
	size_bad("abc", 1);
	size_bad("KiB", 1);
	size_bad(" 4K", 1);
	size_bad("4K ", 1);
	size_bad("4 ", 1);
	size_bad("4KiBx", 1);
	size_bad("4Kx", 1);
	size_bad("4X", 1);
	size_bad("4 4", 1);
	size_bad("4.", 1);
	size_bad(".", 1);
	size_bad("1.2.3", 1);
	size_bad("0x10", 1);
	size_bad("4EiB", 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("0.3K", 1), "whole"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("18446744073709551616", 1), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("99999999999999999999999", 1), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("16384PiB", 1), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(size_bad("16777216TiB", 1), "overflow"));
	/* err may be NULL */
	uint64_t v;
	CU_ASSERT_EQUAL(units_parse_size("junk", 1, &v, NULL), -1);
}

static void test_duration(void)
{
	CU_ASSERT_EQUAL(dur_ok("30s", NS_PER_SEC), 30 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("5m", NS_PER_SEC), 5 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("2h", NS_PER_SEC), 120 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("1d", NS_PER_SEC), 24 * 60 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("250ms", NS_PER_SEC), 250000000ULL);
	CU_ASSERT_EQUAL(dur_ok("40us", NS_PER_SEC), 40000ULL);
	CU_ASSERT_EQUAL(dur_ok("7ns", NS_PER_SEC), 7ULL);
	CU_ASSERT_EQUAL(dur_ok("30S", NS_PER_SEC), 30 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("0", NS_PER_SEC), 0);
	/* bare numbers */
	CU_ASSERT_EQUAL(dur_ok("30", NS_PER_SEC), 30 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("30", NS_PER_MIN), 30 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("1.5", NS_PER_SEC), 1500000000ULL);
	/* chained */
	CU_ASSERT_EQUAL(dur_ok("1h30m", NS_PER_SEC), 90 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("1m30s", NS_PER_SEC), 90 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("1d2h3m4s5ms6us7ns", NS_PER_SEC),
			((((1 * 24 + 2) * 60 + 3) * 60 + 4) * NS_PER_SEC) + 5000000ULL + 6000ULL + 7ULL);
	CU_ASSERT_EQUAL(dur_ok("2m 30s", NS_PER_SEC), 150 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("2 m 30 s", NS_PER_SEC), 150 * NS_PER_SEC);
	/* fractional */
	CU_ASSERT_EQUAL(dur_ok("1.5s", NS_PER_SEC), 1500000000ULL);
	CU_ASSERT_EQUAL(dur_ok("0.25h", NS_PER_SEC), 15 * NS_PER_MIN);
	CU_ASSERT_EQUAL(dur_ok("1.5m30s", NS_PER_SEC), 120 * NS_PER_SEC);
	CU_ASSERT_EQUAL(dur_ok("0.001ms", NS_PER_SEC), 1000ULL);
	CU_ASSERT_EQUAL(dur_ok("1.9ns", NS_PER_SEC), 1ULL); /* sub-ns truncated */
	/* the biggest value */
	CU_ASSERT_EQUAL(dur_ok("18446744073709551615ns", NS_PER_SEC), UINT64_MAX);
}

static void test_duration_errors(void)
{
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("", NS_PER_SEC), "empty"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("-5s", NS_PER_SEC), "negative"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("1h-5m", NS_PER_SEC), "negative"));
	dur_bad("abc", NS_PER_SEC);
	dur_bad("s", NS_PER_SEC);
	dur_bad("5x", NS_PER_SEC);
	dur_bad("5sec", NS_PER_SEC);
	dur_bad("5s!", NS_PER_SEC);
	dur_bad("5s ", NS_PER_SEC);
	dur_bad(" 5s", NS_PER_SEC);
	dur_bad("1h30", NS_PER_SEC); /* missing unit on the last component */
	dur_bad("1.5.2s", NS_PER_SEC);
	dur_bad("5.s", NS_PER_SEC);
	dur_bad("+5s", NS_PER_SEC);
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("5", 0), "suffix"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("18446744073709551616ns", NS_PER_SEC), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("18446744074s", NS_PER_SEC), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("18446744073709551615ns1ns", NS_PER_SEC), "overflow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dur_bad("213504d1d", NS_PER_SEC), "overflow"));
}

static void test_count(void)
{
	uint64_t v;
	struct dd_err why;
	CU_ASSERT(units_parse_count("42", &v, &why) == 0 && v == 42);
	CU_ASSERT(units_parse_count("0x1F", &v, &why) == 0 && v == 31);
	CU_ASSERT(units_parse_count("0xffffffffffffffff", &v, &why) == 0 && v == UINT64_MAX);
	CU_ASSERT(units_parse_count("2k", &v, &why) == 0 && v == 2000);
	CU_ASSERT(units_parse_count("2K", &v, &why) == 0 && v == 2000);
	CU_ASSERT(units_parse_count("3M", &v, &why) == 0 && v == 3000000);
	CU_ASSERT(units_parse_count("4G", &v, &why) == 0 && v == 4000000000ULL);
	CU_ASSERT(units_parse_count("1.5k", &v, &why) == 0 && v == 1500);
	CU_ASSERT_EQUAL(units_parse_count("", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("-1", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("0x", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("0x1g", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("0x10000000000000000", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("18446744073709551616", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("18446744073709552G", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("1.5", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("12kk", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("12 ", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_count("1KiB", &v, &why), -1);
}

static void test_rate(void)
{
	double v;
	struct dd_err why;
	CU_ASSERT(units_parse_rate("500", &v, &why) == 0 && v == 500.0);
	CU_ASSERT(units_parse_rate("2k", &v, &why) == 0 && v == 2000.0);
	CU_ASSERT(units_parse_rate("2.5k", &v, &why) == 0 && v == 2500.0);
	CU_ASSERT(units_parse_rate("1.5M", &v, &why) == 0 && v == 1500000.0);
	CU_ASSERT(units_parse_rate("0.5", &v, &why) == 0 && v == 0.5);
	CU_ASSERT(units_parse_rate("1e12", &v, &why) == 0 && v == 1e12);
	CU_ASSERT(units_parse_rate("1e308", &v, &why) == -1 && strstr(why.msg, "too large"));
	CU_ASSERT(units_parse_rate("1000001M", &v, &why) == -1);
	CU_ASSERT(units_parse_rate(".5", &v, &why) == 0 && v == 0.5);
	CU_ASSERT(units_parse_rate("1e3", &v, &why) == 0 && v == 1000.0);
	CU_ASSERT(units_parse_rate("0", &v, &why) == 0 && v == 0.0);
	CU_ASSERT_EQUAL(units_parse_rate("", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("-1", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("inf", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("nan", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("0x10", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("1e999", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("5x", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("5 ", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate("1e", &v, &why), -1);
	CU_ASSERT_EQUAL(units_parse_rate(".", &v, &why), -1);
}

static void test_format(void)
{
	char buf[64];
	static const struct {
		uint64_t v;
		const char *s;
	} sizes[] = {
		{0, "0 B"}, {512, "512 B"}, {1023, "1023 B"}, {4096, "4 KiB"}, {1536, "1.50 KiB"},
		{2ULL << 30, "2 GiB"}, {3ULL << 29, "1.50 GiB"}, {5ULL << 40, "5 TiB"}, {1ULL << 50, "1 PiB"}, {5ULL << 60, "5120 PiB"},
	};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		units_format_size(sizes[i].v, buf, sizeof buf);
		CU_ASSERT_STRING_EQUAL(buf, sizes[i].s);
	}
	units_format_size(UINT64_MAX, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "16384.00 PiB");

	static const struct {
		uint64_t v;
		const char *s;
	} durs[] = {
		{0, "0 ns"}, {999, "999 ns"}, {1500, "1.5 us"}, {250000000ULL, "250 ms"},
		{1500000000ULL, "1.5 s"}, {30 * NS_PER_SEC, "30 s"}, {150 * NS_PER_SEC, "2 m 30 s"},
		{90 * NS_PER_MIN, "1 h 30 m"}, {NS_PER_MIN * 60 * 24 + NS_PER_SEC, "1 d 1 s"},
		{NS_PER_MIN + 500000000ULL, "1 m 0.5 s"},
	};
	for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
		units_format_duration(durs[i].v, buf, sizeof buf);
		CU_ASSERT_STRING_EQUAL(buf, durs[i].s);
	}
	/* the printed forms parse back */
	uint64_t v;
	CU_ASSERT(units_parse_size("4 KiB", 1, &v, NULL) == 0 && v == 4096);
	CU_ASSERT(units_parse_duration("2 m 30 s", 1, &v, NULL) == 0 && v == 150 * NS_PER_SEC);
	/* truncation is safe */
	char small[4];
	units_format_duration(150 * NS_PER_SEC, small, sizeof small);
	CU_ASSERT_EQUAL(strlen(small), 3);
	units_format_size(1536, small, sizeof small);
	CU_ASSERT_EQUAL(strlen(small), 3);
}

int suite_units(void); /* listed in suites_lib.c */

int suite_units(void)
{
	static const struct unit_test tests[] = {
		{"size suffixes", test_size_suffixes},
		{"size bare unit", test_size_bare_unit},
		{"size errors", test_size_errors},
		{"durations", test_duration},
		{"duration errors", test_duration_errors},
		{"counts", test_count},
		{"rates", test_rate},
		{"format", test_format},
		{NULL, NULL},
	};
	return unit_add_suite("units", tests);
}
