/* dio.c - full-length pwrite/pread (short transfers resumed, end of file is -EIO) and
 * fdatasync on the durable files, each reported to the recorder when one is attached. */
#include <errno.h>
#include <unistd.h>
#include "lib/fullio.h"
#include "reference-engine/dio.h"

int dio_write(const struct engine_recorder *r, unsigned file, int fd, const void *buf, size_t len, uint64_t off)
{
	int rc = r && r->fail ? r->fail(r->arg, file, off) : 0;
	if (rc)
		return rc;
	rc = fullio_pwrite(fd, buf, len, off, EIO);
	if (!rc && r && r->write)
		r->write(r->arg, file, off, buf, len);
	return rc;
}

int dio_read(int fd, void *buf, size_t len, uint64_t off)
{
	return fullio_pread(fd, buf, len, off, EIO);
}

int dio_sync(const struct engine_recorder *r, unsigned file, int fd)
{
	if (fdatasync(fd))
		return -errno;
	if (r && r->sync)
		r->sync(r->arg, file);
	return 0;
}
