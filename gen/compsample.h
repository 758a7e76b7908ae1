/* compsample.h - compressibility sampling (dedis-dist(5) [compressibility 2]): which block
 * occurrences are measured, per-thread sets of measured contents, their join with the counts. */
#ifndef DEDIS_GEN_COMPSAMPLE_H
#define DEDIS_GEN_COMPSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "lib/compmodel.h"
#include "lib/distfile.h"

/* What a measured content carries: its sizes compressed alone (capped at the block size), and
 * the smallest selection hash among its selected occurrences, so that a smaller rate can
 * re-select exactly (merge, -k): selected at rate p <=> hmin <= comp_threshold(p). */
struct comp_sample {
	uint32_t zstd, lz4;
	uint64_t hmin;
};

/* Occurrence (fingerprint, stream position) is selected at rate p when this hash is at most
 * comp_threshold(p) = p * 2^64 - 1 (UINT64_MAX for p = 1): deterministic whatever the thread
 * timing, independent from one occurrence to the next. */
static inline uint64_t comp_select_hash(const uint8_t *fp, uint64_t pos)
{
	uint64_t x;
	memcpy(&x, fp, 8);
	x ^= pos * UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}
uint64_t comp_threshold(double p);

/* A set of measured contents: fingerprint -> sample. */
struct comp_set;
struct comp_set *comp_set_new(size_t fp_len);
/* Adds v, or keeps the smaller hmin when fp is there. 0, or -1 out of memory. */
int comp_set_put(struct comp_set *s, const uint8_t *fp, const struct comp_sample *v);
const struct comp_sample *comp_set_get(const struct comp_set *s, const uint8_t *fp);
size_t comp_set_size(const struct comp_set *s);
typedef int (*comp_visit_fn)(const uint8_t *fp, const struct comp_sample *v, void *arg);
int comp_set_each(const struct comp_set *s, comp_visit_fn fn, void *arg);
void comp_set_free(struct comp_set *s);

/* One block size's sampler, shared by the hashing threads: the rate, the set they hand in, and
 * at the end the join with the final counts. */
struct comp_sampler;
/* rate p in (0, 1]; zero_fp: the all-zero block's fingerprint (never measured). */
struct comp_sampler *comp_sampler_new(size_t fp_len, uint64_t block_size, double p, const uint8_t *zero_fp);
double comp_sampler_rate(const struct comp_sampler *s);
/* About how many contents each hashing thread will measure: their sets are sized up front (at
 * most 2^16 entries' worth) rather than grown by copying in the middle of the scan. */
void comp_sampler_expect(struct comp_sampler *s, uint64_t per_thread);
/* Lowers the rate (the smaller of two analyses' rates: merge, -k); samples whose hmin is above
 * the new threshold no longer count. */
void comp_sampler_lower_rate(struct comp_sampler *s, double p);
/* A sample kept by an earlier analysis (a DB): merged into the sampler's set. */
int comp_sampler_load(struct comp_sampler *s, const uint8_t *fp, const struct comp_sample *v);
/* The samples selected at the current rate, for saving. */
int comp_sampler_each(const struct comp_sampler *s, comp_visit_fn fn, void *arg);
void comp_sampler_free(struct comp_sampler *s);

/* A hashing thread's side of one sampler: its own set (no lock per block), measured with the
 * codec state (lib/compmodel.h) it shares with the thread's other sizes. */

struct comp_local {
	struct comp_sampler *s;
	struct comp_set *set;
	uint64_t threshold;
	uint64_t block_size;
	const uint8_t *zero_fp;
	size_t fp_len;
};
int comp_local_init(struct comp_local *l, struct comp_sampler *s);
/* The occurrence at pos with fingerprint fp: if selected, compress `block` unless this thread
 * measured the content already (then only its hmin is kept up to date). 0, or -1 (out of
 * memory, a codec failure) with err filled. */
static inline bool comp_local_selected(const struct comp_local *l, const uint8_t *fp, uint64_t pos, uint64_t *h)
{
	*h = comp_select_hash(fp, pos);
	return *h <= l->threshold;
}
int comp_local_measure(struct comp_local *l, struct compmodel_codecs *c, const uint8_t *fp, const uint8_t *block,
		       uint64_t h, struct dd_err *err);
/* Hands the thread's set to the sampler (under its lock, once per thread) and releases it. */
int comp_local_flush(struct comp_local *l);
void comp_local_release(struct comp_local *l);

/* The join, after the scan: every index entry (fingerprint, final copies) is offered; measured
 * contents become Horvitz-Thompson weighted cells (class floor(log2 copies), weight
 * 1 / (1 - (1 - p)^copies), the zero block left out). begin, once every sample is in (the
 * threads' flushed, a DB's loaded), builds a bitmap of them that turns most entries away before
 * a probe of the samples (without it every entry probes): 0, or -1 out of memory. */
int comp_join_begin(struct comp_sampler *s);
int comp_join_visit(struct comp_sampler *s, const uint8_t *fp, uint64_t copies);
/* The same join split over threads: each offers its own (disjoint) entries to a part of its own,
 * and the parts are added into the sampler's join after - integer sums, so the cells are those of
 * one join of every entry, to the bit. visit and add: 0, or -1 out of memory. */
struct comp_join_part;
struct comp_join_part *comp_join_part_new(const struct comp_sampler *s);
int comp_join_part_visit(struct comp_join_part *j, const uint8_t *fp, uint64_t copies);
int comp_join_part_add(struct comp_sampler *s, struct comp_join_part *j);
void comp_join_part_free(struct comp_join_part *j);
/* Fills out (out->present false when nothing was measured). 0, or -1 out of memory. */
int comp_join_finish(struct comp_sampler *s, struct dist_comp *out);
/* The join's sums before rounding, as COMP_JOIN_SUMS integers (each cell's weight, weighted zstd
 * and LZ4 sizes, in fixed point: weights in units of 2^-COMP_WEIGHT_BITS; then the measured
 * contents per class). Integers add up exactly in any order, so joins made apart over disjoint
 * contents (dedisgen-mpi's owners) add up to the cells one join of them all gives, to the bit.
 * Export reads them (zeros when nothing was joined); add adds sums into the sampler's join. */
__extension__ typedef unsigned __int128 comp_sum;
#define COMP_WEIGHT_BITS 24
#define COMP_JOIN_SUMS ((size_t)DIST_CLASSES * DIST_COMP_BUCKETS * DIST_COMP_BUCKETS * 3 + DIST_CLASSES)
void comp_join_export(const struct comp_sampler *s, comp_sum *sums);
/* 0 or -1 (out of memory). */
int comp_join_add(struct comp_sampler *s, const comp_sum *sums);

#endif
