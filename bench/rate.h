/* rate.h - nominal-load pacing: an open-loop schedule of start times. Operation k of worker w
 * is due at t0 + (k*W + w)/RATE, so the W workers together issue RATE evenly spaced ops/s. */
#ifndef DEDIS_BENCH_RATE_H
#define DEDIS_BENCH_RATE_H

#include <stdbool.h>
#include <stdint.h>

struct schedule {
	bool active;     /* false: peak (no schedule) */
	uint64_t t0_ns;
	double rate;     /* ops/s for all workers together */
	uint64_t workers, worker;
	uint64_t k;      /* next operation */
};

void schedule_init(struct schedule *s, uint64_t t0_ns, double rate, uint64_t workers, uint64_t worker);
/* When operation k is due. */
uint64_t schedule_at(const struct schedule *s, uint64_t k);
/* When the next operation is due (does not advance). */
static inline uint64_t schedule_peek(const struct schedule *s) { return schedule_at(s, s->k); }
static inline void schedule_advance(struct schedule *s) { s->k++; }

#endif
