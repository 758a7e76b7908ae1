/* meta.h - a volume's metadata files: the checksummed superblock (immutable after format), the
 * shared state page (lock, allocation cursor, counters, clean flag) and the LBN map. */
#ifndef DEDIS_ENGINE_META_H
#define DEDIS_ENGINE_META_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define VOL_MAGIC "DEDISVOL"
#define VOL_VERSION 1
#define VOL_STATE_MAGIC 0x4554415453534944ULL /* "DISSTATE" */

struct superblock {
	char magic[8];
	uint32_t version;
	uint32_t block_size;
	uint64_t logical_blocks;
	uint64_t data_blocks;
	char hash[8];      /* "sha1" / "sha256" */
	char index[8];     /* "mem" / "bdb" / "bloom" */
	uint32_t fp_len;
	uint32_t stripes;   /* chunk-store files: PBN p lives in data.<p mod stripes> */
	uint64_t created;  /* seconds since the epoch */
	uint8_t checksum[32]; /* SHA-256 of everything above */
};

/* Counters every opener shares (and the volume keeps). */
struct vol_counters {
	uint64_t logical_writes, unique_writes, duplicate_writes, overwrites, inplace_rewrites;
	uint64_t discards, reads, index_lookups, bloom_negatives, gc_reclaimed, collisions;
	uint64_t mapped_blocks;      /* LBNs mapped */
	uint64_t used_blocks;        /* PBNs with any reference */
	uint64_t referenced_blocks;  /* PBNs with an LBN reference */
	uint64_t flushes;
};

/* The shared state page, mmap'd by every process with the volume open. */
struct vol_state {
	uint64_t magic;
	uint32_t clean;         /* 1 after the last opener closed cleanly */
	uint32_t generation;    /* bumped by every recovery */
	pthread_mutex_t lock;   /* process-shared, robust: serialises metadata updates */
	uint64_t alloc_cursor;  /* next PBN to try: allocation is sequential */
	uint64_t gc_epoch;      /* bumped by every GC pass: lock-free readers retry if it moved */
	struct vol_counters c;
};

/* File names inside a volume directory. */
#define VOL_SUPERBLOCK "superblock"
#define VOL_STATE "state"
#define VOL_LBNMAP "lbnmap"
#define VOL_REFS "refs"
#define VOL_DATA "data" /* data.0, data.1, ... */
#define VOL_STRIPES 8

void sb_seal(struct superblock *sb);
/* 0 valid, or a static reason. */
const char *sb_check(const struct superblock *sb);
int sb_write(const char *dir, const struct superblock *sb);
/* Reads and checks; on failure *why says what is wrong. */
int sb_read(const char *dir, struct superblock *sb, const char **why);

/* Map a file of `len` bytes (created / extended to len when `create`). */
void *meta_map(const char *dir, const char *name, size_t len, int create, int *fd_out);
int meta_path(char *buf, size_t len, const char *dir, const char *name);

/* A process-shared robust mutex, initialised in place. */
int state_init_lock(struct vol_state *st);

#endif
