/* bitfilter.c - a membership bitmap's sizing and memory (see bitfilter.h; adding and testing a
 * key are inline there). */
#include <stdlib.h>
#include "lib/bitfilter.h"

int bitfilter_init(struct bitfilter *f, size_t keys, size_t bits_per_key, size_t max_bits)
{
	size_t want = bits_per_key * keys, nbits = 512;
	f->bits = NULL;
	f->mask = 0;
	while (nbits < want && nbits < max_bits)
		nbits *= 2;
	if (nbits < want)
		return 0;
	if (!(f->bits = calloc(nbits / 64, sizeof *f->bits)))
		return -1;
	f->mask = nbits - 1;
	return 0;
}

void bitfilter_free(struct bitfilter *f)
{
	free(f->bits);
	f->bits = NULL;
}
