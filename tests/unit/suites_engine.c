/* suites_engine.c - the list of reference-engine suites run by tests/unit/test_engine. */
#include "unit.h"

const unit_suite_fn unit_suites[] = {
	suite_engine_index, suite_engine_paths, NULL,
};
