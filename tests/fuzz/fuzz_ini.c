/* fuzz_ini.c - dedisbench's INI job file (bench/benchopts.c: libinih, the option table, the
 * original DEDISbench keys; bench/jobfile.c: several jobs) on any text: a one-line error naming
 * the file and line, or options all within range. */
#include <stdlib.h>
#include <string.h>
#include "bench/jobfile.h"
#include "options_check.h"

static struct jobfile jobs; /* large: not on the stack */

/* The same text as a job file of several jobs: refused naming the file and line, or every job's
 * options within range, named, in groups that only grow. */
static void check_jobs(const char *text)
{
	char *argv[] = {"dedisbench", "--config", "fuzz.ini", NULL};
	struct dd_err err = {.resource = false};
	int rc = jobfile_parse_text(text, "fuzz.ini", 3, argv, &jobs, &err);
	if (rc < 0) {
		options_check_error(&err);
		if (strncmp(err.msg, "config file fuzz.ini", 20))
			harness_fail("a job file's error does not name the file: %.80s", err.msg);
	}
	for (unsigned i = 0; rc > 0 && i < jobs.njobs; i++) {
		options_check_values(&jobs.jobs[i].cli);
		if (!jobs.jobs[i].name[0] || jobs.jobs[i].group < 1 || (i && jobs.jobs[i].group < jobs.jobs[i - 1].group))
			harness_fail("job %u: name '%s', group %u", i, jobs.jobs[i].name, jobs.jobs[i].group);
	}
	jobfile_free(&jobs);
}

int harness_setup(void)
{
	return 0;
}

void harness_one(const uint8_t *data, size_t len)
{
	/* A job file with a NUL byte is refused before parsing (options_load_ini); the parser
	 * sees text up to the first one. */
	char *text = harness_text(data, len);
	struct bench_cli cli;
	struct dd_err err;
	options_defaults(&cli);
	if (options_parse_ini_text(&cli, text, "fuzz.ini", &err)) {
		options_check_error(&err);
		if (strncmp(err.msg, "config file fuzz.ini:", 21))
			harness_fail("the error does not name the file and line: %.80s", err.msg);
	} else {
		options_check_values(&cli);
	}
	options_free(&cli.o);
	check_jobs(text);
	free(text);
}
