/* space.c - reference words and allocation, all by atomic operations on the shared mapping: an
 * overwrite only drops a reference, so stale contents stay held until GC reclaims them. */
#include <errno.h>
#include <string.h>
#include "space.h"

#define A(x) __atomic_##x

uint32_t space_bytes(const struct space *s, uint64_t addr)
{
	return addr_packed(addr) ? addr_len(addr) + 4u /* PACK_FRAG_HDR */ : s->block_size;
}

bool space_valid(const struct space *s, uint64_t addr)
{
	return (addr & ADDR_VALID) && addr_pbn(addr) < s->blocks && (!addr_packed(addr) || addr_slot(addr) < s->frags) &&
	       (addr & ~(ADDR_VALID | ADDR_PACKED | (0xffffULL << ADDR_LEN_SHIFT) | (15ULL << ADDR_SLOT_SHIFT) | ADDR_PBN_MASK)) == 0;
}

bool space_pbn_free(const struct space *s, uint64_t pbn)
{
	for (unsigned i = 0; i < s->frags; i++)
		if (A(load_n)(&s->refs[pbn * s->frags + i], __ATOMIC_RELAXED))
			return false;
	return true;
}

/* Claim PBN p if it is free (every word 0) with REF_RESERVED on its word 0; words 1.. of a free
 * PBN stay 0: only its owner's fragments set them. */
static bool claim(struct space *s, uint64_t p)
{
	uint32_t zero = 0;
	return space_pbn_free(s, p) &&
	       A(compare_exchange_n)(&s->refs[p * s->frags], &zero, REF_RESERVED, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

int space_alloc(struct space *s, struct vol_slot *me, uint64_t *pbn)
{
	for (uint64_t tried = 0; tried < s->blocks + SPACE_EXTENT; tried++) {
		if (me->ext_next >= me->ext_end) {
			me->ext_next = A(fetch_add)(s->cursor, SPACE_EXTENT, __ATOMIC_RELAXED);
			me->ext_end = me->ext_next + SPACE_EXTENT;
		}
		uint64_t p = me->ext_next++ % s->blocks;
		if (claim(s, p)) {
			*pbn = p;
			return 0;
		}
	}
	/* The extents this process carved need not have covered the store: another writer carving
	 * at the same time takes every other one, and with an even number of extents per lap it
	 * takes the same ones lap after lap. Before saying full, look at every block once. */
	for (uint64_t p = 0; p < s->blocks; p++) {
		if (claim(s, p)) {
			*pbn = p;
			return 0;
		}
	}
	return -ENOSPC;
}

uint32_t space_ref(struct space *s, uint64_t addr)
{
	return A(fetch_add)(&s->refs[space_index(s, addr)], 1, __ATOMIC_ACQ_REL);
}

uint32_t space_unref(struct space *s, uint64_t addr)
{
	uint32_t *w = &s->refs[space_index(s, addr)];
	uint32_t before = A(load_n)(w, __ATOMIC_RELAXED);
	while (REF_LBNS(before) &&
	       !A(compare_exchange_n)(w, &before, before - 1, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
	return before; /* never below zero, even on an inconsistent volume */
}

uint32_t space_set(struct space *s, uint64_t idx, uint32_t bits)
{
	return A(fetch_or)(&s->refs[idx], bits, __ATOMIC_ACQ_REL);
}

uint32_t space_clear(struct space *s, uint64_t idx, uint32_t bits)
{
	return A(fetch_and)(&s->refs[idx], ~bits, __ATOMIC_ACQ_REL);
}

uint64_t space_used_blocks(const struct space *s)
{
	uint64_t n = 0;
	for (uint64_t p = 0; p < s->blocks; p++)
		n += !space_pbn_free(s, p);
	return n;
}

void space_rebuild(struct space *s, const uint64_t *lbnmap, uint64_t nlbns, const uint64_t *indexed,
		   uint64_t nindexed, const uint64_t *keep, unsigned nkeep, struct space_gauges *g)
{
	uint64_t words = s->blocks * s->frags;
	for (uint64_t i = 0; i < words; i++)
		s->refs[i] &= REF_HELD;
	memset(g, 0, sizeof *g);
	for (uint64_t l = 0; l < nlbns; l++) {
		uint64_t a = lbnmap[l];
		if (!a || !space_valid(s, a))
			continue; /* fsck reports it; recovery must not crash on it */
		g->mapped++;
		uint32_t before = s->refs[space_index(s, a)]++;
		if (!REF_LBNS(before)) {
			g->referenced++;
			g->physical_bytes += space_bytes(s, a);
			g->fragments += addr_packed(a);
		}
	}
	for (uint64_t i = 0; i < nindexed; i++)
		if (space_valid(s, indexed[i]))
			s->refs[space_index(s, indexed[i])] |= REF_INDEXED;
	for (uint64_t i = 0; i < words; i++)
		if (s->refs[i] & (REF_INDEXED | 0x1fffffffu))
			s->refs[i] |= REF_HELD;
	for (unsigned i = 0; i < nkeep; i++)
		if (keep[i] < s->blocks)
			s->refs[keep[i] * s->frags] |= REF_RESERVED;
}
