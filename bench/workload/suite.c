/* suite.c - run the paper's phases one after the other as child dedisbench processes, each on a
 * target of its own making (read phases populate first, as DEDISbench did; nothing is kept), and
 * derive the nominal rates from the measured peaks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "lib/errmsg.h"
#include "bench/workload/suite.h"

bool suite_option_applies(const char *name)
{
	static const char *const ok[] = {"target", "procs", "file-size", "block-size", "dist", "content", "compress",
					 "layout", "seed", "nurand-a", "time", "sync", "ioengine", "iodepth", "sqpoll",
					 "hipri", "hints", "force", "output-dir", "plot", "latency-log", "quiet", "config",
					 "space-cmd", NULL};
	for (int i = 0; ok[i]; i++)
		if (!strcmp(ok[i], name))
			return true;
	return false;
}

struct phase {
	const char *name;
	const char *mode, *access;
	int peak_of;   /* nominal: the index of the peak phase whose IOPS it takes a share of; -1 peak */
	double share;
};

static const struct phase phases[] = {
	{"seq-fill", "write", "seq", -1, 0},         {"seq-read", "read", "seq", -1, 0},
	{"uniform-write", "write", "uniform", -1, 0}, {"uniform-read", "read", "uniform", -1, 0},
	{"nurand-write", "write", "nurand", -1, 0},   {"nurand-read", "read", "nurand", -1, 0},
	{"uniform-write-50", "write", "uniform", 2, 0.5}, {"uniform-write-80", "write", "uniform", 2, 0.8},
	{"uniform-read-50", "read", "uniform", 3, 0.5},   {"uniform-read-80", "read", "uniform", 3, 0.8},
	{"nurand-write-50", "write", "nurand", 4, 0.5},   {"nurand-write-80", "write", "nurand", 4, 0.8},
	{"nurand-read-50", "read", "nurand", 5, 0.5},     {"nurand-read-80", "read", "nurand", 5, 0.8},
};
#define NPHASES (sizeof phases / sizeof phases[0])

static double iops_of(const char *json)
{
	json_t *doc = json_load_file(json, 0, NULL);
	json_t *v = json_object_get(json_object_get(doc, "totals"), "iops");
	double iops = json_is_number(v) ? json_number_value(v) : 0;
	json_decref(doc);
	return iops;
}

int suite_run(const struct suite_job *j, struct dd_err *err)
{
	double peak[NPHASES] = {0};
	for (size_t p = 0; p < NPHASES; p++) {
		if (*j->stop)
			return err_fail(err, -1, "interrupted before phase %02zu-%s", p + 1, phases[p].name);
		char json[4200], out[4200], rate[32];
		snprintf(json, sizeof json, "%s/%02zu-%s.json", j->at, p + 1, phases[p].name);
		snprintf(out, sizeof out, "%s/%02zu-%s", j->at, p + 1, phases[p].name);
		const struct phase *ph = &phases[p];
		if (ph->peak_of >= 0) {
			double r = peak[ph->peak_of] * ph->share;
			if (r < 1)
				return err_fail(err, -1, "phase %02d-%s measured no throughput to take %.0f %% of",
					ph->peak_of + 1, phases[ph->peak_of].name, 100 * ph->share);
			snprintf(rate, sizeof rate, "%.0f", r);
		}
		/* the user's options first: the phase's own come later and win */
		const char *argv[64 + 24];
		int n = 0;
		argv[n++] = "dedisbench";
		for (int i = 0; i < j->nargs && n < 64; i++)
			argv[n++] = j->args[i];
		/* Independent phases: each starts from an empty target (its files or volume removed after
		 * it), so each measures its own space; a read phase populates the target first. */
		const char *mine[] = {"--mode", ph->mode, "--access", ph->access, "--json", json, "--output-dir", out,
				      "--quiet"};
		for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
			argv[n++] = mine[i];
		if (ph->peak_of >= 0) {
			argv[n++] = "--rate";
			argv[n++] = rate;
		}
		argv[n] = NULL;
		if (!j->quiet) {
			printf("suite: %02zu-%s%s%s ...", p + 1, ph->name, ph->peak_of >= 0 ? " at " : "",
			       ph->peak_of >= 0 ? rate : "");
			fflush(stdout);
		}
		pid_t pid = fork();
		if (pid < 0)
			return err_fail_errno(err, -1, errno, "cannot start phase %s", ph->name);
		if (pid == 0) {
			execv(j->self, (char *const *)argv);
			fprintf(stderr, "dedisbench: suite: cannot run %s: %s\n", j->self, strerror(errno));
			_exit(127);
		}
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			if (!j->quiet)
				putchar('\n');
			return err_fail(err, -1, "phase %02zu-%s %s %d (its message is above); the phases before it are in %s",
					p + 1, ph->name, WIFEXITED(st) ? "exited" : "was killed by signal",
					WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), j->dir);
		}
		peak[p] = iops_of(json);
		if (!j->quiet)
			printf(" %.0f IOPS\n", peak[p]);
	}
	return 0;
}
