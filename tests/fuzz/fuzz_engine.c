/* fuzz_engine.c - the engine opening a damaged volume, whatever its on-disk format: a small volume
 * is formatted and filled with known content once; each input restores it, damages its files
 * (which file, where, how: the input), then opens it, fscks it and reads every block.
 *
 * The volume's index is DEDIS_FUZZ_INDEX (mem, the default; bdb; bloom): one corpus each. An
 * input is damage records: file (u8, an index into the volume's files in name order,
 * subdirectories included), op (u8: 0 xor, 1 overwrite, 2 truncate, 3 zero), offset (u32
 * little-endian, modulo the file's size), n (u8, modulo 33), then n bytes (the xor mask or the new
 * bytes; zero: n * 8 bytes). Nothing in it names a file of today's format, so it stays valid
 * when the format changes (the files it hits are then others).
 *
 * What must hold: describe, open, fsck and reads end in a clean error or a result; no crash, no
 * hang (AFL's timeout; 20 s in the replay); and no silent wrong read - a read that succeeds with
 * bytes other than what was written, while fsck calls the volume consistent. One exception,
 * counted and printed instead of failing unless DEDIS_FUZZ_STRICT=1: damage at two or more
 * places that turns one logical block into another block of the volume. The durable map's chunks
 * are checked (format version 4), so this is now damage to the working map (`lbnmap`, a cache)
 * together with a state page that says a process died in this boot: recovery then trusts the
 * working map, which is ahead of every commit, rebuilds the references from it, and fsck finds
 * them consistent; nothing durable can tell that damage from writes in flight.
 * A second, counted the same way: a read that returns a stored block with the input's own damage
 * to the chunk store (files data.*: the one place the harness names a file) in place, at most as
 * many bytes off as the input changed there. The engine keeps no data checksums (as VDO and
 * dm-dedup); once the caches are lost the index is rebuilt from the bytes, so bit rot in a
 * stored block reads back as stored. DEDIS_FUZZ_TRACE=1 prints what each record did. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/content.h"
#include "reference-engine/engine.h"
#include "harness.h"

#define BS 512
#define LBNS 64
#define MAX_FILES 256

struct vfile {
	char *rel;      /* path inside the volume directory */
	uint8_t *bytes;
	size_t len;
	/* The restore's view of the file, kept from one input to the next: an open descriptor and a
	 * shared mapping of len bytes (NULL when empty) of the inode (dev, ino) last restored. */
	int fd;
	uint8_t *map;
	dev_t dev;
	ino_t ino;
	/* Found by this restore's walk of the directory, and the inode held. */
	bool seen, same_inode;
};

struct volume {
	char dir[4096];
	struct vfile files[MAX_FILES];
	size_t nfiles;
};

static char base[1024];
/* The process that made base: under AFL the persistent loop runs in children forked after setup
 * (one per 100000 inputs); a child's exit must not remove the volume its successors restore. */
static pid_t base_owner;
static struct volume vol;
static const char *index_name = "mem";
static bool strict, trace, verify_restore;
static uint8_t *scratch;  /* the largest file of the snapshot, + 1 byte */
static size_t scratch_len;
static uint8_t expected[LBNS][BS] __attribute__((aligned(64)));
static uint8_t overwritten[BS] __attribute__((aligned(64))); /* LBN 10's first content, stale since */
static unsigned long misdirected; /* tolerated multi-point damage (see the top) */
static unsigned long media;       /* reads of stored bytes that were damaged in place (see the top) */
static size_t data_bytes_damaged; /* bytes of the chunk store (data.*) the current input changed */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

