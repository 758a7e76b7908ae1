/* walk.h - what dedisgen reads: each PATH given (a directory walked recursively without
 * following symlinks, a regular file, a block device), every inode once. */
#ifndef DEDIS_GEN_WALK_H
#define DEDIS_GEN_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/errmsg.h"

enum walk_kind { WALK_FILE, WALK_DEVICE, WALK_ERROR };

struct walk_entry {
	enum walk_kind kind;
	const char *path;   /* valid until the next walk_next */
	uint64_t size;      /* st_size, or the device size; 0 when unknown */
	int err;            /* WALK_ERROR: errno of the failure (an unreadable directory...) */
	uint64_t start, len; /* the part to read: len bytes from start (len 0: from start to the end) */
	uint64_t dev, ino;  /* WALK_FILE with other hard links: its inode (another part may hold it); else 0 */
};

struct walk;

/* Checks every top-level path first: each must exist (a symlink given here is followed) and be
 * a directory, a regular file or a block device, and be readable. Returns NULL with err filled
 * ("PATH: reason") when one is not: that is bad input, found before anything is read. */
struct walk *walk_open(char *const *paths, int npaths, bool one_file_system, struct dd_err *err);
/* Next entry: 1 (e filled), 0 at the end, -1 on an internal failure (out of memory). Inside a
 * tree, symlinks, devices, FIFOs and sockets are skipped; with one_file_system, directories on
 * other filesystems are not entered. A file with several hard links is returned once (its
 * blocks are stored once on disk), and so is a path reached twice. */
int walk_next(struct walk *w, struct walk_entry *e);
/* Sum of the sizes of the top-level files and devices, and whether every top-level path is one
 * (then the total is known up front: progress can show an ETA). */
uint64_t walk_known_total(const struct walk *w, bool *complete);
/* A walk of one regular file or block device reads only len bytes from start (a stripe of it:
 * dedisgen-mpi). 0, or -1 when the walk is not of one file or device. */
int walk_set_range(struct walk *w, uint64_t start, uint64_t len);
/* Leave out the file (dev, ino) wherever this walk meets it: another part read it already
 * (dedisgen-mpi: a hard link into an earlier rank's part). 0, or -1 out of memory. */
int walk_skip_inode(struct walk *w, uint64_t dev, uint64_t ino);
void walk_close(struct walk *w);

#endif
