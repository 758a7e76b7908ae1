/* claim.c - recognising a file dedisbench wrote before using it: every non-zero sector a run would
 * write must lie in a dedisbench block (lib/content); a run that only reads trusts the xattr mark. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "bench/target/claim.h"
#include "lib/content.h"

#define SECTOR 512
#define MAX_BLOCK (1u << 20) /* dedisbench's largest block size */
/* Read at a time: large sequential reads, each starting on a MiB boundary (a block boundary for
 * every block size). */
#define CHUNK (8u << 20)
#define MARK "dedisbench " PACKAGE_VERSION

static bool zero_sector(const uint8_t *p)
{
	return p[0] == 0 && memcmp(p, p + 1, SECTOR - 1) == 0;
}

/* Every non-zero sector of buf (which starts on a MiB boundary of the file, len a multiple of
 * the sector) must lie in a dedisbench block: one whose header, at an offset aligned to the
 * block size it names, comes at or before it. Blocks are aligned to their size, at most 1 MiB,
 * so none reaches into the window from before it. One header in front of someone else's data
 * is not enough (that file is not ours); blocks of several sizes (runs with different -b) are.
 * Returns 1 when a sector is not ours, else 0; *data: a non-zero sector was seen. */
static int check_window(const uint8_t *buf, size_t len, bool *data)
{
	size_t covered_to = 0; /* the end of the last block whose header was seen */
	for (size_t at = 0; at < len; at += SECTOR) {
		if (zero_sector(buf + at))
			continue;
		*data = true;
		if (at < covered_to)
			continue;
		uint64_t seed;
		uint32_t bs;
		if (content_header_probe(buf + at, &seed, &bs) || bs > MAX_BLOCK || at % bs)
			return 1;
		covered_to = at + bs;
	}
	return 0;
}

/* Reads `len` bytes at `off` (a MiB boundary) into buf, zero-padding a short read to the
 * sector (a file's tail, or its end). Returns the bytes to check, or -1 (errno set). */
static ssize_t read_window(int fd, uint8_t *buf, uint64_t off, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got % SECTOR) {
		memset(buf + got, 0, SECTOR - got % SECTOR);
		got += SECTOR - got % SECTOR;
	}
	return (ssize_t)got;
}

/* Every block of [0, extent) that holds data, read whole (holes skipped with SEEK_DATA, else
 * read too), each chunk dropped from the page cache once looked at: the run's reads must not find
 * its target cached by this look. Returns 1 when a sector is not ours, 0, or -1 (errno set). */
static int scan(int fd, uint64_t extent, uint8_t *buf, bool *data)
{
	(void)posix_fadvise(fd, 0, (off_t)extent, POSIX_FADV_SEQUENTIAL);
	int foreign = 0;
	for (uint64_t pos = 0; !foreign && pos < extent;) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break; /* no data beyond pos */
		uint64_t from = d < 0 ? pos : (uint64_t)d - (uint64_t)d % MAX_BLOCK;
		if (from < pos)
			from = pos;
		if (from >= extent)
			break;
		size_t len = extent - from < CHUNK ? (size_t)(extent - from) : CHUNK;
		ssize_t n = read_window(fd, buf, from, len);
		if (n < 0)
			return -1;
		foreign = check_window(buf, (size_t)n, data);
		(void)posix_fadvise(fd, (off_t)from, (off_t)len, POSIX_FADV_DONTNEED);
		pos = from + len;
	}
	return foreign;
}

enum claim_verdict claim_inspect(int fd, uint64_t extent, bool to_write, const char **how, int *err)
{
	const char *dummy;
	if (!how)
		how = &dummy;
	*err = 0;
	char mark[64];
	ssize_t m = fgetxattr(fd, CLAIM_XATTR, mark, sizeof mark - 1);
	/* The mark stays with the inode when another program rewrites the file, so it vouches for
	 * nothing a run would overwrite; a run that only reads needs no more (corruption in a file
	 * dedisbench wrote is what its verification is for). */
	bool marked = m > 0 && !strncmp(mark, "dedisbench", 10);
	if (marked && !to_write) {
		*how = "marked as dedisbench's (" CLAIM_XATTR ")";
		return CLAIM_OURS;
	}
	struct stat st;
	uint8_t *buf = malloc(CHUNK + SECTOR);
	if (!buf || fstat(fd, &st)) {
		*err = buf ? errno : ENOMEM;
		free(buf);
		*how = "it cannot be read";
		return CLAIM_UNREADABLE;
	}
	bool data = false;
	int foreign = scan(fd, extent < (uint64_t)st.st_size ? extent : (uint64_t)st.st_size, buf, &data);
	enum claim_verdict v = foreign < 0 ? CLAIM_UNREADABLE
			       : foreign   ? CLAIM_FOREIGN
			       : data	   ? CLAIM_OURS
					   : CLAIM_EMPTY;
	if (foreign < 0)
		*err = errno;
	free(buf);
	*how = v == CLAIM_OURS	    ? "its blocks are dedisbench's"
	       : v == CLAIM_EMPTY   ? "it holds no data"
	       : v == CLAIM_FOREIGN ? "it holds data dedisbench did not write"
				    : "it cannot be read";
	return v;
}

void claim_mark(int fd)
{
	(void)fsetxattr(fd, CLAIM_XATTR, MARK, strlen(MARK), 0); /* ENOTSUP: the blocks will tell */
}

enum claim_verdict claim_window(const void *buf, size_t len)
{
	bool data = false;
	if (check_window(buf, len, &data))
		return CLAIM_FOREIGN;
	return data ? CLAIM_OURS : CLAIM_EMPTY;
}
