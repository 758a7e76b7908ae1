/* devnum.c - a partition's disk from sysfs (a partition's directory sits inside its disk's, and
 * holds a `partition` file), and the overlap of two block devices by number. */
#include <stdio.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/devnum.h"

dev_t devnum_disk_of(dev_t part)
{
	char path[96];
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/partition", major(part), minor(part));
	if (access(path, F_OK))
		return 0;
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/../dev", major(part), minor(part));
	FILE *f = fopen(path, "re");
	unsigned maj, mnr;
	int ok = f && fscanf(f, "%u:%u", &maj, &mnr) == 2;
	if (f)
		fclose(f);
	return ok ? makedev(maj, mnr) : 0;
}

enum devnum_overlap devnum_overlap(dev_t a, dev_t b)
{
	if (a == b)
		return DEVNUM_SAME;
	if (devnum_disk_of(b) == a)
		return DEVNUM_A_HOLDS_B;
	if (devnum_disk_of(a) == b)
		return DEVNUM_B_HOLDS_A;
	return DEVNUM_APART;
}
