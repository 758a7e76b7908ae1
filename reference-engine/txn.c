/* txn.c - the map's durability. The map file is a 4 KiB header area (two checkpoint headers, the
 * newer valid one wins), the checkpointed words and, from format version 4, two check areas (below);
 * the journal is a sequence of records, each
 * [checksum | magic, seq, chunk count | (chunk number, 64 words) ...], replayed in sequence order
 * from offset 0 after the checkpoint with the previous sequence number. A torn or stale record
 * (bad checksum, unexpected sequence number) ends the replay. Checkpoints and records carry
 * chunk images as read after the data they point at was written and before it was synced, so a
 * durable map entry never names a block whose bytes are not durable. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reference-engine/dio.h"
#include "lib/fingerprint.h"
#include "reference-engine/txn.h"

#define MAP_MAGIC 0x3150414d53494445ULL  /* "EDISMAP1": no chunk checks (format version 3) */
#define MAP_MAGIC_CHECKED 0x3250414d53494445ULL /* "EDISMAP2" */
#define AREA_MAGIC 0x31534b4843534944ULL /* "DISCHKS1" */
#define AREA_HDR 32
#define REC_MAGIC 0x314c4e524a534944ULL  /* "DISJRNL1" */
#define MAP_HEADER 4096
#define HDR_SLOT 512
#define REC_HDR 32
#define CHUNK_BYTES (TXN_CHUNK * 8)
#define CHUNK_REC (8 + CHUNK_BYTES)

struct map_header {
	uint8_t check[8];
	uint64_t magic, seq, logical_blocks;
	uint64_t area; /* checked maps: the check area written for this checkpoint (0 or 1) */
};

/* The sealed bytes of a header: a map without chunk checks has no area field. */
static size_t header_len(bool checked)
{
	return checked ? sizeof(struct map_header) : offsetof(struct map_header, area);
}

/* A check area: a header, then one 64-bit check per chunk as checkpoint `seq` left it. A checkpoint
 * writes the area its predecessor does not name and syncs it before overwriting any chunk, so a
 * chunk on disk matches the current checkpoint's area or, after a power loss inside the next
 * checkpoint, that one's complete area (its seq is higher): anything else is damage. */
struct area_header {
	uint8_t check[8];
	uint64_t magic, seq, chunks;
};

struct rec_header {
	uint8_t check[8];
	uint64_t magic, seq;
	uint32_t nchunks, pad;
};

static void checksum(const void *p, size_t len, uint8_t out[8])
{
	uint8_t d[32] = {0};
	struct fp_ctx *c = fp_new("sha256");
	if (c) {
		fp_hash(c, (const uint8_t *)p + 8, len - 8, d);
		fp_free(c);
	}
	memcpy(out, d, 8);
}

static uint64_t map_words(uint64_t logical_blocks)
{
	return (logical_blocks + TXN_CHUNK - 1) / TXN_CHUNK * TXN_CHUNK;
}

/* A chunk's check: every step is a bijection of the running value, so changing any one word
 * always changes it, and any other damage goes unseen with odds of about 2^-64. Keyed by the chunk
 * number, so a chunk copied to another place does not match there. */
static uint64_t chunk_check(uint64_t c, const uint64_t *w)
{
	uint64_t h = meta_mix64(c ^ 0x6b6e756863706d61ULL);
	for (unsigned i = 0; i < TXN_CHUNK; i++)
		h = meta_mix64(h ^ w[i]);
	return h;
}

static uint64_t area_bytes(uint64_t chunks)
{
	return (AREA_HDR + chunks * 8 + 511) / 512 * 512;
}

static uint64_t area_offset(uint64_t logical_blocks, unsigned k)
{
	uint64_t words = map_words(logical_blocks);
	return MAP_HEADER + words * 8 + k * area_bytes(words / TXN_CHUNK);
}

uint64_t txn_map_bytes(uint64_t logical_blocks, bool checked)
{
	return area_offset(logical_blocks, checked ? 2 : 0);
}

uint64_t txn_record_bytes(uint64_t logical_blocks)
{
	return REC_HDR + map_words(logical_blocks) / TXN_CHUNK * CHUNK_REC;
}

