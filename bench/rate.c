/* rate.c - due times of a nominal schedule, computed from the op number rather than by
 * accumulating intervals, so there is no drift over long runs. */
#include "rate.h"

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
