/* txn.c - the map's durability. The map file is a 4 KiB header area (two checkpoint headers, the
 * newer valid one wins) and the checkpointed words; the journal is a sequence of records, each
 * [checksum | magic, seq, chunk count | (chunk number, 64 words) ...], replayed in sequence order
 * from offset 0 after the checkpoint with the previous sequence number. A torn or stale record
 * (bad checksum, unexpected sequence number) ends the replay. Checkpoints and records carry
 * chunk images as read after the data they point at was written and before it was synced, so a
 * durable map entry never names a block whose bytes are not durable. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "dio.h"
#include "fingerprint.h"
#include "txn.h"

#define MAP_MAGIC 0x3150414d53494445ULL  /* "EDISMAP1" */
#define REC_MAGIC 0x314c4e524a534944ULL  /* "DISJRNL1" */
#define MAP_HEADER 4096
#define HDR_SLOT 512
#define REC_HDR 32
#define CHUNK_BYTES (TXN_CHUNK * 8)
#define CHUNK_REC (8 + CHUNK_BYTES)

struct map_header {
	uint8_t check[8];
	uint64_t magic, seq, logical_blocks;
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

uint64_t txn_record_bytes(uint64_t logical_blocks)
{
	return REC_HDR + map_words(logical_blocks) / TXN_CHUNK * CHUNK_REC;
}

static int write_header(const struct engine_recorder *rec, int fd, uint64_t seq, uint64_t logical_blocks)
{
	uint8_t slot[HDR_SLOT] = {0};
	struct map_header h = {{0}, MAP_MAGIC, seq, logical_blocks};
	checksum(&h, sizeof h, h.check);
	memcpy(slot, &h, sizeof h);
	return dio_write(rec, DIO_MAP, fd, slot, sizeof slot, (seq & 1) * HDR_SLOT);
}

int txn_create(const char *dir, uint64_t logical_blocks, uint64_t journal_bytes)
{
	char path[4096];
	int rc = 0;
	if (meta_path(path, sizeof path, dir, VOL_MAP))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(MAP_HEADER + map_words(logical_blocks) * 8)))
		rc = -errno;
	if (!rc)
		rc = write_header(NULL, fd, 0, logical_blocks);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	if (meta_path(path, sizeof path, dir, VOL_JOURNAL))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (ftruncate(fd, (off_t)journal_bytes) || fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

int txn_open(struct txn *t, const char *dir, uint64_t logical_blocks, uint64_t journal_bytes, uint64_t *lbnmap,
	     struct vol_state *st, struct store *store, const struct engine_recorder *rec)
{
	memset(t, 0, sizeof *t);
	t->map_fd = t->journal_fd = -1;
	t->logical_blocks = logical_blocks;
	t->chunks = map_words(logical_blocks) / TXN_CHUNK;
	t->words = (t->chunks + 63) / 64;
	t->journal_bytes = journal_bytes;
	t->lbnmap = lbnmap;
	t->st = st;
	t->store = store;
	t->rec = rec;
	char path[4096];
	if (meta_path(path, sizeof path, dir, VOL_MAP) || (t->map_fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return -errno;
	if (meta_path(path, sizeof path, dir, VOL_JOURNAL) || (t->journal_fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
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

static int checkpoint(struct txn *t, uint64_t n)
{
	int rc = store_sync(t->store);
	if (!rc && !n && !t->st->journal_tail)
		return 0; /* the map file is already the whole truth: leave it untouched */
	for (uint64_t i = 0; !rc && i < n; i++) {
		const uint8_t *r = t->buf + REC_HDR + i * CHUNK_REC;
		uint64_t c;
		memcpy(&c, r, 8);
		rc = dio_write(t->rec, DIO_MAP, t->map_fd, r + 8, CHUNK_BYTES, MAP_HEADER + c * CHUNK_BYTES);
	}
	if (!rc)
		rc = dio_sync(t->rec, DIO_MAP, t->map_fd);
	uint64_t seq = t->st->next_seq;
	if (!rc)
		rc = write_header(t->rec, t->map_fd, seq, t->logical_blocks);
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
	if (n >= 0 && !ckpt && t->st->journal_tail + len > t->journal_bytes) {
		/* The journal is full: fold it and this commit into the map file. */
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
		if (!rc)
			rc = dio_write(t->rec, DIO_JOURNAL, t->journal_fd, t->buf, len, t->st->journal_tail);
		if (!rc)
			rc = dio_sync(t->rec, DIO_JOURNAL, t->journal_fd);
		if (!rc) {
			t->st->journal_tail += len;
			t->st->next_seq++;
		}
	}
	if (rc)
		txn_mark_all(t); /* whatever was taken must be committed by the next try */
	pthread_mutex_unlock(&t->st->commit);
	return rc;
}

int txn_load(struct txn *t, uint64_t *map, uint64_t *next_seq)
{
	uint8_t slot[2][HDR_SLOT];
	int rc = dio_read(t->map_fd, slot, sizeof slot, 0);
	if (rc)
		return rc;
	int best = -1;
	uint64_t seq = 0;
	for (int i = 0; i < 2; i++) {
		struct map_header h;
		uint8_t want[8];
		memcpy(&h, slot[i], sizeof h);
		checksum(&h, sizeof h, want);
		if (!memcmp(want, h.check, 8) && h.magic == MAP_MAGIC && h.logical_blocks == t->logical_blocks &&
		    (best < 0 || h.seq > seq)) {
			best = i;
			seq = h.seq;
		}
	}
	if (best < 0)
		return -EINVAL; /* no valid checkpoint header: not something a power loss can do */
	if ((rc = dio_read(t->map_fd, map, t->logical_blocks * 8, MAP_HEADER)))
		return rc;
	uint64_t off = 0;
	for (;;) {
		struct rec_header h;
		if (off + REC_HDR > t->journal_bytes || dio_read(t->journal_fd, &h, sizeof h, off))
			break;
		uint64_t len = REC_HDR + (uint64_t)h.nchunks * CHUNK_REC;
		if (h.magic != REC_MAGIC || h.seq != seq + 1 || len > t->journal_bytes - off || reserve(t, len) ||
		    dio_read(t->journal_fd, t->buf, len, off))
			break;
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
