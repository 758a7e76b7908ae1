/* slots.c - process slots: each open handle owns a slot (its counters, allocation extent, open
 * bin, "inside an operation" flag), claimed, released, summed and checked for a live owner here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "reference-engine/engine-int.h"

#define A(x) __atomic_##x

bool slot_pid_alive(int32_t pid)
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
bool slot_owner_alive(const struct vol_slot *s)
{
	if (!slot_pid_alive(s->pid))
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
		if (s->pid && slot_owner_alive(s))
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
		if (s->pid && s->bin_pbn == pbn + 1 && slot_owner_alive(s))
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
