/* blockdev.h - what must hold before a block device is overwritten: nothing has it mounted and
 * libblkid finds no filesystem, RAID or partition-table signature on it (or --force is given). */
#ifndef DEDIS_BLOCKDEV_H
#define DEDIS_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Is the device dev mounted? where: its mount point. A mounted partition of it is not seen
 * here; an O_EXCL open of the whole device fails with EBUSY then. */
bool blockdev_mounted(dev_t dev, char *where, size_t len);

/* 1 with what set ("a ext4 filesystem signature", "a gpt partition table") when libblkid
 * recognises something on the device at path, 0 when not, -1 when it cannot probe it. */
int blockdev_signature(const char *path, char *what, size_t len);

/* The device at path (number rdev) opened with flags | O_EXCL, held so that nothing mounts it
 * while it is used, once what must hold before it is overwritten does: not mounted, not held by
 * anything, not read-only (where it will be written), and no signature unless force. *size: its
 * bytes. The descriptor, or -1 with why, which starts with path ("PATH is mounted on ..."). */
int blockdev_claim(const char *path, dev_t rdev, int flags, bool writes, bool force, uint64_t *size, char *why,
		   size_t whylen);

#endif
