/* rate.h - nominal-load pacing: an open-loop schedule of start times. Operation k of worker w
 * is due at t0 + (k*W + w)/RATE, so the W workers together issue RATE evenly spaced ops/s. */
#ifndef DEDIS_BENCH_RATE_H
#define DEDIS_BENCH_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: due times, latencies, t0. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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
/* How many of this worker's operations are due before t. */
uint64_t schedule_due_before(const struct schedule *s, uint64_t t);

/* Sleeping to a due time without counting the timer's lateness in waking as the operation's
 * latency (nominal runs and paced replays count latency from the due time): sleep to short of
 * it, then spin to it. How short: twice the lateness seen so far (an average), 2-100 us: on the
 * 2-core VM wakes come 10-30 us late, on bare metal a few. The spin does not yield: beside a
 * CPU-bound process, a sched_yield gives it the rest of its slice (milliseconds, counted as
 * latency); at most 100 us of spin per wait is what a busy machine pays instead. The caller
 * sets its timer slack to 1 ns (PR_SET_TIMERSLACK): the default 50 us would be added to every
 * wake. */
struct pacer {
	uint64_t wake_late_ns; /* the timer's mean lateness in waking this thread */
};
void pacer_init(struct pacer *p);
/* Returns once CLOCK_MONOTONIC reaches t (true), or early when a signal interrupts the sleep
 * (false: the caller re-checks why it waits). */
bool pacer_sleep_until(struct pacer *p, uint64_t t);

#endif
