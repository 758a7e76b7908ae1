/* target_blockdev.c - a block device as the target: refused when mounted or holding a signature
 * libblkid recognises (unless --force), held with O_EXCL for the run, split into regions. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "bench/target/targetkind.h"
#include "lib/blockdev.h"

static bool blockdev_match(const char *path, const struct stat *st)
{
	(void)path;
	return st && S_ISBLK(st->st_mode);
}

/* The bytes per worker: the device split, or --file-size where the device holds it. */
static int size_regions(const struct target_request *req, struct target *t, uint64_t size, struct dd_err *err)
{
	uint64_t per = size / req->procs / req->block_size * req->block_size;
	if (req->file_size_given && req->file_size > per)
		return req->size_from
			       ? err_fail(err, -1, "target %s (%llu bytes) is smaller than %s (%llu bytes)", req->path,
					  (unsigned long long)size, req->size_from, (unsigned long long)req->file_size)
			       : err_fail(err, -1, "target %s (%llu bytes) holds %u regions of at most %llu bytes, not "
						   "--file-size %llu", req->path, (unsigned long long)size, req->procs,
					  (unsigned long long)per, (unsigned long long)req->file_size);
	if (req->file_size_given)
		per = req->file_size;
	if (per < req->block_size)
		return err_fail(err, -1, "target %s (%llu bytes) is too small for %u workers of %u-byte blocks",
				req->path, (unsigned long long)size, req->procs, req->block_size);
	t->region_size = per;
	return 0;
}

static int blockdev_probe(const struct target_request *req, struct target *t, const struct stat *st,
			  struct dd_err *err)
{
	if (target_lock(&t->lock, req->path, RUNLOCK_OBJECT, req->path, err))
		return -1;
	struct dd_err why;
	uint64_t size = 0;
	int ssz = 512;
	int fd = blockdev_claim(req->path, st->st_rdev, O_RDONLY, !req->no_writes, req->force, &size, &why);
	if (fd < 0)
		return err_fail(err, -1, "target %s", why.msg);
	if (ioctl(fd, BLKSSZGET, &ssz)) {
		int e = errno;
		close(fd);
		return err_fail(err, -1, "target %s: cannot read its sector size: %s", req->path, strerror(e));
	}
	t->excl_fd = fd; /* held for the run: nothing mounts it meanwhile */
	t->excl_fd_open = true;
	t->files[0] = file_id_of(st);
	t->device_size = size;
	t->sector_size = (unsigned)ssz;
	return size_regions(req, t, size, err) ? -1 : target_check_direct(req, t, true, err);
}

/* The zram device a block device is, if it is one: its mm_stat path in path. */
static bool zram_mm_stat_path(const char *dev, char *path, size_t len)
{
	struct stat st;
	if (stat(dev, &st) || !S_ISBLK(st.st_mode))
		return false;
	char link[PATH_MAX], real[PATH_MAX];
	snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(link, real))
		return false;
	const char *name = strrchr(real, '/');
	if (!name || strncmp(name + 1, "zram", 4))
		return false;
	int n = snprintf(path, len, "%s/mm_stat", real);
	return n > 0 && (size_t)n < len && access(path, R_OK) == 0;
}

/* zram counts what it keeps; another device's use nothing reads but a --space-cmd. */
static enum target_space blockdev_space(const struct target *t, char *path, size_t len)
{
	char mm[PATH_MAX];
	if (!zram_mm_stat_path(t->path, mm, sizeof mm))
		return TARGET_SPACE_NONE;
	snprintf(path, len, "%s", mm);
	return TARGET_SPACE_ZRAM;
}

/* The device's cache. */
static void blockdev_flush(const struct target *t)
{
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	fsync(fd);
	close(fd);
}

static void blockdev_release(struct target *t)
{
	if (t->excl_fd_open)
		close(t->excl_fd);
	t->excl_fd_open = false;
	t->excl_fd = -1;
}

const struct target_ops target_blockdev_ops = {
	.name = "block device",
	.usage = "DEVICE",
	.about = "a block device, a region per worker",
	.match = blockdev_match,
	.probe = blockdev_probe,
	.worker_file = target_single_file,
	.space = blockdev_space,
	.flush = blockdev_flush,
	.refuse_output = target_refuse_self,
	.release = blockdev_release,
};
