/* gransample.c - the granularity curve: sampled 128 KiB windows, the first 4 to 128 KiB of each
 * compressed alone (zstd -1, zstd -3, LZ4), byte sums per size that add up across threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "gen/gransample.h"

struct gran_sampler {
	pthread_mutex_t lock;
	double p;
	uint64_t period;
	struct dist_gran sums;
};

double gran_auto_rate(uint64_t bytes)
{
	uint64_t windows = bytes / DIST_GRAN_WINDOW;
	double p = 1;
	if (!bytes)
		return 1.0 / 64;
	while (p > 1.0 / 1024 && p * (double)windows > 1024)
		p /= 2;
	return p;
}

struct gran_sampler *gran_sampler_new(double p)
{
	struct gran_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->period = 1;
	while (s->period < (UINT64_C(1) << 62) && (double)s->period * p < 0.75)
		s->period *= 2;
	s->p = 1.0 / (double)s->period;
	return s;
}

uint64_t gran_sampler_period(const struct gran_sampler *s)
{
	return s->period;
}

void gran_sampler_add(struct gran_sampler *s, const struct dist_gran *part)
{
	pthread_mutex_lock(&s->lock);
	s->sums.windows += part->windows;
	for (int k = 0; k < DIST_GRAN_SIZES; k++) {
		s->sums.bytes[k] += part->bytes[k];
		s->sums.zstd1[k] += part->zstd1[k];
		s->sums.zstd3[k] += part->zstd3[k];
		s->sums.lz4[k] += part->lz4[k];
	}
	pthread_mutex_unlock(&s->lock);
}

void gran_sampler_result(const struct gran_sampler *s, struct dist_gran *out)
{
	*out = s->sums;
	out->sample_rate = s->p;
	out->present = s->sums.windows > 0;
}

void gran_sampler_free(struct gran_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}
