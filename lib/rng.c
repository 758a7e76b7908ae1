/* rng.c - seeding and splitting for the suite's PRNG (xoshiro256** stepped inline in rng.h);
 * every stream is derived from (seed, stream number) through splitmix64, so runs reproduce. */
#include "lib/rng.h"

uint64_t rng_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++) {
		x += 0x9e3779b97f4a7c15ULL;
		r->s[i] = rng_mix64(x);
	}
	/* xoshiro's all-zero state is a fixed point; splitmix never yields four zeros, but be sure. */
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

void rng_split(struct rng *child, uint64_t seed, uint64_t stream)
{
	rng_seed(child, rng_mix64(seed) ^ rng_mix64(stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL));
}
