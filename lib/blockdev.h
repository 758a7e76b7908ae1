/* blockdev.h - what must hold before a block device is overwritten: nothing has it mounted and
 * libblkid finds no filesystem, RAID or partition-table signature on it (or --force is given). */
#ifndef DEDIS_BLOCKDEV_H
#define DEDIS_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/errmsg.h"

/* Is the device dev mounted? where: its mount point. A mounted partition of it is not seen
 * here; an O_EXCL open of the whole device fails with EBUSY then. */
bool blockdev_mounted(dev_t dev, char *where, size_t len);

/* 1 with what set ("a ext4 filesystem signature", "a gpt partition table") when libblkid
 * recognises something on the device at path, 0 when not, -1 when it cannot probe it. */
int blockdev_signature(const char *path, char *what, size_t len);

/* The device at path (number rdev) opened with flags | O_EXCL, held so that nothing mounts it
 * while it is used, once what must hold before it is overwritten does: not mounted, not held by
 * anything, not read-only (where it will be written), and no signature unless force. *size: its
 * bytes. The descriptor, or -1 with err, which starts with path ("PATH is mounted on ..."; a path
 * longer than BLOCKDEV_PATH_SHOWN bytes, or mount point, cut to its start and "..."). */
#define BLOCKDEV_PATH_SHOWN 200
int blockdev_claim(const char *path, dev_t rdev, int flags, bool writes, bool force, uint64_t *size,
		   struct dd_err *err);

#endif
