/* claim.c - recognising a file dedisbench wrote before overwriting it: its xattr mark, else every
 * non-zero sector looked at must lie in a dedisbench block (lib/content), else it is not ours. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "claim.h"
#include "content.h"

#define SECTOR 512
#define MAX_BLOCK (1u << 20) /* dedisbench's largest block size */
#define CHUNK MAX_BLOCK
/* A file of zeros is not read whole (a pre-zeroed 100 GiB target would take minutes): past this
 * much data, windows at MiB boundaries - block boundaries for every block size - are sampled. */
#define SCAN_MAX (64u << 20)
#define SAMPLES 4096
#define MARKED_SAMPLES 64
#define SAMPLE_BYTES (64u << 10)
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

enum claim_verdict claim_inspect(int fd, const char **how, int *err)
{
	const char *dummy;
	if (!how)
		how = &dummy;
	*err = 0;
	char mark[64];
	ssize_t m = fgetxattr(fd, CLAIM_XATTR, mark, sizeof mark - 1);
	/* The mark stays with the inode when another program rewrites the file: it spares the long
	 * look, not the first MiB and a few windows over the rest. */
	bool marked = m > 0 && !strncmp(mark, "dedisbench", 10);
	struct stat st;
	uint8_t *buf = malloc(CHUNK);
	if (!buf || fstat(fd, &st)) {
		*err = buf ? errno : ENOMEM;
		free(buf);
		*how = "it cannot be read";
		return CLAIM_UNREADABLE;
	}
	uint64_t size = (uint64_t)st.st_size, budget = marked ? CHUNK : SCAN_MAX, pos = 0;
	bool data = false;
	int foreign = 0;
	/* Whole MiB windows over the data, holes skipped (SEEK_DATA; without it, read from the start),
	 * until SCAN_MAX bytes have been read. */
	while (!foreign && budget && pos < size) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break; /* no data beyond pos */
		uint64_t from = d < 0 ? pos : (uint64_t)d - (uint64_t)d % CHUNK;
		if (from < pos)
			from = pos;
		ssize_t n = read_window(fd, buf, from, CHUNK);
		if (n < 0) {
			foreign = -1;
			break;
		}
		budget = budget > CHUNK ? budget - CHUNK : 0;
		foreign = check_window(buf, (size_t)n, &data);
		pos = from + CHUNK;
	}
	/* More than that: windows at MiB boundaries, spread over the rest. A pre-zeroed target is
	 * taken with this look; data wholly between two windows is not seen. */
	if (!foreign && pos < size) {
		uint64_t mibs = (size + CHUNK - 1) / CHUNK, first = pos / CHUNK;
		uint64_t step = (mibs - first) / (marked ? MARKED_SAMPLES : SAMPLES) + 1;
		for (uint64_t mib = first; !foreign && mib < mibs; mib += step) {
			ssize_t n = read_window(fd, buf, mib * CHUNK, SAMPLE_BYTES);
			foreign = n < 0 ? -1 : check_window(buf, (size_t)n, &data);
		}
	}
	enum claim_verdict v = foreign < 0	     ? CLAIM_UNREADABLE
			       : foreign	     ? CLAIM_FOREIGN
			       : data || marked ? CLAIM_OURS
						     : CLAIM_EMPTY;
	if (foreign < 0)
		*err = errno;
	free(buf);
	*how = v == CLAIM_OURS && marked ? "marked as dedisbench's (" CLAIM_XATTR ")"
	       : v == CLAIM_OURS	    ? "its blocks are dedisbench's"
	       : v == CLAIM_EMPTY   ? "it holds no data"
	       : v == CLAIM_FOREIGN ? "it holds data dedisbench did not write"
				    : "it cannot be read";
	return v;
}

void claim_mark(int fd)
{
	(void)fsetxattr(fd, CLAIM_XATTR, MARK, strlen(MARK), 0); /* ENOTSUP: the blocks will tell */
}
