/* quiesce.c - the world lock: the rare paths (recovery, GC, fsck) take it and wait until no live
 * process is inside an operation, repairing what a dead one left, so the write and read paths
 * themselves never share a lock. */
#include <errno.h>
#include <sched.h>
#include "reference-engine/engine-int.h"

#define A(x) __atomic_##x

/* Wait until every other live slot is outside an operation; true if a slot was found inside one
 * with its process dead (what it was doing must be repaired). */
static bool drain(struct engine *e)
{
	bool dead = false;
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++) {
		struct vol_slot *s = &e->st->slots[i];
		if (s == e->me || !s->pid)
			continue;
		/* the start time is read from /proc at the first spin and then every 1024; between,
		 * a signal 0 tells whether the pid still runs (a reuse within that window only delays
		 * the answer); a slot not inside an operation costs no /proc read */
		unsigned spins = 0;
		bool found_dead = false;
		while (A(load_n)(&s->active, __ATOMIC_SEQ_CST)) {
			if (spins++ % 1024 ? !slot_pid_alive(s->pid) : !slot_owner_alive(s)) {
				dead = found_dead = true;
				A(store_n)(&s->active, 0, __ATOMIC_SEQ_CST);
				break;
			}
			sched_yield();
		}
		if (s->bin_pbn && (found_dead || !slot_owner_alive(s)))
			s->bin_pbn = 0; /* its bin is closed: GC may reclaim what it left */
	}
	return dead;
}

int world_enter(struct engine *e)
{
	int rc = pthread_mutex_lock(&e->st->world);
	bool repair = false;
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(&e->st->world);
		repair = true; /* its holder died mid-recovery, mid-GC or mid-fsck */
	} else if (rc) {
		return -rc;
	}
	A(store_n)(&e->st->quiesce, 1, __ATOMIC_SEQ_CST);
	if (drain(e))
		repair = true;
	if (repair && (rc = recovery_rebuild(e))) {
		world_leave(e);
		return rc;
	}
	return 0;
}

void world_leave(struct engine *e)
{
	A(store_n)(&e->st->quiesce, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&e->st->world);
}

int op_enter(struct engine *e)
{
	for (;;) {
		A(store_n)(&e->me->active, 1, __ATOMIC_SEQ_CST);
		if (!A(load_n)(&e->st->quiesce, __ATOMIC_SEQ_CST))
			return 0;
		A(store_n)(&e->me->active, 0, __ATOMIC_SEQ_CST);
		/* Someone holds the world: wait for it by taking it (and repairing, if it died). */
		int rc = world_enter(e);
		if (rc)
			return rc;
		world_leave(e);
	}
}

void op_exit(struct engine *e)
{
	A(store_n)(&e->me->active, 0, __ATOMIC_RELEASE);
}
