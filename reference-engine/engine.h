/* engine.h - libdedisengine: a user-space, file-backed, fixed-block inline deduplication engine
 * (Dmdedup's design): a volume directory with a chunk store, an LBN map, reference counts and an index. */
#ifndef DEDIS_ENGINE_H
#define DEDIS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/errmsg.h"

/* The block sizes a volume takes: a power of two in this range. */
#define ENGINE_MIN_BLOCK 512u
#define ENGINE_MAX_BLOCK 65536u

struct engine_format_params {
	uint64_t logical_bytes;   /* the volume's size as seen by writers */
	uint64_t data_bytes;      /* the chunk store; may be smaller (thin) or larger; 0 = logical plus
	                           * 1/16 headroom, since overwriting a full volume with new data needs
	                           * free blocks before the old ones become stale */
	uint32_t block_size;      /* 512 B .. 64 KiB, power of two; 0 = 4096 */
	const char *index;        /* "mem" (default), "bdb", "bloom" */
	const char *hash;         /* "sha1" (default), "sha256" */
	const char *compress;     /* "none" (default) or "lz4": unique blocks compressed and packed */
	uint64_t journal_bytes;   /* the map journal; 0 = half the map, 1 MiB to 64 MiB (a small
	                           * volume: 16 whole-map records, at least 16 KiB) */
	const char *preallocate;  /* the chunk store's room: "auto" (NULL: allocated at format on a
	                           * tmpfs with room to spare, else sparse), "full" (allocated at
	                           * format, as a thick device), "sparse" (taken as blocks are written) */
};

/* Sees every write and sync the engine issues to its durable files (the map, the journal, the
 * chunk store: file numbers 0, 1, 2 + stripe), in issue order: the power-loss harness. Where
 * `collect` is set, the collections of a write that found the chunk store full: before its nth
 * (from 0) and after it, before the write retries or says ENOSPC; outside any operation, where a
 * test plays another writer. Where `fail` is set, it is asked before each such write and a
 * negative errno it returns is that write's result, nothing written: a test's full file system. */
struct engine_recorder {
	void (*write)(void *arg, unsigned file, uint64_t offset, const void *buf, size_t len);
	void (*sync)(void *arg, unsigned file);
	void *arg;
	void (*collect)(void *arg, unsigned nth, bool done); /* NULL: none */
	int (*fail)(void *arg, unsigned file, uint64_t offset); /* NULL: none */
};

struct engine_open_params {
	bool direct;              /* O_DIRECT on the chunk store */
	bool verify_hits;         /* compare bytes on an index hit; count collisions */
	unsigned commit_every;    /* commit the map (and bdb's log) every N writes (0: only on flush) */
	bool exclusive;           /* refuse other openers (gc, fsck) */
	bool rebuild_caches;      /* with exclusive: rebuild every cache from the durable files, as
	                           * after a power loss (fsck, after the index's files failed a read) */
	bool read_only;           /* the caller only reads (stat, export): a clean volume on read-only
	                           * storage opens, its caches mapped private; without it such a
	                           * volume is refused with -EROFS */
	const struct engine_recorder *recorder; /* NULL: none */
};

/* Write hints. NODEDUP: the content is known to be new (a fresh unique block): stored without
 * fingerprinting or an index entry, so it never deduplicates later writes either. */
#define ENGINE_NODEDUP 1u

