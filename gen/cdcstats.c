/* cdcstats.c - the chunks of [cdc 1]: every chunk counted, the sampled ones (a hash of their end's
 * gear value and length: every copy alike) fingerprinted and kept; at the end, sorted by identity
 * then position, the first of each content is its source and the others' shifts are tallied. */
#include <stdlib.h>
#include <string.h>
#include "lib/reserve.h"
#include "lib/u64map.h"
#include "lib/content.h"
#include "lib/rng.h"
#include "gen/cdcstats.h"

struct chunk_rec {
	uint64_t id;   /* the fingerprint's first 8 bytes */
	uint64_t key;  /* the sampling hash: kept while its low bits under the period are zero */
	uint64_t pos;  /* stream byte position */
	uint64_t len;
};

struct cdc_set {
	struct cdc_params params;
	uint64_t period;
	uint64_t chunks, bytes;
	uint64_t zero_tail;        /* the gear hash of 64 zero bytes: the end of every all-zero chunk */
	uint64_t zero_chunks, zero_bytes;
	struct u64map zero_lens;   /* the all-zero chunks' lengths: one content each */
	struct chunk_rec *recs;
	size_t n, cap;
};

double cdc_auto_rate(uint64_t bytes, uint32_t avg)
{
	double p = 1, chunks = (double)bytes / (double)avg;
	if (!bytes)
		return 1.0 / 8;
	while (p > 1.0 / 64 && p * chunks > (double)CDC_AUTO_SAMPLED)
		p /= 2;
	return p;
}

struct cdc_set *cdc_set_new(const struct cdc_params *params, double p)
{
	struct cdc_set *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->params = *params;
	s->period = 1;
	for (int k = 0; k < 64; k++)
		s->zero_tail = (s->zero_tail << 1) + cdc_gear()[0];
	while (s->period < (UINT64_C(1) << 62) && (double)s->period * p < 0.75)
		s->period *= 2;
	return s;
}

void cdc_set_free(struct cdc_set *s)
{
	if (s) {
		free(s->recs);
		u64map_free(&s->zero_lens);
	}
	free(s);
}

const struct cdc_params *cdc_set_params(const struct cdc_set *s)
{
	return &s->params;
}

double cdc_set_rate(const struct cdc_set *s)
{
	return 1.0 / (double)s->period;
}

int cdc_cursor_init(struct cdc_cursor *c, const struct cdc_params *params)
{
	memset(c, 0, sizeof *c);
	return (c->carry = malloc(params->max)) ? 0 : -1;
}

void cdc_cursor_free(struct cdc_cursor *c)
{
	free(c->carry);
	c->carry = NULL;
}

/* Drops the chunks the (raised) period no longer samples. */
static void filter(struct cdc_set *s)
{
	size_t out = 0;
	for (size_t k = 0; k < s->n; k++)
		if (!(s->recs[k].key & (s->period - 1)))
			s->recs[out++] = s->recs[k];
	s->n = out;
}

static int push_rec(struct cdc_set *s, const struct chunk_rec *r)
{
	while (s->n >= CDC_KEEP && s->period < (UINT64_C(1) << 62)) {
		s->period *= 2;
		filter(s);
	}
	if (r->key & (s->period - 1))
		return 0;
	if (s->n == s->cap && array_reserve((void **)&s->recs, &s->cap, s->n + 1, sizeof *s->recs, 1024))
		return -1;
	s->recs[s->n++] = *r;
	return 0;
}

/* A chunk ends: counted, and kept when sampled. */
static int emit(struct cdc_set *s, struct fp_ctx *fc, const uint8_t *data, size_t len, uint64_t h, uint64_t pos)
{
	uint8_t fp[64];
	s->chunks++;
	s->bytes += len;
	if ((h == s->zero_tail || len < s->params.min) && len && content_all_zero(data, len)) {
		uint64_t *seen = u64map_at(&s->zero_lens, len);
		if (!seen)
			return -1;
		*seen = 1;
		s->zero_chunks++;
		s->zero_bytes += len;
		return 0;
	}
	uint64_t key = rng_mix64(h ^ ((uint64_t)len * UINT64_C(0x9e3779b97f4a7c15)));
	if (key & (s->period - 1))
		return 0;
	if (fp_hash(fc, data, len, fp))
		return -1;
	struct chunk_rec r = {.key = key, .pos = pos, .len = len};
	memcpy(&r.id, fp, sizeof r.id);
	return push_rec(s, &r);
}

int cdc_feed(struct cdc_set *s, struct cdc_cursor *c, struct fp_ctx *fc, const uint8_t *data, size_t n,
	     uint64_t spos)
{
	size_t off = 0;
	while (off < n) {
		bool cut;
		size_t k = cdc_scan(&s->params, &c->h, c->done, data + off, n - off, &cut);
		if (!c->done)
			c->start = spos + off;
		if (k && (!cut || c->done)) { /* the chunk's bytes so far, contiguous in carry (cut: < max) */
			memcpy(c->carry + c->done, data + off, k);
		}
		if (!cut) {
			c->done += k;
			return 0;
		}
		const uint8_t *chunk = c->done ? c->carry : data + off;
		if (emit(s, fc, chunk, c->done + k, c->h, c->start))
			return -1;
		c->done = 0;
		c->h = 0;
		off += k;
	}
	return 0;
}

