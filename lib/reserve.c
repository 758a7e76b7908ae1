/* reserve.c - growing an array in place: room for `need` elements of `each` bytes, the capacity
 * doubled from `first` (or from what it was) until it holds them. */
#include <stdint.h>
#include <stdlib.h>
#include "lib/reserve.h"

int array_reserve(void **p, size_t *cap, size_t need, size_t each, size_t first)
{
	if (need <= *cap)
		return 0;
	if (!each || need > SIZE_MAX / each)
		return -1;
	size_t c = *cap ? *cap : first ? first : 1;
	while (c < need)
		c = c <= SIZE_MAX / 2 ? c * 2 : need;
	if (c > SIZE_MAX / each)
		c = need; /* doubling went past what can be asked for: exactly what is needed */
	void *q = realloc(*p, c * each);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}
