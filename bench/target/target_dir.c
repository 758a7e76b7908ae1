/* target_dir.c - a directory target: one worker file (dedisbench.N) per worker, created or
 * checked (never a link, dedisbench's own unless --force), removed after the run unless --keep. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "bench/target/claim.h"
#include "bench/target/targetkind.h"
#include "lib/dioalign.h"
#include "lib/pathwithin.h"

/* A worker file's name inside a directory target. */
static void worker_name(unsigned worker, char *name, size_t len)
{
	snprintf(name, len, "dedisbench.%u", worker);
}

/* Is id the file of a worker before w? */
static bool same_as_earlier_worker(const struct target *t, unsigned w, struct file_id id)
{
	for (unsigned i = 0; i < w; i++)
		if (same_file(t->files[i], id))
			return true;
	return false;
}

/* The worker file open at fd, found as st: unchanged since, nobody else's worker file, locked by
 * its inode (another name of it, a hard link elsewhere, meets this run), and dedisbench's. */
static int check_worker_file(const struct target_request *req, struct target *t, unsigned w, int fd,
			     const struct stat *st, const char *label, struct dd_err *err)
{
	char name[32], path[PATH_MAX + 64];
	worker_name(w, name, sizeof name);
	snprintf(path, sizeof path, "%s/%s", t->path, name);
	struct stat now;
	if (fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(st)))
		return err_fail(err, -1, "%s changed while it was being checked", label);
	if (same_as_earlier_worker(t, w, file_id_of(st)))
		return err_fail(err, -1, "%s is another worker's file too (a hard link); refusing it", label);
	if (target_lock_inode(&t->file_locks[w], fd, true, path, err))
		return -1;
	return target_check_claim(fd, &now, req->file_size, label, req->force, req->no_writes, err);
}

/* One worker file of a directory target, if it exists: never a link, never anything but a regular
 * file, and dedisbench's own unless --force. *have: the bytes it already holds. */
