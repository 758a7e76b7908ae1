/* safefile.c - temp-and-rename and fresh-file creation of outputs, with O_EXCL|O_NOFOLLOW so a
 * link or a file planted under the name is replaced, never followed or written through. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "safefile.h"

bool safefile_in_place(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

int safefile_open(struct safefile *s, const char *path)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	struct stat st;
	/* A character device or FIFO (also through links: /dev/stdout) is written in place: renaming
	 * a file over it would replace the node. Anything else that is there is replaced, except a
	 * directory; a block device is never a report's destination. */
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (safefile_in_place(path)) {
			s->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
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
		if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
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
