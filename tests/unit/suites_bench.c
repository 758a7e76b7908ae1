/* suites_bench.c - the list of dedisbench suites run by tests/unit/test_bench. */
#include "unit.h"


const unit_suite_fn unit_suites[] = {
	suite_access, suite_dupgen, suite_locality, suite_rate, suite_options, suite_space, suite_targets, suite_workloads, suite_jobfile, NULL,
};
