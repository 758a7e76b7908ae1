/* blockdev.c - the checks before a block device is overwritten (mounted? a signature libblkid
 * recognises?), shared by dedisbench's device targets and dedisengine's export onto a device. */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/blockdev.h"

bool blockdev_mounted(dev_t dev, char *where, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned maj, mnr;
		char mnt[PATH_MAX];
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &mnr, mnt) != 3)
			continue;
		if (maj == major(dev) && mnr == minor(dev)) {
			snprintf(where, len, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}

int blockdev_signature(const char *path, char *what, size_t len)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return -1;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	int rc = blkid_do_safeprobe(pr);
	int found = 0;
	if (rc == 0) {
		const char *v = NULL;
		if (!blkid_probe_lookup_value(pr, "TYPE", &v, NULL))
			snprintf(what, len, "a %s filesystem signature", v);
		else if (!blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL))
			snprintf(what, len, "a %s partition table", v);
		else
			snprintf(what, len, "a recognisable signature");
		found = 1;
	} else if (rc == -2) {
		snprintf(what, len, "several conflicting signatures");
		found = 1;
	}
	blkid_free_probe(pr);
	return found;
}

int blockdev_claim(const char *path, dev_t rdev, int flags, bool writes, bool force, uint64_t *size,
		   struct dd_err *err)
{
	char where[PATH_MAX], what[128], shown[BLOCKDEV_PATH_SHOWN + 1], shown_where[BLOCKDEV_PATH_SHOWN + 1];
	/* the paths shortened, so that the reason fits one struct dd_err */
	errmsg_quote(path, shown, sizeof shown);
	if (blockdev_mounted(rdev, where, sizeof where))
		return err_fail(err, -1, "%s is mounted on %s; unmount it first", shown,
				errmsg_quote(where, shown_where, sizeof shown_where));
	/* O_EXCL on a block device fails with EBUSY while anything (a mount, dm, md) holds it. */
	int fd = open(path, flags | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return err_fail(err, -1, "%s: cannot open exclusively: %s", shown,
				errno == EBUSY ? "device is in use (mounted or held by another driver)" : strerror(errno));
	int ro = 0, sig = -1;
	if (ioctl(fd, BLKGETSIZE64, size))
		err_fail_errno(err, -1, errno, "%s: cannot read its size", shown);
	else if (writes && ioctl(fd, BLKROGET, &ro) == 0 && ro)
		err_fail(err, -1, "%s is a read-only device; this run writes to it", shown);
	else if (!force && (sig = blockdev_signature(path, what, sizeof what)) < 0)
		err_fail(err, -1, "%s: cannot probe it for signatures (unreadable?); use --force to write anyway", shown);
	else if (!force && sig > 0)
		err_fail(err, -1, "%s holds %s; refusing to overwrite it without --force", shown, what);
	else
		return fd;
	close(fd);
	return -1;
}