int cdc_end(struct cdc_set *s, struct cdc_cursor *c, struct fp_ctx *fc)
{
	int rc = c->done ? emit(s, fc, c->carry, c->done, c->h, c->start) : 0;
	c->done = 0;
	c->h = 0;
	return rc;
}

int cdc_set_merge(struct cdc_set *into, struct cdc_set *from)
{
	if (from->period > into->period) {
		into->period = from->period;
		filter(into);
	}
	into->chunks += from->chunks;
	into->bytes += from->bytes;
	into->zero_chunks += from->zero_chunks;
	into->zero_bytes += from->zero_bytes;
	uint64_t len, one;
	for (size_t at = 0; u64map_next(&from->zero_lens, &at, &len, &one);) {
		uint64_t *seen = u64map_at(&into->zero_lens, len);
		if (!seen)
			return -1;
		*seen = 1;
	}
	u64map_free(&from->zero_lens);
	memset(&from->zero_lens, 0, sizeof from->zero_lens);
	from->zero_chunks = from->zero_bytes = 0;
	for (size_t k = 0; k < from->n; k++)
		if (push_rec(into, &from->recs[k]))
			return -1;
	free(from->recs);
	from->recs = NULL;
	from->n = from->cap = 0;
	from->chunks = from->bytes = 0;
	return 0;
}

static int by_id_pos(const void *a, const void *b)
{
	const struct chunk_rec *x = a, *y = b;
	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void run_add(struct dist_cdc *out, uint64_t bytes)
{
	int k = bytes ? 63 - __builtin_clzll(bytes) : 0;
	if (k >= DIST_CDC_RUN_BINS)
		k = DIST_CDC_RUN_BINS - 1;
	out->run_count[k]++;
	out->run_bytes[k] += bytes;
}

static int by_delta_pos(const void *a, const void *b)
{
	const struct chunk_rec *x = a, *y = b;
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Runs of shifted duplicates (recs[0..n), moved to the front by the caller, key = position -
 * source position): a copied stretch keeps one such distance, so a run goes on while the distance
 * stays and each chunk starts where the previous ended; at period P > 1, within the (P - 1) * 2
 * average chunks the unsampled ones between may fill. A run's length spans its first chunk's start
 * to its last one's end. */
static void count_runs(struct chunk_rec *recs, size_t n, uint64_t period, uint64_t avg, struct dist_cdc *out)
{
	uint64_t gap = (period - 1) * 2 * avg, start = 0, end = 0;
	if (n)
		qsort(recs, n, sizeof *recs, by_delta_pos);
	for (size_t k = 0; k < n; k++) {
		bool new_run = !k || recs[k].key != recs[k - 1].key || recs[k].pos > end + gap;
		if (new_run && k)
			run_add(out, end - start);
		if (new_run)
			start = recs[k].pos;
		end = recs[k].pos + recs[k].len;
	}
	if (n)
		run_add(out, end - start);
}

/* The sparse shift list from the dense per-shift tallies. */
static int shift_list(const uint64_t (*tally)[2], uint64_t block_size, struct dist_cdc *out)
{
	size_t n = 0;
	for (uint64_t k = 1; k < block_size; k++)
		n += tally[k][0] != 0;
	if (n && !(out->shifts = calloc(n, sizeof *out->shifts)))
		return -1;
	for (uint64_t k = 1; k < block_size; k++)
		if (tally[k][0])
			out->shifts[out->nshifts++] = (struct dist_cdc_shift){(uint32_t)k, tally[k][0], tally[k][1]};
	return 0;
}

int cdc_set_result(struct cdc_set *s, uint64_t block_size, uint64_t range, struct dist_cdc *out)
{
	uint64_t (*tally)[2] = calloc(block_size, sizeof *tally);
	if (!tally)
		return -1;
	memset(out, 0, sizeof *out);
	*out = (struct dist_cdc){.present = true, .avg = s->params.avg, .min = s->params.min, .max = s->params.max,
				 .block_size = block_size, .range = range, .sample_rate = 1.0 / (double)s->period,
				 .chunks = s->chunks, .bytes = s->bytes, .zero_chunks = s->zero_chunks,
				 .zero_bytes = s->zero_bytes};
	uint64_t len, one;
	for (size_t at = 0; u64map_next(&s->zero_lens, &at, &len, &one);)
		out->zero_distinct_bytes += len;
	if (s->n)
		qsort(s->recs, s->n, sizeof *s->recs, by_id_pos);
	size_t nshifted = 0;
	uint64_t src_pos = 0, prev_id = 0;
	for (size_t k = 0; k < s->n; k++) {
		const struct chunk_rec r = s->recs[k];
		out->sampled_chunks++;
		out->sampled_bytes += r.len;
		if (!k || r.id != prev_id) {
			prev_id = r.id;
			src_pos = r.pos;
			out->distinct_chunks++;
			out->distinct_bytes += r.len;
			continue;
		}
		uint64_t shift = (r.pos - src_pos) % block_size;
		if (!shift) {
			out->aligned_chunks++;
			out->aligned_bytes += r.len;
		} else {
			out->shifted_chunks++;
			out->shifted_bytes += r.len;
			tally[shift][0]++;
			tally[shift][1] += r.len;
			s->recs[nshifted] = r; /* at or behind k: read already */
			s->recs[nshifted++].key = r.pos - src_pos;
		}
	}
	count_runs(s->recs, nshifted, s->period, s->params.avg, out);
	int rc = shift_list(tally, block_size, out);
	free(tally);
	return rc;
}
