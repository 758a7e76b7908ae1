/* mapread.h - a range of a file mapped for reading in place, and a guard that turns the SIGBUS
 * of a page that cannot be read (the file shrank, or an I/O error) into an error return. */
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

/* What a file allows, the same for all its ranges (map_file_probe). */
struct map_file {
	bool mappable;          /* not on a pseudo file system (procfs, sysfs, ...), whose large
				 * files can be device memory */
	bool residency_visible; /* mincore tells the truth about its pages: the process owns the file,
				 * may write it, or is root; for any other the kernel says "all resident" */
};

/* The facts of fd for map_range_open; the first call also installs the SIGBUS handler
 * map_guarded needs (without it, nothing is mappable). */
void map_file_probe(int fd, struct map_file *f);

enum map_open_result {
	MAP_OPEN_OK,
	MAP_OPEN_NOT_RESIDENT, /* resident_only, and a page of the range is not in memory, or this
				* process cannot tell: not mapped */
	MAP_OPEN_FAILED,       /* not mapped: the file is not mappable, or mmap or mincore failed */
};

/* Maps [off, off + len) of fd (probed as f) read-only. With resident_only, the range is mapped
 * only where every page of it is known to be in the page cache already (read from a device, it is
 * better read ahead by pread). */
enum map_open_result map_range_open(int fd, const struct map_file *f, uint64_t off, size_t len, bool resident_only,
				    struct map_range *m);
void map_range_close(struct map_range *m);

/* Runs fn(arg) and returns what it returns, catching the SIGBUS of a fault in m's pages: then fn
 * is left where it faulted, *fault is set to the faulting address and -1 returned (*fault is NULL
 * otherwise). fn must hold no lock and own no allocation it would leak when left that way. A
 * SIGBUS from a fault elsewhere, or sent (kill), goes to the handler there was before, or ends
 * the process as it would have without this one. */
int map_guarded(const struct map_range *m, int (*fn)(void *arg), void *arg, const void **fault);

#endif
