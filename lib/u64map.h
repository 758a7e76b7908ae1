/* u64map.h - an open-addressing hash map from 64-bit keys to 64-bit values (any key but
 * U64MAP_EMPTY): the id, copies and block tallies of all three tools, grown as it fills. */
#ifndef DEDIS_U64MAP_H
#define DEDIS_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/rng.h"

#define U64MAP_EMPTY UINT64_MAX /* marks a free slot: the one key a map cannot hold */

/* A zeroed map is an empty one (its first insertion allocates). */
struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap;    /* slots, a power of two */
	size_t used;   /* keys held */
	uint64_t salt; /* per-map hash salt: merging one map into another in slot order must not
	                * replay its probe sequence (that clusters quadratically) */
};

/* Room for `expect` keys before it grows: at least 1024 slots, a power of two >= 2 * expect.
 * 0, or -1 out of memory (m left empty). */
int u64map_init(struct u64map *m, size_t expect);
void u64map_free(struct u64map *m);
/* Twice the slots, every key moved. 0, or -1 out of memory (m unchanged). */
int u64map_grow(struct u64map *m);

/* Where key is, or the free slot where it would go. */
static inline size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	size_t i = rng_mix64(key ^ m->salt) & (m->cap - 1);
	while (m->keys[i] != U64MAP_EMPTY && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* key's value, inserted as 0 when absent (growing past 3/4 full): valid until the next insertion.
 * NULL out of memory, or for the key U64MAP_EMPTY. Inline: it is a hot path's one call. */
static inline uint64_t *u64map_at(struct u64map *m, uint64_t key)
{
	if (key == U64MAP_EMPTY || ((m->used + 1) * 4 > m->cap * 3 && u64map_grow(m)))
		return NULL;
	size_t i = u64map_slot(m, key);
	if (m->keys[i] == U64MAP_EMPTY) {
		m->keys[i] = key;
		m->used++;
	}
	return &m->vals[i];
}

/* key's value without inserting: NULL when absent. */
static inline const uint64_t *u64map_find(const struct u64map *m, uint64_t key)
{
	if (!m->cap || key == U64MAP_EMPTY)
		return NULL;
	size_t i = u64map_slot(m, key);
	return m->keys[i] == U64MAP_EMPTY ? NULL : &m->vals[i];
}

/* Walks the map in slot order: start with *pos = 0; false at the end. */
bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val);

#endif