static int write_header(const struct engine_recorder *rec, int fd, uint64_t seq, uint64_t logical_blocks,
			bool checked, unsigned area)
{
	uint8_t slot[HDR_SLOT] = {0};
	struct map_header h = {{0}, checked ? MAP_MAGIC_CHECKED : MAP_MAGIC, seq, logical_blocks, checked ? area : 0};
	checksum(&h, header_len(checked), h.check);
	memcpy(slot, &h, sizeof h);
	return dio_write(rec, DIO_MAP, fd, slot, sizeof slot, (seq & 1) * HDR_SLOT);
}

/* Write check area k for checkpoint seq: AREA_HDR, then checks[0 .. chunks). */
static int write_area(const struct engine_recorder *rec, int fd, uint64_t logical_blocks, unsigned k, uint64_t seq,
		      uint8_t *area, uint64_t chunks)
{
	struct area_header h = {{0}, AREA_MAGIC, seq, chunks};
	uint64_t len = area_bytes(chunks);
	memset(area + AREA_HDR + chunks * 8, 0, len - AREA_HDR - chunks * 8);
	memcpy(area, &h, sizeof h);
	checksum(area, len, area);
	return dio_write(rec, DIO_MAP, fd, area, len, area_offset(logical_blocks, k));
}

/* Read check area k into `area` (area_bytes long): 1 if it is whole and holds `chunks` checks, 0
 * if not, or -errno; *seq is its checkpoint's. */
static int read_area(int fd, uint64_t logical_blocks, unsigned k, uint8_t *area, uint64_t chunks, uint64_t *seq)
{
	uint64_t len = area_bytes(chunks), off = area_offset(logical_blocks, k);
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < off + len)
		return 0; /* a map file cut short: the area is not there */
	int rc = dio_read(fd, area, len, off);
	if (rc)
		return rc;
	struct area_header h;
	uint8_t want[8];
	memcpy(&h, area, sizeof h);
	checksum(area, len, want);
	*seq = h.seq;
	return !memcmp(want, h.check, 8) && h.magic == AREA_MAGIC && h.chunks == chunks;
}

/* The newest valid checkpoint header: 0 with its seq and area, or -errno (-EINVAL: none valid). */
static int current_header(struct txn *t, uint64_t *seq, unsigned *area)
{
	uint8_t slot[2][HDR_SLOT];
	int rc = dio_read(t->map_fd, slot, sizeof slot, 0);
	if (rc)
		return rc;
	int best = -1;
	for (int i = 0; i < 2; i++) {
		struct map_header h;
		uint8_t want[8];
		memcpy(&h, slot[i], sizeof h);
		checksum(&h, header_len(t->checked), want);
		if (!memcmp(want, h.check, 8) && h.magic == (t->checked ? MAP_MAGIC_CHECKED : MAP_MAGIC) &&
		    h.logical_blocks == t->logical_blocks && (!t->checked || h.area < 2) && (best < 0 || h.seq > *seq)) {
			best = i;
			*seq = h.seq;
			*area = (unsigned)h.area;
		}
	}
	return best < 0 ? -EINVAL : 0; /* no valid checkpoint header: not something a power loss can do */
}

