/* suite.h - `dedisbench suite`: the DEDISbench paper's sequence of runs on one target (sequential
 * fill and read, uniform and NURand writes and reads at peak, then at 50 % and 80 % of each
 * peak), each a dedisbench run of its own whose --json lands in the output directory. */
#ifndef DEDIS_BENCH_SUITE_H
#define DEDIS_BENCH_SUITE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/errmsg.h"

/* Options that pass through to every phase; any other given is refused (the suite sets them). */
bool suite_option_applies(const char *name);

struct suite_job {
	const char *self;          /* this program (/proc/self/exe) */
	char **args;               /* the user's options, passed to every phase */
	int nargs;
	const char *dir;           /* --output-dir: NN-phase.json and NN-phase/ per phase */
	const char *at;            /* the same directory, held since the suite began: written beneath */
	bool quiet;
	volatile sig_atomic_t *stop;
};

/* Run every phase in order. 0 when all ran; -1 with why (a phase failed, or could not start). */
int suite_run(const struct suite_job *j, struct dd_err *err);

#endif
