/* refalloc.h - stored-content addresses and physical block accounting: one 32-bit reference word
 * per address (LBN references, "indexed", "held", "reserved"), lock-free allocation, rebuild. */
#ifndef DEDIS_ENGINE_SPACE_H
#define DEDIS_ENGINE_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include "reference-engine/meta.h"

/* An address, as the LBN map and the index hold it (0 = none): a whole block at a PBN, or
 * fragment `slot` (LEN compressed bytes) of a packed block. One word, so a map entry changes
 * with one atomic store and a crash leaves it old or new. */
#define ADDR_VALID (1ULL << 63)
#define ADDR_PACKED (1ULL << 62)
#define ADDR_PBN_MASK ((1ULL << 40) - 1)
#define ADDR_SLOT_SHIFT 40 /* 4 bits */
#define ADDR_LEN_SHIFT 44  /* 16 bits */

static inline uint64_t addr_whole(uint64_t pbn) { return ADDR_VALID | pbn; }
static inline uint64_t addr_fragment(uint64_t pbn, unsigned slot, unsigned len)
{
	return ADDR_VALID | ADDR_PACKED | ((uint64_t)len << ADDR_LEN_SHIFT) | ((uint64_t)slot << ADDR_SLOT_SHIFT) | pbn;
}
static inline uint64_t addr_pbn(uint64_t a) { return a & ADDR_PBN_MASK; }
static inline unsigned addr_slot(uint64_t a) { return (unsigned)(a >> ADDR_SLOT_SHIFT) & 15; }
static inline unsigned addr_len(uint64_t a) { return (unsigned)(a >> ADDR_LEN_SHIFT) & 0xffff; }
static inline bool addr_packed(uint64_t a) { return (a & ADDR_PACKED) != 0; }

/* Reference word bits. A stored content is HELD from the moment it is published until GC
 * reclaims it, whatever its references do: a block whose last reference went away may still be
 * what the durable map names, so it is reused only after a commit (GC commits first). */
#define REF_INDEXED 0x80000000u
#define REF_RESERVED 0x40000000u /* word 0 of a PBN: allocated to a writer or an open packing bin */
#define REF_HELD 0x20000000u
#define REF_LBNS(r) ((r) & 0x1fffffffu)

#define SPACE_EXTENT 64 /* PBNs a process carves from the shared cursor at a time */

struct space {
	uint32_t *refs;          /* shared mapping: blocks * frags words */
	uint64_t blocks;
	unsigned frags;          /* addresses per PBN */
	uint32_t block_size;
	uint64_t *cursor;        /* the shared allocation cursor */
	int refs_fd;             /* the file behind refs, to skip its holes when counting (0: none,
	                          * as a zeroed struct has it; every word is then read) */
};

static inline uint64_t space_index(const struct space *s, uint64_t addr)
{
	return addr_pbn(addr) * s->frags + (addr_packed(addr) ? addr_slot(addr) : 0);
}
/* Bytes a content at this address takes in the chunk store. */
uint32_t space_bytes(const struct space *s, uint64_t addr);
bool space_valid(const struct space *s, uint64_t addr);

/* A free PBN (every word 0), claimed with REF_RESERVED on its word 0, from this process's extent
 * (a new one carved from the cursor when it runs out). -ENOSPC only when a look at every block
 * found none free. */
int space_alloc(struct space *s, struct vol_slot *me, uint64_t *pbn);
/* A free PBN among those the cursor has handed out at least once, for which room(arg, pbn) says
 * the chunk store already has its room, claimed as space_alloc does: the search goes on from *pos
 * (this process's) and wraps within them. After the file system under a sparse store said ENOSPC
 * the cursor's next PBNs are holes that would fail again, while those GC freed behind it still
 * have their file blocks. -ENOSPC when one look at each found none. */
int space_alloc_reused(struct space *s, uint64_t *pos, bool (*room)(void *arg, uint64_t pbn), void *arg,
		       uint64_t *pbn);
/* Atomic updates; each returns the word before it. */
uint32_t space_ref(struct space *s, uint64_t addr);
uint32_t space_unref(struct space *s, uint64_t addr); /* never below zero */
uint32_t space_set(struct space *s, uint64_t idx, uint32_t bits);
uint32_t space_clear(struct space *s, uint64_t idx, uint32_t bits);
bool space_pbn_free(const struct space *s, uint64_t pbn);
uint64_t space_used_blocks(const struct space *s);

/* Gauges recomputed by a rebuild. */
struct space_gauges {
	int64_t mapped, referenced, physical_bytes, fragments;
};
/* Recompute every reference word from the LBN map and the indexed addresses; HELD bits survive
 * (held blocks are GC's to free), RESERVED survives only on the PBNs in `keep` (open bins). */
void space_rebuild(struct space *s, const uint64_t *lbnmap, uint64_t nlbns, const uint64_t *indexed,
		   uint64_t nindexed, const uint64_t *keep, unsigned nkeep, struct space_gauges *g);

#endif
