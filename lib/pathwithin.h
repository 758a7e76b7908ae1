/* pathwithin.h - a path's parent directory, by its name; and is a path (one that may not exist
 * yet) a directory or inside it, by the device and inode of each of its ancestors: the one rule
 * behind "would this output land in what the tool reads or writes", so links and bind mounts of
 * the directory are found too. */
#ifndef DEDIS_PATHWITHIN_H
#define DEDIS_PATHWITHIN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* 1 when path, or the directory a new path would be created in, is dir or lies under it (links
 * followed); 0 when not, or when path's directory does not exist; -errno when dir cannot be
 * looked at. */
int path_within(const char *path, const char *dir);

/* The directory a path names its entry in, by the name alone: "a/b" -> "a", "a/b/" -> "a",
 * "/a" -> "/", "b" -> ".". Into out (len bytes; a longer one is cut). */
void path_parent(const char *path, char *out, size_t len);

/* The directory entry a path names, existing or not: its parent directory's device and inode,
 * and its last component (trailing slashes dropped). Two names of one entry ("x", "./x", a link
 * to the directory) agree: what a rename over either would replace. */
struct path_entry {
	dev_t dev;
	ino_t ino;
	char base[NAME_MAX + 1];
};
/* false when the parent cannot be looked at (or the last component is too long). */
bool path_entry_of(const char *path, struct path_entry *e);
bool path_entry_same(const struct path_entry *a, const struct path_entry *b);

#endif
