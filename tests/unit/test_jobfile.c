/* test_jobfile.c - job files of several jobs: which files are one run as before, [global] under
 * each job's keys under the command line, stonewall groups, --output-dir per job, the refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/jobfile.h"
#include "unit.h"

static struct jobfile jf; /* large: not on the stack */

/* Parse text as the job file "jobs.ini", with extra command-line options (NULL-terminated). */
static int parse_with(const char *text, const char *const *extra, struct dd_err *err)
{
	char *argv[16] = {"dedisbench", "--config", "jobs.ini"};
	int argc = 3;
	for (int i = 0; extra && extra[i]; i++)
		argv[argc++] = (char *)extra[i];
	argv[argc] = NULL;
	return jobfile_parse_text(text, "jobs.ini", argc, argv, &jf, err);
}

static int parse(const char *text, struct dd_err *err)
{
	return parse_with(text, NULL, err);
}

static void one_run_files_stay_as_before(void)
{
	static const char *const plain[] = {
		"[execution]\nnprocs = 2\n[results]\ntempfilespath = /tmp/x\n[dedisbench]\ntime = 1s\n",
		"[d]\ntarget = null\n",
		"target = null\nprocs = 2\n",
		"[execution]\nnprocs = 2\n[execution]\nnprocs = 3\n", /* (options_parse refuses it, as before) */
		"[dedisbench]\ntarget = null\n[execution]\nnprocs = 2\n[dedisbench]\ntime = 1s\n", /* one section twice */
		NULL,
	};
	struct dd_err err;
	for (int i = 0; plain[i]; i++) {
		CU_ASSERT_EQUAL(parse(plain[i], &err), 0);
		CU_ASSERT_EQUAL(jf.njobs, 0);
		jobfile_free(&jf);
	}
}

static const char suite_text[] = "; a job file\n"
				 "[global]\n"
				 "procs = 2\n"
				 "block-size = 8KiB\n"
				 "output-dir = out\n"
				 "\n"
				 "[fill]\n"
				 "target = /tmp/t1\n"
				 "[other]\n"
				 "target = /tmp/t2\n"
				 "procs = 3\n"
				 "output-dir = mine\n"
				 "[reread]\n"
				 "  stonewall\n"
				 "target = /tmp/t1\n"
				 "mode = read\n";

static void global_jobs_groups_and_outputs(void)
{
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(parse(suite_text, &err), 1);
	CU_ASSERT_EQUAL_FATAL(jf.njobs, 3);
	CU_ASSERT_EQUAL(jf.ngroups, 2);
	static const char *const names[] = {"fill", "other", "reread"};
	static const unsigned groups[] = {1, 1, 2}, lines[] = {7, 9, 13};
	static const uint64_t procs[] = {2, 3, 2};
	static const char *const dirs[] = {"out/fill", "mine", "out/reread"};
	for (unsigned i = 0; i < 3; i++) {
		const struct jobfile_job *j = &jf.jobs[i];
		CU_ASSERT_STRING_EQUAL(j->name, names[i]);
		CU_ASSERT_EQUAL(j->group, groups[i]);
		CU_ASSERT_EQUAL(j->line, (int)lines[i]);
		CU_ASSERT_EQUAL(j->cli.o.procs, procs[i]);            /* [global], or the job's own */
		CU_ASSERT_EQUAL(j->cli.o.block_size, 8192);          /* [global] */
		CU_ASSERT_STRING_EQUAL(j->cli.o.output_dir, dirs[i]); /* [global]'s: DIR/NAME; its own as given */
	}
	CU_ASSERT_EQUAL(jf.jobs[2].cli.o.mode, MODE_READ);
	CU_ASSERT_EQUAL(jf.jobs[0].cli.o.mode, MODE_WRITE);
	CU_ASSERT_PTR_NULL(jf.json);
	jobfile_free(&jf);
}

static void command_line_wins(void)
{
	struct dd_err err;
	static const char *const extra[] = {"--procs", "5", "--output-dir", "cli", "--json", "all.json", NULL};
	CU_ASSERT_EQUAL_FATAL(parse_with(suite_text, extra, &err), 1);
	for (unsigned i = 0; i < jf.njobs; i++) {
		char dir[80];
		snprintf(dir, sizeof dir, "cli/%s", jf.jobs[i].name);
		CU_ASSERT_EQUAL(jf.jobs[i].cli.o.procs, 5);
		CU_ASSERT_STRING_EQUAL(jf.jobs[i].cli.o.output_dir, dir);
	}
	CU_ASSERT_STRING_EQUAL(jf.json, "all.json");
	jobfile_free(&jf);
}