int txn_create(const char *dir, uint64_t logical_blocks, uint64_t journal_bytes)
{
	char path[4096];
	int rc = 0;
	if (meta_path(path, sizeof path, dir, VOL_MAP))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	uint64_t chunks = map_words(logical_blocks) / TXN_CHUNK;
	/* Allocated, not just sized: a commit overwrites room it already has, so a file system that
	 * fills up under a sparse chunk store fails data writes, never the commit of what was done. */
	rc = -posix_fallocate(fd, 0, (off_t)area_offset(logical_blocks, 2));
	if (!rc) { /* checkpoint 0: every chunk empty */
		uint8_t *area = malloc(area_bytes(chunks));
		uint64_t zeros[TXN_CHUNK] = {0};
		if (!area)
			rc = -ENOMEM;
		for (uint64_t c = 0; !rc && c < chunks; c++) {
			uint64_t h = chunk_check(c, zeros);
			memcpy(area + AREA_HDR + c * 8, &h, 8);
		}
		if (!rc)
			rc = write_area(NULL, fd, logical_blocks, 0, 0, area, chunks);
		free(area);
	}
	if (!rc)
		rc = write_header(NULL, fd, 0, logical_blocks, true, 0);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	if (meta_path(path, sizeof path, dir, VOL_JOURNAL))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (!(rc = -posix_fallocate(fd, 0, (off_t)journal_bytes)) && fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

int txn_open(struct txn *t, const char *dir, uint64_t logical_blocks, uint64_t journal_bytes, bool checked,
	     uint64_t *lbnmap, struct vol_state *st, struct store *store, const struct engine_recorder *rec)
{
	memset(t, 0, sizeof *t);
	t->map_fd = t->journal_fd = -1;
	t->checked = checked;
	t->logical_blocks = logical_blocks;
	t->chunks = map_words(logical_blocks) / TXN_CHUNK;
	t->words = (t->chunks + 63) / 64;
	t->journal_bytes = journal_bytes;
	t->lbnmap = lbnmap;
	t->st = st;
	t->store = store;
	t->rec = rec;
	char path[4096];
	/* read-only storage: a read-only open, which never commits */
	if (meta_path(path, sizeof path, dir, VOL_MAP) || (t->map_fd = meta_open_rw_or_ro(path, O_CLOEXEC, 0)) < 0)
		return -errno;
	if (meta_path(path, sizeof path, dir, VOL_JOURNAL) ||
	    (t->journal_fd = meta_open_rw_or_ro(path, O_CLOEXEC, 0)) < 0)
		return -errno;
	t->dirty_len = 2 * t->words * 8;
	t->dirty = meta_map(dir, VOL_DIRTY, t->dirty_len, 1, NULL);
	return t->dirty ? 0 : (errno ? -errno : -EIO);
}

void txn_close(struct txn *t)
{
	if (t->map_fd >= 0)
		close(t->map_fd);
	if (t->journal_fd >= 0)
		close(t->journal_fd);
	if (t->dirty)
		munmap(t->dirty, t->dirty_len);
	free(t->buf);
	memset(t, 0, sizeof *t);
	t->map_fd = t->journal_fd = -1;
}

void txn_mark_all(struct txn *t)
{
	for (uint64_t c = 0; c < t->chunks; c++) {
		__atomic_fetch_or(&t->dirty[c / 64], 1ULL << (c & 63), __ATOMIC_SEQ_CST);
		__atomic_fetch_or(&t->dirty[t->words + c / 64], 1ULL << (c & 63), __ATOMIC_SEQ_CST);
	}
}

static int reserve(struct txn *t, size_t len)
{
	if (len <= t->buf_cap)
		return 0;
	size_t cap = t->buf_cap ? t->buf_cap : 65536;
	while (cap < len)
		cap *= 2;
	uint8_t *b = realloc(t->buf, cap);
	if (!b)
		return -ENOMEM;
	t->buf = b;
	t->buf_cap = cap;
	return 0;
}

/* Take the dirty chunks of bitmap `which` (clearing its bits; 2 = both, as a checkpoint does)
 * into t->buf after a record header and the n0 chunks already there; returns the new total or
 * -errno. */
static int64_t snapshot(struct txn *t, int which, uint64_t n0)
{
	uint64_t n = n0;
	for (uint64_t w = 0; w < t->words; w++) {
		uint64_t bits = __atomic_exchange_n(&t->dirty[w + (which == 1 ? t->words : 0)], 0, __ATOMIC_SEQ_CST);
		if (which == 2)
			bits |= __atomic_exchange_n(&t->dirty[t->words + w], 0, __ATOMIC_SEQ_CST);
		while (bits) {
			uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			if (c >= t->chunks) /* a damaged dirty cache: no such chunk (the map file would grow) */
				continue;
			if (reserve(t, REC_HDR + (n + 1) * CHUNK_REC))
				return -ENOMEM;
			uint8_t *r = t->buf + REC_HDR + n * CHUNK_REC;
			memcpy(r, &c, 8);
			uint64_t *dst = (uint64_t *)(void *)(r + 8);
			for (unsigned i = 0; i < TXN_CHUNK; i++) {
				uint64_t l = c * TXN_CHUNK + i;
				dst[i] = l < t->logical_blocks ? __atomic_load_n(&t->lbnmap[l], __ATOMIC_SEQ_CST) : 0;
			}
			n++;
		}
	}
	return (int64_t)n;
}

/* Checked maps: check area `area` into `a`, which must be whole and belong to checkpoint seq;
 * otherwise -EBADMSG, t->why saying so. */
static int read_checks_of(struct txn *t, unsigned area, uint64_t seq, uint8_t *a)
{
	uint64_t have_seq = 0;
	int rc = read_area(t->map_fd, t->logical_blocks, area, a, t->chunks, &have_seq);
	if (rc < 0)
		return rc;
	if (rc == 0 || have_seq != seq) {
		return err_fail(&t->why, -EBADMSG, "the durable map's chunk checks of checkpoint %llu are damaged",
				(unsigned long long)seq);
	}
	return 0;
}

/* Checked maps: the checks of the checkpoint being written - the current one's area with the n
 * chunks in t->buf replaced - into the other area, synced before any chunk is overwritten. */
static int write_checks(struct txn *t, uint64_t n, uint64_t seq, unsigned *area)
{
	uint64_t cur_seq;
	unsigned cur;
	int rc = current_header(t, &cur_seq, &cur);
	if (rc)
		return rc;
	uint64_t chunks = t->chunks;
	uint8_t *a = malloc(area_bytes(chunks));
	if (!a)
		return -ENOMEM;
	rc = read_checks_of(t, cur, cur_seq, a);
	if (!rc) {
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *r = t->buf + REC_HDR + i * CHUNK_REC;
			uint64_t c, w[TXN_CHUNK];
			memcpy(&c, r, 8);
			memcpy(w, r + 8, CHUNK_BYTES);
			uint64_t h = chunk_check(c, w);
			memcpy(a + AREA_HDR + c * 8, &h, 8);
		}
		*area = 1 - cur;
		rc = write_area(t->rec, t->map_fd, t->logical_blocks, *area, seq, a, chunks);
		if (!rc)
			rc = dio_sync(t->rec, DIO_MAP, t->map_fd);
	}
	free(a);
	return rc;
}

static int checkpoint(struct txn *t, uint64_t n)
{
	int rc = store_sync(t->store);
	if (!rc && !n && !t->st->journal_tail)
		return 0; /* the map file is already the whole truth: leave it untouched */
	uint64_t seq = t->st->next_seq;
	unsigned area = 0;
	if (!rc && t->checked)
		rc = write_checks(t, n, seq, &area);
	for (uint64_t i = 0; !rc && i < n; i++) {
		const uint8_t *r = t->buf + REC_HDR + i * CHUNK_REC;
		uint64_t c;
		memcpy(&c, r, 8);
		rc = dio_write(t->rec, DIO_MAP, t->map_fd, r + 8, CHUNK_BYTES, MAP_HEADER + c * CHUNK_BYTES);
	}
	if (!rc)
		rc = dio_sync(t->rec, DIO_MAP, t->map_fd);
	if (!rc)
		rc = write_header(t->rec, t->map_fd, seq, t->logical_blocks, t->checked, area);
	if (!rc)
		rc = dio_sync(t->rec, DIO_MAP, t->map_fd);
	if (!rc) {
		t->st->ckpt_seq = seq;
		t->st->next_seq = seq + 1;
		t->st->journal_tail = 0;
	}
	return rc;
}

int txn_commit(struct txn *t, bool ckpt)
{
	int rc = pthread_mutex_lock(&t->st->commit);
	if (rc == EOWNERDEAD) {
		/* A committer died after taking dirty bits it never made durable: commit everything. */
		pthread_mutex_consistent(&t->st->commit);
		txn_mark_all(t);
		ckpt = true;
	} else if (rc) {
		return -rc;
	}
	int64_t n = snapshot(t, ckpt ? 2 : 0, 0);
	uint64_t len = REC_HDR + (uint64_t)(n > 0 ? n : 0) * CHUNK_REC;
	if (n > 0 && !ckpt && t->st->journal_tail + len > t->journal_bytes) {
		/* The journal is full: fold it and this commit into the map file. Not for a commit with
		 * nothing new (it writes no record): that one leaves the durable map alone, which fsck,
		 * holding the world after its own commit, relies on while another process flushes. */
		ckpt = true;
		n = snapshot(t, 1, (uint64_t)n);
	}
	if (n < 0) {
		rc = (int)n;
	} else if (ckpt) {
		rc = checkpoint(t, (uint64_t)n);
	} else if (n == 0) {
		rc = store_sync(t->store); /* nothing new in the map, but written data may be pending */
	} else {
		struct rec_header h = {{0}, REC_MAGIC, t->st->next_seq, (uint32_t)n, 0};
		memcpy(t->buf, &h, sizeof h);
		checksum(t->buf, len, t->buf);
		rc = store_sync(t->store);
		int wrc = rc ? 0 : dio_write(t->rec, DIO_JOURNAL, t->journal_fd, t->buf, len, t->st->journal_tail);
		if (!rc)
			rc = wrc;
		if (wrc == -ENOSPC || wrc == -EDQUOT) { /* the journal's own write: the data is synced */
			/* A journal without its room (formatted sparse, before format allocated it): the
			 * record goes into a checkpoint instead, which overwrites the map in place. A torn
			 * record left behind has this checkpoint's sequence number: replay never takes it. */
			if ((n = snapshot(t, 1, (uint64_t)n)) < 0)
				rc = (int)n;
			else
				rc = checkpoint(t, (uint64_t)n);
		} else {
			if (!rc)
				rc = dio_sync(t->rec, DIO_JOURNAL, t->journal_fd);
			if (!rc) {
				t->st->journal_tail += len;
				t->st->next_seq++;
			}
		}
	}
	if (rc)
		txn_mark_all(t); /* whatever was taken must be committed by the next try */
	pthread_mutex_unlock(&t->st->commit);
	return rc;
}

/* Checked maps: every chunk of the checkpointed words in `map` against checkpoint seq's area, or
 * against the next checkpoint's when a power loss cut that one short after its area was synced. */
static int verify_chunks(struct txn *t, const uint64_t *map, uint64_t seq, unsigned area)
{
	uint64_t chunks = t->chunks, len = area_bytes(chunks), nseq = 0;
	uint8_t *a = malloc(2 * len), *next = a + len;
	if (!a)
		return -ENOMEM;
	int rc = read_checks_of(t, area, seq, a), have_next = 0;
	if (!rc && (have_next = read_area(t->map_fd, t->logical_blocks, 1 - area, next, chunks, &nseq)) < 0)
		rc = have_next;
	have_next = have_next == 1 && nseq > seq;
	for (uint64_t c = 0; !rc && c < chunks; c++) {
		uint64_t w[TXN_CHUNK] = {0}, want, other;
		for (unsigned k = 0; k < TXN_CHUNK && c * TXN_CHUNK + k < t->logical_blocks; k++)
			w[k] = map[c * TXN_CHUNK + k];
		uint64_t h = chunk_check(c, w);
		memcpy(&want, a + AREA_HDR + c * 8, 8);
		memcpy(&other, next + AREA_HDR + c * 8, 8);
		if (h != want && !(have_next && h == other)) {
			rc = err_fail(&t->why, -EBADMSG,
				      "the durable map's chunk %llu (LBNs %llu-%llu) does not match checkpoint %llu's check",
				      (unsigned long long)c, (unsigned long long)(c * TXN_CHUNK),
				      (unsigned long long)(c * TXN_CHUNK + TXN_CHUNK - 1), (unsigned long long)seq);
		}
	}
	free(a);
	return rc;
}

int txn_check_working(const char *dir, uint64_t logical_blocks, bool checked, const uint64_t *map)
{
	char path[4096];
	struct txn t = {.map_fd = -1, .journal_fd = -1, .checked = checked, .logical_blocks = logical_blocks,
			.chunks = map_words(logical_blocks) / TXN_CHUNK};
	if (meta_path(path, sizeof path, dir, VOL_MAP))
		return -ENAMETOOLONG;
	if ((t.map_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	uint64_t seq = 0;
	unsigned area = 0;
	uint8_t *a = NULL;
	/* Damage to the durable map's own header or checks is no verdict on the cache: the open
	 * trusts it, and fsck reports the durable map. */
	int rc = current_header(&t, &seq, &area);
	rc = rc == -EINVAL ? 1 : rc;
	if (!rc && checked) {
		rc = !(a = malloc(area_bytes(t.chunks))) ? -ENOMEM : read_checks_of(&t, area, seq, a);
		rc = rc == -EBADMSG ? 1 : rc;
		if (!rc)
			rc = verify_chunks(&t, map, seq, area);
	} else if (!rc) {
		uint64_t *words = malloc(logical_blocks * 8);
		rc = !words ? -ENOMEM : dio_read(t.map_fd, words, logical_blocks * 8, MAP_HEADER);
		if (!rc && memcmp(words, map, logical_blocks * 8))
			rc = -EBADMSG;
		free(words);
	}
	free(a);
	close(t.map_fd);
	return rc > 0 ? 0 : rc;
}

int txn_check_durable(const char *dir, uint64_t logical_blocks, uint64_t journal_bytes, bool checked,
		      struct dd_err *err)
{
	struct txn t = {.map_fd = -1, .journal_fd = -1, .checked = checked, .logical_blocks = logical_blocks,
			.chunks = map_words(logical_blocks) / TXN_CHUNK, .journal_bytes = journal_bytes};
	char map_path[4096], journal_path[4096];
	uint64_t next, *map = malloc(logical_blocks * 8);
	int rc = !map ? -ENOMEM : meta_path(map_path, sizeof map_path, dir, VOL_MAP);
	if (!rc)
		rc = meta_path(journal_path, sizeof journal_path, dir, VOL_JOURNAL);
	if (!rc && ((t.map_fd = open(map_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		    (t.journal_fd = open(journal_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0))
		rc = -errno;
	if (!rc && (rc = txn_load(&t, map, &next)) == -EINVAL)
		rc = err_fail(&t.why, -EBADMSG, "the durable map has no valid checkpoint header");
	if (err)
		*err = t.why;
	txn_close(&t);
	free(map);
	return rc;
}

int txn_durable_empty(struct txn *t)
{
	uint64_t seq = 0;
	unsigned area = 0;
	int rc = current_header(t, &seq, &area);
	if (rc)
		return rc;
	if (seq)
		return 0; /* only format writes checkpoint 0 */
	struct rec_header h;
	struct stat jst;
	if (fstat(t->journal_fd, &jst))
		return -errno;
	if ((uint64_t)jst.st_size < REC_HDR)
		return 1;
	if ((rc = dio_read(t->journal_fd, &h, sizeof h, 0)))
		return rc;
	return !(h.magic == REC_MAGIC && h.seq == 1); /* a record there, whole or torn: not empty */
}

int txn_load(struct txn *t, uint64_t *map, uint64_t *next_seq)
{
	uint64_t seq = 0;
	unsigned area = 0;
	int rc = current_header(t, &seq, &area);
	if (rc)
		return rc;
	if ((rc = dio_read(t->map_fd, map, t->logical_blocks * 8, MAP_HEADER)))
		return rc;
	if (t->checked && (rc = verify_chunks(t, map, seq, area)))
		return rc;
	/* The replay ends at the first record that is not whole (a torn or stale tail, or the end of a
	 * file cut short); a read the device fails is an error, never taken for the end. */
	struct stat jst;
	if (fstat(t->journal_fd, &jst))
		return -errno;
	uint64_t end = (uint64_t)jst.st_size < t->journal_bytes ? (uint64_t)jst.st_size : t->journal_bytes;
	uint64_t off = 0;
	for (;;) {
		struct rec_header h;
		if (off + REC_HDR > end)
			break;
		if ((rc = dio_read(t->journal_fd, &h, sizeof h, off)))
			return rc;
		uint64_t len = REC_HDR + (uint64_t)h.nchunks * CHUNK_REC;
		if (h.magic != REC_MAGIC || h.seq != seq + 1 || len > end - off)
			break;
		if ((rc = reserve(t, len)) || (rc = dio_read(t->journal_fd, t->buf, len, off)))
			return rc;
		uint8_t want[8];
		checksum(t->buf, len, want);
		if (memcmp(want, t->buf, 8))
			break;
		for (uint32_t i = 0; i < h.nchunks; i++) {
			const uint8_t *r = t->buf + REC_HDR + (uint64_t)i * CHUNK_REC;
			uint64_t c;
			memcpy(&c, r, 8);
			for (unsigned k = 0; c < t->chunks && k < TXN_CHUNK; k++)
				if (c * TXN_CHUNK + k < t->logical_blocks)
					memcpy(&map[c * TXN_CHUNK + k], r + 8 + 8 * k, 8);
		}
		seq = h.seq;
		off += len;
	}
	*next_seq = seq + 1;
	return 0;
}
