/* reserve.h - growing an array in place: room for `need` elements of `each` bytes, the capacity
 * doubled from `first` (or from what it was) until it holds them. */
#ifndef DEDIS_RESERVE_H
#define DEDIS_RESERVE_H
#include <stddef.h>

/* 0, or -1 (out of memory, or need * each past SIZE_MAX: *p and *cap unchanged). */
int array_reserve(void **p, size_t *cap, size_t need, size_t each, size_t first);

#endif
