/* pathwithin.c - path_within: a path's resolved directory and every one above it compared with a
 * directory by (st_dev, st_ino). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "pathwithin.h"

int path_within(const char *path, const char *dir)
{
	struct stat d, st;
	if (stat(dir, &d))
		return -errno;
	char real[PATH_MAX];
	if (!realpath(path, real)) { /* a new name: its directory, resolved */
		char parent[PATH_MAX];
		if (snprintf(parent, sizeof parent, "%s", path) >= (int)sizeof parent)
			return 0;
		for (size_t n = strlen(parent); n > 1 && parent[n - 1] == '/'; n--)
			parent[n - 1] = 0;
		char *slash = strrchr(parent, '/');
		if (!slash)
			snprintf(parent, sizeof parent, ".");
		else
			slash[slash == parent] = 0; /* "/a" is in "/" */
		if (!realpath(parent, real))
			return 0;
	}
	for (;;) {
		if (stat(real, &st) == 0 && st.st_dev == d.st_dev && st.st_ino == d.st_ino)
			return 1;
		char *slash = strrchr(real, '/');
		if (!slash || !strcmp(real, "/"))
			return 0;
		slash[slash == real] = 0; /* "/a" goes up to "/" */
	}
}
