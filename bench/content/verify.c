/* verify.c - ledger storage (anonymous, temp file or a named file with a geometry header) and the
 * block check: a block must hold exactly the content last written there, identified by its bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench/content/verify.h"

#define LEDGER_MAGIC "DEDISLED"
#define HEADER_LEN 4096

int ledger_peek_seed(const char *path, uint64_t *seed)
{
	struct ledger_file_header h;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, &h, sizeof h);
	close(fd);
	if (n != (ssize_t)sizeof h || memcmp(h.magic, LEDGER_MAGIC, 8))
		return -1;
	*seed = h.seed;
	return 0;
}

/* rename(2) that fails (EEXIST) rather than replace what took the name meanwhile. */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS) /* supported, and it failed */
		return -1;
	if (link(from, to)) /* a filesystem without RENAME_NOREPLACE */
		return -1;
	unlink(from);
	return 0;
}

/* A new ledger's room, taken before the run: the workers write it through a shared mapping, and
 * a sparse file on a file system that filled up killed them with SIGBUS mid-run ("worker killed
 * by signal 7"), the ledger left behind. */
static int reserve(int fd, off_t len)
{
	int e = posix_fallocate(fd, 0, len);
	if (e)
		errno = e;
	return e ? -1 : 0;
}

/* The geometry a run's ledger file must have: its header. */
static struct ledger_file_header ledger_header(uint32_t block_size, uint64_t procs, uint64_t region_blocks,
					       uint64_t seed)
{
	struct ledger_file_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, LEDGER_MAGIC, 8);
	h.version = 1;
	h.block_size = block_size;
	h.procs = procs;
	h.region_blocks = region_blocks;
	h.seed = seed;
	return h;
}

/* An existing ledger file (fd open) is reused only when it is a regular file with the header of
 * the same geometry (want) and the size that says; 0 (its seed in m), or -1 with fd closed. */
static int ledger_reopen(struct ledger_map *m, int fd, const char *path, const struct ledger_file_header *want,
			 size_t words, struct dd_err *err)
{
	struct ledger_file_header h;
	struct stat st;
	const char *bad = NULL;
	m->existed = true;
	bool same = false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
	    memcmp(h.magic, LEDGER_MAGIC, 8) || h.version != 1)
		bad = "exists and is not a dedisbench ledger; refusing to overwrite it";
	else if (!(same = h.block_size == want->block_size && h.procs == want->procs &&
			  h.region_blocks == want->region_blocks))
		err_fail(err, -1, "--ledger %s was written by a run with %llu workers x %llu blocks of %u bytes", path,
			 (unsigned long long)h.procs, (unsigned long long)h.region_blocks, h.block_size);
	else if ((uint64_t)st.st_size != HEADER_LEN + words)
		bad = "is truncated (not the size its header says)";
	if (bad || !same) {
		if (bad)
			err_fail(err, -1, "--ledger %s %s", path, bad);
		close(fd);
		return -1;
	}
	m->file_seed = h.seed;
	return 0;
}

/* A new ledger file: built as a temp file and renamed into place only if the name is still free
 * (never over a file, never through a link). Its descriptor, or -1. */
static int ledger_create(const char *path, const struct ledger_file_header *h, size_t words, struct dd_err *err)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || reserve(fd, (off_t)(HEADER_LEN + words)) || pwrite(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h ||
	    rename_noreplace(tmp, path)) {
		err_fail_errno(err, -1, errno, "--ledger %s", path);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	return fd;
}

/* The named ledger's descriptor (reopened or created), or -1. */
static int ledger_file(struct ledger_map *m, const char *path, const struct ledger_file_header *want, size_t words,
		       struct dd_err *err)
{
	m->persistent = true;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		return ledger_reopen(m, fd, path, want, words, err) ? -1 : fd;
	if (errno == ENOENT)
		return ledger_create(path, want, words, err);
	if (errno == ELOOP)
		return err_fail(err, -1, "--ledger %s: a symbolic link (not followed)", path);
	return err_fail_errno(err, -1, errno, "--ledger %s", path);
}

/* A ledger too large to keep in memory: an unlinked temp file in $TMPDIR (or /var/tmp). Its
 * descriptor, or -1. */
