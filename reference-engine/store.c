/* store.c - data file I/O for the chunk store: whole blocks at PBNs, through dio (full transfers,
 * recorded for the power-loss harness); errors returned as -errno. */
#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "reference-engine/dio.h"
#include "lib/hostload.h"
#include "reference-engine/meta.h"
#include "reference-engine/store.h"

static int stripe_path(char *buf, size_t len, const char *dir, unsigned i)
{
	int n = snprintf(buf, len, "%s/%s.%u", dir, VOL_DATA, i);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Blocks of `blocks` PBNs that data.<i> holds: its whole units, less what the last unit lacks when
 * that one is partial and its own. */
static uint64_t stripe_blocks(uint64_t blocks, unsigned stripes, uint32_t unit, unsigned i)
{
	uint64_t units = (blocks + unit - 1) / unit;
	uint64_t mine = (units / stripes + (i < units % stripes)) * unit;
	if (blocks % unit && (units - 1) % stripes == i)
		mine -= unit - blocks % unit;
	return mine;
}

static void locate(const struct store *s, uint64_t pbn, unsigned *file, uint64_t *off)
{
	uint64_t q = pbn / s->unit;
	*file = (unsigned)(q % s->stripes);
	*off = ((q / s->stripes) * s->unit + pbn % s->unit) * s->block_size;
}

/* MemAvailable in bytes, 0 when unknown. */
static uint64_t mem_available(void)
{
	struct host_mem m;
	return hostload_mem("/proc", &m) ? 0 : m.total - m.used;
}

int store_room_parse(const char *mode, enum store_room *room)
{
	if (!mode || !strcmp(mode, "auto"))
		*room = STORE_TRY_ALLOCATE;
	else if (!strcmp(mode, "full"))
		*room = STORE_ALLOCATE;
	else if (!strcmp(mode, "sparse"))
		*room = STORE_SPARSE;
	else
		return -EINVAL;
	return 0;
}

int store_room_for(const char *dir, uint64_t bytes, enum store_room *room, uint64_t *free_bytes)
{
	*free_bytes = 0;
	if (*room == STORE_SPARSE)
		return 0;
	bool full = *room == STORE_ALLOCATE;
	struct statvfs fs;
	struct statfs kind;
	if (statvfs(dir, &fs) || statfs(dir, &kind)) {
		if (full)
			return -errno;
		*room = STORE_SPARSE; /* auto: sparse, as where nothing is known */
		return 0;
	}
	bool unlimited = fs.f_blocks == 0; /* a tmpfs mounted with size=0 reports no size at all */
	*free_bytes = (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
	if (full)
		return !unlimited && bytes > *free_bytes ? -ENOSPC : 0;
	/* auto: a store in memory is allocated now, so that no write pays for a page of it (a
	 * first touch of a tmpfs page costs microseconds, more than the write; left to the writes,
	 * the mem engine ran at three quarters of its rate), as long as it leaves at least half of
	 * the file system's room and half of the memory available free: a tmpfs's size is a cap,
	 * not memory it holds. */
	if (kind.f_type != TMPFS_MAGIC || (!unlimited && bytes > *free_bytes / 2) || bytes > mem_available() / 2)
		*room = STORE_SPARSE;
	return 0;
}

uint64_t store_file_bytes(uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit, unsigned i)
{
	return stripe_blocks(blocks, stripes, unit ? unit : 1, i) * block_size;
}

int store_create(const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
		 enum store_room room)
{
	if (!unit)
		unit = 1;
	for (unsigned i = 0; i < stripes; i++) {
		char path[4096];
		if (stripe_path(path, sizeof path, dir, i))
			return -ENAMETOOLONG;
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		/* Sparse, the chunk store takes room only as blocks are written; allocated, it holds its
		 * whole size now, as a thick device does. */
		uint64_t mine = stripe_blocks(blocks, stripes, unit, i);
		int rc = ftruncate(fd, (off_t)(mine * block_size)) ? -errno : 0;
		if (!rc && room != STORE_SPARSE && mine) {
			if (fallocate(fd, 0, 0, (off_t)(mine * block_size)))
				rc = room == STORE_ALLOCATE ? -errno : 0;
			else if (fsync(fd)) /* the room reserved survives a crash right after format */
				rc = -errno;
		}
		close(fd);
		if (rc)
			return rc;
	}
	return 0;
}

int store_open(struct store *s, const char *dir, uint32_t block_size, uint64_t blocks, unsigned stripes, uint32_t unit,
	       bool direct, const struct engine_recorder *rec)
{
	s->rec = rec;
	if (!stripes || stripes > STORE_MAX_STRIPES)
		return -EINVAL;
	s->stripes = 0;
	s->unit = unit ? unit : 1;
	s->block_size = block_size;
	s->blocks = blocks;
	s->direct = direct;
	for (unsigned i = 0; i < stripes; i++) {
		char path[4096];
		if (stripe_path(path, sizeof path, dir, i))
			return -ENAMETOOLONG;
		s->fd[i] = meta_open_rw_or_ro(path, O_CLOEXEC | (direct ? O_DIRECT : 0), 0);
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
	unsigned i;
	uint64_t off;
	locate(s, pbn, &i, &off);
	return dio_write(s->rec, DIO_DATA0 + i, s->fd[i], buf, s->block_size, off);
}

int store_read(struct store *s, uint64_t pbn, void *buf)
{
	if (pbn >= s->blocks)
		return -EINVAL;
	unsigned i;
	uint64_t off;
	locate(s, pbn, &i, &off);
	return dio_read(s->fd[i], buf, s->block_size, off);
}

bool store_covers(struct store *s, uint64_t pbn)
{
	struct stat st;
	unsigned i;
	uint64_t off;
	if (pbn >= s->blocks)
		return false;
	locate(s, pbn, &i, &off);
	return !fstat(s->fd[i], &st) && (uint64_t)st.st_size >= off + s->block_size;
}

bool store_has_room(struct store *s, uint64_t pbn)
{
	unsigned i;
	uint64_t off;
	if (pbn >= s->blocks)
		return false;
	locate(s, pbn, &i, &off);
	off_t hole = lseek(s->fd[i], (off_t)off, SEEK_HOLE);
	return hole < 0 || (uint64_t)hole >= off + s->block_size;
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
