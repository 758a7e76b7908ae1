/* refalloc.c - reference words and allocation, all by atomic operations on the shared mapping: an
 * overwrite only drops a reference, so stale contents stay held until GC reclaims them. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "reference-engine/refalloc.h"

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

int space_alloc_reused(struct space *s, uint64_t *pos, bool (*room)(void *arg, uint64_t pbn), void *arg,
		       uint64_t *pbn)
{
	uint64_t carved = A(load_n)(s->cursor, __ATOMIC_RELAXED);
	if (carved > s->blocks)
		carved = s->blocks;
	for (uint64_t n = 0; n < carved; n++) {
		uint64_t p = (*pos)++ % carved;
		if (space_pbn_free(s, p) && room(arg, p) && claim(s, p)) {
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

static uint64_t used_in(const struct space *s, uint64_t from, uint64_t to)
{
	uint64_t n = 0;
	for (uint64_t p = from; p < to && p < s->blocks; p++)
		n += !space_pbn_free(s, p);
	return n;
}

/* Only the refs file's data is read: a hole is free PBNs (zero words), and reading one faulted in
 * zero pages - 1.1 GB for every stat of an empty 1 TiB volume. Dirty pages of the shared mapping
 * count as data (the file systems' SEEK_DATA looks at the page cache), and so do cached pages of
 * an allocated range: read-ahead is off while counting, or each page read would bring in the next
 * ones, which then count as data, to the end of the file. */
uint64_t space_used_blocks(const struct space *s)
{
	if (s->refs_fd <= 0)
		return used_in(s, 0, s->blocks);
	uint64_t per = (uint64_t)s->frags * 4, n = 0;
	off_t off = 0, end = (off_t)(s->blocks * per);
	(void)madvise(s->refs, (size_t)end, MADV_RANDOM);
	while (off < end) {
		off_t data = lseek(s->refs_fd, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* nothing but a hole from off on */
		off_t hole = data < 0 ? -1 : lseek(s->refs_fd, data, SEEK_HOLE);
		if (hole < 0) { /* holes unknown here: read it all */
			n = used_in(s, 0, s->blocks);
			break;
		}
		n += used_in(s, (uint64_t)data / per, ((uint64_t)hole + per - 1) / per);
		off = hole;
	}
	(void)madvise(s->refs, (size_t)end, MADV_NORMAL);
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
