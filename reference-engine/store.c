/* store.c - data file I/O for the chunk store; full-block transfers only (a short transfer is
 * resumed, end of file is an error), errors returned as -errno. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "meta.h"
#include "store.h"

int store_create(const char *dir, uint32_t block_size, uint64_t blocks)
{
	char path[4096];
	if (meta_path(path, sizeof path, dir, VOL_DATA))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* Sparse: the chunk store takes room only as blocks are written. */
	int rc = ftruncate(fd, (off_t)(blocks * block_size)) ? -errno : 0;
	close(fd);
	return rc;
}

int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, bool direct)
{
	char path[4096];
	if (meta_path(path, sizeof path, dir, VOL_DATA))
		return -ENAMETOOLONG;
	s->fd = open(path, O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0));
	if (s->fd < 0)
		return -errno;
	s->block_size = block_size;
	s->blocks = blocks;
	s->direct = direct;
	return 0;
}

static int transfer(struct store *s, uint64_t pbn, void *buf, int writing)
{
	if (pbn >= s->blocks)
		return -EINVAL;
	size_t done = 0;
	off_t off = (off_t)(pbn * s->block_size);
	while (done < s->block_size) {
		ssize_t n = writing ? pwrite(s->fd, (char *)buf + done, s->block_size - done, off + (off_t)done)
				    : pread(s->fd, (char *)buf + done, s->block_size - done, off + (off_t)done);
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

int store_write(struct store *s, uint64_t pbn, const void *buf)
{
	return transfer(s, pbn, (void *)buf, 1);
}

int store_read(struct store *s, uint64_t pbn, void *buf)
{
	return transfer(s, pbn, buf, 0);
}

int store_sync(struct store *s)
{
	return fdatasync(s->fd) ? -errno : 0;
}

void store_close(struct store *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