static void cleanup(void)
{
	if (misdirected)
		fprintf(stderr, "fuzz_engine: %lu inputs read another block of the volume after damage at two or more "
				"places that fsck could not see (no metadata checksums)\n", misdirected);
	if (media)
		fprintf(stderr, "fuzz_engine: %lu inputs read a stored block damaged in place, after the caches were lost "
				"(no data checksums: the index is rebuilt from the bytes)\n", media);
	if (base[0] && getpid() == base_owner)
		nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The snapshot of a volume: every regular file under dir, sorted by path. */
static struct volume *snapping;

static int snap_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	struct volume *v = snapping;
	if (v->nfiles == MAX_FILES)
		return -1;
	struct vfile *vf = &v->files[v->nfiles++];
	vf->fd = -1; /* the first restore opens and maps it */
	vf->rel = strdup(path + strlen(v->dir) + 1);
	vf->len = (size_t)st->st_size;
	vf->bytes = malloc(vf->len ? vf->len : 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!vf->rel || !vf->bytes || fd < 0 || pread(fd, vf->bytes, vf->len, 0) != (ssize_t)vf->len)
		return -1;
	close(fd);
	return 0;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct vfile *)a)->rel, ((const struct vfile *)b)->rel);
}

/* Known content: duplicates, a few zero blocks written, an overwritten block (a stale copy stays
 * in the store until GC), and never-written blocks. */
static int fill(const char *dir)
{
	struct engine_open_params op = {0};
	struct engine *e;
	struct dd_err err;
	struct content_gen g;
	if (content_init(&g, 42, BS, 1) || engine_open(dir, &op, &e, &err)) {
		fprintf(stderr, "fuzz_engine: %s\n", err.msg);
		return -1;
	}
	int rc = 0;
	content_fill(&g, 500, overwritten);
	rc |= engine_write(e, 10, overwritten);
	for (unsigned l = 0; l < LBNS; l++) {
		if (l < 48)
			content_fill(&g, l % 20 + 1, expected[l]);
		else
			memset(expected[l], 0, BS);
		if (l < 52)
			rc |= engine_write(e, l, expected[l]);
	}
	rc |= engine_close(e);
	return rc ? -1 : 0;
}

int harness_setup(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;
	snprintf(base, sizeof base, "%s/dedis-fuzz-engine.XXXXXX",
		 stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : t && *t ? t : "/tmp");
	if (!mkdtemp(base)) {
		perror("fuzz_engine: mkdtemp");
		base[0] = 0;
		return -1;
	}
	base_owner = getpid();
	atexit(cleanup);
	strict = getenv("DEDIS_FUZZ_STRICT") && !strcmp(getenv("DEDIS_FUZZ_STRICT"), "1");
	trace = getenv("DEDIS_FUZZ_TRACE") && !strcmp(getenv("DEDIS_FUZZ_TRACE"), "1");
	verify_restore = getenv("DEDIS_FUZZ_VERIFY_RESTORE") && !strcmp(getenv("DEDIS_FUZZ_VERIFY_RESTORE"), "1");
	const char *ix = getenv("DEDIS_FUZZ_INDEX");
	if (ix && *ix)
		index_name = ix;
	struct volume *v = &vol;
	snprintf(v->dir, sizeof v->dir, "%s/%s", base, index_name);
	struct engine_format_params fp = {.logical_bytes = LBNS * BS, .block_size = BS, .index = index_name,
					  .hash = "sha1"};
	struct dd_err err;
	if (engine_format(v->dir, &fp, &err)) {
		fprintf(stderr, "fuzz_engine: format: %s\n", err.msg);
		return -1;
	}
	if (fill(v->dir))
		return -1;
	snapping = v;
	if (nftw(v->dir, snap_entry, 16, FTW_PHYS)) {
		fprintf(stderr, "fuzz_engine: cannot snapshot %s\n", v->dir);
		return -1;
	}
	qsort(v->files, v->nfiles, sizeof v->files[0], cmp_files);
	for (size_t i = 0; i < v->nfiles; i++)
		scratch_len = v->files[i].len > scratch_len ? v->files[i].len : scratch_len;
	scratch = malloc(scratch_len + 1); /* + 1: verify reads one byte past, to see a file grown */
	if (!scratch)
		return -1;
	return 0;
}