static int ledger_temp(size_t words, struct dd_err *err)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/dedisbench-ledger.XXXXXX", dir);
	int fd = mkstemp(tmp);
	if (fd < 0 || (unlink(tmp), reserve(fd, (off_t)(HEADER_LEN + words)))) {
		err_fail_errno(err, -1, errno, "cannot create the content ledger (%zu MiB) in %s", words >> 20, dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int ledger_open(struct ledger_map *m, const char *path, uint32_t block_size, uint64_t procs, uint64_t region_blocks,
		uint64_t seed, struct dd_err *err)
{
	memset(m, 0, sizeof *m);
	m->procs = procs;
	m->region_blocks = region_blocks;
	size_t words = procs * region_blocks * sizeof(uint64_t);
	int fd = -1;
	if (path) {
		const struct ledger_file_header h = ledger_header(block_size, procs, region_blocks, seed);
		if ((fd = ledger_file(m, path, &h, words, err)) < 0)
			return -1;
	} else if (words > LEDGER_ANON_MAX && (fd = ledger_temp(words, err)) < 0) {
		return -1;
	}
	m->map_len = HEADER_LEN + words;
	m->map = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	if (fd >= 0)
		close(fd);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return err_fail_errno(err, -1, errno, "cannot map the content ledger");
	}
	m->words = (uint64_t *)((char *)m->map + HEADER_LEN);
	if (fd < 0) /* anonymous: huge pages save a TLB miss per operation on a large target */
		madvise(m->map, m->map_len, MADV_HUGEPAGE);
	return 0;
}

int ledger_sync(struct ledger_map *m)
{
	return m->persistent && m->map ? msync(m->map, m->map_len, MS_SYNC) : 0;
}

void ledger_close(struct ledger_map *m)
{
	if (m->map)
		munmap(m->map, m->map_len);
	m->map = NULL;
	m->words = NULL;
}

const char *const verify_method_names[VM_METHODS] = {"ledger", "zeros", "identified", "layout"};

bool verify_expectation(uint64_t ledger_word, enum verify_unknown unknown, bool seed_claimed,
			struct verify_expect *e)
{
	memset(e, 0, sizeof *e);
	if (ledger_word) {
		e->method = VM_LEDGER;
		e->id = ledger_word - 1;
		return true;
	}
	switch (unknown) {
	case UNKNOWN_SKIP:
		return false;
	case UNKNOWN_ZEROS:
		e->method = VM_ZEROS;
		e->id = CONTENT_ZERO;
		return true;
	case UNKNOWN_IDENTIFY:
		e->method = VM_IDENTIFY;
		e->seed_claimed = seed_claimed;
		return true;
	case UNKNOWN_LAYOUT:
		e->method = VM_LAYOUT;
		return true;
	}
	return false;
}

void verify_check(const struct content_gen *g, const void *buf, const struct verify_expect *e,
		  struct verify_result *r)
{
	memset(r, 0, sizeof *r);
	r->checked = true;
	r->method = e->method;
	r->want = *e;
	r->found = content_identify(g, buf, &r->found_id);
	if (r->found == CONTENT_IS_FOREIGN) {
		uint32_t bs;
		content_header_probe(buf, &r->found_seed, &bs);
	}
	if (e->method == VM_IDENTIFY)
		r->ok = r->found == CONTENT_IS_ZERO || r->found == CONTENT_IS_VALID ||
			(r->found == CONTENT_IS_FOREIGN && !e->seed_claimed);
	else if (e->id == CONTENT_ZERO)
		r->ok = r->found == CONTENT_IS_ZERO;
	else
		r->ok = r->found == CONTENT_IS_VALID && r->found_id == e->id;
}

void verify_describe(const struct verify_result *r, char *buf, size_t len)
{
	char want[80], got[80];
	if (r->want.method == VM_IDENTIFY)
		snprintf(want, sizeof want, "%s", r->want.seed_claimed ? "a block of this seed or zeros"
									: "an intact dedisbench block or zeros");
	else if (r->want.id == CONTENT_ZERO)
		snprintf(want, sizeof want, "zeros");
	else
		snprintf(want, sizeof want, "content 0x%llx%s", (unsigned long long)r->want.id,
			 r->want.method == VM_LAYOUT ? " (the layout's)" : "");
	if (r->found == CONTENT_IS_ZERO)
		snprintf(got, sizeof got, "zeros");
	else if (r->found == CONTENT_IS_VALID)
		snprintf(got, sizeof got, "content 0x%llx", (unsigned long long)r->found_id);
	else if (r->found == CONTENT_IS_FOREIGN)
		snprintf(got, sizeof got, "content 0x%llx of another seed (%llu)", (unsigned long long)r->found_id,
			 (unsigned long long)r->found_seed);
	else
		snprintf(got, sizeof got, "garbage");
	snprintf(buf, len, "expected %s, found %s", want, got);
}
