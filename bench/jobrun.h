/* jobrun.h - a job file's jobs run: each in a process of its own, a group's at once and the
 * groups in order; their summaries printed one job after another, their JSON gathered into one. */
#ifndef DEDIS_BENCH_JOBRUN_H
#define DEDIS_BENCH_JOBRUN_H

#include <signal.h>
#include <stdio.h>
#include "bench/jobfile.h"

/* Run one job in this process, as dedisbench runs its options (it takes cli->o); the exit
 * status. */
typedef int jobrun_fn(struct bench_cli *cli);

/* Run jf's jobs with run, each in a child process whose standard output (the job's summary) and
 * error are kept and printed to out and errs, the error's lines naming the job, once its group
 * ended. A group starts when every job before it ended (stonewall); after a group with a job
 * that did not exit 0, or *stop set (the caller's handler of SIGINT, SIGTERM, SIGHUP: passed on
 * to the running jobs as SIGTERM), the jobs after it are not run. --json (jf->json): one document, {tool, job_file, status, jobs: [
 * {name, group, started, ended, then the job's own JSON keys}]}. Returns the exit status: the
 * highest of the jobs' (2 a job's bad input, 1 a failure), 1 when a job could not start or the
 * JSON not be written. */
int jobrun_all(struct jobfile *jf, jobrun_fn *run, FILE *out, FILE *errs, volatile sig_atomic_t *stop);

#endif
