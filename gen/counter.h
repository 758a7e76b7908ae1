/* counter.h - one block size's fingerprint counts: per-writer memory indexes in front (walked as
 * one at the end), optionally a Berkeley DB index behind that takes them whenever memory reaches --mem-limit. */
#ifndef DEDIS_GEN_COUNTER_H
#define DEDIS_GEN_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"
#include "gen/index/gindex.h"
#include "lib/errmsg.h"

struct counter;

/* back (may be NULL) is borrowed, not closed by the counter. mem_limit 0: no limit (and then
 * no spill: memory grows with the dataset). With a back and no limit, the counts go to the
 * back once, at counter_settle. */
struct counter *counter_new(size_t fp_len, uint64_t mem_limit, struct gindex *back);
/* Writers 0 .. writers-1 may add at the same time, each from one thread, without a lock: each
 * counts into its own memory indexes (one per 1/16 of the fingerprint space; with a back, each
 * holds 1/(16 writers) of mem_limit and spills alone). Call before the writers start. 0 or -1. */
int counter_set_writers(struct counter *c, int writers);
/* count += 1 for each of n fingerprints packed fp_len apart, the i-th at stream position
 * first + i, as `writer`. Returns 0, or -1 with err filled. */
int counter_add_batch(struct counter *c, int writer, const uint8_t *fps, size_t n, uint64_t first, struct dd_err *err);
/* count(fp) += n, first(fp) = min(first(fp), first), as writer 0 (not beside the writers). */
int counter_add(struct counter *c, const uint8_t *fp, uint64_t n, uint64_t first, struct dd_err *err);
/* After the writers have stopped: with a back, moves what memory holds to the back, in
 * fingerprint order; without one there is nothing to move (the distribution walks the writers'
 * indexes as one). */
int counter_settle(struct counter *c, struct dd_err *err);
/* At least the distinct contents counted: the sum of the writers' own counts (exact with one
 * writer, or once counter_distribution has walked them), or UINT64_MAX where a back holds some. */
uint64_t counter_distinct_bound(const struct counter *c);
/* After settle: the distribution of the counts and the count and first position of zero_fp (the
 * all-zero block's fingerprint; may be NULL; first is UINT64_MAX when absent). `also` (may be
 * NULL) sees every entry during the same walk of the index (the compressibility and locality
 * joins); its non-zero return fails the call with err "out of memory". */
int counter_distribution(struct counter *c, const uint8_t *zero_fp, index_visit_fn also, void *also_arg,
			 struct dist *out, uint64_t *zero_blocks, uint64_t *zero_first, struct dd_err *err);
/* The same with the walk split over walkers->n threads (at most one per fingerprint range; one
 * with a back): thread k offers its entries to visit(..., args[k]), and no two threads offer
 * entries of one fingerprint range (fingerprints sharing their first byte). */
struct counter_walkers {
	int n;
	index_visit_fn visit; /* may be NULL */
	void **args;          /* n of them */
};
int counter_distribution_by(struct counter *c, const uint8_t *zero_fp, const struct counter_walkers *w,
			    struct dist *out, uint64_t *zero_blocks, uint64_t *zero_first, struct dd_err *err);
/* Memory-index bytes per distinct fingerprint: the most memory the indexes held, over the distinct
 * contents (with several writers, a content seen by k of them is held k times). */
double counter_bytes_per_distinct(const struct counter *c);
uint64_t counter_spills(const struct counter *c);
void counter_free(struct counter *c);

#endif
