/* fpindex.h - the pluggable fingerprint index of the reference engine (Dmdedup's backend API):
 * fingerprint -> stored-content address; a new backend is one file filling struct index_ops. */
#ifndef DEDIS_ENGINE_INDEX_H
#define DEDIS_ENGINE_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* What the engine tells a backend when it creates or opens one. */
struct index_params {
	const char *dir;        /* the volume directory; the backend keeps its files here */
	unsigned fp_len;        /* fingerprint bytes: 20 (sha1) or 32 (sha256) */
	uint64_t capacity;      /* most entries the volume can need (its physical blocks) */
	unsigned commit_every;  /* bdb: writes per group commit (log forced to disk), 0 = only on flush */
	int alone;              /* open: no other process has the volume open (run-time state such as
	                         * shared-memory files may be rebuilt rather than trusted) */
	unsigned stripes;       /* the volume's fingerprint stripes (index_stripes_for at format time;
	                         * 0 = INDEX_STRIPES): stripe s is locked as s mod stripes */
};

struct index_stats {
	uint64_t entries;          /* (lookups and Bloom-filter answers are the engine's counters) */
	uint64_t meta_reads;       /* metadata I/O the backend did (pages read / written) */
	uint64_t meta_writes;
	uint64_t bytes;            /* its memory or file footprint */
};

#define INDEX_ABSENT_FILTERED 2

/* Fingerprint stripes: the engine serialises lookup/insert/remove per stripe (its striped locks),
 * so a backend partitioned the same way needs no lock of its own on its partitions. A volume has
 * `stripes` of them (a power of two up to INDEX_STRIPES): fingerprint fp is in stripe
 * index_stripe(fp) mod stripes, so a partition of index_stripe(fp) mod P is one lock's whenever
 * P is a multiple of stripes. */
#define INDEX_STRIPES 4096
#define INDEX_STRIPES_MIN 64
static inline unsigned index_stripe(const uint8_t *fp)
{
	return ((unsigned)fp[0] << 4 | fp[1] >> 4) & (INDEX_STRIPES - 1);
}

/* The stripes a volume of `capacity` index entries gets at format time: about one per four
 * entries, a power of two from INDEX_STRIPES_MIN to INDEX_STRIPES (reached at 8193 entries, so
 * volumes from about 32 MiB at 4 KiB blocks have all of them). A tiny volume then has a small
 * index table and lock file instead of 4096 nearly empty partitions. */
static inline unsigned index_stripes_for(uint64_t capacity)
{
	unsigned n = INDEX_STRIPES_MIN;
	while (n < INDEX_STRIPES && (uint64_t)n * 4 < capacity)
		n <<= 1;
	return n;
}

/* What the engine may count on an index to do (index_ops.flags); it reads these, never a name. */
#define FPINDEX_OPENS_READ_ONLY 1u /* opens on read-only storage without writing (its files mapped
                                     * private): a clean volume with it can be stat'ed and exported there */

struct index; /* the backend's own state */

/* Concurrency: lookup, insert and remove on fingerprints of different stripes (index_stripe) run
 * at the same time, from any number of processes, each with its own `struct index` on the same
 * files (so a backend reads shared state, never caches it); calls on one stripe are serialised
 * by the engine. iterate, flush and repair run with the volume quiesced (no other call in
 * flight); stats may run any time and need only be approximately current. An "address" is the
 * engine's opaque 64-bit word for a stored content (never 0 or all ones). */
struct index_ops {
	const char *name;   /* as --index and the superblock spell it: at most 7 characters */
	const char *about;  /* what --help says after the name ("Berkeley DB"), or NULL */
	unsigned flags;     /* FPINDEX_* */
	/* Create the backend's files in p->dir (format time). 0 or -errno. */
	int (*create)(const struct index_params *p);
	/* The room those files take when created (their whole room: they are mapped shared), so
	 * format can refuse a volume whose first open would find none; NULL: little (they grow). */
	uint64_t (*created_bytes)(const struct index_params *p);
	/* Open them; `recover` is set when the volume was not closed cleanly. 0 or -errno; -EBADMSG
	 * when a file is cut short or not this volume's (the engine then rebuilds the index). */
	int (*open)(const struct index_params *p, int recover, struct index **out);
	/* 1 found (*addr set), 0 absent, INDEX_ABSENT_FILTERED absent and answered by a summary vector
	 * without touching the on-disk index, -errno. */
	int (*lookup)(struct index *ix, const uint8_t *fp, uint64_t *addr);
	/* Insert or replace. 0 or -errno (-ENOSPC when full). */
	int (*insert)(struct index *ix, const uint8_t *fp, uint64_t addr);
	/* 0 removed, -ENOENT absent, -errno. */
	int (*remove)(struct index *ix, const uint8_t *fp);
	/* After a batch of removals (a GC pass, the volume quiesced): tidy once what they left stale
	 * (a summary vector rebuilt when too many of its bits are), not once per removal. NULL:
	 * nothing to tidy. 0 or -errno. */
	int (*settle)(struct index *ix);
	/* Calls fn for every entry until it returns non-zero (which iterate returns). */
	int (*iterate)(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t addr), void *arg);
	/* Make every insert/remove so far durable. 0 or -errno. */
	int (*flush)(struct index *ix);
	/* After a process died inside a call: make the shared state whole again (recount, rebuild a
	 * summary vector). 0 or -errno. */
	int (*repair)(struct index *ix);
	void (*stats)(struct index *ix, struct index_stats *s);
	/* A digest (meta_digest) of the shared files as they stand, with the volume quiesced: a clean
	 * close seals it, the next open alone compares, and rebuilds the index when it differs. */
	uint64_t (*digest)(struct index *ix);
	void (*close)(struct index *ix);
	/* Remove the backend's files from p->dir (the engine rebuilds the index after a power loss). */
	int (*destroy)(const struct index_params *p);
};

/* The bundled backends (the unit tests drive them directly; everyone else goes by the registry). */
extern const struct index_ops index_mem_ops;
extern const struct index_ops index_bdb_ops;
extern const struct index_ops index_bloom_ops;

/* index-registry.c: every index, NULL-terminated, the default (mem) first. */
extern const struct index_ops *const fpindex_registry[];
/* By name; NULL if unknown (or name is NULL). */
const struct index_ops *index_find(const char *name);
/* The names of the indexes with all of flags (0: every one) joined by sep ("mem, bdb, bloom"
 * with ", "), cut to fit len; returns buf. */
const char *fpindex_names(char *buf, size_t len, const char *sep, unsigned flags);
/* The list --help gives: "mem, bdb (Berkeley DB) or bloom (Bloom filter + bdb)" (each name with
 * its about), cut to fit len; returns buf. */
const char *fpindex_help(char *buf, size_t len);

#endif
