/* u64map.c - the 64-bit key -> value map's allocation, growth and walk (its probe and insert
 * are inline in u64map.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "lib/u64map.h"

int u64map_init(struct u64map *m, size_t expect)
{
	size_t cap = 1024;
	while (cap < expect * 2)
		cap <<= 1;
	memset(m, 0, sizeof *m);
	m->keys = malloc(cap * sizeof *m->keys);
	m->vals = calloc(cap, sizeof *m->vals);
	if (!m->keys || !m->vals) {
		u64map_free(m);
		return -1;
	}
	memset(m->keys, 0xff, cap * sizeof *m->keys); /* every slot U64MAP_EMPTY */
	m->cap = cap;
	static _Atomic uint64_t maps;
	m->salt = rng_mix64((atomic_fetch_add_explicit(&maps, 1, memory_order_relaxed) + 1) ^ (uint64_t)(uintptr_t)m->keys);
	return 0;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

int u64map_grow(struct u64map *m)
{
	struct u64map bigger;
	if (u64map_init(&bigger, m->cap))
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == U64MAP_EMPTY)
			continue;
		size_t j = u64map_slot(&bigger, m->keys[i]);
		bigger.keys[j] = m->keys[i];
		bigger.vals[j] = m->vals[i];
	}
	bigger.used = m->used;
	u64map_free(m);
	*m = bigger;
	return 0;
}

bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (; *pos < m->cap; ++*pos) {
		if (m->keys[*pos] == U64MAP_EMPTY)
			continue;
		*key = m->keys[*pos];
		*val = m->vals[(*pos)++];
		return true;
	}
	return false;
}
