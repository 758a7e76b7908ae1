/* unit.h - the shared shape of the CUnit suites: each test_<module>.c defines one
 * `int suite_<module>(void)` that adds its suite and tests, listed in suites_<area>.c. */
#ifndef DEDIS_UNIT_H
#define DEDIS_UNIT_H

#include <CUnit/CUnit.h>

typedef int (*unit_suite_fn)(void);
extern const unit_suite_fn unit_suites[]; /* NULL-terminated */

/* Adds a suite with the given tests (NULL-terminated {name, fn} list); returns 0 or -1. */
struct unit_test {
	const char *name;
	CU_TestFunc fn;
};
int unit_add_suite(const char *name, const struct unit_test *tests);

/* Pages of the mapping [p, p + len) in memory (mincore); SIZE_MAX when that cannot be told. For
 * a file mapping, residency is the file's page cache, not this mapping's. */
#include <stddef.h>
#include <stdint.h>
size_t unit_resident_pages(const void *p, size_t len);

/* Every suite, by module. */
int suite_rng(void);
int suite_units(void);
int suite_distfile(void);
int suite_histogram(void);
int suite_content(void);
int suite_fingerprint(void);
int suite_compmodel(void);
int suite_reserve(void);
int suite_bitfilter(void);
int suite_pathwithin(void);
int suite_fullio(void);
int suite_u64map(void);
int suite_opttable(void);
int suite_access(void);
int suite_dupgen(void);
int suite_locality(void);
int suite_rate(void);
int suite_options(void);
int suite_space(void);
int suite_targets(void);
int suite_workloads(void);
int suite_jobfile(void);
int suite_engine_index(void);
int suite_engine_paths(void);
/* dedisgen (tests/unit/test_gen) */
int suite_gen_index(void);
int suite_gen_counts(void);
int suite_distcmp(void);
int suite_gen_options(void);
int suite_gen_measure(void);
int suite_gen_batchread(void);
int suite_gen_mapread(void);
int suite_gen_align(void);
/* dedisengine (tests/unit/test_engine) */
int suite_engine_index(void);

#endif
