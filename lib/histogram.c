/* histogram.c - log-linear latency buckets (exact below 2^HIST_SUB_BITS, then 2^HIST_SUB_BITS
 * linear sub-buckets per power of two), snapshot merge / interval diff, percentiles and mean. */
#include <math.h>
#include <string.h>

#include "lib/histogram.h"

#define SUB_COUNT (1u << HIST_SUB_BITS)
#define LAST_BUCKET ((unsigned)HIST_BUCKETS - 1)

void hist_init(struct histogram *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

unsigned hist_bucket_of(uint64_t value)
{
	if (value < SUB_COUNT)
		return (unsigned)value;
	unsigned e = 63u - (unsigned)__builtin_clzll(value); /* HIST_SUB_BITS <= e <= 63 */
	if (e >= HIST_MAX_EXP)
		return LAST_BUCKET;
	unsigned group = e - HIST_SUB_BITS + 1;
	unsigned sub = (unsigned)(value >> (e - HIST_SUB_BITS)) & (SUB_COUNT - 1);
	return (group << HIST_SUB_BITS) | sub;
}

uint64_t hist_bucket_low(unsigned b)
{
	if (b > LAST_BUCKET)
		b = LAST_BUCKET;
	if (b < SUB_COUNT)
		return b;
	unsigned group = b >> HIST_SUB_BITS, sub = b & (SUB_COUNT - 1);
	return (uint64_t)(SUB_COUNT + sub) << (group - 1);
}

uint64_t hist_bucket_high(unsigned b)
{
	if (b >= LAST_BUCKET)
		return UINT64_MAX; /* the last bucket also holds every saturated value */
	if (b < SUB_COUNT)
		return b;
	unsigned group = b >> HIST_SUB_BITS;
	return hist_bucket_low(b) + (1ULL << (group - 1)) - 1;
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

void hist_merge(struct histogram *dst, const struct histogram *src)
{
	/* count first: the writer bumps it last, so the buckets read next hold at least as much */
	uint64_t count = LOAD(&src->count);
	uint64_t sum = LOAD(&src->sum);
	uint64_t min = LOAD(&src->min);
	uint64_t max = LOAD(&src->max);

	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += LOAD(&src->buckets[i]);
	dst->count += count;
	dst->sum += sum;
	if (min < dst->min)
		dst->min = min;
	if (max > dst->max)
		dst->max = max;
}

void hist_diff(struct histogram *dst, const struct histogram *a, const struct histogram *b)
{
	/* scalars first: dst may alias a or b */
	uint64_t ca = LOAD(&a->count), cb = LOAD(&b->count);
	uint64_t sa = LOAD(&a->sum), sb = LOAD(&b->sum);
	uint64_t amin = LOAD(&a->min), amax = LOAD(&a->max);
	int first = -1, last = -1;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t x = LOAD(&a->buckets[i]), y = LOAD(&b->buckets[i]);
		dst->buckets[i] = x > y ? x - y : 0;
		if (dst->buckets[i]) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
	}
	dst->count = ca > cb ? ca - cb : 0;
	dst->sum = sa > sb ? sa - sb : 0;
	if (first < 0) {
		dst->min = UINT64_MAX;
		dst->max = 0;
		return;
	}
	/* the interval's extremes lie within its outermost buckets and within a's lifetime range */
	uint64_t lo = hist_bucket_low((unsigned)first), hi = hist_bucket_high((unsigned)last);
	dst->min = amin != UINT64_MAX && amin > lo ? amin : lo;
	dst->max = amax < hi ? amax : hi;
	if (dst->min > dst->max)
		dst->min = dst->max;
}

uint64_t hist_percentile(const struct histogram *h, double p)
{
	uint64_t count = h->count;

	if (count == 0)
		return 0;
	if (!(p > 0.0)) /* also NaN */
		return h->min;
	if (p >= 100.0)
		return h->max;
	double r = ceil(p / 100.0 * (double)count);
	uint64_t rank = r < 1.0 ? 1 : r >= (double)count ? count : (uint64_t)r;
	uint64_t cum = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		cum += h->buckets[i];
		if (cum >= rank) {
			uint64_t v = hist_bucket_high(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

double hist_mean(const struct histogram *h)
{
	if (h->count == 0)
		return 0.0;
	return (double)h->sum / (double)h->count;
}
