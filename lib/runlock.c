/* runlock.c - the run lock: a flock on a file named after the target's identity in the lock
 * directory, with the holder's pid and command line inside for whoever finds it taken. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/pathwithin.h"
#include "lib/runlock.h"
#include "lib/strhash.h"

static const char *lock_dir(void)
{
	const char *env = getenv("DEDIS_LOCK_DIR");
	if (env && *env)
		return env;
	struct stat st;
	if (stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) && access("/run/lock", W_OK | X_OK) == 0)
		return "/run/lock";
	return "/tmp";
}

/* A file's or directory's identity "obj:DEV:INO", a block device's "blk:RDEV". */
static void object_id(const struct stat *st, char *id, size_t len)
{
	if (S_ISBLK(st->st_mode))
		snprintf(id, len, "blk:%llu", (unsigned long long)st->st_rdev);
	else
		snprintf(id, len, "obj:%llu:%llu", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
}

/* The identity the lock is named after: "blk:RDEV", "obj:DEV:INO" or "vol:DEV:INO:NAME". */
static int identity(const char *target, enum runlock_kind kind, char *id, size_t len, struct dd_err *err)
{
	struct stat st;
	if (kind == RUNLOCK_OBJECT) {
		if (stat(target, &st))
			return err_fail_errno(err, -1, errno, "%s", target);
		object_id(&st, id, len);
		return 0;
	}
	/* A volume: its parent directory's inode and its last name, after resolving links. */
	char buf[PATH_MAX], parent[PATH_MAX];
	if (strlen(target) >= sizeof buf)
		return err_fail(err, -1, "%s: path too long", target);
	snprintf(buf, sizeof buf, "%s", target);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char resolved[PATH_MAX];
	if (realpath(buf, resolved)) /* it exists: its canonical name */
		snprintf(buf, sizeof buf, "%s", resolved);
	char *slash = strrchr(buf, '/');
	const char *name = slash ? slash + 1 : buf;
	path_parent(buf, parent, sizeof parent);
	if (stat(parent, &st))
		return err_fail_errno(err, -1, errno, "%s: %s", target, parent);
	snprintf(id, len, "vol:%llu:%llu:%s", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, name);
	return 0;
}

/* "pid\ncommand line\n", the command line's arguments joined by spaces. */
static void describe_self(char *buf, size_t len)
{
	char cmd[1024] = "";
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		cmd[n] = 0;
		for (ssize_t i = 0; i < n; i++)
			if (cmd[i] == 0)
				cmd[i] = i == n - 1 ? 0 : ' ';
			else if ((unsigned char)cmd[i] < ' ')
				cmd[i] = '?';
	}
	snprintf(buf, len, "%ld\n%s\n", (long)getpid(), cmd);
}

/* Who holds it: read what the holder wrote (it may not have yet: a short grace period). A pid
 * that no longer runs was left by a holder that could not rewrite the file (runlock_acquire). */
static void describe_holder(int fd, char *out, size_t len)
{
	char buf[1200];
	ssize_t n = 0;
	for (int tries = 0; tries < 50; tries++) {
		n = pread(fd, buf, sizeof buf - 1, 0);
		if (n > 0 && buf[n - 1] == '\n')
			break;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	buf[n > 0 ? n : 0] = 0;
	char *nl = strchr(buf, '\n');
	long pid = strtol(buf, NULL, 10);
	if (n <= 0 || !nl || pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH)) {
		snprintf(out, len, "another run (its pid is not recorded)");
		return;
	}
	*nl = 0;
	const char *cmd = nl + 1;
	char *end = strchr(nl + 1, '\n');
	if (end)
		*end = 0;
	/* shortened, so that the caller's sentence around it still fits one struct dd_err */
	char shown[RUNLOCK_CMDLINE_SHOWN + 1];
	snprintf(out, len, "pid %s (%s)", buf, *cmd ? errmsg_quote(cmd, shown, sizeof shown) : "command line unknown");
}

/* The lock file at path, open: made afresh (O_EXCL, so nothing planted under its name is ever
 * written through) or, when it exists, the one a run left behind, opened only to read and lock,
 * and only when it is a plain file with no other name. -1 with err; -2: gone again, try anew. */
