/* safefile.c - temp-and-rename and fresh-file creation of outputs, with O_EXCL|O_NOFOLLOW so a
 * link or a file planted under the name is replaced, never followed or written through. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/pathwithin.h"
#include "lib/safefile.h"

int safefile_named_fd(const char *path)
{
	char fddir[PATH_MAX], cur[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], target[PATH_MAX];
	if (!realpath("/proc/self/fd", fddir) || snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return -1;
	/* Followed one link at a time: the last one, /proc/self/fd/N, leads to what the descriptor
	 * is open on, which says nothing about the name. */
	for (int hops = 0; hops < 40; hops++) {
		const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
		path_parent(cur, dir, sizeof dir);
		if (realpath(dir, real) && !strcmp(real, fddir)) {
			char *end;
			errno = 0;
			long n = strtol(base, &end, 10);
			return *base >= '0' && *base <= '9' && !*end && !errno && n <= INT_MAX ? (int)n : -1;
		}
		ssize_t len = readlink(cur, target, sizeof target - 1);
		if (len < 0)
			return -1;
		target[len] = 0;
		int w = target[0] == '/' ? snprintf(cur, sizeof cur, "%s", target)
					 : snprintf(cur, sizeof cur, "%s/%s", dir, target);
		if (w < 0 || w >= (int)sizeof cur)
			return -1;
	}
	return -1;
}

bool safefile_in_place(const char *path)
{
	struct stat st;
	if (safefile_named_fd(path) >= 0)
		return true;
	return stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

int safefile_open_in_place(const char *path)
{
	int n = safefile_named_fd(path);
	if (n < 0)
		return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fstat(n, &st))
		return -1;
	if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EPERM;
		return -1;
	}
	/* what this process's stdio holds for the descriptor goes before what is written to it */
	if (n == STDOUT_FILENO)
		fflush(stdout);
	else if (n == STDERR_FILENO)
		fflush(stderr);
	return fcntl(n, F_DUPFD_CLOEXEC, 0);
}

const char *safefile_refused(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return NULL;
	return S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket" : NULL;
}

int safefile_open(struct safefile *s, const char *path)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	struct stat st;
	/* A character device or FIFO (also through links: /dev/stdout) is written in place: renaming
	 * a file over it would replace the node; so is a descriptor by name, whose link a rename
	 * would replace. Anything else that is there is replaced, except a directory; a block device
	 * is never a report's destination. (A descriptor by name that is closed does not stat, but
	 * is still no name to replace.) */
	bool named = safefile_named_fd(path) >= 0;
	if (named || stat(path, &st) == 0) {
		if (!named && S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (named || safefile_in_place(path)) {
			s->fd = safefile_open_in_place(path);
			if (s->fd < 0)
				return -1;
			if (!(s->path = strdup(path))) {
				close(s->fd);
				s->fd = -1;
				errno = ENOMEM;
				return -1;
			}
			return 0;
		}
		if (safefile_refused(path)) {
			errno = EPERM;
			return -1;
		}
	}
	size_t len = strlen(path) + 32;
	s->path = strdup(path);
	s->tmp = malloc(len);
	if (!s->path || !s->tmp) {
		safefile_abort(s);
		errno = ENOMEM;
		return -1;
	}
	snprintf(s->tmp, len, "%s.tmp.%ld", path, (long)getpid());
	s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		int e = errno;
		free(s->tmp);
		s->tmp = NULL; /* not ours to remove */
		safefile_abort(s);
		errno = e;
		return -1;
	}
	return 0;
}

FILE *safefile_stream(struct safefile *s)
{
	FILE *f = fdopen(s->fd, "w");
	if (f)
		s->fd = -1; /* fclose closes it */
	return f;
}

/* Best effort: makes the rename itself durable. */
static void sync_parent(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

int safefile_commit(struct safefile *s, bool sync)
{
	int rc = 0;
	if (s->fd >= 0) {
		if (sync && s->tmp && fsync(s->fd))
			rc = -1;
		int e = errno;
		if (close(s->fd) && !rc)
			rc = -1;
		else
			errno = e;
		s->fd = -1;
	} else if (sync && s->tmp) { /* written through a stream, already closed */
		int fd = open(s->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			rc = -1;
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
	}
	if (!rc && s->tmp) {
		if (rename(s->tmp, s->path))
			rc = -1;
		else if (sync)
			sync_parent(s->path);
	}
	int e = errno;
	if (rc || !s->tmp)
		safefile_abort(s);
	else {
		free(s->tmp);
		s->tmp = NULL;
		safefile_abort(s);
	}
	errno = e;
	return rc;
}

void safefile_abort(struct safefile *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->tmp)
		unlink(s->tmp);
	free(s->tmp);
	free(s->path);
	s->tmp = s->path = NULL;
	s->fd = -1;
}

int safefile_fresh(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (unlink(path) && errno != ENOENT)
			return -1;
	}
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

int safedir_hold(struct safedir *d, const char *dir, char *via, size_t len)
{
	d->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		return -1;
	if (snprintf(via, len, "/proc/%ld/fd/%d", (long)getpid(), d->fd) >= (int)len) {
		safedir_release(d);
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int safedir_hold_parent(struct safedir *d, const char *path, char *via, size_t len)
{
	d->fd = -1;
	if (safefile_in_place(path)) {
		if (snprintf(via, len, "%s", path) >= (int)len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	char dir[PATH_MAX];
	path_parent(path, dir, sizeof dir);
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	if (safedir_hold(d, dir, via, len))
		return -1;
	size_t n = strlen(via);
	if (snprintf(via + n, len - n, "/%s", base) >= (int)(len - n)) {
		safedir_release(d);
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

void safedir_release(struct safedir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
