/* inodeset.h - a set of (dev, ino) pairs: the files a walk has met (hard links, repeated paths)
 * and those another part of a scan holds. */
#ifndef DEDIS_GEN_INODESET_H
#define DEDIS_GEN_INODESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inode_key {
	uint64_t dev, ino; /* ino 0 = empty slot (no file has inode 0 on Linux) */
};

/* Zeroed: empty. */
struct inode_set {
	struct inode_key *keys;
	size_t cap, n;
};

/* Adds (dev, ino), ino non-zero: 1 when it was there already, 0 when new, -1 out of memory. */
int inode_set_insert(struct inode_set *s, uint64_t dev, uint64_t ino);
bool inode_set_has(const struct inode_set *s, uint64_t dev, uint64_t ino);
void inode_set_free(struct inode_set *s);

#endif
