/* meta.h - a volume's files and shared layouts: the checksummed superblock (immutable after
 * format), the shared state page (process slots, counters, rare-path locks) and the file names. */
#ifndef DEDIS_ENGINE_META_H
#define DEDIS_ENGINE_META_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/errmsg.h"
#include <sys/types.h>

#define VOL_MAGIC "DEDISVOL"
#define VOL_VERSION 4
#define VOL_VERSION_UNCHECKED_MAP 3 /* before the durable map's chunk checks: its map is read unchecked */
#define VOL_VERSION_FIXED_STRIPES 2 /* before index_stripes: always INDEX_STRIPES, read as such */
#define VOL_STATE_MAGIC 0x3445544154534944ULL /* "DISTATE4": with the cache checks */
#define VOL_STATE_MAGIC_UNCHECKED 0x3345544154534944ULL /* "DISTATE3": slots_used, no checks */

#define VOL_COMPRESS_NONE 0
#define VOL_COMPRESS_LZ4 1

struct superblock {
	char magic[8];
	uint32_t version;
	uint32_t block_size;
	uint64_t logical_blocks;
	uint64_t data_blocks;
	char hash[8];      /* "sha1" / "sha256" */
	char index[8];     /* "mem" / "bdb" / "bloom" */
	uint32_t fp_len;
	uint32_t stripes;   /* chunk-store files, striped in units of stripe_unit PBNs */
	uint64_t created;  /* seconds since the epoch */
	uint32_t compress; /* VOL_COMPRESS_* */
	uint32_t frags;    /* address slots per physical block: 1, or PACK_MAX_FRAGS with compression */
	uint64_t journal_bytes;
	/* v3: fingerprint stripes (a power of two, at most INDEX_STRIPES): lock stripes and the mem
	 * index's partitions, sized from the volume at format time (index_stripes_for). A version 2
	 * superblock has no such field (its checksum sits here) and is read with INDEX_STRIPES. */
	uint32_t index_stripes;
	/* v3: PBNs per stripe unit of the chunk store (a power of two): unit q = p / stripe_unit lives
	 * in data.<q mod stripes>. 0 in volumes formatted before it existed: one block, as 1. */
	uint32_t stripe_unit;
	uint8_t checksum[32]; /* SHA-256 of everything above */
};

/* Counters. Event counts and gauges alike are kept per process slot (no shared cache line on
 * the write path) and summed by engine_stats: value = base + sum over slots. */
enum vol_counter {
	VC_LOGICAL_WRITES, VC_UNIQUE_WRITES, VC_DUPLICATE_WRITES, VC_OVERWRITES, VC_INPLACE_REWRITES,
	VC_DISCARDS, VC_READS, VC_INDEX_LOOKUPS, VC_BLOOM_NEGATIVES, VC_GC_RECLAIMED, VC_COLLISIONS,
	VC_FLUSHES, VC_NODEDUP_WRITES, VC_COMPRESSED_WRITES, VC_COMMITS, VC_CHECKPOINTS,
	VC_GAUGES, /* the rest are gauges: recovery recomputes them */
	VC_MAPPED = VC_GAUGES,  /* LBNs mapped */
	VC_REFERENCED,          /* stored contents (addresses) referenced by an LBN */
	VC_PHYSICAL_BYTES,      /* bytes those contents take in the chunk store */
	VC_LIVE_FRAGMENTS,      /* of them, compressed fragments */
	VC_COUNT
};

#define VOL_SLOTS 256

/* One per open engine handle: written by its owner only, so the hot path touches no shared line. */
struct vol_slot {
	int32_t pid;             /* 0 = free */
	uint32_t active;         /* inside an operation (the quiesce handshake) */
	uint64_t bin_pbn;        /* the open packing bin + 1, 0 = none */
	uint32_t bin_used;       /* bytes of the bin written so far */
	uint32_t bin_frags;      /* fragments in it */
	uint64_t ext_next, ext_end; /* the allocation extent carved from the shared cursor */
	int64_t c[VC_COUNT];
	uint64_t pid_start;      /* the process's start time (clock ticks since boot; 0 = unknown, a
	                          * state page from before it was kept): a reused pid is not its owner */
} __attribute__((aligned(128)));

/* What a clean close seals: the state itself (but its locks, re-initialised at open), the
 * references, the index's shared files. The working map needs none: a clean close checkpoints it,
 * so the durable map's chunk checks are its own. */
enum vol_check { VCK_STATE, VCK_REFS, VCK_INDEX, VOL_CHECKS };

/* The shared state page, mmap'd by every process with the volume open. Volatile: trusted only in
 * the boot that wrote it (or after a clean close); otherwise rebuilt from the durable files. */
