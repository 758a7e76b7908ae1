/* mapread.c - a range of a file mapped for reading in place, and a guard that turns the SIGBUS
 * of a page that cannot be read (the file shrank, or an I/O error) into an error return. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "gen/mapread.h"

/* The guarded mapping of this thread, if it is inside map_guarded: a fault there jumps back. */
static _Thread_local sigjmp_buf *guard_jump;
static _Thread_local const uint8_t *guard_lo, *guard_hi;
static _Thread_local const void *guard_fault;
static struct sigaction previous_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static bool guard_ready;

static void guard_install(void);

/* Files that a mapping may reach device memory or kernel state through (sysfs' PCI resourceN,
 * debugfs) are read only by pread, which such files answer with an error at worst. */
static bool pseudo_fs(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs))
		return true;
	switch ((unsigned long)fs.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case PSTOREFS_MAGIC:
	case BPF_FS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* Does mincore tell this process the truth about fd's pages? The kernel answers it only for a
 * file the caller owns or may write (or with CAP_FOWNER, which root has); for any other it says
 * every page is resident, so that residency cannot be spied on. */
static bool residency_visible(int fd)
{
	struct stat st;
	uid_t me = geteuid();
	if (me == 0 || (fstat(fd, &st) == 0 && st.st_uid == me))
		return true;
	return faccessat(fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

void map_file_probe(int fd, struct map_file *f)
{
	pthread_once(&guard_once, guard_install);
	/* without the guard, a file that shrinks would end the process */
	f->mappable = guard_ready && !pseudo_fs(fd);
	f->residency_visible = f->mappable && residency_visible(fd);
}

enum map_open_result map_range_open(int fd, const struct map_file *f, uint64_t off, size_t len, bool resident_only,
				    struct map_range *m)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), at = off / page * page;
	size_t maplen = (size_t)(off - at) + len;
	memset(m, 0, sizeof *m);
	if (!f->mappable)
		return MAP_OPEN_FAILED;
	if (resident_only && !f->residency_visible)
		return MAP_OPEN_NOT_RESIDENT;
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
	/* si_code > 0: raised by the kernel for a fault (not sent by kill or raise, whose address
	 * means nothing) */
	if (si->si_code > 0 && guard_jump && a >= guard_lo && a < guard_hi) {
		guard_fault = a;
		siglongjmp(*guard_jump, 1);
	}
	if (previous_bus.sa_flags & SA_SIGINFO) {
		previous_bus.sa_sigaction(sig, si, uctx);
		return;
	}
	if (previous_bus.sa_handler != SIG_DFL && previous_bus.sa_handler != SIG_IGN) {
		previous_bus.sa_handler(sig);
		return;
	}
	/* Back to the disposition from before: a fault runs its access again and meets it (the kernel
	 * does not let a fault's SIGBUS be ignored either); a sent signal is sent again. */
	sigaction(SIGBUS, &previous_bus, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void guard_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	guard_ready = sigaction(SIGBUS, &sa, &previous_bus) == 0;
}

int map_guarded(const struct map_range *m, int (*fn)(void *arg), void *arg, const void **fault)
{
	sigjmp_buf jump;
	*fault = NULL;
	if (sigsetjmp(jump, 1)) { /* 1: the mask the handler ran under (SIGBUS blocked) is undone */
		guard_jump = NULL;
		*fault = guard_fault;
		return -1;
	}
	guard_lo = m->base;
	guard_hi = (const uint8_t *)m->base + m->maplen;
	guard_jump = &jump;
	int rc = fn(arg);
	guard_jump = NULL;
	return rc;
}
