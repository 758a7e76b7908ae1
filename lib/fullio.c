/* fullio.c - whole-buffer read(2), write(2), pread(2) and pwrite(2), retried past short transfers and EINTR (see
 * fullio.h). */
#include <errno.h>
#include <unistd.h>
#include "lib/fullio.h"

int fullio_write(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int fullio_read(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int positional(int fd, char *p, size_t n, uint64_t off, int eof_errno, int writing)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = writing ? pwrite(fd, p + done, n - done, (off_t)(off + done))
				    : pread(fd, p + done, n - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -eof_errno;
		done += (size_t)r;
	}
	return 0;
}

int fullio_pwrite(int fd, const void *p, size_t n, uint64_t off, int eof_errno)
{
	return positional(fd, (char *)p, n, off, eof_errno, 1);
}

int fullio_pread(int fd, void *p, size_t n, uint64_t off, int eof_errno)
{
	return positional(fd, p, n, off, eof_errno, 0);
}