static int open_lock_file(const char *path, bool *fresh, struct dd_err *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	*fresh = fd >= 0;
	if (fd >= 0) {
		(void)fchmod(fd, 0644); /* whatever the umask: another user's run reads and locks it */
		return fd;
	}
	if (errno == EEXIST)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -2 : err_fail_errno(err, -1, errno, "cannot create the run lock %s", path);
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return err_fail_errno(err, -1, e, "cannot read the run lock %s", path);
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return err_fail(err, -1, "the run lock %s is not a lock file (%s); remove it", path,
				!S_ISREG(st.st_mode) ? "not a regular file" : "it has other hard links");
	}
	return fd;
}

/* The named lock of identity id: 0, 1 (err: who holds it) or -1. */
static int acquire_id(struct runlock *l, const char *id, const char *target, struct dd_err *err)
{
	snprintf(l->path, sizeof l->path, "%s/dedis-%016llx.lock", lock_dir(), (unsigned long long)str_hash64(id));
	for (int tries = 0; tries < 100; tries++) {
		bool fresh;
		int fd = open_lock_file(l->path, &fresh, err);
		if (fd == -2)
			continue;
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;
			if (e == EWOULDBLOCK) {
				char who[1300];
				describe_holder(fd, who, sizeof who);
				close(fd);
				return err_fail(err, 1, "in use by %s", who);
			}
			close(fd);
			return err_fail_errno(err, -1, e, "cannot lock %s for %s", l->path, target);
		}
		/* Its last holder may have removed the file between our open and flock: then this lock
		 * is on a file nobody else will find. Start again. */
		struct stat a, b;
		if (fstat(fd, &a) || lstat(l->path, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			close(fd);
			continue;
		}
		/* One a killed run left: replaced by a fresh one to write in. Where it cannot be removed
		 * (another user's, in a sticky directory) it is held unwritten. */
		if (!fresh && unlink(l->path) == 0) {
			close(fd);
			continue;
		}
		if (fresh) {
			char self[1200];
			describe_self(self, sizeof self);
			if (pwrite(fd, self, strlen(self), 0) != (ssize_t)strlen(self)) {
				int e = errno;
				unlink(l->path); /* (still locked: as runlock_release, nobody takes it meanwhile) */
				close(fd);
				return err_fail_errno(err, -1, e, "cannot write the run lock %s", l->path);
			}
		}
		l->fd = fd;
		l->held = true;
		return 0;
	}
	return err_fail(err, -1, "cannot take the run lock %s for %s: it keeps changing", l->path, target);
}

int runlock_acquire(struct runlock *l, const char *target, enum runlock_kind kind, struct dd_err *err)
{
	memset(l, 0, sizeof *l);
	l->fd = l->inode_fd = -1;
	char id[PATH_MAX + 64];
	if (identity(target, kind, id, sizeof id, err))
		return -1;
	return acquire_id(l, id, target, err);
}

int runlock_acquire_fd(struct runlock *l, int fd, bool lock_inode, const char *what, struct dd_err *err)
{
	memset(l, 0, sizeof *l);
	l->fd = l->inode_fd = -1;
	struct stat st;
	char id[64];
	if (fstat(fd, &st))
		return err_fail_errno(err, -1, errno, "%s", what);
	object_id(&st, id, sizeof id);
	int rc = acquire_id(l, id, what, err);
	if (rc || !lock_inode)
		return rc;
	/* The file itself too: a run using another lock directory, or another program, meets it. */
	l->inode_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (l->inode_fd >= 0 && flock(l->inode_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int e = errno;
	runlock_release(l);
	if (e == EWOULDBLOCK)
		return err_fail(err, 1, "in use by another process that holds a lock on it (its pid is not known here)");
	return err_fail_errno(err, -1, e, "cannot lock %s", what);
}

void runlock_release(struct runlock *l)
{
	if (!l->held)
		return;
	/* Removed while still held, so nobody can lock the old file after we let go of it; and only
	 * while its name is still this file. */
	struct stat a, b;
	if (fstat(l->fd, &a) == 0 && lstat(l->path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		unlink(l->path);
	close(l->fd);
	if (l->inode_fd >= 0)
		close(l->inode_fd);
	l->held = false;
	l->fd = l->inode_fd = -1;
}
