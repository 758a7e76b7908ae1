/* devnum.h - block devices by number: the disk a partition belongs to (sysfs), and whether two
 * devices share blocks (one device under two nodes, or a disk and a partition of it). */
#ifndef DEDIS_DEVNUM_H
#define DEDIS_DEVNUM_H

#include <sys/types.h>

/* The whole disk partition `part` belongs to; 0 when it is no partition. */
dev_t devnum_disk_of(dev_t part);

/* How block devices a and b share blocks: */
enum devnum_overlap {
	DEVNUM_APART,     /* not at all */
	DEVNUM_SAME,      /* one device (two nodes, a link) */
	DEVNUM_A_HOLDS_B, /* b is a partition of the disk a */
	DEVNUM_B_HOLDS_A, /* a is a partition of the disk b */
};
enum devnum_overlap devnum_overlap(dev_t a, dev_t b);

#endif
