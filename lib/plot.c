/* plot.c - locating the plot scripts and gnuplot, and running one script to completion; the
 * scripts take every path as an argument, so they also work by hand. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/plot.h"

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

/* A PNG starts with its signature and ends with its IEND chunk; a write cut short by a full file
 * system, which gnuplot does not report, keeps neither end. */
static int png_whole(const char *png, const char *shown, struct dd_err *err)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	unsigned char head[8], tail[12];
	struct stat st = {0};
	int fd = open(png, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "cannot write %s: %s", shown, strerror(errno));
	bool whole = fstat(fd, &st) == 0 && st.st_size >= (off_t)(sizeof sig + sizeof iend) &&
		     pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
		     pread(fd, tail, sizeof tail, st.st_size - (off_t)sizeof tail) == (ssize_t)sizeof tail &&
		     !memcmp(head, sig, sizeof sig) && !memcmp(tail, iend, sizeof iend);
	close(fd);
	if (!whole)
		return err_fail(err, -1, "cannot write %s: gnuplot wrote %lld bytes, not a whole PNG (a full file system?)",
				shown, (long long)st.st_size);
	return 0;
}

int plot_render(const char *name, const char *const *args, size_t nargs, const char *png, const char *shown,
		struct dd_err *err)
{
	char script[4096];
	if (plot_script(name, script, sizeof script))
		return err_fail(err, -1, "plot script %s not found (set DEDIS_PLOTS_DIR)", name);
	char **argv = calloc(nargs + 4, sizeof *argv);
	if (!argv)
		return err_fail(err, -1, "out of memory");
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
	if (e)
		return err_fail(err, -1, "cannot run gnuplot: %s (apt-get install gnuplot-nox)", strerror(e));
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_fail_errno(err, -1, errno, "waiting for gnuplot");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_fail(err, -1, "gnuplot failed on %s (status %d)", name, status);
	return png_whole(png, shown, err);
}
