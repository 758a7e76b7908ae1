/* claim.c - recognising a file dedisbench wrote before overwriting it: its xattr mark, else its
 * first non-zero sector must be a dedisbench block header (lib/content), else it is not ours. */
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
#define CHUNK (1u << 20)
/* A file of zeros is not read whole (a pre-zeroed 100 GiB target would take minutes): past this
 * much data, sectors at MiB boundaries - block boundaries for every block size - are sampled. */
#define SCAN_MAX (64u << 20)
#define SAMPLES 4096
#define MARK "dedisbench " PACKAGE_VERSION

static bool zero_sector(const uint8_t *p)
{
	return p[0] == 0 && memcmp(p, p + 1, SECTOR - 1) == 0;
}

/* Reads [from, to) (to = 0: up to the end) looking for the first non-zero sector: 1 found
 * (*verdict set), 0 all zeros, -1 a read error. *budget: bytes still to read, 0 = stop. */
static int scan_range(int fd, uint8_t *buf, uint64_t from, uint64_t to, enum claim_verdict *verdict,
		      uint64_t *budget)
{
	uint64_t off = from - from % SECTOR;
	for (;;) {
		size_t want = CHUNK;
		if (to && to - off < want)
			want = (size_t)(to - off);
		if (want > *budget)
			want = (size_t)*budget;
		if (!want)
			return 0;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		*budget -= (uint64_t)n;
		size_t len = (size_t)n;
		if (len % SECTOR) { /* a file's tail: zero-padded to a sector */
			memset(buf + len, 0, SECTOR - len % SECTOR);
			len += SECTOR - len % SECTOR;
		}
		for (size_t at = 0; at < len; at += SECTOR) {
			if (zero_sector(buf + at))
				continue;
			uint64_t seed;
			uint32_t bs;
			*verdict = content_header_probe(buf + at, &seed, &bs) == 0 ? CLAIM_OURS : CLAIM_FOREIGN;
			return 1;
		}
		off += (uint64_t)n;
	}
}

enum claim_verdict claim_inspect(int fd, const char **how, int *err)
{
	const char *dummy;
	if (!how)
		how = &dummy;
	*err = 0;
	char mark[64];
	ssize_t m = fgetxattr(fd, CLAIM_XATTR, mark, sizeof mark - 1);
	if (m > 0 && !strncmp(mark, "dedisbench", 10)) {
		*how = "marked as dedisbench's (" CLAIM_XATTR ")";
		return CLAIM_OURS;
	}
	uint8_t *buf = malloc(CHUNK + SECTOR);
	if (!buf) {
		*err = ENOMEM;
		return CLAIM_UNREADABLE;
	}
	enum claim_verdict v = CLAIM_EMPTY;
	int found = 0;
	off_t pos = 0;
	uint64_t budget = SCAN_MAX;
	/* Holes are skipped (SEEK_DATA); a filesystem without it is read from start to end. */
	while (budget) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO) /* no data beyond pos */
				break;
			found = scan_range(fd, buf, (uint64_t)pos, 0, &v, &budget);
			break;
		}
		off_t hole = lseek(fd, data, SEEK_HOLE);
		found = scan_range(fd, buf, (uint64_t)data, hole > data ? (uint64_t)hole : 0, &v, &budget);
		if (found || hole <= data)
			break;
		pos = hole;
	}
	struct stat st;
	if (!found && !budget && fstat(fd, &st) == 0) { /* zeros so far, and more: sample the rest */
		uint64_t mibs = (uint64_t)st.st_size >> 20, step = mibs / SAMPLES + 1;
		for (uint64_t mib = SCAN_MAX >> 20; !found && mib < mibs; mib += step) {
			ssize_t n = pread(fd, buf, SECTOR, (off_t)(mib << 20));
			if (n < 0) {
				found = -1;
			} else if (n == SECTOR && !zero_sector(buf)) {
				uint64_t seed;
				uint32_t bs;
				v = content_header_probe(buf, &seed, &bs) == 0 ? CLAIM_OURS : CLAIM_FOREIGN;
				found = 1;
			}
		}
	}
	if (found < 0) {
		*err = errno;
		v = CLAIM_UNREADABLE;
	}
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
