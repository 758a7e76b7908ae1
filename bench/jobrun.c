/* jobrun.c - a job file's jobs, each a dedisbench run in a child process (its own launcher and
 * workers): a group started at once, waited for, its outputs shown and its JSON kept, then the next. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "bench/jobrun.h"
#include "lib/report.h"
#include "lib/stopsignals.h"

#define EXIT_BAD_INPUT 2
#define EXIT_RUN_FAILED 1

struct job_proc {
	pid_t pid;          /* running: its process; 0 otherwise */
	int out_fd, err_fd; /* its standard output and error, kept */
	double started, ended; /* seconds since the epoch: forked, found ended */
	int status;         /* its exit status; -1: not run */
	char json[PATH_MAX]; /* where it writes its JSON (in the run's temporary directory), or "" */
};

static double now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: the stop signals back to their defaults (the job's run catches them its way),
 * its output kept, the job run; never returns. */
static void child_run(struct jobfile_job *j, const struct job_proc *p, jobrun_fn *run)
{
	sigset_t stops;
	sigemptyset(&stops);
	stop_signals_set(&stops);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&stops, sig) == 1)
			signal(sig, SIG_DFL);
	if (dup2(p->out_fd, STDOUT_FILENO) < 0 || dup2(p->err_fd, STDERR_FILENO) < 0)
		_exit(EXIT_RUN_FAILED);
	int rc = run(&j->cli);
	fflush(stdout);
	fflush(stderr);
	_exit(rc);
}

/* Job i started in a process of its own. 0, or -1 with errno. */
static int start_job(struct jobfile *jf, unsigned i, const char *tmpdir, jobrun_fn *run, struct job_proc *p)
{
	struct jobfile_job *j = &jf->jobs[i];
	if (tmpdir) {
		snprintf(p->json, sizeof p->json, "%s/%u.json", tmpdir, i);
		char *path = strdup(p->json);
		if (!path)
			return -1;
		free(j->cli.o.json);
		j->cli.o.json = path;
	}
	p->out_fd = memfd_create("dedisbench-job-stdout", MFD_CLOEXEC);
	p->err_fd = memfd_create("dedisbench-job-stderr", MFD_CLOEXEC);
	if (p->out_fd < 0 || p->err_fd < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	p->started = now_real();
	p->pid = fork();
	if (p->pid == 0)
		child_run(j, p, run);
	return p->pid < 0 ? -1 : 0;
}

/* Until the jobs [from, to) that run have ended; a stop passed on to them once. */
static void wait_group(struct job_proc *p, unsigned from, unsigned to, volatile sig_atomic_t *stop)
{
	unsigned live = 0;
	bool passed = false;
	for (unsigned i = from; i < to; i++)
		live += p[i].pid > 0;
	while (live) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0 && errno == EINTR) {
			for (unsigned i = from; i < to && *stop && !passed; i++)
				if (p[i].pid > 0)
					kill(p[i].pid, SIGTERM);
			passed = passed || *stop;
			continue;
		}
		if (pid < 0)
			break;
		for (unsigned i = from; i < to; i++)
			if (p[i].pid == pid) {
				p[i].ended = now_real();
				p[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_RUN_FAILED;
				p[i].pid = 0;
				live--;
			}
	}
}

/* What a memfd holds, as a string (NULL: out of memory; "" when it cannot be read). */
static char *kept_text(int fd)
{
	struct stat st;
	size_t n = fd >= 0 && fstat(fd, &st) == 0 ? (size_t)st.st_size : 0;
	char *text = malloc(n + 1);
	if (!text)
		return NULL;
	ssize_t got = n ? pread(fd, text, n, 0) : 0;
	text[got > 0 ? (size_t)got : 0] = 0;
	return text;
}

/* A job's error lines to errs, each naming the job; the last one's reason into last. */
static void relay_errors(FILE *errs, const char *name, const char *text, char *last, size_t len)
{
	static const char prefix[] = "dedisbench: ";
	while (*text) {
		size_t n = strcspn(text, "\n");
		const char *line = text;
		if (!strncmp(line, prefix, sizeof prefix - 1) && n >= sizeof prefix - 1) {
			line += sizeof prefix - 1;
			n -= sizeof prefix - 1;
		}
		if (n)
			fprintf(errs, "dedisbench: job %s: %.*s\n", name, (int)n, line);
		if (n)
			snprintf(last, len, "%.*s", (int)n, line);
		text = line + n + (line[n] == '\n');
	}
}

/* Job j's entry in the JSON: its name, group and times, then its own JSON's keys (or, without
 * one, its status and last error line). */
static json_t *job_entry(const struct jobfile_job *j, struct job_proc *p, const char *last_error)
{
	json_t *e = json_object();
	json_object_set_new(e, "name", json_string(j->name));
	json_object_set_new(e, "group", json_integer((json_int_t)j->group));
	if (p->status < 0) {
		json_object_set_new(e, "status", json_string("not run"));
		return e;
	}
	json_object_set_new(e, "started", json_real(p->started));
	json_object_set_new(e, "ended", json_real(p->ended));
	json_t *doc = p->json[0] ? json_load_file(p->json, 0, NULL) : NULL;
	if (json_is_object(doc)) {
		json_object_update(e, doc);
	} else {
		json_object_set_new(e, "status", json_string(p->status == EXIT_BAD_INPUT ? "refused" : "failed"));
		if (last_error[0])
			json_object_set_new(e, "error", json_string(last_error));
	}
	json_decref(doc);
	if (p->json[0])
		unlink(p->json);
	return e;
}

