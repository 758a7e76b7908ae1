/* shim.c - fault injection for the tests (LD_PRELOAD, never installed): fails the N-th read,
 * write or fsync on files whose path contains a given string, with EIO or ENOSPC, counting across
 * every process of the run (a counter in a shared file), and logs what it injected.
 *
 * Environment:
 *   DEDIS_FAULT_OP      write | read | fsync (fsync, fdatasync, sync_file_range, and msync of a
 *                       file mapping: its file is found in /proc/self/maps) | mmap (of a file:
 *                       fails with EIO or ENOSPC as asked, though mmap(2) gives neither)
 *   DEDIS_FAULT_NTH     N: the N-th such call (from 1) on a matching file fails
 *   DEDIS_FAULT_ERRNO   EIO (default) | ENOSPC
 *   DEDIS_FAULT_PATH    only files whose path contains this (default: any regular file or device)
 *   DEDIS_FAULT_STATE   a file of at least 8 bytes the shim counts in (shared by forked workers)
 *   DEDIS_FAULT_LOG     where the injection is written: "OP PATH OFFSET ERRNO-NAME PID"
 *   DEDIS_FAULT_ACTION  fail (default) | stop: instead of failing the call, log it and stop the
 *                       process (SIGSTOP) there, then let the call through once it is continued -
 *                       how a test catches a tool in a given phase (populate, final verify) to
 *                       signal it, without racing it | hold: log it and hold the calling thread
 *                       there (the others go on) until the file DEDIS_FAULT_RELEASE exists, then
 *                       let the call through - how a test keeps one thread busy in a known place
 * One call fails, once; later calls go through (a transient fault: the tool must stop on it).
 * A write or read that transfers part of its bytes is failed whole. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum fault_op { OP_NONE, OP_WRITE, OP_READ, OP_FSYNC, OP_MMAP };

static enum fault_op armed_op;
static uint64_t nth;
static int fault_errno = EIO;
static int stop_instead, hold_instead;
static const char *release_path;
static const char *path_filter;
static const char *log_path;
static uint64_t *counter; /* shared by every process that inherited or mapped the state file */

__attribute__((constructor)) static void shim_init(void)
{
	const char *op = getenv("DEDIS_FAULT_OP"), *n = getenv("DEDIS_FAULT_NTH"), *e = getenv("DEDIS_FAULT_ERRNO");
	const char *state = getenv("DEDIS_FAULT_STATE");
	if (!op || !n || !state)
		return;
	armed_op = !strcmp(op, "write") ? OP_WRITE : !strcmp(op, "read") ? OP_READ : !strcmp(op, "fsync") ? OP_FSYNC
		 : !strcmp(op, "mmap") ? OP_MMAP : OP_NONE;
	nth = strtoull(n, NULL, 10);
	if (e && !strcmp(e, "ENOSPC"))
		fault_errno = ENOSPC;
	path_filter = getenv("DEDIS_FAULT_PATH");
	stop_instead = getenv("DEDIS_FAULT_ACTION") && !strcmp(getenv("DEDIS_FAULT_ACTION"), "stop");
	hold_instead = getenv("DEDIS_FAULT_ACTION") && !strcmp(getenv("DEDIS_FAULT_ACTION"), "hold");
	release_path = getenv("DEDIS_FAULT_RELEASE");
	log_path = getenv("DEDIS_FAULT_LOG");
	int fd = (int)syscall(SYS_openat, AT_FDCWD, state, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	void *p = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd);
	if (p != MAP_FAILED)
		counter = p;
}

/* Does fd name a file the fault is aimed at? (its path, through /proc/self/fd) */
static int matches(int fd, char *path, size_t len)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, len - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	if (path[0] != '/') /* pipes, sockets, anonymous memory */
		return 0;
	return !path_filter || strstr(path, path_filter) != NULL;
}

static void log_injection(const char *op, const char *path, long long offset)
{
	if (!log_path)
		return;
	char line[4400];
	int n = snprintf(line, sizeof line, "%s %s %lld %s %ld\n", op, path, offset,
			 stop_instead ? "STOP" : hold_instead ? "HOLD" : fault_errno == ENOSPC ? "ENOSPC" : "EIO", (long)getpid());
	int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		syscall(SYS_write, fd, line, (size_t)n);
		syscall(SYS_close, fd);
	}
}

