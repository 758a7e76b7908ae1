/* rate.c - due times of a nominal schedule, computed from the op number rather than by
 * accumulating intervals, so there is no drift over long runs. */
#include <time.h>

#include "bench/workload/rate.h"

void schedule_init(struct schedule *s, uint64_t t0_ns, double rate, uint64_t workers, uint64_t worker)
{
	s->active = rate > 0;
	s->t0_ns = t0_ns;
	s->rate = rate;
	s->workers = workers;
	s->worker = worker;
	s->k = 0;
}

uint64_t schedule_at(const struct schedule *s, uint64_t k)
{
	if (!s->active)
		return s->t0_ns;
	long double slot = (long double)k * s->workers + s->worker;
	return s->t0_ns + (uint64_t)(slot * 1e9L / s->rate);
}

uint64_t schedule_due_before(const struct schedule *s, uint64_t t)
{
	if (t <= s->t0_ns)
		return 0;
	/* slot k*W + w is due before t when it is below (t - t0) * RATE: estimated, then settled on
	 * schedule_at itself, so the count agrees with the due times the worker used */
	long double slots = (long double)(t - s->t0_ns) * s->rate / 1e9L - (long double)s->worker;
	uint64_t k = slots > 0 ? (uint64_t)(slots / (long double)s->workers) : 0;
	while (k > 0 && schedule_at(s, k - 1) >= t)
		k--;
	while (schedule_at(s, k) < t)
		k++;
	return k;
}

void pacer_init(struct pacer *p) { p->wake_late_ns = 20000; }

bool pacer_sleep_until(struct pacer *p, uint64_t t)
{
	uint64_t spin = 2 * p->wake_late_ns, now = now_ns();
	spin = spin < 2000 ? 2000 : spin > 100000 ? 100000 : spin;
	if (t > now + spin) {
		uint64_t wake = t - spin;
		struct timespec ts = {(time_t)(wake / 1000000000ULL), (long)(wake % 1000000000ULL)};
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			return false; /* EINTR */
		now = now_ns();
		p->wake_late_ns = (7 * p->wake_late_ns + (now > wake ? now - wake : 0)) / 8;
	}
	/* No sched_yield here: with a CPU-bound process runnable beside us, CFS hands it the rest of
	 * its slice, and the due time passes by milliseconds (a paced replay's p50 went from 2 us to
	 * 0.9-2.1 ms with a `yes` beside it). The spin is bounded (100 us) instead. */
	while (now < t)
		now = now_ns();
	return true;
}