/* Back to the snapshot: every file's bytes and size, and nothing else (an open may add files).
 * Every file of the snapshot stays open and mapped (MAP_SHARED, the page cache the engine reads
 * and writes, whether through write() or its own mappings) from one input to the next; each
 * restore lists the directory (names, inode numbers), removes files the snapshot lacks, brings
 * back files removed or replaced by another inode in full, and compares every other file with
 * the snapshot in RESTORE_CHUNK pieces, copying back only the pieces that differ. So whatever
 * changed a byte (write, mmap, truncate, unlink, rename), the bytes are compared, never trusted
 * from a timestamp or from what the harness thinks the input touched. DEDIS_FUZZ_VERIFY_RESTORE=1
 * then reads every file again through read() and fails unless the volume is the snapshot byte for
 * byte, no file missing and none added (run it over a corpus to check the restore). */
#define RESTORE_CHUNK 4096
static struct volume *restoring;

static struct vfile *find_file(struct volume *v, const char *path)
{
	struct vfile key = {.rel = (char *)path + strlen(v->dir) + 1};
	return bsearch(&key, v->files, v->nfiles, sizeof key, cmp_files);
}

/* One directory of the volume (rel: "" or a subdirectory), by readdir: a file's name and inode
 * number come with its entry, so no path is looked up per file. Files the snapshot lacks are
 * removed; the others are marked seen, with whether the inode is the one held. */
static void walk_dir(struct volume *v, const char *rel)
{
	char path[8192];
	snprintf(path, sizeof path, "%s%s%s", v->dir, *rel ? "/" : "", rel);
	DIR *d = opendir(path);
	if (!d)
		harness_fail("cannot list %s: %s", path, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char child[8192 + 256];
		snprintf(child, sizeof child, "%s/%s", path, de->d_name);
		unsigned char type = de->d_type;
		struct stat st;
		if (type == DT_UNKNOWN) /* a file system that does not say: ask */
			type = lstat(child, &st) ? DT_UNKNOWN : S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
		if (type == DT_DIR) {
			walk_dir(v, child + strlen(v->dir) + 1);
			continue;
		}
		struct vfile *vf = find_file(v, child);
		if (!vf) {
			if (unlink(child))
				harness_fail("cannot remove %s: %s", child, strerror(errno));
			continue;
		}
		vf->seen = type == DT_REG;
		vf->same_inode = vf->seen && vf->fd >= 0 && de->d_ino == vf->ino;
	}
	closedir(d);
}

static void unhold(struct vfile *vf)
{
	if (vf->map)
		munmap(vf->map, vf->len);
	if (vf->fd >= 0)
		close(vf->fd);
	vf->map = NULL;
	vf->fd = -1;
}

/* Writes the snapshot's bytes over whatever file is at the path (creating it, and its directory,
 * when missing), then holds that inode open and mapped. */
