/* meta.c - superblock sealing and checking (SHA-256 over its fields), and the mapping of the
 * metadata files that every process with the volume open shares. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "lib/fingerprint.h"
#include "reference-engine/fpindex.h"
#include "reference-engine/meta.h"

int meta_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The sealed bytes: everything before the checksum, which a version 2 superblock has where v3
 * keeps index_stripes. */
static size_t sealed_len(const struct superblock *sb)
{
	return sb->version == VOL_VERSION_FIXED_STRIPES ? offsetof(struct superblock, index_stripes)
							: offsetof(struct superblock, checksum);
}

static void sb_digest(const struct superblock *sb, uint8_t out[32])
{
	struct fp_ctx *c = fp_new("sha256");
	memset(out, 0, 32);
	if (c) {
		fp_hash(c, sb, sealed_len(sb), out);
		fp_free(c);
	}
}

void sb_seal(struct superblock *sb)
{
	sb_digest(sb, sb->checksum);
}

const char *sb_check(const struct superblock *sb)
{
	uint8_t want[32];
	if (memcmp(sb->magic, VOL_MAGIC, 8))
		return "not a dedisengine volume (bad magic)";
	sb_digest(sb, want);
	if (memcmp(want, (const uint8_t *)sb + sealed_len(sb), 32))
		return "superblock checksum mismatch (corrupted)";
	if (sb->version != VOL_VERSION && sb->version != VOL_VERSION_UNCHECKED_MAP &&
	    sb->version != VOL_VERSION_FIXED_STRIPES)
		return "unsupported format version";
	if (sb->version != VOL_VERSION_FIXED_STRIPES &&
	    (!sb->index_stripes || sb->index_stripes > INDEX_STRIPES || (sb->index_stripes & (sb->index_stripes - 1))))
		return "invalid index stripes in superblock";
	if (sb->block_size < 512 || sb->block_size > 65536 || (sb->block_size & (sb->block_size - 1)))
		return "invalid block size in superblock";
	if (!sb->logical_blocks || !sb->data_blocks || (sb->fp_len != 20 && sb->fp_len != 32) || !sb->stripes ||
	    sb->stripes > 64 || sb->compress > VOL_COMPRESS_LZ4 || !sb->frags || sb->frags > 16 || !sb->journal_bytes)
		return "invalid geometry in superblock";
	if (sb->version != VOL_VERSION_FIXED_STRIPES && /* v2: the checksum sits there */
	    (sb->stripe_unit > (1u << 20) || (sb->stripe_unit & (sb->stripe_unit - 1))))
		return "invalid stripe unit in superblock";
	return NULL;
}

int sb_write(const char *dir, const struct superblock *sb)
{
	char path[4096], tmp[4096];
	if (meta_path(path, sizeof path, dir, VOL_SUPERBLOCK) || meta_path(tmp, sizeof tmp, dir, VOL_SUPERBLOCK ".tmp"))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	char page[4096] = {0};
	memcpy(page, sb, sizeof *sb);
	int rc = 0;
	if (write(fd, page, sizeof page) != (ssize_t)sizeof page || fsync(fd))
		rc = errno ? -errno : -EIO;
	close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (!rc) /* the rename, and the durable files' own names made before it, survive a power loss */
		rc = meta_sync_dir(dir);
	return rc;
}

int meta_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

int sb_read(const char *dir, struct superblock *sb, struct dd_err *err)
{
	char path[4096];
	if (meta_path(path, sizeof path, dir, VOL_SUPERBLOCK))
		return err_fail(err, -ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return err_fail(err, -e, "%s",
				e == ENOENT   ? "no superblock (not a formatted volume)"
				: e == ELOOP ? "the superblock is a symbolic link (a volume's files are never followed)"
					     : "cannot read the superblock");
	}
	ssize_t n = read(fd, sb, sizeof *sb);
	int e = errno;
	close(fd);
	if (n < 0) /* an I/O error is not damage */
		return err_fail(err, -e, "cannot read the superblock");
	if (n != (ssize_t)sizeof *sb)
		return err_fail(err, -EINVAL, "superblock is truncated");
	const char *why = sb_check(sb);
	if (why)
		return err_fail(err, -EINVAL, "%s", why);
	if (sb->version == VOL_VERSION_FIXED_STRIPES) { /* as in memory: the v3 fields, v2's fixed stripes */
		memmove(sb->checksum, &sb->index_stripes, sizeof sb->checksum);
		sb->index_stripes = INDEX_STRIPES;
		sb->stripe_unit = 0;
	}
	return 0;
}