/* Counters: shared by every process that has the volume open, persisted with it. */
struct engine_stats {
	uint64_t block_size, logical_blocks, data_blocks;
	uint64_t logical_writes;     /* every write */
	uint64_t unique_writes;      /* new data stored (including NODEDUP writes) */
	uint64_t nodedup_writes;     /* of them, stored unindexed on a NODEDUP hint */
	uint64_t compressed_writes;  /* of them, stored as compressed fragments */
	uint64_t duplicate_writes;   /* data already stored: mapped, not written */
	uint64_t overwrites;         /* writes to an LBN that was mapped to other data */
	uint64_t inplace_rewrites;   /* the same data rewritten to the same LBN */
	uint64_t discards;           /* LBNs unmapped by discard */
	uint64_t reads;
	uint64_t mapped_blocks;      /* LBNs mapped now */
	uint64_t physical_blocks;    /* PBNs in use now (live, stale until GC, open packing bins) */
	uint64_t referenced_blocks;  /* stored contents referenced by at least one LBN */
	uint64_t physical_bytes;     /* what the chunk store holds for those: whole blocks, and
	                              * compressed fragments with their 4-byte headers */
	uint64_t compressed_fragments; /* live contents stored as compressed fragments */
	uint64_t commits, checkpoints;
	double dedup_ratio;          /* mapped / referenced (live data's dedup) */
	uint64_t index_entries, index_lookups, bloom_negatives;
	uint64_t meta_reads, meta_writes;
	uint64_t gc_reclaimed;
	uint64_t collisions;         /* index hits whose bytes differed (--verify-hits) */
	uint64_t index_bytes;
	char index[8], hash[8], compress[8];
};

struct engine;

/* Returns 0 or -errno; err gets a one-line reason. */
int engine_format(const char *dir, const struct engine_format_params *p, struct dd_err *err);
/* Reads a volume's geometry from its superblock without opening it: 0, -ENOENT when DIR holds no
 * volume, or -errno with err saying what is wrong (a damaged superblock is not "no volume"). */
int engine_describe(const char *dir, struct engine_stats *geometry, struct dd_err *err);
/* Opens a formatted volume (recovering it if it was not closed cleanly). */
int engine_open(const char *dir, const struct engine_open_params *p, struct engine **out, struct dd_err *err);

/* Whether dir holds only what a format killed before its superblock leaves (format clears it). */
bool engine_half_made(const char *dir);
/* "" or what the open found wrong with a cache (a failed check, a file cut short) and rebuilt from
 * the durable files. */
const char *engine_cache_note(const struct engine *e);
uint32_t engine_block_size(const struct engine *e);
uint64_t engine_logical_blocks(const struct engine *e);

/* One block at a logical block number. 0 or -errno (-ENOSPC: no free physical block). */
int engine_write(struct engine *e, uint64_t lbn, const void *buf);
/* The same with hints (ENGINE_NODEDUP). */
int engine_write_hint(struct engine *e, uint64_t lbn, const void *buf, unsigned hints);
/* Never-written or discarded LBNs read as zeros. */
int engine_read(struct engine *e, uint64_t lbn, void *buf);
/* Whether an LBN is mapped now (written and not discarded since); false past the volume's end. */
bool engine_lbn_mapped(struct engine *e, uint64_t lbn);
/* Unmap [lbn, lbn + n). */
int engine_discard(struct engine *e, uint64_t lbn, uint64_t n);
/* After it returns, everything acknowledged so far survives a crash or a power loss. */
int engine_flush(struct engine *e);
/* Reclaim physical blocks no LBN references (and their index entries). Also runs by itself
 * when a write finds the chunk store full; -ENOSPC only when live data fills it. */
int engine_gc(struct engine *e, uint64_t *reclaimed);
void engine_stats(struct engine *e, struct engine_stats *s);

/* Check every invariant; each problem is reported through `report` (one line). Returns the number
 * of problems (0 = consistent) or -errno: -EBADMSG when the index's own files cannot be read (a
 * cache: reopen with rebuild_caches). */
long engine_fsck(struct engine *e, void (*report)(void *arg, const char *line), void *arg);
/* Whether the last engine_fsck's problems were all in the caches (references, index, counters):
 * none in the durable map, an LBN's address or the bytes of the data, which a rebuild of the
 * caches from the durable files would hide. */
bool engine_fsck_caches_only(const struct engine *e);

/* Flush and close; marks the volume clean. */
int engine_close(struct engine *e);

/* Remove a volume's files and its directory (nothing else in it). 0 or -errno. */
int engine_remove(const char *dir);
/* The name of durable file number `file` (as the recorder numbers them) inside a volume. */
int engine_durable_name(unsigned file, char *buf, size_t len);

#endif
