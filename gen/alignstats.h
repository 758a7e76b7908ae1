/* alignstats.h - fixed dedup at 2 to 32 blocks (dedis-dist(5) [alignment 1]): records' identities
 * derived from their blocks' fingerprints, kept per thread, counted distinct at the end. */
#ifndef DEDIS_GEN_ALIGNSTATS_H
#define DEDIS_GEN_ALIGNSTATS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"

/* Records kept per size before a set is compacted (sorted, repeats dropped) and, when that does
 * not halve it, sampled by identity (half the contents out, every copy of each alike): 8 MiB per
 * size and thread at most (40 MiB for the five sizes). */
#define ALIGN_KEEP (UINT64_C(1) << 20)

/* A set of records' identities per size: a thread's, or all threads' merged into one. */
struct align_set;
struct align_set *align_set_new(void);
void align_set_free(struct align_set *s);
/* The n block fingerprints (fl bytes apart) of a file's blocks first_index .. first_index + n - 1
 * (a file's last block last), zero_id the zero block's identity (align_block_id of its
 * fingerprint). Records start where the block index is a multiple of their size; blocks before the
 * first multiple of 32 here are left out (their records began elsewhere); a record the file's end
 * cuts is padded with zero blocks. 0, or -1 out of memory. */
int align_set_add(struct align_set *s, const uint8_t *fps, size_t fl, size_t n, uint64_t first_index,
		  uint64_t zero_id);
/* from's records go into into (from is left empty). 0, or -1 out of memory. */
int align_set_merge(struct align_set *into, struct align_set *from);
/* The section's record counts (shift_* are left as they are). 0, or -1 out of memory. */
int align_set_result(struct align_set *s, struct dist_align *out);

/* A block's identity: its fingerprint's first 8 bytes (a cryptographic hash's: uniform). */
uint64_t align_block_id(const uint8_t *fp);
/* A record's identity from its two halves' (not symmetric: (a, b) and (b, a) differ). */
uint64_t align_pair_id(uint64_t first, uint64_t second);

#endif
