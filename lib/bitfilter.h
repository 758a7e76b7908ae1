/* bitfilter.h - a membership bitmap, one bit per key (set by the key's own hash bits): a probe of
 * a hash table that most lookups miss is skipped when the bit is clear, at the cost of a bitmap
 * small enough to stay in cache. No false negatives; about keys/bits false positives. */
#ifndef DEDIS_BITFILTER_H
#define DEDIS_BITFILTER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bitfilter {
	uint64_t *bits; /* NULL: no filter (every key may be present) */
	uint64_t mask;  /* bits - 1 */
};

/* Room for `keys` keys at bits_per_key bits each (a power of two of bits, at least 512), or no
 * filter where that would pass max_bits. 0, or -1 out of memory (no filter then either). */
int bitfilter_init(struct bitfilter *f, size_t keys, size_t bits_per_key, size_t max_bits);
void bitfilter_free(struct bitfilter *f);

/* h: the key's hash (its low bits choose the bit). */
static inline void bitfilter_add(struct bitfilter *f, uint64_t h)
{
	if (f->bits) {
		uint64_t b = h & f->mask;
		f->bits[b / 64] |= UINT64_C(1) << (b % 64);
	}
}

/* false: h's key was never added. */
static inline bool bitfilter_maybe(const struct bitfilter *f, uint64_t h)
{
	uint64_t b = h & f->mask;
	return !f->bits || (f->bits[b / 64] >> (b % 64) & 1);
}

#endif
