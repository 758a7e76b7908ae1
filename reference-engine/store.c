/* store.c - data file I/O for the chunk store: whole blocks at PBNs, through dio (full transfers,
 * recorded for the power-loss harness); errors returned as -errno. */
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "dio.h"
#include "meta.h"
#include "store.h"

static int stripe_path(char *buf, size_t len, const char *dir, unsigned i)
{
	int n = snprintf(buf, len, "%s/%s.%u", dir, VOL_DATA, i);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int store_create(const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes)
{
	for (unsigned i = 0; i < stripes; i++) {
		char path[4096];
		if (stripe_path(path, sizeof path, dir, i))
			return -ENAMETOOLONG;
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		/* Sparse: the chunk store takes room only as blocks are written. */
		uint64_t mine = blocks / stripes + (i < blocks % stripes);
		int rc = ftruncate(fd, (off_t)(mine * block_size)) ? -errno : 0;
		close(fd);
		if (rc)
			return rc;
	}
	return 0;
}

int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, bool direct,
	       const struct engine_recorder *rec)
{
	s->rec = rec;
	if (!stripes || stripes > STORE_MAX_STRIPES)
		return -EINVAL;
	s->stripes = 0;
	s->block_size = block_size;
	s->blocks = blocks;
	s->direct = direct;
	for (unsigned i = 0; i < stripes; i++) {
		char path[4096];
		if (stripe_path(path, sizeof path, dir, i))
			return -ENAMETOOLONG;
		s->fd[i] = open(path, O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0));
		if (s->fd[i] < 0)
			return -errno;
		s->stripes = i + 1;
	}
	return 0;
}

int store_write(struct store *s, uint64_t pbn, const void *buf)
{
	if (pbn >= s->blocks)
		return -EINVAL;
	unsigned i = (unsigned)(pbn % s->stripes);
	return dio_write(s->rec, DIO_DATA0 + i, s->fd[i], buf, s->block_size, pbn / s->stripes * s->block_size);
}

int store_read(struct store *s, uint64_t pbn, void *buf)
{
	if (pbn >= s->blocks)
		return -EINVAL;
	return dio_read(s->fd[pbn % s->stripes], buf, s->block_size, pbn / s->stripes * s->block_size);
}

bool store_covers(struct store *s, uint64_t pbn)
{
	struct stat st;
	return pbn < s->blocks && !fstat(s->fd[pbn % s->stripes], &st) &&
	       (uint64_t)st.st_size >= (pbn / s->stripes + 1) * s->block_size;
}

int store_sync(struct store *s)
{
	int rc;
	for (unsigned i = 0; i < s->stripes; i++)
		if ((rc = dio_sync(s->rec, DIO_DATA0 + i, s->fd[i])))
			return rc;
	return 0;
}

void store_close(struct store *s)
{
	for (unsigned i = 0; i < s->stripes; i++)
		close(s->fd[i]);
	s->stripes = 0;
}