static void rewrite(const struct volume *v, struct vfile *vf)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", v->dir, vf->rel);
	unhold(vf);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT && strchr(vf->rel, '/')) { /* the engine removed a subdirectory */
		char parent[8192];
		snprintf(parent, sizeof parent, "%s", path);
		*strrchr(parent, '/') = 0;
		if (mkdir(parent, 0755) == 0)
			fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	struct stat st;
	if (fd < 0 || ftruncate(fd, (off_t)vf->len) || fstat(fd, &st))
		harness_fail("cannot restore %s: %s", path, strerror(errno));
	size_t done = 0;
	while (done < vf->len) {
		ssize_t n = pwrite(fd, vf->bytes + done, vf->len - done, (off_t)done);
		if (n <= 0)
			harness_fail("cannot restore %s: %s", path, n ? strerror(errno) : "short write");
		done += (size_t)n;
	}
	if (vf->len) {
		vf->map = mmap(NULL, vf->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (vf->map == MAP_FAILED)
			harness_fail("cannot map %s: %s", path, strerror(errno));
	}
	vf->fd = fd;
	vf->dev = st.st_dev;
	vf->ino = st.st_ino;
}

/* The held inode, still at its path: its size back first (a mapping must not reach past the end
 * of the file), then every piece that differs. */
static void compare_back(const struct volume *v, struct vfile *vf)
{
	struct stat st;
	if (fstat(vf->fd, &st) || ((size_t)st.st_size != vf->len && ftruncate(vf->fd, (off_t)vf->len)))
		harness_fail("cannot restore %s/%s: %s", v->dir, vf->rel, strerror(errno));
	for (size_t off = 0; off < vf->len; off += RESTORE_CHUNK) {
		size_t n = vf->len - off < RESTORE_CHUNK ? vf->len - off : RESTORE_CHUNK;
		if (memcmp(vf->map + off, vf->bytes + off, n))
			memcpy(vf->map + off, vf->bytes + off, n);
	}
}

/* DEDIS_FUZZ_VERIFY_RESTORE=1: the restored volume is the snapshot, file for file, byte for byte,
 * read through read() (not the restore's mappings). */
static int verify_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag != FTW_F)
		return 0;
	const struct vfile *vf = find_file(restoring, path);
	if (!vf)
		harness_fail("restore left %s, which the snapshot does not have", path);
	if ((size_t)st->st_size != vf->len)
		harness_fail("restore left %s at %lld bytes, not %zu", path, (long long)st->st_size, vf->len);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		harness_fail("cannot verify %s: %s", path, strerror(errno));
	size_t got = 0;
	while (got <= vf->len) { /* one byte more than the snapshot: a grown file shows */
		ssize_t n = read(fd, scratch + got, vf->len + 1 - got);
		if (n < 0)
			harness_fail("cannot verify %s: %s", path, strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != vf->len || memcmp(scratch, vf->bytes, vf->len))
		harness_fail("restore left %s different from the snapshot", path);
	return 0;
}

static void verify(const struct volume *v)
{
	for (size_t i = 0; i < v->nfiles; i++) {
		char path[8192];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", v->dir, v->files[i].rel);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			harness_fail("restore did not bring back %s", path);
	}
	nftw(v->dir, verify_entry, 16, FTW_PHYS);
}

static void restore(struct volume *v)
{
	restoring = v;
	for (size_t i = 0; i < v->nfiles; i++)
		v->files[i].seen = v->files[i].same_inode = false;
	walk_dir(v, "");
	for (size_t i = 0; i < v->nfiles; i++) {
		struct vfile *vf = &v->files[i];
		if (vf->seen && vf->same_inode)
			compare_back(v, vf);
		else
			rewrite(v, vf);
	}
	if (verify_restore)
		verify(v);
}

/* Applies the damage records; returns how many places changed and whether they all lie in one
 * aligned 8-byte word of one file. */
