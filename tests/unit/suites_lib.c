/* suites_lib.c - the list of libdedis suites run by tests/unit/test_lib. */
#include "unit.h"


const unit_suite_fn unit_suites[] = {
	suite_rng, suite_units, suite_distfile, suite_histogram, suite_content, suite_fingerprint, suite_compmodel, suite_reserve, suite_bitfilter, suite_pathwithin, suite_fullio, suite_u64map, suite_opttable, NULL,
};
