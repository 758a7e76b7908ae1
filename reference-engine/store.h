/* store.h - the chunk store: one block per physical block number, striped over a few data files
 * in units of `unit` PBNs (unit q = p / unit in data.<q mod stripes>), so concurrent writers, each
 * filling its own allocation extent, write different files and do not queue on one inode lock. */
#ifndef DEDIS_ENGINE_STORE_H
#define DEDIS_ENGINE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include "engine.h"

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
/* The room for `bytes` of chunk store in dir's file system by engine_format_params.preallocate
 * (NULL or "auto": allocated when dir is a tmpfs and it takes at most half the free room there
 * and half the memory available; "full": allocated; "sparse"). -EINVAL: an unknown mode;
 * -ENOSPC: "full" and more than the free room (*free_bytes). */
int store_room_for(const char *dir, const char *mode, uint64_t bytes, enum store_room *room, uint64_t *free_bytes);
/* unit: the superblock's stripe_unit (0: one block). */
int store_create(const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
		 enum store_room room);
int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
	       bool direct, const struct engine_recorder *rec);
int store_write(struct store *s, uint64_t pbn, const void *buf);
int store_read(struct store *s, uint64_t pbn, void *buf);
/* Whether the block's stripe file extends over it: a failed read of a block it covers is the
 * device's error, not a truncated file. */
bool store_covers(struct store *s, uint64_t pbn);
int store_sync(struct store *s);
void store_close(struct store *s);

#endif
