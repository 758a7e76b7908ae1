/* suites_gen.c - the list of dedisgen suites run by tests/unit/test_gen. */
#include "unit.h"

const unit_suite_fn unit_suites[] = {
	suite_gen_index, suite_gen_counts, suite_distcmp, suite_gen_options, suite_gen_measure, suite_gen_batchread, suite_gen_mapread, suite_gen_align, NULL,
};
