/* runlock.h - one run per target: an exclusive lock on a directory, file, block device or engine
 * volume, held for a whole run; a second run is told the holder's pid and command line. */
#ifndef DEDIS_RUNLOCK_H
#define DEDIS_RUNLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/errmsg.h"

/* The lock is a flock(2) on a small file in $DEDIS_LOCK_DIR, else /run/lock, else /tmp, named
 * after the object's identity (not its path, so two spellings of one target meet), holding the
 * holder's pid and command line. It is only ever written when made afresh (O_EXCL): an existing
 * one is opened read-only, and refused unless it is a regular file with one link. The kernel
 * drops the flock when the holder dies; its file then stays until the next run replaces it. */
struct runlock {
	bool held;
	int fd;       /* the lock file */
	int inode_fd; /* runlock_acquire_fd: the file itself, flocked too (-1: not) */
	char path[4096];
};

/* The most of a holder's command line a message shows: with the caller's words around it, the
 * message fits one struct dd_err. */
#define RUNLOCK_CMDLINE_SHOWN 200

enum runlock_kind {
	RUNLOCK_OBJECT, /* an existing directory, file (by inode) or block device (by device number) */
	RUNLOCK_VOLUME, /* an engine volume directory, which may not exist yet (by parent inode + name) */
};

/* Take the lock for `target`. Returns 0 (held until runlock_release or exit), 1 when another
 * process holds it (err: "in use by pid N (COMMAND LINE)", a command line longer than
 * RUNLOCK_CMDLINE_SHOWN bytes cut to its start and "..."), -1 on an error (err says why, naming
 * the target).
 * Child processes share it (flock follows the open file, not the process). */
int runlock_acquire(struct runlock *l, const char *target, enum runlock_kind kind, struct dd_err *err);
/* Lock the file or directory open at fd by its inode, as RUNLOCK_OBJECT locks one named by a
 * path: every name of it (a hard link made after the run began) meets the same lock. With
 * lock_inode, a flock on the file itself is held too (not on a file another flock already serves,
 * as an engine volume's superblock). `what` names it in messages. Returns as runlock_acquire. */
int runlock_acquire_fd(struct runlock *l, int fd, bool lock_inode, const char *what, struct dd_err *err);
/* Drop it and remove its file (no-op when not held). */
void runlock_release(struct runlock *l);

#endif
