/* rng.h - the one seeded PRNG of the suite (xoshiro256**, seeded through splitmix64).
 * A generator is splittable: rng_split() derives independent per-process streams from one seed. */
#ifndef DEDIS_RNG_H
#define DEDIS_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* splitmix64 step: also a good 64-bit mixing function on its own. */
uint64_t rng_mix64(uint64_t x);

void rng_seed(struct rng *r, uint64_t seed);
/* An independent stream number `stream` derived from `seed` (worker n, phase p...). */
void rng_split(struct rng *child, uint64_t seed, uint64_t stream);

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n), unbiased (Lemire's multiply-and-reject); n > 0. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = -n % n;
		while (low < threshold) {
			m = (unsigned __int128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Uniform in [lo, hi], inclusive (TPC-C's rand(x, y)). */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* Uniform double in [0, 1). */
static inline double rng_double(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
