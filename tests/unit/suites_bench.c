/* suites_bench.c - the list of dedisbench suites run by tests/unit/test_bench. */
#include "unit.h"

int suite_access(void);
int suite_dupgen(void);
int suite_rate(void);
int suite_options(void);

const unit_suite_fn unit_suites[] = {
	suite_access, suite_dupgen, suite_rate, suite_options, NULL,
};
