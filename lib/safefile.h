/* safefile.h - how the tools create the files they write: never through a link, never into an
 * existing file. A temp file beside the final name (O_EXCL|O_NOFOLLOW) renamed over it on commit,
 * or a fresh file under its final name; in place only through to a character device or a FIFO
 * (/dev/null, /dev/stdout, a pipe), whose node a rename would replace. */
#ifndef DEDIS_SAFEFILE_H
#define DEDIS_SAFEFILE_H

#include <stdbool.h>
#include <stdio.h>

struct safefile {
	char *path;     /* the final name */
	char *tmp;      /* the temp file renamed over it; NULL when written in place */
	int fd;
};

/* The descriptor of this process that path names through /proc/self/fd (/dev/stdout, /dev/fd/3,
 * a link to one), whatever it is open on; else -1. */
int safefile_named_fd(const char *path);
/* Is path written in place rather than replaced: an existing character device or FIFO (also
 * through a link: /dev/stdout on a terminal), or one of this process's descriptors by name
 * (/dev/stdout redirected to a file: renaming over it would replace the link /dev/stdout, and not
 * as root would fail)? The rule safefile_open follows, for a caller deciding whether two outputs,
 * or an output and an input, may share a name. */
bool safefile_in_place(const char *path);
/* What an existing path is that is never an output ("block device", "socket"), or NULL: an output
 * is replaced, never written through, so a planted link to a disk cannot become a write to it.
 * safefile_open refuses it (EPERM); callers ask first, to refuse it before any work. */
const char *safefile_refused(const char *path);
/* A descriptor writing to a path safefile_in_place accepts: a duplicate of the descriptor it
 * names (its offset shared: what was written to it before is kept), else the node opened. -1
 * with errno (EISDIR, or EPERM for a named descriptor on a block device). */
int safefile_open_in_place(const char *path);
/* Opens path for writing. 0, or -1 with errno: EISDIR for a directory, EPERM for a block device
 * or a socket (never a report's destination). */
int safefile_open(struct safefile *s, const char *path);
/* (fsync when `sync`,) close, rename over the final name. 0, or -1 with errno; the temp file is
 * gone either way. */
int safefile_commit(struct safefile *s, bool sync);
/* Close and remove the temp file (safe on a failed or committed one). */
void safefile_abort(struct safefile *s);
/* A stream on s->fd (fclose it before safefile_commit; the descriptor is then closed). */
FILE *safefile_stream(struct safefile *s);

/* A directory resolved once, when a run starts, and held open to its end: what is written at the
 * end goes beneath it by a name that leads only there, "/proc/PID/fd/N/NAME" (PID this process,
 * so its children and gnuplot reach it too), and a directory swapped meanwhile for a link to
 * another (a parent another user can write) is never followed. */
struct safedir {
	int fd; /* -1: not held */
};
/* dir held; its name through the descriptor into via ("/proc/PID/fd/N"). 0, or -1 with errno (the
 * directory cannot be opened: the caller's own checks said why before). */
int safedir_hold(struct safedir *d, const char *dir, char *via, size_t len);
/* An output file's directory held, and the file's name through it into via
 * ("/proc/PID/fd/N/BASE"); one written in place (safefile_in_place: /dev/stdout, a FIFO) is not
 * replaced, so its name is kept as it is. 0, or -1 with errno. */
int safedir_hold_parent(struct safedir *d, const char *path, char *via, size_t len);
void safedir_release(struct safedir *d);

/* A file written as the run goes (a time series, a log others may tail): created under its final
 * name, an existing one unlinked first (replaced, never written through; a link is removed, not
 * followed). A descriptor, or -1 with errno. */
int safefile_fresh(const char *path);

#endif
