/* plot.c - locating the plot scripts and gnuplot, and running one script to completion; the
 * scripts take every path as an argument, so they also work by hand. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "plot.h"

extern char **environ;

int plot_script(const char *name, char *path, size_t len)
{
	const char *dirs[] = {getenv("DEDIS_PLOTS_DIR"), DEDIS_SRCDIR "/plots", DEDIS_DATADIR "/plots"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i])
			continue;
		int n = snprintf(path, len, "%s/%s", dirs[i], name);
		if (n > 0 && (size_t)n < len && access(path, R_OK) == 0)
			return 0;
	}
	return -1;
}

bool plot_gnuplot_available(void)
{
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/bin:/bin";
	while (*p) {
		size_t n = strcspn(p, ":");
		char buf[4096];
		if (n && n < sizeof buf - 16) {
			snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, p);
			if (access(buf, X_OK) == 0)
				return true;
		}
		p += n + (p[n] == ':');
	}
	return false;
}

int plot_render(const char *name, const char *const *args, size_t nargs, char *why, size_t whylen)
{
	char script[4096];
	if (plot_script(name, script, sizeof script)) {
		snprintf(why, whylen, "plot script %s not found (set DEDIS_PLOTS_DIR)", name);
		return -1;
	}
	char **argv = calloc(nargs + 4, sizeof *argv);
	if (!argv) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	argv[0] = "gnuplot";
	argv[1] = "-c";
	argv[2] = script;
	for (size_t i = 0; i < nargs; i++)
		argv[3 + i] = (char *)args[i];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	if (e) {
		snprintf(why, whylen, "cannot run gnuplot: %s (apt-get install gnuplot-nox)", strerror(e));
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, whylen, "waiting for gnuplot: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, whylen, "gnuplot failed on %s (status %d)", name, status);
		return -1;
	}
	return 0;
}