static int probe_worker_file(const struct target_request *req, struct target *t, unsigned w, uint64_t *have,
			     struct dd_err *err)
{
	char name[32], label[PATH_MAX + 64];
	worker_name(w, name, sizeof name);
	snprintf(label, sizeof label, "target %s: %s", req->path, name);
	struct stat st;
	*have = 0;
	if (fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : err_fail(err, -1, "%s: %s", label, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return err_fail(err, -1, "%s is a symbolic link; dedisbench never follows links inside a target "
					 "directory (remove it)", label);
	if (!S_ISREG(st.st_mode))
		return err_fail(err, -1, "%s exists and is not a regular file", label);
	int fd = openat(t->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "%s: %s", label, strerror(errno));
	int rc = check_worker_file(req, t, w, fd, &st, label, err);
	close(fd);
	if (rc)
		return rc;
	t->files[w] = file_id_of(&st);
	*have = (uint64_t)st.st_blocks * 512;
	return 0;
}

/* Each worker file's lock holds two descriptors for the run (its lock file, the file itself), and
 * the launcher one more per worker (its tally): the soft limit on open files is raised toward the
 * hard one where it is lower than that needs (520 workers under a soft limit of 1024 failed). */
static void room_for_file_locks(unsigned procs)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)procs * 3 + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* Room: what the worker files still need beyond what existing ones (from --keep) hold. */
static int probe_room(const struct target_request *req, struct target *t, struct dd_err *err)
{
	uint64_t need = 0;
	for (unsigned w = 0; w < req->procs; w++) {
		uint64_t have;
		if (probe_worker_file(req, t, w, &have, err))
			return -1;
		if (have < req->file_size)
			need += req->file_size - have;
	}
	struct statvfs vfs;
	if (fstatvfs(t->dir_fd, &vfs))
		return err_fail(err, -1, "target directory %s: %s", req->path, strerror(errno));
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (need > avail && !t->dir_read_only) /* (nothing is allocated there: holes read as zeros) */
		return err_fail(err, -1, "target directory %s has %llu MiB free, the run needs %llu MiB (%u x %llu MiB)",
				req->path, (unsigned long long)(avail >> 20), (unsigned long long)mib_up(need), req->procs,
				(unsigned long long)mib_up(req->file_size));
	return 0;
}

/* A run that only reads, in a directory it may not write (a read-only mount, no permission):
 * nothing can be created or extended there, so each worker file must be there at --file-size. */
static int probe_read_only_dir(const struct target_request *req, struct target *t, struct dd_err *err)
{
	for (unsigned w = 0; w < req->procs; w++) {
		char name[32];
		struct stat st;
		worker_name(w, name, sizeof name);
		bool missing = fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0;
		if (missing || (uint64_t)st.st_size < req->file_size)
			return err_fail(err, -1, "target directory %s is not writable and %s is %s: a run that only reads "
						 "there needs every worker file at --file-size", req->path, name,
					missing ? "missing" : "shorter");
	}
	return 0;
}

static bool dir_match(const char *path, const struct stat *st)
{
	(void)path;
	return st && S_ISDIR(st->st_mode);
}

static int dir_probe(const struct target_request *req, struct target *t, const struct stat *st, struct dd_err *err)
{
	(void)st;
	if (target_lock(&t->lock, req->path, RUNLOCK_OBJECT, req->path, err) ||
	    target_lock_around(t, req->path, true, req->force, req->path, err))
		return -1;
	t->sector_size = dio_align(req->path);
	t->region_size = req->file_size;
	if (access(req->path, W_OK | X_OK)) {
		int e = errno;
		/* a run that only reads needs only to read what is there */
		if (!req->no_writes || access(req->path, R_OK | X_OK))
			return err_fail(err, -1, "target directory %s is not writable: %s", req->path, strerror(e));
		t->dir_read_only = true;
	}
	t->dir_fd = open(req->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0)
		return err_fail(err, -1, "target directory %s: %s", req->path, strerror(errno));
	t->dir_fd_open = true;
	if (!(t->file_locks = calloc(req->procs, sizeof *t->file_locks)))
		return err_fail(err, -1, "out of memory");
	t->nfile_locks = req->procs;
	room_for_file_locks(req->procs);
	if (probe_room(req, t, err) || (t->dir_read_only && probe_read_only_dir(req, t, err)))
		return -1;
	return target_check_direct(req, t, false, err);
}

/* A worker file this run just created, locked by its inode as one probing found is (another run
 * may have taken a hard link made this instant: then this run fails). Closes fd on an error. */
static int lock_created(struct target *t, unsigned w, int fd, struct dd_err *err)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/dedisbench.%u", t->path, w);
	struct stat st;
	if (fstat(fd, &st) == 0)
		t->files[w] = file_id_of(&st); /* what the cleanup removes */
	if (target_lock_inode(&t->file_locks[w], fd, true, path, err)) {
		close(fd);
		return -1;
	}
	return 0;
}

/* Worker file w opened to write: created here, or the very file probing checked (never a link,
 * never a newcomer). The descriptor, or -1 with err. */
static int open_worker_file(struct target *t, unsigned w, struct dd_err *err)
{
	char name[32];
	worker_name(w, name, sizeof name);
	int fd = -1;
	errno = EEXIST; /* a read-only directory's files are all there (probe_read_only_dir) */
	if (!t->dir_read_only)
		fd = openat(t->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		t->created[w] = true;
		if (lock_created(t, w, fd, err))
			return -1;
	} else if (errno == EEXIST) {
		fd = openat(t->dir_fd, name, (t->dir_read_only ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || !same_file(file_id_of(&st), t->files[w]))) {
			close(fd);
			return err_fail(err, -1, "target %s: %s appeared or changed after it was checked; refusing to "
						 "write it", t->path, name);
		}
	}
	if (fd < 0)
		return err_fail(err, -1, "cannot create %s/%s: %s", t->path, name,
				errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return err_fail(err, -1, "cannot create %s/%s: %s", t->path, name, strerror(e));
	}
	t->files[w] = file_id_of(&st);
	return fd;
}

