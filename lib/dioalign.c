/* dioalign.c - the O_DIRECT offset alignment of a file, a directory or a block device: statx's
 * answer where the kernel gives one, else the sector size of the device under the file system. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lib/dioalign.h"

/* queue/logical_block_size of the block device dev, or of the disk of which dev is a partition
 * (a partition's sysfs directory has no queue/ of its own). 0 when dev is no block device (tmpfs,
 * btrfs's anonymous devices, NFS). */
static unsigned sector_size_of(dev_t dev)
{
	static const char *const where[] = {"queue", "../queue"};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%s/logical_block_size", major(dev), minor(dev), where[i]);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		unsigned n = 0;
		int ok = fscanf(f, "%u", &n) == 1;
		fclose(f);
		if (ok && n)
			return n;
	}
	return 0;
}

unsigned dio_align(const char *path)
{
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
	    sx.stx_dio_offset_align)
		return sx.stx_dio_offset_align;
#endif
	struct stat st;
	if (stat(path, &st))
		return 512;
	unsigned n = sector_size_of(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	return n ? n : 512;
}
