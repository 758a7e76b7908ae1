/* reserve.c - growing an array in place: room for `need` elements of `each` bytes, the capacity
 * doubled from `first` (or from what it was) until it holds them. */
#include <stdlib.h>
#include "reserve.h"

int array_reserve(void **p, size_t *cap, size_t need, size_t each, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : first;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * each);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}
