/* slots.c - process slots and quiescing: each open handle owns a slot (its counters, allocation
 * extent, open bin, "inside an operation" flag); the rare paths (recovery, GC, fsck) take the
 * world lock and wait until no live process is inside an operation, so the write and read paths
 * themselves never share a lock. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "reference-engine/engine-int.h"

#define A(x) __atomic_##x

static bool pid_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/* A process's start time, field 22 of /proc/PID/stat (after the command, which may hold
 * spaces and parentheses); 0 when it cannot be read. */
static uint64_t start_time(int32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++) /* p is at the end of field `field` */
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The slot's owner still runs: its pid is alive and, where the slot recorded it, was started
 * when the owner was (a dead writer's pid reused by another process would otherwise keep every
 * quiesce waiting until that process exits). */
static bool owner_alive(const struct vol_slot *s)
{
	if (!pid_alive(s->pid))
		return false;
	uint64_t t = s->pid_start ? start_time(s->pid) : 0;
	return !t || t == s->pid_start;
}

/* Fold a slot's counts into the base and free it. */
static void fold(struct vol_state *st, struct vol_slot *s)
{
	for (int i = 0; i < VC_COUNT; i++)
		st->base[i] += s->c[i];
	memset(s, 0, sizeof *s);
}

unsigned slots_in_use(const struct vol_state *st)
{
	unsigned n = A(load_n)(&st->slots_used, __ATOMIC_ACQUIRE);
	return n < VOL_SLOTS ? n : VOL_SLOTS;
}

int slot_claim(struct engine *e)
{
	struct vol_state *st = e->st;
	for (unsigned i = 0; i < VOL_SLOTS; i++) {
		struct vol_slot *s = &st->slots[i];
		if (s->pid && owner_alive(s))
			continue;
		if (s->pid)
			fold(st, s); /* a dead process's: its leftovers were repaired when it was found */
		memset(s, 0, sizeof *s);
		s->pid = (int32_t)getpid();
		s->pid_start = start_time(s->pid);
		if (i >= slots_in_use(st))
			A(store_n)(&st->slots_used, i + 1, __ATOMIC_RELEASE);
		e->me = s;
		return 0;
	}
	return -EUSERS;
}

void slot_release(struct engine *e)
{
	if (e->me)
		fold(e->st, e->me);
	e->me = NULL;
}

bool slot_is_bin(const struct engine *e, uint64_t pbn)
{
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++) {
		const struct vol_slot *s = &e->st->slots[i];
		if (s->pid && s->bin_pbn == pbn + 1 && owner_alive(s))
			return true;
	}
	return false;
}

int64_t vol_counter(const struct engine *e, enum vol_counter c)
{
	int64_t v = e->st->base[c];
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++)
		v += A(load_n)(&e->st->slots[i].c[c], __ATOMIC_RELAXED);
	return v;
}

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
			if (spins++ % 1024 ? !pid_alive(s->pid) : !owner_alive(s)) {
				dead = found_dead = true;
				A(store_n)(&s->active, 0, __ATOMIC_SEQ_CST);
				break;
			}
			sched_yield();
		}
		if (s->bin_pbn && (found_dead || !owner_alive(s)))
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
