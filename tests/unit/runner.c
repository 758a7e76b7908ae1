/* runner.c - the CUnit main shared by every unit-test binary: registers the area's suites,
 * runs them verbosely, exits non-zero when any assertion failed. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <CUnit/Basic.h>
#include "unit.h"

int unit_add_suite(const char *name, const struct unit_test *tests)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);
	if (!s)
		return -1;
	for (; tests->name; tests++)
		if (!CU_add_test(s, tests->name, tests->fn))
			return -1;
	return 0;
}

size_t unit_resident_pages(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, in = 0;
	unsigned char *v = malloc(n);
	if (!v || mincore((void *)p, len, v)) {
		free(v);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (const unit_suite_fn *f = unit_suites; *f; f++) {
		if ((*f)() != 0) {
			fprintf(stderr, "cannot register a suite: %s\n", CU_get_error_msg());
			CU_cleanup_registry();
			return 2;
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	unsigned run = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (run == 0) {
		fprintf(stderr, "no test ran\n");
		return 1;
	}
	return failed ? 1 : 0;
}
