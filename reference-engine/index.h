/* index.h - the pluggable fingerprint index of the reference engine (Dmdedup's backend API):
 * fingerprint -> physical block number; a new backend is one file filling struct index_ops. */
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
};

struct index_stats {
	uint64_t entries;
	uint64_t lookups;
	uint64_t bloom_negatives;  /* lookups answered "certainly new" without the on-disk index */
	uint64_t bloom_positives;  /* lookups the filter passed on (true or false positives) */
	uint64_t meta_reads;       /* metadata I/O the backend did (pages read / written) */
	uint64_t meta_writes;
	uint64_t bytes;            /* its memory or file footprint */
};

#define INDEX_ABSENT_FILTERED 2

struct index; /* the backend's own state */

/* Callers serialise calls on one volume (the engine holds its volume lock) except stats(), which
 * may run concurrently and need only be approximately current; otherwise a backend needs no
 * locking of its own; several processes may have the same volume open, each with its own
 * `struct index` on the same files, so a backend must read shared state, not cache it. */
struct index_ops {
	const char *name;
	/* Create the backend's files in p->dir (format time). 0 or -errno. */
	int (*create)(const struct index_params *p);
	/* Open them; `recover` is set when the volume was not closed cleanly. 0 or -errno. */
	int (*open)(const struct index_params *p, int recover, struct index **out);
	/* 1 found (*pbn set), 0 absent, INDEX_ABSENT_FILTERED absent and answered by a summary vector
	 * without touching the on-disk index, -errno. */
	int (*lookup)(struct index *ix, const uint8_t *fp, uint64_t *pbn);
	/* Insert or replace. 0 or -errno (-ENOSPC when full). */
	int (*insert)(struct index *ix, const uint8_t *fp, uint64_t pbn);
	/* 0 removed, -ENOENT absent, -errno. */
	int (*remove)(struct index *ix, const uint8_t *fp);
	/* Calls fn for every entry until it returns non-zero (which iterate returns). */
	int (*iterate)(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t pbn), void *arg);
	/* Make every insert/remove so far durable. 0 or -errno. */
	int (*flush)(struct index *ix);
	void (*stats)(struct index *ix, struct index_stats *s);
	void (*close)(struct index *ix);
};

extern const struct index_ops index_mem_ops;
extern const struct index_ops index_bdb_ops;
extern const struct index_ops index_bloom_ops;

/* By name: "mem", "bdb", "bloom"; NULL if unknown. */
const struct index_ops *index_find(const char *name);

#endif
