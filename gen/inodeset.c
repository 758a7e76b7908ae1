/* inodeset.c - a set of (dev, ino) pairs: open addressing, linear probing, kept at most three
 * quarters full. */
#include <stdlib.h>
#include "gen/inodeset.h"
#include "lib/rng.h"

static size_t slot_of(const struct inode_set *s, uint64_t dev, uint64_t ino)
{
	size_t p = rng_mix64(dev * 31 + ino) & (s->cap - 1);
	while (s->keys[p].ino && !(s->keys[p].dev == dev && s->keys[p].ino == ino))
		p = (p + 1) & (s->cap - 1);
	return p;
}

int inode_set_insert(struct inode_set *s, uint64_t dev, uint64_t ino)
{
	if ((s->n + 1) * 4 > s->cap * 3) {
		struct inode_set grown = {calloc(s->cap ? 2 * s->cap : 256, sizeof *grown.keys), s->cap ? 2 * s->cap : 256,
					  s->n};
		if (!grown.keys)
			return -1;
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i].ino)
				grown.keys[slot_of(&grown, s->keys[i].dev, s->keys[i].ino)] = s->keys[i];
		free(s->keys);
		*s = grown;
	}
	size_t p = slot_of(s, dev, ino);
	if (s->keys[p].ino)
		return 1;
	s->keys[p] = (struct inode_key){dev, ino};
	s->n++;
	return 0;
}

bool inode_set_has(const struct inode_set *s, uint64_t dev, uint64_t ino)
{
	return s->cap && s->keys[slot_of(s, dev, ino)].ino;
}

void inode_set_free(struct inode_set *s)
{
	free(s->keys);
	*s = (struct inode_set){0};
}
