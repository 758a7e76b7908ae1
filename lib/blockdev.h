/* blockdev.h - what must hold before a block device is overwritten: nothing has it mounted and
 * libblkid finds no filesystem, RAID or partition-table signature on it (or --force is given). */
#ifndef DEDIS_BLOCKDEV_H
#define DEDIS_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Is the device dev mounted? where: its mount point. A mounted partition of it is not seen
 * here; an O_EXCL open of the whole device fails with EBUSY then. */
bool blockdev_mounted(dev_t dev, char *where, size_t len);

/* 1 with what set ("a ext4 filesystem signature", "a gpt partition table") when libblkid
 * recognises something on the device at path, 0 when not, -1 when it cannot probe it. */
int blockdev_signature(const char *path, char *what, size_t len);

#endif
