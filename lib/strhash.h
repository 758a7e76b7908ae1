/* strhash.h - a string's 64-bit FNV-1a hash: names (hosts, paths, lock identities) as numbers to
 * compare across ranks or to name a file after. Not a digest: only equal strings must agree. */
#ifndef DEDIS_LIB_STRHASH_H
#define DEDIS_LIB_STRHASH_H

#include <stdint.h>

static inline uint64_t str_hash64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif
