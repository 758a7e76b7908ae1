/* histogram.h - latency histogram with log-linear buckets (values in ns): constant memory,
 * ~1.6 % relative error, O(1) record, mergeable across workers, percentiles and mean. */
#ifndef DEDIS_HISTOGRAM_H
#define DEDIS_HISTOGRAM_H

#include <stdint.h>

/* Values below 2^HIST_SUB_BITS are exact; above, each power of two is split into
 * 2^HIST_SUB_BITS linear sub-buckets. Values >= 2^HIST_MAX_EXP ns (~ 19 min) saturate into
 * the last bucket (and max still records the true value). */
#define HIST_SUB_BITS 6
#define HIST_MAX_EXP 40
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 1) << HIST_SUB_BITS)

/* Plain data, no pointers: lives in shared memory, written by one process, read by another
 * (relaxed atomic loads/stores). */
struct histogram {
	uint64_t count;
	uint64_t sum;   /* ns; 2^64 ns is 584 years */
	uint64_t min;
	uint64_t max;
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct histogram *h);
unsigned hist_bucket_of(uint64_t value);
/* The lowest and highest values that fall into bucket b; buckets are contiguous, and the last
 * one's high is UINT64_MAX (it also takes the saturated values). */
uint64_t hist_bucket_low(unsigned b);
uint64_t hist_bucket_high(unsigned b);

/* Single writer; concurrent readers see a consistent-enough view (each field atomic). */
static inline void hist_record(struct histogram *h, uint64_t value)
{
	unsigned b = hist_bucket_of(value);
	__atomic_store_n(&h->buckets[b], h->buckets[b] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum, h->sum + value, __ATOMIC_RELAXED);
	if (value > h->max)
		__atomic_store_n(&h->max, value, __ATOMIC_RELAXED);
	if (value < h->min)
		__atomic_store_n(&h->min, value, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + 1, __ATOMIC_RELAXED);
}

/* dst += src (a snapshot read with atomic loads, safe while src is being written). */
void hist_merge(struct histogram *dst, const struct histogram *src);
/* dst = a - b, bucket-wise (interval view from two cumulative snapshots); min/max of dst are
 * estimated from the buckets (clamped by a's min/max). dst may alias a or b. */
void hist_diff(struct histogram *dst, const struct histogram *a, const struct histogram *b);

/* Value at percentile p in [0,100]: the upper bound of the bucket holding rank ceil(p/100*count)
 * clamped to [min, max] (p <= 0 gives min, p >= 100 max); 0 for an empty histogram. */
uint64_t hist_percentile(const struct histogram *h, double p);
/* sum / count, 0 for an empty histogram. */
double hist_mean(const struct histogram *h);

#endif
