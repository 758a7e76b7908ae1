/* packer.c - compress with LZ4, append fragments to the open bin, and find and decompress a
 * fragment in a packed block by walking the fragment headers from the start of the block. */
#include <errno.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include "reference-engine/packer.h"

#define FRAG_MAGIC 0xdf

int packer_init(struct packer *p, uint32_t block_size)
{
	memset(p, 0, sizeof *p);
	p->block_size = block_size;
	if (posix_memalign((void **)&p->bin, 4096, block_size) ||
	    posix_memalign((void **)&p->scratch, 4096, (size_t)LZ4_compressBound((int)block_size))) {
		packer_free(p);
		return -ENOMEM;
	}
	return 0;
}

void packer_free(struct packer *p)
{
	free(p->bin);
	free(p->scratch);
	p->bin = p->scratch = NULL;
}

uint32_t packer_compress(struct packer *p, const void *buf)
{
	int n = LZ4_compress_default(buf, (char *)p->scratch, (int)p->block_size, LZ4_compressBound((int)p->block_size));
	return n > 0 && pack_worth_it((uint32_t)n, p->block_size) ? (uint32_t)n : 0;
}

bool packer_fits(const struct packer *p, uint32_t len)
{
	return p->open && p->frags < PACK_MAX_FRAGS && p->used + PACK_FRAG_HDR + len <= p->block_size;
}

void packer_open_bin(struct packer *p, uint64_t pbn)
{
	memset(p->bin, 0, p->block_size);
	p->pbn = pbn;
	p->used = 0;
	p->frags = 0;
	p->open = true;
}

unsigned packer_append(struct packer *p, uint32_t len)
{
	uint8_t *h = p->bin + p->used;
	unsigned slot = p->frags++;
	h[0] = FRAG_MAGIC;
	h[1] = (uint8_t)slot;
	h[2] = (uint8_t)len;
	h[3] = (uint8_t)(len >> 8);
	memcpy(h + PACK_FRAG_HDR, p->scratch, len);
	p->used += PACK_FRAG_HDR + len;
	return slot;
}

int packer_extract(uint32_t block_size, const void *block, unsigned slot, uint32_t len, void *out)
{
	const uint8_t *b = block;
	uint32_t off = 0;
	for (unsigned k = 0;; k++) {
		if (off + PACK_FRAG_HDR > block_size || b[off] != FRAG_MAGIC || b[off + 1] != k)
			return -EIO;
		uint32_t n = b[off + 2] | (uint32_t)b[off + 3] << 8;
		if (off + PACK_FRAG_HDR + n > block_size)
			return -EIO;
		if (k == slot) {
			if (n != len)
				return -EIO;
			int got = LZ4_decompress_safe((const char *)b + off + PACK_FRAG_HDR, out, (int)n, (int)block_size);
			return got == (int)block_size ? 0 : -EIO;
		}
		off += PACK_FRAG_HDR + n;
	}
}
