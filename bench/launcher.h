/* launcher.h - runs a configured benchmark: forks the workers, holds them at a start barrier,
 * watches time, signals and failures, samples the time series, and collects the results. */
#ifndef DEDIS_BENCH_LAUNCHER_H
#define DEDIS_BENCH_LAUNCHER_H

#include "config.h"
#include "results.h"

/* Returns 0 when the run happened (r filled; r->failed / r->interrupted tell how it ended),
 * -1 when it could not start (err says why). The target must have been prepared. */
int launcher_run(const struct bench_config *c, struct run_result *r, char *err, size_t errlen);

#endif