/* The file mapped at addr, from /proc/self/maps (msync names memory, not a descriptor). */
static int mapped_file(const void *addr, char *path, size_t len, long long *offset)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	static char text[1 << 18];
	ssize_t n = 0, got;
	while (n < (ssize_t)sizeof text - 1 && (got = syscall(SYS_read, fd, text + n, sizeof text - 1 - n)) > 0)
		n += got;
	syscall(SYS_close, fd);
	text[n > 0 ? n : 0] = 0;
	int found = 0;
	for (char *line = text; line && *line && !found;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		unsigned long lo, hi, off;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &off, &at) >= 3 && at &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi && line[at] == '/') {
			snprintf(path, len, "%s", line + at);
			*offset = (long long)(off + ((uintptr_t)addr - lo));
			found = 1;
		}
		line = next;
	}
	return found && (!path_filter || strstr(path, path_filter));
}

/* Should this call fail? offset < 0: the file position. fd < 0: a mapping, at addr. */
static int inject_at(enum fault_op op, const char *name, int fd, const void *addr, long long offset)
{
	if (op != armed_op || !counter)
		return 0;
	char path[4096];
	if (fd < 0 ? !mapped_file(addr, path, sizeof path, &offset) : !matches(fd, path, sizeof path))
		return 0;
	if (__atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST) != nth)
		return 0;
	if (offset < 0)
		offset = (long long)syscall(SYS_lseek, fd, 0, SEEK_CUR);
	log_injection(name, path, offset);
	if (stop_instead) {
		raise(SIGSTOP);
		return 0;
	}
	if (hold_instead) {
		struct stat st;
		while (!release_path || syscall(SYS_newfstatat, AT_FDCWD, release_path, &st, 0) != 0) {
			struct timespec tick = {0, 10 * 1000 * 1000};
			nanosleep(&tick, NULL);
		}
		return 0;
	}
	errno = fault_errno;
	return 1;
}

static int inject(enum fault_op op, const char *name, int fd, long long offset)
{
	return inject_at(op, name, fd, NULL, offset);
}

#define REAL(ret, name, ...)                                                        \
	static ret (*real_##name)(__VA_ARGS__);                                     \
	if (!real_##name)                                                           \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, int, const void *, size_t);
	return inject(OP_WRITE, "write", fd, -1) ? -1 : real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
	return inject(OP_WRITE, "pwrite", fd, off) ? -1 : real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
	return inject(OP_WRITE, "pwrite", fd, off) ? -1 : real_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, writev, int, const struct iovec *, int);
	return inject(OP_WRITE, "writev", fd, -1) ? -1 : real_writev(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
	return inject(OP_WRITE, "pwritev", fd, off) ? -1 : real_pwritev(fd, iov, cnt, off);
}

ssize_t read(int fd, void *buf, size_t n)
{
	REAL(ssize_t, read, int, void *, size_t);
	return inject(OP_READ, "read", fd, -1) ? -1 : real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pread, int, void *, size_t, off_t);
	return inject(OP_READ, "pread", fd, off) ? -1 : real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pread64, int, void *, size_t, off_t);
	return inject(OP_READ, "pread", fd, off) ? -1 : real_pread64(fd, buf, n, off);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, readv, int, const struct iovec *, int);
	return inject(OP_READ, "readv", fd, -1) ? -1 : real_readv(fd, iov, cnt);
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(ssize_t, preadv, int, const struct iovec *, int, off_t);
	return inject(OP_READ, "preadv", fd, off) ? -1 : real_preadv(fd, iov, cnt, off);
}

int fsync(int fd)
{
	REAL(int, fsync, int);
	return inject(OP_FSYNC, "fsync", fd, 0) ? -1 : real_fsync(fd);
}

int fdatasync(int fd)
{
	REAL(int, fdatasync, int);
	return inject(OP_FSYNC, "fdatasync", fd, 0) ? -1 : real_fdatasync(fd);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	REAL(int, sync_file_range, int, off64_t, off64_t, unsigned int);
	return inject(OP_FSYNC, "sync_file_range", fd, off) ? -1 : real_sync_file_range(fd, off, n, flags);
}

int msync(void *addr, size_t len, int flags)
{
	REAL(int, msync, void *, size_t, int);
	return inject_at(OP_FSYNC, "msync", -1, addr, 0) ? -1 : real_msync(addr, len, flags);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap, void *, size_t, int, int, int, off_t);
	return fd >= 0 && inject(OP_MMAP, "mmap", fd, off) ? MAP_FAILED : real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(void *, mmap64, void *, size_t, int, int, int, off_t);
	return fd >= 0 && inject(OP_MMAP, "mmap", fd, off) ? MAP_FAILED : real_mmap64(addr, len, prot, flags, fd, off);
}
