/* pathwithin.c - path_parent by name; path_within: a path's resolved directory and every one above
 * it compared with a directory by (st_dev, st_ino). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/pathwithin.h"

void path_parent(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--) /* "results/" names results */
		out[n - 1] = 0;
	char *slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, len, ".");
	else
		slash[slash == out] = 0; /* "/a" is in "/" */
}

int path_within(const char *path, const char *dir)
{
	struct stat d, st;
	if (stat(dir, &d))
		return -errno;
	char real[PATH_MAX];
	if (!realpath(path, real)) { /* a new name: its directory, resolved */
		char parent[PATH_MAX];
		path_parent(path, parent, sizeof parent);
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

bool path_entry_of(const char *path, struct path_entry *e)
{
	char dir[PATH_MAX];
	struct stat st;
	path_parent(path, dir, sizeof dir);
	if (stat(dir, &st))
		return false;
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	if (n - b > NAME_MAX)
		return false;
	memcpy(e->base, path + b, n - b);
	e->base[n - b] = 0;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return true;
}

bool path_entry_same(const struct path_entry *a, const struct path_entry *b)
{
	return a->dev == b->dev && a->ino == b->ino && !strcmp(a->base, b->base);
}
