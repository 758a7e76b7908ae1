/* mapread.c - a range of a file mapped for reading in place, and a guard that turns the SIGBUS
 * of a page the file no longer holds (it shrank while being read) into an error return. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mapread.h"

/* The guarded mapping of this thread, if it is inside map_guarded: a SIGBUS there jumps back. */
static _Thread_local sigjmp_buf *guard_jump;
static _Thread_local const uint8_t *guard_lo, *guard_hi;
static struct sigaction previous_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static bool guard_ready;

static void guard_install(void);

enum map_open_result map_range_open(int fd, uint64_t off, size_t len, bool resident_only, struct map_range *m)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), at = off / page * page;
	size_t maplen = (size_t)(off - at) + len;
	memset(m, 0, sizeof *m);
	pthread_once(&guard_once, guard_install);
	if (!guard_ready) /* without the guard, a file that shrinks would end the process */
		return MAP_OPEN_FAILED;
	void *base = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, (off_t)at);
	if (base == MAP_FAILED)
		return MAP_OPEN_FAILED;
	if (resident_only) {
		size_t pages = (maplen + page - 1) / page;
		unsigned char small[1024], *vec = pages <= sizeof small ? small : malloc(pages);
		bool all = vec && mincore(base, maplen, vec) == 0;
		int saved = errno;
		for (size_t i = 0; all && i < pages; i++)
			all = vec[i] & 1;
		if (vec != small)
			free(vec);
		if (!all) {
			munmap(base, maplen);
			errno = saved;
			return vec ? MAP_OPEN_NOT_RESIDENT : MAP_OPEN_FAILED;
		}
	}
	*m = (struct map_range){.data = (const uint8_t *)base + (off - at), .base = base, .maplen = maplen};
	return MAP_OPEN_OK;
}

void map_range_close(struct map_range *m)
{
	if (m->base)
		munmap(m->base, m->maplen);
	memset(m, 0, sizeof *m);
}


static void on_bus(int sig, siginfo_t *si, void *uctx)
{
	const uint8_t *a = si->si_addr;
	if (guard_jump && a >= guard_lo && a < guard_hi)
		siglongjmp(*guard_jump, 1);
	/* Not a page of ours: the handler from before takes it (the default ends the process, as it
	 * would have without us). */
	if (previous_bus.sa_flags & SA_SIGINFO) {
		previous_bus.sa_sigaction(sig, si, uctx);
		return;
	}
	if (previous_bus.sa_handler != SIG_DFL && previous_bus.sa_handler != SIG_IGN) {
		previous_bus.sa_handler(sig);
		return;
	}
	/* The faulting access runs again under the default (the kernel does not let a fault's SIGBUS
	 * be ignored either). */
	sigaction(SIGBUS, &previous_bus, NULL);
}

static void guard_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	guard_ready = sigaction(SIGBUS, &sa, &previous_bus) == 0;
}

int map_guarded(const struct map_range *m, int (*fn)(void *arg), void *arg, bool *faulted)
{
	sigjmp_buf jump;
	*faulted = false;
	if (sigsetjmp(jump, 1)) { /* 1: the mask the handler ran under (SIGBUS blocked) is undone */
		guard_jump = NULL;
		*faulted = true;
		return -1;
	}
	guard_lo = m->base;
	guard_hi = (const uint8_t *)m->base + m->maplen;
	guard_jump = &jump;
	int rc = fn(arg);
	guard_jump = NULL;
	return rc;
}
