/* target_file.c - an existing regular file as the target: split into one region per worker,
 * extended only when --file-size asks for more, dedisbench's own unless --force. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "bench/target/claim.h"
#include "bench/target/targetkind.h"
#include "lib/dioalign.h"

/* A file target's lock, by the inode `st` found (runlock_acquire_fd, with a flock on the file). */
static int lock_file_target(struct target *t, const char *path, const struct stat *st, struct dd_err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "target %s: %s", path, strerror(errno));
	struct stat now;
	int rc = fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(st))
			 ? err_fail(err, -1, "target %s changed while it was being checked", path)
			 : target_lock_inode(&t->lock, fd, true, path, err);
	close(fd);
	return rc;
}

/* The file as found (st), unchanged since and dedisbench's, for its first `extent` bytes. */
static int check_file_claim(const struct target_request *req, const struct stat *st, uint64_t extent,
			    const char *label, struct dd_err *err)
{
	int fd = open(req->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "%s: %s", label, strerror(errno));
	struct stat now;
	int rc = fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(st))
			 ? err_fail(err, -1, "%s changed while it was being checked", label)
			 : target_check_claim(fd, &now, extent, label, req->force, req->no_writes, err);
	close(fd);
	return rc;
}

static bool file_match(const char *path, const struct stat *st)
{
	(void)path;
	return st && S_ISREG(st->st_mode);
}

static int file_probe(const struct target_request *req, struct target *t, const struct stat *st, struct dd_err *err)
{
	if (lock_file_target(t, req->path, st, err) || target_lock_around(t, req->path, false, req->force, req->path, err))
		return -1;
	char label[PATH_MAX + 16];
	snprintf(label, sizeof label, "target %s", req->path);
	/* a run that only reads needs only read access (a file of a read-only mount, mode 0444) */
	if (access(req->path, req->no_writes ? R_OK : R_OK | W_OK))
		return err_fail(err, -1, "%s: %s", label, strerror(errno));
	/* Its own size, split; extended only when --file-size asks for more (as fio's size=). */
	uint64_t per = req->file_size;
	if (!req->file_size_given) {
		if ((uint64_t)st->st_size < (uint64_t)req->procs * req->block_size)
			return err_fail(err, -1, "target %s (%llu bytes) holds less than one %u-byte block per worker (%u); "
						 "give --file-size to extend it", req->path, (unsigned long long)st->st_size,
					req->block_size, req->procs);
		per = (uint64_t)st->st_size / req->procs / req->block_size * req->block_size;
	}
	t->region_size = per;
	if (check_file_claim(req, st, per * req->procs, label, err))
		return -1;
	t->files[0] = file_id_of(st);
	t->device_size = (uint64_t)st->st_size;
	t->sector_size = dio_align(req->path);
	uint64_t need = per * req->procs;
	if (need > (uint64_t)st->st_size && req->no_writes)
		return err_fail(err, -1, "target %s (%llu bytes): a run that only reads cannot extend it to %llu bytes "
					 "(leave --file-size out, or make it smaller)", req->path,
				(unsigned long long)st->st_size, (unsigned long long)need);
	if (need > (uint64_t)st->st_size) {
		struct statvfs vfs;
		if (statvfs(req->path, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need - (uint64_t)st->st_size)
			return err_fail(err, -1, "target %s: no room to extend it to %llu bytes", req->path,
					(unsigned long long)need);
	}
	return target_check_direct(req, t, false, err);
}

static int file_prepare(struct target *t, uint32_t block_size, struct dd_err *err)
{
	(void)block_size;
	int fd = open(t->path, (t->no_writes ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "cannot open %s: %s", t->path, strerror(errno));
	if (target_check_opened(t, 0, fd)) {
		close(fd);
		return err_fail(err, -1, "target %s changed after it was checked; refusing to write it", t->path);
	}
	/* A run that only reads never marks it: another's file would pass later runs' check as
	 * dedisbench's and be overwritten without --force. */
	if (!t->no_writes)
		claim_mark(fd);
	uint64_t need = t->region_size * t->procs;
	int rc = need > t->device_size ? target_size_file(fd, need, t->sparse) : 0;
	close(fd);
	if (rc)
		return err_fail(err, -1, "cannot extend %s to %llu bytes: %s", t->path, (unsigned long long)need,
				strerror(rc));
	return 0;
}

/* (Shared with the block device: its one file, [0].) */
const struct file_id *target_single_file(const struct target *t, unsigned worker)
{
	(void)worker;
	return &t->files[0];
}

static enum target_space file_space(const struct target *t, char *path, size_t len)
{
	(void)t, (void)path, (void)len;
	return TARGET_SPACE_STATFS;
}

/* The file system's (its transaction committed, compression done: btrfs compresses at writeback). */
static void file_flush(const struct target *t)
{
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	syncfs(fd);
	close(fd);
}

/* (Shared with the block device.) A report by the name of the target, or a link to it. */
int target_refuse_self(const struct target *t, const char *what, const char *path, bool is_dir, struct dd_err *err)
{
	struct stat st, ts;
	if (!is_dir && lstat(path, &st) == 0 && stat(t->path, &ts) == 0 && st.st_dev == ts.st_dev &&
	    st.st_ino == ts.st_ino)
		return err_fail(err, -1, "%s %s is the target; write it elsewhere", what, path);
	return 0;
}

const struct target_ops target_file_ops = {
	.name = "file",
	.usage = "FILE",
	.about = "an existing file, a region per worker",
	.match = file_match,
	.probe = file_probe,
	.prepare = file_prepare,
	.worker_file = target_single_file,
	.space = file_space,
	.flush = file_flush,
	.refuse_output = target_refuse_self,
};
