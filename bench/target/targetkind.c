/* targetkind.c - what every target kind's probe shares, below the core and the registry: the run
 * locks, the claim check, file sizing, the O_DIRECT alignment check, the opened-file check. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "bench/ioengine/ioengine.h"
#include "bench/target/claim.h"
#include "bench/target/targetkind.h"
#include "lib/errmsg.h"
#include "reference-engine/engine.h"

bool target_is_worker_name(const char *name)
{
	return !strncmp(name, "dedisbench.", 11) && name[11] && strspn(name + 11, "0123456789") == strlen(name + 11);
}

int target_lock(struct runlock *l, const char *path, enum runlock_kind kind, const char *what, struct dd_err *err)
{
	struct dd_err why;
	int rc = runlock_acquire(l, path, kind, &why);
	if (rc == 1)
		return err_fail(err, -1, "target %s is %s; one run per target at a time", what, why.msg);
	if (rc)
		return err_fail(err, -1, "target %s: %s", what, why.msg);
	return 0;
}

int target_lock_inode(struct runlock *l, int fd, bool lock_inode, const char *what, struct dd_err *err)
{
	struct dd_err why;
	int rc = runlock_acquire_fd(l, fd, lock_inode, what, &why);
	if (rc == 1)
		return err_fail(err, -1, "target %s is %s; one run per target at a time", what, why.msg);
	if (rc)
		return err_fail(err, -1, "target %s: %s", what, why.msg);
	return 0;
}

int target_lock_around(struct target *t, const char *path, bool dir, bool force, const char *what, struct dd_err *err)
{
	if (dir)
		return target_lock(&t->lock_around, path, RUNLOCK_VOLUME, what, err);
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 0; /* it was just found: gone again, the worker's open will fail */
	char *slash = strrchr(real, '/');
	bool worker = target_is_worker_name(slash + 1);
	if (slash == real)
		slash++;
	*slash = 0;
	/* A file of an engine volume (its chunk store holds dedisbench's blocks as written, so they
	 * would pass for ours): the volume's own lock, and --force to write it at all. */
	struct engine_stats g;
	struct dd_err why;
	if (engine_describe(real, &g, &why) == 0) {
		if (!force)
			return err_fail(err, -1, "target %s is a file of the engine volume %s (give engine:%s); refusing "
						 "to write it without --force", what, real, real);
		return target_lock(&t->lock_around, real, RUNLOCK_VOLUME, what, err);
	}
	return worker ? target_lock(&t->lock_around, real, RUNLOCK_OBJECT, what, err) : 0;
}

/* (Another's file in a shared directory would be left holding the run's data, theirs.) */
int target_check_claim(int fd, const struct stat *st, uint64_t extent, const char *label, bool force, bool no_writes,
		       struct dd_err *err)
{
	if (!no_writes && !force && st->st_uid != geteuid())
		return err_fail(err, -1, "%s belongs to another user (uid %lu); refusing to write it without --force",
				label, (unsigned long)st->st_uid);
	const char *how;
	int e;
	enum claim_verdict v = claim_inspect(fd, extent, !no_writes, &how, &e);
	if (v == CLAIM_UNREADABLE)
		return err_fail(err, -1, "%s: cannot read it to tell whose data it holds: %s", label, strerror(e));
	if (v == CLAIM_FOREIGN && !force)
		return err_fail(err, -1, "%s: %s; refusing to %s it without --force", label, how,
				no_writes ? "use" : "overwrite");
	return 0;
}

/* issue 14: on a copy-on-write file system a preallocated extent is written in place, neither
 * compressed nor deduplicated (btrfs writes into prealloc extents NOCOW), so there the files are
 * sized sparse: the savings a run measures are the file system's, not defeated by the benchmark. */
static bool preallocation_defeats_savings(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf))
		return false;
	unsigned long type = (unsigned long)sf.f_type;
	return type == 0x9123683EUL /* btrfs */ || type == 0x2FC12FC1UL /* zfs */ || type == 0xCA451A4EUL /* bcachefs */;
}

/* (What lies past the run's part was not checked as the run's to lose: never shortened.) */
int target_size_file(int fd, uint64_t len, bool sparse)
{
	int rc = sparse || preallocation_defeats_savings(fd) ? EOPNOTSUPP : posix_fallocate(fd, 0, (off_t)len);
	struct stat st;
	if (rc == EOPNOTSUPP || rc == EINVAL)
		rc = fstat(fd, &st) ? errno : (uint64_t)st.st_size >= len ? 0 : ftruncate(fd, (off_t)len) ? errno : 0;
	return rc;
}

bool target_same_inode(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Below the alignment O_DIRECT needs every transfer fails with EINVAL: bad input, not a run
 * failure. A device's own sectors set it (device_sectors), else the file system's under the path. */
int target_check_direct(const struct target_request *req, const struct target *t, bool device_sectors,
			struct dd_err *err)
{
	if (!req->direct || req->block_size % t->sector_size == 0)
		return 0;
	if (device_sectors)
		return err_fail(err, -1, "--block-size %u is not a multiple of %s's %u-byte sectors (needed for O_DIRECT)",
				req->block_size, req->path, t->sector_size);
	return err_fail(err, -1, "--block-size %u is not a multiple of the %u bytes O_DIRECT needs on %s (the sector "
				 "size under its file system)", req->block_size, t->sector_size, req->path);
}

int target_check_opened(const struct target *t, unsigned worker, int fd)
{
	if (!t->ops->worker_file)
		return 0;
	struct stat st;
	if (fstat(fd, &st))
		return -1;
	if (!same_file(file_id_of(&st), *t->ops->worker_file(t, worker))) {
		errno = ESTALE; /* replaced between the checks and the run */
		return -1;
	}
	return 0;
}
