/* jobfile.h - job files of several jobs, as fio's: [global] keys for every job, a section per job,
 * stonewall starting a group that waits for the jobs before it; read and checked whole first. */
#ifndef DEDIS_BENCH_JOBFILE_H
#define DEDIS_BENCH_JOBFILE_H

#include <limits.h>
#include <stdbool.h>
#include "bench/benchopts.h"
#include "lib/errmsg.h"

#define JOBFILE_MAX_JOBS 64
#define JOBFILE_NAME_MAX 64

struct jobfile_job {
	char name[JOBFILE_NAME_MAX]; /* its section's name: its JSON entry, its --output-dir subdirectory */
	int line;                    /* its section header's line */
	unsigned group;              /* from 1: the jobs of a group run at once, groups one after another */
	bool stonewall;              /* it starts a group (stonewall in its section or [global]) */
	struct bench_cli cli;        /* defaults, then [global], its section, the command line */
	bool cli_taken;              /* a run took cli.o (config_build owns it): not freed here */
	char *output_base;           /* --output-dir from [global] or the command line: the job writes
				      * output_base/NAME (jobrun makes output_base); NULL otherwise */
};

struct jobfile {
	char path[PATH_MAX];
	unsigned njobs, ngroups;
	struct jobfile_job jobs[JOBFILE_MAX_JOBS];
	char *json;                  /* --json (the command line's or [global]'s): every job's results */
};

/* Which sections apply to every job: [global], DEDISbench's [execution], [results] and
 * [structural], and the keys before any section. Every other section is a job. */
bool jobfile_global_section(const char *name);

/* The command line's --config, when it is a job file this module runs: one with a [global]
 * section, a stonewall or two job sections or more. Returns 0 when it is not (no --config, an
 * unreadable one, a file of one run as before, --help...): options_parse reads it as it always
 * did. 1: jf holds its jobs (at least one), each one's options parsed and checked with the
 * command line's over them. -1: bad input, one line in err ("config file F:L: why"): an unknown
 * key, a bad value, a job name twice or unfit for a file name, a job without a target, jobs of
 * one group on one target, json in a job's section; resource set when memory ran out. */
int jobfile_load(int argc, char **argv, struct jobfile *jf, struct dd_err *err);
/* For a program that runs one job (dedisbench-mpi): -1 with err when argv's --config is a job
 * file of several jobs, or one refused as such; else 0. */
int jobfile_refuse_several(int argc, char **argv, const char *prog, struct dd_err *err);
/* The options of the jobs not taken by a run, and the JSON path. */
void jobfile_free(struct jobfile *jf);

/* The same checks on a job file's text (name: the file's name in messages), options as the
 * file and this argv give them (tests: argv {"dedisbench", "--config", name}). As jobfile_load. */
int jobfile_parse_text(const char *text, const char *name, int argc, char **argv, struct jobfile *jf,
		       struct dd_err *err);

#endif