static unsigned damage(const struct volume *v, const uint8_t *p, size_t len, bool *one_word)
{
	unsigned places = 0;
	long word_file = -1;
	uint64_t word = 0;
	*one_word = true;
	while (len >= 7) {
		const struct vfile *vf = &v->files[p[0] % v->nfiles];
		unsigned op = p[1] % 4;
		uint32_t off32;
		memcpy(&off32, p + 2, 4);
		size_t n = p[6] % 33;
		p += 7, len -= 7;
		if (n > len)
			n = len;
		const uint8_t *bytes = p;
		p += n, len -= n;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", v->dir, vf->rel);
		int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st))
			harness_fail("cannot damage %s: %s", path, strerror(errno));
		size_t size = (size_t)st.st_size, off = size ? off32 % size : 0, span = 0;
		uint8_t buf[33 * 8];
		if (op == 2) { /* truncate */
			off = size ? off32 % (size + 1) : 0;
			if (off < size && ftruncate(fd, (off_t)off) == 0)
				places += 2, *one_word = false;
		} else if (size) {
			span = op == 3 ? n * 8 : n;
			if (span > size - off)
				span = size - off;
			ssize_t got = pread(fd, buf, span, (off_t)off);
			if (got != (ssize_t)span)
				harness_fail("cannot read %s", path);
			bool changed = false;
			for (size_t i = 0; i < span; i++) {
				uint8_t b = op == 0 ? buf[i] ^ bytes[i] : op == 1 ? bytes[i] : 0;
				if (b == buf[i])
					continue;
				buf[i] = b;
				changed = true;
				if (!strncmp(vf->rel, "data.", 5))
					data_bytes_damaged++;
				long f = (long)(vf - v->files);
				uint64_t w = (off + i) / 8;
				if (places == 0 || (word_file == f && word == w)) {
					word_file = f, word = w;
					places = places ? places : 1;
				} else {
					places++, *one_word = false;
				}
			}
			if (changed && pwrite(fd, buf, span, (off_t)off) != (ssize_t)span)
				harness_fail("cannot write %s", path);
		}
		if (trace) /* DEDIS_FUZZ_TRACE=1: what each record did, to triage a finding */
			fprintf(stderr, "damage: %s %s at %zu, %zu bytes\n", vf->rel,
				(const char *[]){"xor", "overwrite", "truncate", "zero"}[op], off, span);
		close(fd);
	}
	return places;
}

static size_t bytes_differing(const uint8_t *a, const uint8_t *b)
{
	size_t n = 0;
	for (size_t i = 0; i < BS; i++)
		n += a[i] != b[i];
	return n;
}

/* How far buf is from the nearest block the volume was given at some time, in differing bytes:
 * 0 is a misdirected read; at most the chunk-store bytes the input changed is that block with
 * its damage in place. */
static size_t distance_to_known(const uint8_t *buf)
{
	size_t best = bytes_differing(buf, overwritten);
	for (unsigned l = 0; l < LBNS && best; l++) {
		size_t d = bytes_differing(buf, expected[l]);
		best = d < best ? d : best;
	}
	return best;
}

void harness_one(const uint8_t *data, size_t len)
{
	struct volume *v = &vol;
	restore(v);
	bool one_word;
	data_bytes_damaged = 0;
	unsigned places = damage(v, data, len, &one_word);

	struct engine_stats g;
	struct dd_err err;
	err.msg[0] = 0;
	if (engine_describe(v->dir, &g, &err)) {
		if (!err.msg[0] && places)
			harness_fail("describe failed without a reason");
		return; /* a clean refusal */
	}
	struct engine_open_params op = {0};
	struct engine *e;
	if (engine_open(v->dir, &op, &e, &err)) {
		if (!err.msg[0])
			harness_fail("open failed without a reason");
		return;
	}
	long problems = engine_fsck(e, NULL, NULL);
	uint64_t n = engine_logical_blocks(e);
	uint8_t buf[BS] __attribute__((aligned(64)));
	/* Reads of a volume fsck reported may return anything but must not crash: read them all;
	 * of one it calls consistent, every read must be right or a clean error. */
	for (uint64_t l = 0; l < n && l < LBNS && engine_block_size(e) == BS; l++) {
		if (engine_read(e, l, buf) || !memcmp(buf, expected[l], BS) || problems != 0)
			continue;
		size_t d = distance_to_known(buf);
		if (!strict && d == 0 && places >= 2) {
			misdirected++;
			break;
		}
		if (!strict && d > 0 && d <= data_bytes_damaged) {
			media++;
			break;
		}
		harness_fail("silent wrong read: lbn %llu (%s volume, damage at %u place%s, fsck consistent)",
			     (unsigned long long)l, index_name, places, places == 1 ? "" : "s");
	}
	engine_close(e);
}
