/* gindex.h - dedisgen's fingerprint -> (count, first position) index API (Dmdedup's backend
 * pattern): the scanner sees its counts only through this ops struct; mem.c and bdb.c fill one. */
#ifndef DEDIS_GEN_INDEX_H
#define DEDIS_GEN_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"
#include "lib/errmsg.h"

struct gindex;

/* Called once per stored fingerprint with its count and first position (the smallest stream
 * position it was added with); a non-zero return stops the walk and is returned. */
typedef int (*index_visit_fn)(const uint8_t *fp, uint64_t count, uint64_t first, void *arg);

/* Stream positions are block numbers; an index keeps 48 bits of them (2^48 blocks). */
#define INDEX_POS_MAX ((UINT64_C(1) << 48) - 1)

/* Every function returns 0 on success, -1 on failure with ix->err filled (lookup: 1 found,
 * 0 absent). No function is thread-safe: callers serialise (gen/counter.c holds a mutex). */
struct gindex_ops {
	const char *name;
	/* count(fp) += n (n >= 1) and first(fp) = min(first(fp), first); inserts fp with (n, first)
	 * when absent. Adds arrive in any order (hashing threads), so the minimum is what makes
	 * `first` the content's first position. INDEX_FULL: the backend has a memory limit that
	 * this insert would cross; nothing was changed. */
	int (*add)(struct gindex *ix, const uint8_t *fp, uint64_t n, uint64_t first);
	/* count += 1 for each of n fingerprints packed fp_len apart, the i-th at position
	 * first + i. Stops at the first failure (or INDEX_FULL) and sets *done to the number added
	 * before it. */
	int (*add_batch)(struct gindex *ix, const uint8_t *fps, size_t n, uint64_t first, size_t *done);
	/* May be NULL. Asks for the memory an add of fp will read first, ahead of that add: a caller
	 * adding a run of fingerprints overlaps the cache misses of several. Changes nothing. */
	void (*prefetch)(const struct gindex *ix, const uint8_t *fp);
	/* first may be NULL */
	int (*lookup)(struct gindex *ix, const uint8_t *fp, uint64_t *count, uint64_t *first);
	/* Visit every entry; `sorted` asks for ascending fingerprint order (mem sorts in place,
	 * which destroys its table: it is only asked with drain = true). With drain, the index is
	 * left empty afterwards (its memory given back). */
	int (*iterate)(struct gindex *ix, bool sorted, bool drain, index_visit_fn fn, void *arg);
	uint64_t (*distinct)(const struct gindex *ix);
	/* Bytes of memory the index holds for its entries (the mem table; 0 for bdb). */
	uint64_t (*bytes)(const struct gindex *ix);
	int (*flush)(struct gindex *ix);
	void (*close)(struct gindex *ix);
};

#define INDEX_FULL 1

struct gindex {
	const struct gindex_ops *ops;
	size_t fp_len;  /* bytes per fingerprint: 20 (sha1) or 32 (sha256) */
	struct dd_err err; /* why the last call failed */
};

/* In-memory index (mem.c). mem_limit: 0 = none, else add returns INDEX_FULL rather than grow
 * the table past that many bytes. */
struct gindex *index_mem_open(size_t fp_len, uint64_t mem_limit);
/* Visits the union of n >= 1 memory indexes of one fp_len as if they were one: each digest once,
 * its counts summed and its earliest first position (shard by shard, or slice by slice of a large
 * shard's hash space, the entries of several indexes gathered in a table of their slots: in no
 * particular order; the indexes are not changed). 0, fn's non-zero return, or -1 with ix[0]->err filled (out of
 * memory, or not memory indexes of one hash). */
int index_mem_iterate_all(struct gindex *const *ix, int n, index_visit_fn fn, void *arg);

/* The metadata a Berkeley DB index keeps next to its counts (bdb.c). */
struct index_meta {
	int format;         /* of the DB read: 1 = counts only (dedis 0.1), refused by -k and merge */
	uint64_t block_size;
	char hash[16];
	bool complete;      /* false while a scan is writing, true once it closed cleanly */
	uint64_t bytes;     /* logical bytes analysed, over every source */
	uint64_t files;
	uint64_t errors;
	char **sources;     /* paths analysed into this DB, in order */
	size_t nsources;
	uint64_t stream_blocks;    /* stream positions used; a -k scan continues from here */
	double sample_rate;        /* p of the compressibility samples kept ('s' records); 0: none */
	bool locality;             /* locality measured: 'l' records and the figures below */
	struct dist_locality own;  /* measured on this DB's own stream, from its 'l' records */
	struct dist_locality base; /* summed from analyses merged into it (.present: any) */
};

void index_meta_free(struct index_meta *m);
int index_meta_add_source(struct index_meta *m, const char *path);

/* A Berkeley DB index in DIR (created if needed), file dedisgen-<block_size>.db.
 * create = true: start a new analysis (an existing DB file for this block size is removed unless
 * keep); keep = true: an existing DB must be complete and of the same block size and hash, and
 * its counts are added to. create = false: open an existing DB read-only (merge, show); `meta`
 * is then filled from it. Returns NULL with err filled on failure. cache_bytes: BDB cache. */
struct gindex *index_bdb_open(const char *dir, uint64_t block_size, const char *hash, bool create, bool keep,
			      uint64_t cache_bytes, struct index_meta *meta, struct dd_err *err);
/* The run failed: close removes the DB file this open created (and the --db directory it made),
 * whatever was written to it, unless its analysis was saved whole (index_bdb_set_meta with
 * complete: the outputs failed after it). It holds no analysis, and if its metadata never reached the disk
 * (a full file system) every later scan would refuse it as not a dedisgen analysis. */
void index_bdb_discard(struct gindex *ix);
/* Has an analysis that was in the file when it was opened been changed (dropped by a scan
 * without -k, or added to), and not yet saved whole? A run that fails from then on leaves it
 * marked interrupted. */
bool index_bdb_altered(const struct gindex *ix);
/* Replace the DB's metadata record (bdb indexes only) and sync. */
int index_bdb_set_meta(struct gindex *ix, const struct index_meta *meta);
/* Side records: an analysis' other data (compressibility samples, locality records), in the same
 * B-tree under the key TAG + KEY. KEY is klen bytes, and klen + 1 must not be a fingerprint
 * length (20, 32) nor that of the metadata key (13), so the counts never see them. put replaces;
 * each visits a tag's records in key order (fn's non-zero return stops and is returned); drop
 * deletes them all. Return 0 or -1 with ix->err filled. */
int index_bdb_put_side(struct gindex *ix, char tag, const void *key, size_t klen, const void *val, size_t vlen);
typedef int (*index_side_fn)(const uint8_t *key, const uint8_t *val, size_t vlen, void *arg);
int index_bdb_each_side(struct gindex *ix, char tag, size_t klen, index_side_fn fn, void *arg);
int index_bdb_drop_side(struct gindex *ix, char tag, size_t klen);
/* The block sizes of the analyses stored in DIR (dedisgen-*.db), ascending; returns how many
 * (at most max), -1 when DIR cannot be read. */
int index_bdb_list(const char *dir, uint64_t *sizes, int max);

#endif