static int dir_prepare(struct target *t, uint32_t block_size, struct dd_err *err)
{
	(void)block_size;
	for (unsigned w = 0; w < t->procs; w++) {
		int fd = open_worker_file(t, w, err);
		if (fd < 0)
			return -1;
		/* A run that only reads marks only a file it made: marked, another's file would pass
		 * later runs' check as dedisbench's and be overwritten without --force. */
		if (!t->no_writes || t->created[w])
			claim_mark(fd);
		/* Reserve the space now so a full filesystem fails here, not mid-run (a read-only
		 * directory's files are long enough: probe_read_only_dir). */
		int rc = t->dir_read_only ? 0 : target_size_file(fd, t->region_size, t->sparse);
		close(fd);
		if (rc)
			return err_fail(err, -1, "cannot size %s/dedisbench.%u to %llu bytes: %s", t->path, w,
					(unsigned long long)t->region_size, strerror(rc));
	}
	return 0;
}

static void dir_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base)
{
	/* target_probe bounds t->path well below PATH_MAX, so this never truncates. */
	int n = snprintf(path, len, "%s/dedisbench.%u", t->path, worker);
	*base = 0;
	if (n < 0 || (size_t)n >= len)
		path[0] = 0;
}

static const struct file_id *dir_worker_file(const struct target *t, unsigned worker)
{
	return &t->files[worker];
}

/* True when this run created every worker file. */
static bool all_created(const struct target *t)
{
	for (unsigned w = 0; w < t->procs; w++)
		if (!t->created[w])
			return false;
	return true;
}

/* Files this run created start as zeros; a kept ledger's run wrote them before. */
static bool dir_zeros_known(const struct target *t, bool ledger_kept)
{
	return !ledger_kept && all_created(t);
}

static bool dir_holds_earlier_data(const struct target *t)
{
	return !all_created(t);
}

static enum target_space dir_space(const struct target *t, char *path, size_t len)
{
	(void)t, (void)path, (void)len;
	return TARGET_SPACE_STATFS;
}

/* The file system's (its transaction committed, compression done: btrfs compresses at writeback). */
static void dir_flush(const struct target *t)
{
	int fd = open(t->path, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (fd < 0)
		return;
	syncfs(fd);
	close(fd);
}

/* A report given a worker file's name, in the target directory itself. */
static int dir_refuse_output(const struct target *t, const char *what, const char *path, bool is_dir,
			     struct dd_err *err)
{
	if (is_dir)
		return 0;
	char dir[PATH_MAX];
	path_parent(path, dir, sizeof dir);
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (target_is_worker_name(name) && target_same_inode(dir, t->path))
		return err_fail(err, -1, "%s %s is a worker file of the target %s; write it elsewhere", what, path, t->path);
	return 0;
}

static void dir_cleanup(struct target *t, bool keep)
{
	if (keep || !t->dir_fd_open)
		return;
	for (unsigned w = 0; w < t->procs; w++) {
		if (!t->created[w])
			continue;
		char name[32];
		struct stat st;
		worker_name(w, name, sizeof name);
		/* only the file this run created, not whatever took its name since */
		if (fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && same_file(file_id_of(&st), t->files[w]))
			unlinkat(t->dir_fd, name, 0);
		t->created[w] = false;
	}
}

static void dir_release(struct target *t)
{
	if (t->dir_fd_open)
		close(t->dir_fd);
	t->dir_fd_open = false;
	t->dir_fd = -1;
}

const struct target_ops target_dir_ops = {
	.name = "directory",
	.usage = "DIR",
	.about = "a directory, a file per worker",
	.flags = TARGET_FILE_PER_WORKER,
	.match = dir_match,
	.probe = dir_probe,
	.prepare = dir_prepare,
	.worker_path = dir_worker_path,
	.open_flags = O_NOFOLLOW,
	.worker_file = dir_worker_file,
	.zeros_known = dir_zeros_known,
	.holds_earlier_data = dir_holds_earlier_data,
	.space = dir_space,
	.flush = dir_flush,
	.refuse_output = dir_refuse_output,
	.cleanup = dir_cleanup,
	.release = dir_release,
};
