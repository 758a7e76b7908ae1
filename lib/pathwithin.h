/* pathwithin.h - a path's parent directory, by its name; and is a path (one that may not exist
 * yet) a directory or inside it, by the device and inode of each of its ancestors: the one rule
 * behind "would this output land in what the tool reads or writes", so links and bind mounts of
 * the directory are found too. */
#ifndef DEDIS_PATHWITHIN_H
#define DEDIS_PATHWITHIN_H

#include <stddef.h>

/* 1 when path, or the directory a new path would be created in, is dir or lies under it (links
 * followed); 0 when not, or when path's directory does not exist; -errno when dir cannot be
 * looked at. */
int path_within(const char *path, const char *dir);

/* The directory a path names its entry in, by the name alone: "a/b" -> "a", "a/b/" -> "a",
 * "/a" -> "/", "b" -> ".". Into out (len bytes; a longer one is cut). */
void path_parent(const char *path, char *out, size_t len);

#endif
