/* packer.h - LZ4 compression and VDO-style packing: compressed fragments are appended, several
 * to a physical block, into a per-process open bin; a fragment is never rewritten in place. */
#ifndef DEDIS_ENGINE_PACKER_H
#define DEDIS_ENGINE_PACKER_H

#include <stdbool.h>
#include <stdint.h>

#define PACK_MAX_FRAGS 16  /* address slots per physical block (4 bits in an address) */
#define PACK_FRAG_HDR 4    /* per fragment: magic, slot, 16-bit length */

/* A content is packed when its LZ4 size plus the fragment header is at most 7/8 of a block;
 * otherwise it is stored whole (the same rule the end-to-end check applies). */
static inline bool pack_worth_it(uint32_t compressed, uint32_t block_size)
{
	return compressed && compressed + PACK_FRAG_HDR <= block_size - block_size / 8;
}

struct packer {
	uint32_t block_size;
	uint8_t *bin;       /* the open bin's bytes (the whole block as written so far) */
	uint8_t *scratch;   /* compression output / packed block input */
	uint64_t pbn;       /* the open bin's PBN, valid when `open` */
	uint32_t used;
	unsigned frags;
	bool open;
};

int packer_init(struct packer *p, uint32_t block_size);
void packer_free(struct packer *p);
/* LZ4 size of buf into p->scratch; 0 when it does not compress (or is not worth packing). */
uint32_t packer_compress(struct packer *p, const void *buf);
/* Does a fragment of `len` bytes fit in the open bin? */
bool packer_fits(const struct packer *p, uint32_t len);
/* Start a bin at pbn (the caller allocated it). */
void packer_open_bin(struct packer *p, uint64_t pbn);
/* Append p->scratch[0, len) to the open bin: returns its slot; the caller writes p->bin to the
 * bin's PBN (earlier fragments are rewritten with the same bytes, so a torn write cannot harm them). */
unsigned packer_append(struct packer *p, uint32_t len);
/* Decompress fragment `slot` of `len` bytes from a packed block into out (block_size bytes):
 * 0, or -EIO when the block does not hold such a fragment. */
int packer_extract(uint32_t block_size, const void *block, unsigned slot, uint32_t len, void *out);

#endif