/* The group [from, to) ended: each job's summary (a header naming it first) and error lines, in
 * the file's order, and its JSON entry appended to entries (NULL: no --json). The highest exit
 * status of the group. */
static int show_group(const struct jobfile *jf, struct job_proc *p, unsigned from, unsigned to, FILE *out,
		      FILE *errs, json_t *entries)
{
	int worst = 0;
	for (unsigned i = from; i < to; i++) {
		const struct jobfile_job *j = &jf->jobs[i];
		char *summary = kept_text(p[i].out_fd), *errors = kept_text(p[i].err_fd), last[1024] = "";
		if (!j->cli.o.quiet) /* (--quiet: no summary, nor its header) */
			fprintf(out, "%s== job %s (group %u of %u) ==\n", i ? "\n" : "", j->name, j->group, jf->ngroups);
		if (summary)
			fputs(summary, out);
		fflush(out);
		if (errors)
			relay_errors(errs, j->name, errors, last, sizeof last);
		if (!summary || !errors)
			fprintf(errs, "dedisbench: job %s: its output: out of memory\n", j->name);
		free(summary);
		free(errors);
		if (entries)
			json_array_append_new(entries, job_entry(j, &p[i], last));
		worst = p[i].status > worst ? p[i].status : worst;
	}
	return worst;
}

/* The directories the jobs' --output-dir (DIR/NAME) go in, made. 0, or -1 after saying why. */
static int make_output_bases(const struct jobfile *jf, FILE *errs)
{
	for (unsigned i = 0; i < jf->njobs; i++) {
		const char *base = jf->jobs[i].output_base;
		if (base && mkdir(base, 0755) && errno != EEXIST) {
			fprintf(errs, "dedisbench: --output-dir %s: %s\n", base, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The one JSON of the job file written (and freed). 0, or EXIT_RUN_FAILED after saying why. */
static int write_json(const struct jobfile *jf, json_t *entries, bool stopped, int worst, FILE *errs)
{
	bool all_ran = true;
	size_t k;
	json_t *e;
	json_array_foreach(entries, k, e)
		all_ran = all_ran && strcmp(json_string_value(json_object_get(e, "status")), "not run");
	const char *status = stopped ? "interrupted" : worst || !all_ran ? "failed" : "ok";
	json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "tool", "dedisbench " PACKAGE_VERSION, "job_file", jf->path,
				"status", status, "jobs", entries);
	int rc = doc && report_write_atomic(doc, jf->json) == 0 ? 0 : EXIT_RUN_FAILED;
	if (rc)
		fprintf(errs, "dedisbench: cannot write %s: %s\n", jf->json, doc ? strerror(errno) : "out of memory");
	json_decref(doc);
	return rc;
}

/* Groups run in order until one ends badly or a stop comes; the highest exit status. */
static int run_groups(struct jobfile *jf, jobrun_fn *run, struct job_proc *p, const char *tmpdir, FILE *out,
		      FILE *errs, json_t *entries, volatile sig_atomic_t *stop)
{
	int worst = 0;
	unsigned i = 0;
	for (unsigned g = 1; g <= jf->ngroups && !worst && !*stop; g++) {
		unsigned from = i;
		for (; i < jf->njobs && jf->jobs[i].group == g; i++)
			if (start_job(jf, i, tmpdir, run, &p[i])) {
				fprintf(errs, "dedisbench: job %s: cannot start it: %s\n", jf->jobs[i].name, strerror(errno));
				p[i].pid = 0;
				p[i].status = EXIT_RUN_FAILED;
			}
		wait_group(p, from, i, stop);
		worst = show_group(jf, p, from, i, out, errs, entries);
	}
	for (; i < jf->njobs && entries; i++)
		json_array_append_new(entries, job_entry(&jf->jobs[i], &p[i], ""));
	return worst;
}

int jobrun_all(struct jobfile *jf, jobrun_fn *run, FILE *out, FILE *errs, volatile sig_atomic_t *stop)
{
	struct job_proc *p = calloc(jf->njobs, sizeof *p);
	char tmpdir[PATH_MAX] = "";
	const char *tmp = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/dedisbench-jobs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!p || (jf->json && !mkdtemp(tmpdir))) {
		fprintf(errs, "dedisbench: job file %s: %s\n", jf->path, p ? strerror(errno) : "out of memory");
		free(p);
		return EXIT_RUN_FAILED;
	}
	if (make_output_bases(jf, errs)) {
		free(p);
		if (jf->json)
			rmdir(tmpdir);
		return EXIT_BAD_INPUT;
	}
	for (unsigned i = 0; i < jf->njobs; i++) {
		p[i].status = -1;
		p[i].out_fd = p[i].err_fd = -1;
	}
	json_t *entries = jf->json ? json_array() : NULL;
	int worst = run_groups(jf, run, p, jf->json ? tmpdir : NULL, out, errs, entries, stop);
	if (entries) {
		int rc = write_json(jf, entries, *stop, worst, errs);
		worst = rc > worst ? rc : worst;
		rmdir(tmpdir);
	}
	for (unsigned i = 0; i < jf->njobs; i++) {
		if (p[i].out_fd >= 0)
			close(p[i].out_fd);
		if (p[i].err_fd >= 0)
			close(p[i].err_fd);
	}
	free(p);
	return worst;
}