static void stonewall_in_global_and_global_alone(void)
{
	struct dd_err err;
	CU_ASSERT_EQUAL_FATAL(parse("[global]\nstonewall = yes\n[a]\ntarget = null\n[b]\ntarget = null\n[c]\n"
				    "stonewall = no\ntarget = null\n",
				    &err),
			      1);
	CU_ASSERT_EQUAL(jf.jobs[0].group, 1);
	CU_ASSERT_EQUAL(jf.jobs[1].group, 2);
	CU_ASSERT_EQUAL(jf.jobs[2].group, 2); /* its own line wins over [global]'s */
	jobfile_free(&jf);
	CU_ASSERT_EQUAL_FATAL(parse("[global]\ntarget = null\nprocs = 4\n", &err), 1);
	CU_ASSERT_EQUAL(jf.njobs, 1);
	CU_ASSERT_EQUAL(jf.jobs[0].cli.o.procs, 4);
	jobfile_free(&jf);
	/* a job of its own may set what [global] set: it wins (fio's way) */
	CU_ASSERT_EQUAL_FATAL(parse("[global]\ntarget = null\nprocs = 4\n[a]\nprocs = 6\n", &err), 1);
	CU_ASSERT_EQUAL(jf.jobs[0].cli.o.procs, 6);
	jobfile_free(&jf);
	/* the load: a job's peak replaces [global]'s rate, a job's rate [global]'s peak */
	CU_ASSERT_EQUAL_FATAL(parse("[global]\ntarget = null\nrate = 1000\n[a]\npeak = 1\n[b]\n", &err), 1);
	CU_ASSERT(jf.jobs[0].cli.o.peak && jf.jobs[0].cli.o.rate == 0);
	CU_ASSERT(!jf.jobs[1].cli.o.peak && jf.jobs[1].cli.o.rate == 1000);
	jobfile_free(&jf);
	CU_ASSERT_EQUAL_FATAL(parse("[global]\ntarget = null\npeak = 1\n[a]\nrate = 500\n[b]\n", &err), 1);
	CU_ASSERT(!jf.jobs[0].cli.o.peak && jf.jobs[0].cli.o.rate == 500);
	CU_ASSERT(jf.jobs[1].cli.o.peak);
	jobfile_free(&jf);
}

static void refusals_name_file_and_line(void)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{"[global]\ntarget = null\n[a]\n[b]\n\nbogus = 1\n", "jobs.ini:6: unknown key 'bogus' in [b]"},
		{"[a]\ntarget = null\n[b]\ntarget = null\n[a]\ntarget = null\n", "jobs.ini:5: a second job named 'a' (the first is at line 1)"},
		{"[a]\ntarget = null\n[b]\nprocs = 2\n", "jobs.ini:3: job 'b' has no target"},
		{"[a]\ntarget = /tmp/x\n[b]\ntarget = /tmp/x/\n", "jobs.ini:3: job 'b' would run beside job 'a' (line 1) on the same target"},
		{"[a]\ntarget = engine:/tmp/v\n[b]\ntarget = engine:/tmp/v,index=bdb\n", "jobs.ini:3: job 'b' would run beside job 'a'"},
		{"[global]\ntarget = null\n[a]\n[b]\n\njson = x.json\n", "jobs.ini:6: json in [b]"},
		{"[global]\ntarget = null\n[a]\n[b c]\n", "jobs.ini:4: job name 'b c'"},
		{"[global]\ntarget = null\n[a]\n[b]\nstonewall = maybe\n", "jobs.ini:5: stonewall = 'maybe'"},
		{"[global]\ntarget = null\ndist-report = d.txt\n[a]\n[b]\n", "jobs.ini:3: dist-report applies to one job"},
		{"[global]\ntarget = null\n[a]\n[b]\nprocs = lots\n", "jobs.ini:5: --procs: 'lots'"},
		{NULL, NULL},
	};
	for (int i = 0; bad[i].text; i++) {
		struct dd_err err = {.resource = false};
		CU_ASSERT_EQUAL(parse(bad[i].text, &err), -1);
		if (!strstr(err.msg, bad[i].says))
			fprintf(stderr, "\n  case %d said: %s\n", i, err.msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
		CU_ASSERT_FALSE(err.resource);
		jobfile_free(&jf);
	}
}

static void shared_targets_allowed_where_they_may_be(void)
{
	struct dd_err err;
	/* one target in two groups (stonewall), and null (stores nothing) beside itself */
	CU_ASSERT_EQUAL(parse("[a]\ntarget = /tmp/x\n[b]\nstonewall\ntarget = /tmp/x\n", &err), 1);
	jobfile_free(&jf);
	CU_ASSERT_EQUAL(parse("[a]\ntarget = null\n[b]\ntarget = null\n", &err), 1);
	CU_ASSERT_EQUAL(jf.ngroups, 1);
	jobfile_free(&jf);
}

int suite_jobfile(void)
{
	static const struct unit_test tests[] = {
		{"files of one run stay options_parse's", one_run_files_stay_as_before},
		{"[global], jobs, groups, --output-dir per job", global_jobs_groups_and_outputs},
		{"the command line wins over every job", command_line_wins},
		{"stonewall in [global]; [global] alone; job over global", stonewall_in_global_and_global_alone},
		{"refusals name the file and the line", refusals_name_file_and_line},
		{"a target shared across groups, null beside itself", shared_targets_allowed_where_they_may_be},
		{NULL, NULL},
	};
	return unit_add_suite("jobfile", tests);
}
