/* replay.h - `dedisbench replay TRACE`: a loaded block trace written to and read from the target
 * request by request, each MD5 as the same bytes, at the recorded pace scaled by --speed or as
 * fast as possible, with each operation's latency. */
#ifndef DEDIS_BENCH_REPLAY_H
#define DEDIS_BENCH_REPLAY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "lib/histogram.h"
#include "bench/ioengine/ioengine.h"
#include "bench/benchopts.h"
#include "bench/target/target.h"
#include "bench/report/results.h"
#include "bench/workload/trace.h"

struct replay_job {
	const struct trace *trace;
	const char *trace_path;
	const struct target *target;     /* probed and prepared */
	const struct ioengine_ops *engine; /* --ioengine's, or the target's own (engine:, null) */
	const void *engine_opts;         /* its option values (io_ctx.opts) */
	uint64_t seed;                   /* the content's seed */
	double speed;                    /* 0: as fast as possible; else recorded gaps / speed */
	int open_flags;                  /* O_DIRECT / O_DSYNC from --sync */
	bool fsync_each;
	volatile sig_atomic_t *stop;     /* set by SIGINT / SIGTERM */
};

struct replay_result {
	uint64_t ops[2], bytes[2];       /* by enum io_dir */
	struct histogram lat[2], all;
	double seconds;                  /* first issue to last completion */
	double trace_seconds;            /* the trace's own span */
	uint64_t done;                   /* requests completed */
	uint64_t live_blocks, live_distinct; /* what the trace leaves (trace_live) */
	bool interrupted, failed;
	bool mismatch;                   /* the engine does not hold what the replay wrote (failure says) */
	char failure[512];
	/* A target that counts its holdings (an engine volume): what the requests done leave, against
	 * what it holds, as a run's engine check (only the engine's fields of engine are filled). */
	bool have_engine;
	struct run_result engine;
};

/* Options that mean something to a replay; any other given is refused (bad input). */
bool replay_option_applies(const char *name);

/* Run the job: 0 when it ran (r says how it ended: failed, mismatch, interrupted), -1 when it could
 * not start (err). */
int replay_run(const struct replay_job *j, struct replay_result *r, struct dd_err *err);

void replay_print(FILE *f, const struct replay_job *j, const struct bench_options *o, const struct replay_result *r);
json_t *replay_json(const struct replay_job *j, const struct bench_options *o, const struct replay_result *r);

#endif
