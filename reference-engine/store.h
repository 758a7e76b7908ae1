/* store.h - the chunk store: one block per physical block number, striped over a few data files
 * in units of `unit` PBNs (unit q = p / unit in data.<q mod stripes>), so concurrent writers, each
 * filling its own allocation extent, write different files and do not queue on one inode lock. */
#ifndef DEDIS_ENGINE_STORE_H
#define DEDIS_ENGINE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include "reference-engine/engine.h"

#define STORE_MAX_STRIPES 64

struct store {
	int fd[STORE_MAX_STRIPES];
	unsigned stripes;
	uint32_t unit;             /* PBNs per stripe unit, >= 1 */
	uint32_t block_size;
	uint64_t blocks;
	bool direct;
	const struct engine_recorder *rec; /* sees every write and sync (power-loss harness) */
};

/* How the chunk store's room is taken at format. */
enum store_room {
	STORE_SPARSE,       /* as blocks are written */
	STORE_TRY_ALLOCATE, /* all of it now where the file system can (else sparse) */
	STORE_ALLOCATE,     /* all of it now, or the format fails */
};
/* The room asked for by engine_format_params.preallocate: NULL or "auto" (STORE_TRY_ALLOCATE),
 * "full" (STORE_ALLOCATE), "sparse"; -EINVAL for anything else. */
int store_room_parse(const char *mode, enum store_room *room);
/* What that request comes to for `bytes` of chunk store in dir's file system: auto (TRY_ALLOCATE)
 * stays so only on a tmpfs where the store takes at most half the free room and half the memory
 * available, else becomes SPARSE; ALLOCATE is -ENOSPC where it exceeds the free room
 * (*free_bytes). */
int store_room_for(const char *dir, uint64_t bytes, enum store_room *room, uint64_t *free_bytes);
/* unit: the superblock's stripe_unit (0: one block). */
/* The size data.<i> is formatted with. */
uint64_t store_file_bytes(uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit, unsigned i);
int store_create(const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
		 enum store_room room);
int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
	       bool direct, const struct engine_recorder *rec);
int store_write(struct store *s, uint64_t pbn, const void *buf);
int store_read(struct store *s, uint64_t pbn, void *buf);
/* Whether the block's stripe file extends over it: a failed read of a block it covers is the
 * device's error, not a truncated file. */
bool store_covers(struct store *s, uint64_t pbn);
/* Whether the file system already holds the block's room (its stripe file has data there, not a
 * hole): after an ENOSPC of the file system, a write to a hole fails again and one to written
 * room does not. True where the file system cannot tell (no SEEK_HOLE: no holes). */
bool store_has_room(struct store *s, uint64_t pbn);
int store_sync(struct store *s);
void store_close(struct store *s);

#endif
