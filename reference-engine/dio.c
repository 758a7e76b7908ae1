/* dio.c - full-length pwrite/pread (short transfers resumed, end of file is -EIO) and
 * fdatasync on the durable files, each reported to the recorder when one is attached. */
#include <errno.h>
#include <unistd.h>
#include "reference-engine/dio.h"

static int transfer(int fd, void *buf, size_t len, uint64_t off, int writing)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = writing ? pwrite(fd, (char *)buf + done, len - done, (off_t)(off + done))
				    : pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int dio_write(const struct engine_recorder *r, unsigned file, int fd, const void *buf, size_t len, uint64_t off)
{
	int rc = r && r->fail ? r->fail(r->arg, file, off) : 0;
	if (rc)
		return rc;
	rc = transfer(fd, (void *)buf, len, off, 1);
	if (!rc && r && r->write)
		r->write(r->arg, file, off, buf, len);
	return rc;
}

int dio_read(int fd, void *buf, size_t len, uint64_t off)
{
	return transfer(fd, buf, len, off, 0);
}

int dio_sync(const struct engine_recorder *r, unsigned file, int fd)
{
	if (fdatasync(fd))
		return -errno;
	if (r && r->sync)
		r->sync(r->arg, file);
	return 0;
}