struct vol_state {
	uint64_t magic;
	uint32_t clean;         /* 1 after the last opener closed cleanly */
	uint32_t generation;    /* bumped by every recovery */
	char boot_id[40];       /* the boot this state belongs to */
	uint64_t ckpt_seq;      /* the durable checkpoint this state was closed against */
	pthread_mutex_t world;  /* robust: recovery, GC, fsck, slot claims (never on the data path) */
	pthread_mutex_t commit; /* robust: serialises metadata commits */
	uint32_t quiesce;       /* set while `world` holder needs every operation out */
	uint32_t slots_used;    /* every slot from this one on is free and zero (claims raise it, the
	                         * first opener alone resets it), so walks of the slots touch only
	                         * the pages of slots ever used since */
	uint64_t alloc_cursor;  /* next PBN extent to carve: allocation is sequential */
	uint64_t gc_epoch;      /* bumped by every GC pass: lock-free readers retry if it moved */
	uint64_t next_seq;      /* the next commit's sequence number */
	uint64_t journal_tail;  /* where the next journal record goes */
	int64_t base[VC_COUNT];
	struct vol_slot slots[VOL_SLOTS];
	/* Sealed by the last closer with `clean` and checked by the next opener alone: a cache that
	 * fails its check is rebuilt from the durable files (engine.c, caches_check). Last, so that a
	 * state closed before the checks existed (VOL_STATE_MAGIC_UNCHECKED, shorter) keeps its layout:
	 * trusted once, as it was, and extended. */
	uint64_t checks[VOL_CHECKS];
};

/* File names inside a volume directory. Durable: the superblock, the map, the journal, the
 * chunk store. Everything else is a cache of them and of the index. */
#define VOL_SUPERBLOCK "superblock"
#define VOL_MAP "map"           /* durable LBN map (checkpoints) */
#define VOL_JOURNAL "journal"   /* durable map commits since the last checkpoint */
#define VOL_DATA "data"         /* data.0, data.1, ... */
#define VOL_STATE "state"
#define VOL_LBNMAP "lbnmap"     /* the working LBN map */
#define VOL_REFS "refs"
#define VOL_DIRTY "dirty"
#define VOL_LOCKS "locks"
#define VOL_STRIPES 8

void sb_seal(struct superblock *sb);
/* 0 valid, or a static reason. */
const char *sb_check(const struct superblock *sb);
/* fsync of a directory: the names in it made durable. 0 or -errno. */
int meta_sync_dir(const char *dir);
int sb_write(const char *dir, const struct superblock *sb);
/* Reads and checks; on failure err says what is wrong (err may be NULL). */
int sb_read(const char *dir, struct superblock *sb, struct dd_err *err);

/* Map a file of `len` bytes (created / extended to len, its room allocated, when `create`; an
 * existing file shorter than len without `create` is EBADMSG: a cache cut short). On read-only storage
 * (EROFS) an existing file of that length is mapped private: the engine's read-only open (stat,
 * export of a clean volume) changes counters and slots in memory only. */
void *meta_map(const char *dir, const char *name, size_t len, int create, int *fd_out);
/* open(path, O_RDWR | flags), or on read-only storage (EROFS) open(path, O_RDONLY | flags): how
 * every volume file is opened, so that a read-only open of a clean volume never writes. */
int meta_open_rw_or_ro(const char *path, int flags, mode_t mode);
int meta_path(char *buf, size_t len, const char *dir, const char *name);
/* Fault in, writable, every page of a hot mapping (a hash table written at random) when the
 * volume lives on a memory file system, as an in-kernel engine allocates its tables up front:
 * otherwise each first write to a page faults inside a writer's critical section. On a disk file
 * system this is skipped (it would dirty, and so rewrite, the whole file at every open). A hint:
 * where the kernel refuses (before Linux 5.14, or short of memory) pages fault in as used. */
void meta_make_resident(const char *dir, void *p, size_t len);
/* Read-ahead advice for a mapping addressed by hash (the mem index's table, the Bloom filter).
 * Off (`walk` 0) for its lookups and inserts: a fault there reads around it up to the device's
 * read_ahead_kb (8 MiB on this project's VMs), zero-filling pages of a sparse file that no
 * neighbour will use - a 4 MiB import into a fresh 1 TiB volume cached 6 GB of a 16 GiB index and
 * took 4 s. On (`walk` 1) while the whole mapping is read in order (recount, iterate, rebuild),
 * where reading ahead is what makes the walk cheap. A hint: the kernel may ignore it. */
void meta_advise(void *p, size_t len, int walk);

/* One step of a 64-bit bijective mixer (SplitMix64's finaliser). */
uint64_t meta_mix64(uint64_t x);
/* A 64-bit digest of len bytes from `seed`: changing any one 8-byte word always changes it, other
 * damage goes unseen with odds of about 2^-64. Several lanes at once: a few GB/s. */
uint64_t meta_digest(uint64_t seed, const void *p, size_t len);

/* A process-shared robust mutex, initialised in place. */
int meta_init_mutex(pthread_mutex_t *m);
/* This boot's identity (/proc/sys/kernel/random/boot_id), "" if unknown. */
void meta_boot_id(char *out, size_t len);

#endif
