/* mapread.h - a range of a file mapped for reading in place, and a guard that turns the SIGBUS
 * of a page the file no longer holds (it shrank while being read) into an error return. */
#ifndef DEDIS_GEN_MAPREAD_H
#define DEDIS_GEN_MAPREAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct map_range {
	const uint8_t *data; /* the range's first byte */
	void *base;          /* the mapping (page-aligned, from the page holding the first byte) */
	size_t maplen;
};

enum map_open_result {
	MAP_OPEN_OK,
	MAP_OPEN_NOT_RESIDENT, /* resident_only and a page of the range is not in memory: not mapped */
	MAP_OPEN_FAILED,       /* mmap or mincore failed (errno): not mapped */
};

/* Maps [off, off + len) of fd read-only. With resident_only, the range is mapped only where every
 * page of it is already in the page cache (read from a device, it is better read ahead by pread).
 * The first call installs the SIGBUS handler map_guarded needs (MAP_OPEN_FAILED where it cannot). */
enum map_open_result map_range_open(int fd, uint64_t off, size_t len, bool resident_only, struct map_range *m);
void map_range_close(struct map_range *m);

/* Runs fn(arg) and returns what it returns, catching a SIGBUS in m's pages: then fn is left where
 * it faulted, *faulted is set and -1 returned. fn must hold no lock and own no allocation it would
 * leak when left that way. Faults outside m's pages, or outside fn, go to the handler that was
 * there before. */
int map_guarded(const struct map_range *m, int (*fn)(void *arg), void *arg, bool *faulted);

#endif