int meta_open_rw_or_ro(const char *path, int flags, mode_t mode)
{
	flags |= O_NOFOLLOW; /* a volume's files are its own: a link planted there is not followed */
	int fd = open(path, O_RDWR | flags, mode);
	if (fd < 0 && errno == EROFS)
		fd = open(path, O_RDONLY | (flags & ~O_CREAT));
	return fd;
}

void *meta_map(const char *dir, const char *name, size_t len, int create, int *fd_out)
{
	char path[4096];
	if (meta_path(path, sizeof path, dir, name))
		return NULL;
	int fd = meta_open_rw_or_ro(path, O_CLOEXEC | (create ? O_CREAT : 0), 0644);
	if (fd < 0 && errno == ELOOP)
		errno = EBADMSG; /* a link where a cache belongs: not followed, rebuilt */
	/* a read-only open: what this process changes stays its own */
	int share = fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY ? MAP_PRIVATE : MAP_SHARED;
	if (fd < 0)
		return NULL;
	struct stat st;
	int err = fstat(fd, &st) ? errno : 0;
	bool room = create && share == MAP_SHARED; /* a read-only open neither extends nor allocates */
	if (!err && (size_t)st.st_size < len && !room)
		err = EBADMSG; /* cut short: a cache the engine rebuilds, never one to map and trust */
	/* Room for every page, taken now without writing: a store into a hole of a shared mapping on a
	 * full file system is SIGBUS, not an error. Only for a file made or extended here: on a file
	 * system without fallocate glibc writes a zero into each block that reads zero, which on a
	 * file others have mapped (the locks) could undo a store of theirs. */
	if (!err && room && (size_t)st.st_size < len)
		err = posix_fallocate(fd, 0, (off_t)len);
	void *p = err ? MAP_FAILED : mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, share, fd, 0);
	if (p == MAP_FAILED) {
		err = err ? err : errno;
		close(fd);
		errno = err;
		return NULL;
	}
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	return p;
}

void meta_make_resident(const char *dir, void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	struct statfs fs;
	if (statfs(dir, &fs) || (fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC))
		return;
	(void)madvise(p, len, MADV_POPULATE_WRITE);
#else
	(void)dir, (void)p, (void)len;
#endif
}

void meta_advise(void *p, size_t len, int walk)
{
	(void)madvise(p, len, walk ? MADV_NORMAL : MADV_RANDOM);
}

void meta_boot_id(char *out, size_t len)
{
	out[0] = 0;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f)
		return;
	if (!fgets(out, (int)len, f))
		out[0] = 0;
	fclose(f);
	out[strcspn(out, "\n")] = 0;
}

uint64_t meta_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t meta_digest(uint64_t seed, const void *p, size_t len)
{
	enum { LANES = 4 };
	const uint8_t *b = p;
	uint64_t h[LANES], w[LANES];
	for (unsigned k = 0; k < LANES; k++)
		h[k] = meta_mix64(seed + k);
	size_t i = 0;
	for (; i + 8 * LANES <= len; i += 8 * LANES) {
		memcpy(w, b + i, sizeof w);
		for (unsigned k = 0; k < LANES; k++)
			h[k] = meta_mix64(h[k] ^ w[k]);
	}
	for (unsigned k = 0; i < len; i += 8, k++) { /* the tail, zero-padded */
		uint64_t t = 0;
		memcpy(&t, b + i, len - i < 8 ? len - i : 8);
		h[k] = meta_mix64(h[k] ^ t);
	}
	uint64_t r = meta_mix64(seed ^ len);
	for (unsigned k = 0; k < LANES; k++)
		r = meta_mix64(r ^ h[k]);
	return r;
}

int meta_init_mutex(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	if (pthread_mutexattr_init(&a) || pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST))
		return -EINVAL;
	int rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -rc;
}
