/* scan.c - walker + hashing threads: small files go out in batches of up to a 4 MiB+ buffer's
 * worth, which a hasher opens, reads block-aligned (tails zero-padded) and hashes; large ones go
 * out as file ranges the hashers pread in L2-sized chunks; devices are read and packed by the
 * walker. Hashers count each size's fingerprints in batches and measure the sampled blocks. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/fullio.h"
#include "gen/batchread.h"
#include "lib/fingerprint.h"
#include "gen/mapread.h"
#include "lib/reserve.h"
#include "gen/scan.h"

#define MIN_BUF (4u << 20)
/* Regular files from this size on are not copied by the reader: it hands them out as 4 MiB
 * ranges, and each hasher pread()s its range in chunks small enough to stay in its L2 cache,
 * hashing them there. The page cache -> user copy is then as cheap as it gets (its stores and
 * the hash's loads hit L2, not DRAM), and it is spread over the hashing threads. Smaller files
 * are listed in batches (below) that the hashers read, so one buffer holds hundreds of them. */
#define RANGE_MIN (1u << 20)
#define CHUNK (128u << 10)
#define PAGE_READ 4096u /* the retry size of a read refused with ENOMEM (procfs sysctl files) */
/* --read-method auto. The copy pread makes is 9 % of the CPU on a 2-core EPYC VM, where mapping
 * still lost by 7-10 % (SHA-1 at 2 GB/s a core then waits on DRAM, and faults cost more), and
 * 15-18 % on a 16-core Xeon VM, where mapping won by 0-13 %: which is cheaper is the machine's, so
 * each thread measures it on its first ranges in memory (hash_range), READ_TRIALS each way, and
 * keeps mapping if that was cheaper by MAP_MARGIN: pread is the safer way (no SIGBUS, and it
 * reads ahead). Timing a few hashing windows each way beside the real work said "mapping" on the
 * EPYC, where it loses: the unmapping and the faults of whole ranges are part of its cost. */
#define READ_TRIALS 3
#define MAP_MARGIN 0.97
#define SHRANK "changed while being read (it shrank): the ranges it no longer fills are not counted"

/* How one hashing thread reads large files' ranges now. */
enum thread_read {
	TRY_BOTH,        /* auto, still timing: mapped or pread in turns, where in memory */
	BY_PREAD,
	BY_MAP,          /* --read-method mmap: every range */
	BY_MAP_RESIDENT, /* auto, mapping won: ranges in memory mapped, the others by pread */
};
/* Regular files below RANGE_MIN are not read by the walking thread either: it stats them (the
 * walk does) and lists them in a batch whose positions it reserves from their sizes; a hasher
 * opens and reads them. On a tree of small files (/usr/share: 62,000 files, 13 KiB on average)
 * the one thread's open + read + close was the whole scan's limit, whatever the hashers. A batch
 * holds at most this many files. Files whose stat says size 0 are read by the walker as before:
 * procfs and some FUSE files say 0 and hold bytes, which a batch (read up to the walked size)
 * would miss; truly empty files are few (141 of /usr/share's 62,626). */
#define BATCH_MAX_FILES 4096

/* Part of one file: `len` data bytes at data + off, then zeros up to the largest block size. */
struct seg {
	size_t off, len;
};

/* An open file shared by the ranges cut from it; closed by whoever drops the last reference. */
struct shared_file {
	int fd;
	int refs;            /* under the pipe lock */
	bool reported;       /* under the pipe lock: a range of it failed, and that was said */
	char *path;
	struct map_file map; /* what mapping it allows (probed once, unless --read-method pread) */
};

/* A small file of a batch: its path (in the batch's names), the size the walk saw, where it goes
 * in the buffer, its first block's stream position per size, and the bytes a hasher read. */
struct batch_file {
	size_t name;
	uint64_t size;
	size_t off;
	uint64_t pos[GEN_SCAN_MAX_SIZES];
	size_t got;
};

/* A unit of work: packed segments in `data` (devices, parts of files), a batch of small files
 * (nfiles > 0 or `batch`: the hasher reads them into `data`), or (file != NULL) the range
 * [off, off + len) of a large file (the last range may end with a partial block). A range longer
 * than the buffer size is a whole file posted once: the hashers cut it into buffer-sized ranges
 * themselves (take_work), so they never wait on the walking thread for the next one. Packed
 * segments and ranges are consecutive in the stream from pos[]; a batch's files each have their
 * own positions, consecutive unless a file shrank before it was read. */
struct buf {
	uint64_t pos[GEN_SCAN_MAX_SIZES];
	uint8_t *data;
	size_t used;
	struct seg *segs;
	size_t nsegs, segcap;
	struct shared_file *file;
	uint64_t start; /* where the file's range began (the walking thread posted [start, off + len)) */
	uint64_t off, len;
	bool batch;
	struct batch_file *files;
	size_t nfiles, filecap;
	char *names;
	size_t names_used, names_cap;
	struct buf *next;
};

struct pipe {
	const struct scan_config *cfg;
	size_t cap, maxbs, chunk;
	pthread_mutex_t lock;
	pthread_cond_t cv_full, cv_free, cv_ended;
	int ended;               /* hashers that have ended, under lock (cv_ended tells the walking thread) */
	struct buf *full_head, *full_tail, *free_list;
	bool done, failed;
	char failure[512];
	uint64_t *blocks;        /* per size, under lock */
	char **bad;              /* "path: reason" of what the hashers could not read (ranges, batch files), under lock */
	size_t nbad;
	uint64_t unread_files;   /* batch files a hasher could not open or read, under lock ... */
	uint64_t unread_bytes;   /* ... and the bytes the walker counted for them, or for a file's ranges
				  * that failed, that were not read */
	uint64_t batches_uring, batches_sync, small_file_fallbacks; /* atomic */
	uint64_t ranges_mapped, ranges_read;                         /* atomic */
	uint64_t uncut;          /* bytes of posted large-file ranges no hasher has taken yet, under lock */
	uint64_t ahead;          /* bytes the hashers ask the kernel to read ahead of the range they take */
	double read_best_sum[2]; /* --read-method auto: the threads' least costs by pread [0], mapped [1], summed, under lock */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pipe_fail(struct pipe *p, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&p->lock);
	if (!p->failed) {
		p->failed = true;
		va_start(ap, fmt);
		vsnprintf(p->failure, sizeof p->failure, fmt, ap);
		va_end(ap);
	}
	pthread_cond_broadcast(&p->cv_free);
	pthread_cond_broadcast(&p->cv_full);
	pthread_mutex_unlock(&p->lock);
}

static bool pipe_failed(struct pipe *p)
{
	return __atomic_load_n(&p->failed, __ATOMIC_RELAXED);
}

/* What a hashing thread keeps for itself: its digest context, its codecs and, per size, its
 * compressibility samples and locality records (handed over once, when it ends). */
struct hstate {
	struct fp_ctx *fc;
	struct compmodel_codecs *codec;
	struct comp_local comp[GEN_SCAN_MAX_SIZES]; /* .set NULL: off */
	struct loc_local *loc[GEN_SCAN_MAX_SIZES];  /* NULL: off */
	struct batch_reader *br;                    /* NULL: batches read with system calls */
	struct batch_item *items;                   /* BATCH_MAX_FILES, for the batches' reads */
	enum thread_read read_how;
	int trials[2];                              /* auto: ranges timed by pread [0], mapped [1] */
	double best[2];                             /* auto: their least thread CPU seconds per byte */
	double measure_s;                           /* auto, while timing: CPU seconds compressing */
	uint64_t gran_period;                       /* the granularity windows' selection */
	struct dist_gran gran;                      /* their sums, handed over at the end */
	uint8_t *gran_pad;                          /* a file's last window, zero-padded; NULL: off */
	struct align_set *align;                    /* the first size's records; NULL: off */
	uint64_t zero_id;                           /* the zero block's identity at the first size */
	struct cdc_set *cdc;                        /* the chunks; NULL: off */
	struct cdc_cursor cur;                      /* the chunk under way in the piece being read */
};

/* Blocks a segment or range of len bytes holds at block size bs. */
static uint64_t blocks_of(const struct scan_config *cfg, uint64_t len, uint64_t bs)
{
	return cfg->skip_tails ? len / bs : (len + bs - 1) / bs;
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The block at stream position pos: compressed when its occurrence is selected (timed while the
 * thread times its ways of reading: see hash_range). */
static inline int measure(struct hstate *hs, int size, const uint8_t *fp, const uint8_t *block, uint64_t pos,
			  struct dd_err *err)
{
	struct comp_local *cl = &hs->comp[size];
	uint64_t h;
	if (!cl->set || !comp_local_selected(cl, fp, pos, &h))
		return 0;
	if (hs->read_how != TRY_BOTH)
		return comp_local_measure(cl, hs->codec, fp, block, h, err);
	double t0 = thread_cpu_s();
	int rc = comp_local_measure(cl, hs->codec, fp, block, h, err);
	hs->measure_s += thread_cpu_s() - t0;
	return rc;
}

/* The granularity windows of `len` bytes of one file at data, the first at file offset a multiple of
 * DIST_GRAN_WINDOW and at stream byte spos: each selected one measured, the last zero-padded. */
static int gran_windows(struct hstate *hs, const uint8_t *data, size_t len, uint64_t spos, struct dd_err *err)
{
	if (!hs->gran_pad)
		return 0;
	for (size_t off = 0; off < len; off += DIST_GRAN_WINDOW) {
		if (!gran_selected(hs->gran_period, spos + off))
			continue;
		const uint8_t *w = data + off;
		if (len - off < DIST_GRAN_WINDOW) {
			memcpy(hs->gran_pad, w, len - off);
			memset(hs->gran_pad + (len - off), 0, DIST_GRAN_WINDOW - (len - off));
			w = hs->gran_pad;
		}
		double t0 = hs->read_how == TRY_BOTH ? thread_cpu_s() : 0;
		if (compmodel_measure_window(hs->codec, w, &hs->gran, err))
			return -1;
		if (hs->read_how == TRY_BOTH)
			hs->measure_s += thread_cpu_s() - t0;
	}
	return 0;
}

/* A whole piece (a file, a segment) through the chunker, at stream byte spos. 0, or -1. */
static int piece_chunks(struct hstate *hs, const uint8_t *data, size_t len, uint64_t spos, struct dd_err *err)
{
	if (!hs->cdc)
		return 0;
	if (cdc_feed(hs->cdc, &hs->cur, hs->fc, data, len, spos) || cdc_end(hs->cdc, &hs->cur, hs->fc))
		return err_fail(err, -1, "out of memory for the chunks (or hashing failed)");
	return 0;
}

/* A piece's n block fingerprints at the first size, the first at block first_index of its file,
 * into the records of 2..32 blocks. 0, or -1. */
static int piece_records(struct hstate *hs, const uint8_t *fps, size_t fl, size_t n, uint64_t first_index,
			 struct dd_err *err)
{
	if (hs->align && align_set_add(hs->align, fps, fl, n, first_index, hs->zero_id))
		return err_fail(err, -1, "out of memory for the records of 2 to 32 blocks");
	return 0;
}

/* Hashes (and measures) the packed segments of a buffer at one size into fps; returns the number
 * of blocks, or (size_t)-1 with why filled. */
static size_t hash_packed(const struct pipe *p, struct hstate *hs, const struct buf *b, int size, uint8_t *fps,
			  struct dd_err *err)
{
	uint64_t bs = p->cfg->sizes[size].block_size;
	size_t n = 0, fl = fp_len(hs->fc);
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct seg *s = &b->segs[i];
		size_t nb = (size_t)blocks_of(p->cfg, s->len, bs);
		const uint8_t *d = b->data + s->off;
		/* windows from the segment's start: a device's offset when it is read alone (its segments
		 * fill whole buffers); after another input in the same buffer they are shifted, and the
		 * window cut by a segment's end is measured zero-padded */
		if (size == 0 && gran_windows(hs, d, s->len, (b->pos[0] + n) * bs, err))
			return (size_t)-1;
		if (size == 0 && piece_chunks(hs, d, s->len, (b->pos[0] + n) * bs, err))
			return (size_t)-1;
		size_t from = n;
		for (size_t k = 0; k < nb; k++, n++) {
			if (fp_hash(hs->fc, d + k * bs, bs, fps + n * fl)) {
				err_fail(err, -1, "hashing failed (OpenSSL %s)", p->cfg->hash);
				return (size_t)-1;
			}
			if (measure(hs, size, fps + n * fl, d + k * bs, b->pos[size] + n, err))
				return (size_t)-1;
		}
		if (size == 0 && piece_records(hs, fps + from * fl, fl, nb, 0, err))
			return (size_t)-1;
	}
	return n;
}

/* Hashes (and measures) got bytes of a range at data, at every size while they are in cache,
 * appending to fps[i] / counts[i]; a partial last block (the file's end) is zero-padded in
 * `chunk` (p->chunk + the largest block size). Returns 0, or -1 with why filled. */
static int hash_window(const struct pipe *p, struct hstate *hs, const struct buf *b, uint8_t **fps, size_t *counts,
		       const uint8_t *data, size_t got, uint8_t *chunk, struct dd_err *err)
{
	const struct scan_config *cfg = p->cfg;
	struct fp_ctx *fc = hs->fc;
	size_t fl = fp_len(fc);
	/* a range's chunks start at file offsets that are multiples of the chunk, itself of the window */
	uint64_t spos = (b->pos[0] + counts[0]) * cfg->sizes[0].block_size;
	if (gran_windows(hs, data, got, spos, err))
		return -1;
	if (hs->cdc && cdc_feed(hs->cdc, &hs->cur, fc, data, got, spos))
		return err_fail(err, -1, "out of memory for the chunks (or hashing failed)");
	for (int i = 0; i < cfg->nsizes; i++) {
		size_t bs = cfg->sizes[i].block_size, full = got / bs, tail = got % bs;
		uint8_t *out = fps[i] + counts[i] * fl;
		uint64_t pos = b->pos[i] + counts[i];
		for (size_t k = 0; k < full; k++, out += fl) {
			if (fp_hash(fc, data + k * bs, bs, out))
				goto hash_failed;
			if (measure(hs, i, out, data + k * bs, pos + k, err))
				return -1;
		}
		counts[i] += full;
		if (tail && !cfg->skip_tails) { /* the file's last block: zero-padded */
			uint8_t *last = data == chunk ? chunk + full * bs : chunk;
			if (last != data + full * bs)
				memcpy(last, data + full * bs, tail);
			memset(last + tail, 0, bs - tail);
			if (fp_hash(fc, last, bs, out))
				goto hash_failed;
			if (measure(hs, i, out, last, pos + full, err))
				return -1;
			counts[i]++;
		}
	}
	return 0;
hash_failed:
	err_fail(err, -1, "hashing failed (OpenSSL %s)", cfg->hash);
	return -1;
}

/* Reads a file range chunk by chunk into `chunk` (p->chunk bytes) and hashes (and measures) each
 * chunk at every size while it is in cache, appending to fps[i] / counts[i]. Returns 0, -1 (a
 * hashing or measuring failure), or 1 when the range could not be read (an I/O error, or the file
 * shrank under us); why says which. A range dropped that way may leave samples of its first
 * chunks in the thread's set: their sizes are true (a content's sizes are its own), they are
 * joined only with contents counted elsewhere. */
static int hash_range_read(const struct pipe *p, struct hstate *hs, const struct buf *b, uint8_t **fps,
			   size_t *counts, uint8_t *chunk, struct dd_err *err)
{
	for (size_t done = 0; done < b->len;) {
		size_t got = b->len - done < p->chunk ? b->len - done : p->chunk;
		/* ENODATA stands for "nothing there": pread itself never says it */
		int rc = fullio_pread(b->file->fd, chunk, got, b->off + done, ENODATA);
		if (rc == -ENODATA)
			return err_fail(err, 1, "%s", SHRANK);
		if (rc)
			return err_fail(err, 1, "read error at offset %llu: %s", (unsigned long long)(b->off + done),
					strerror(-rc));
		if (hash_window(p, hs, b, fps, counts, chunk, got, chunk, err))
			return -1;
		done += got;
	}
	return 0;
}

/* What hash_mapped needs, through map_guarded. */
struct mapped_work {
	const struct pipe *p;
	struct hstate *hs;
	const struct buf *b;
	uint8_t **fps;
	size_t *counts;
	const uint8_t *data;
	uint8_t *chunk;
	struct dd_err *err;
};

/* Hashes a mapped range in windows of the chunk size, each at every size while it is in cache. */
static int hash_mapped(void *arg)
{
	struct mapped_work *w = arg;
	for (size_t done = 0; done < w->b->len;) {
		size_t got = w->b->len - done < w->p->chunk ? w->b->len - done : w->p->chunk;
		if (hash_window(w->p, w->hs, w->b, w->fps, w->counts, w->data + done, got, w->chunk, w->err))
			return -1;
		done += got;
	}
	return 0;
}

/* What a fault in a mapped range was, as pread tells at its offset: the end of the file (it
 * shrank), or a read error (an I/O error on a mapped page raises SIGBUS too). Returns 1. */
static int mapped_fault(const struct buf *b, const struct map_range *m, const void *fault, struct dd_err *err)
{
	const uint8_t *a = fault;
	unsigned long long at = b->off + (a > m->data ? (uint64_t)(a - m->data) : 0);
	uint8_t byte;
	ssize_t n = pread(b->file->fd, &byte, 1, (off_t)at);
	if (n == 0)
		err_fail(err, -1, "%s", SHRANK);
	else if (n < 0)
		err_fail(err, -1, "read error at offset %llu: %s", at, strerror(errno));
	else
		err_fail(err, -1, "read error at offset %llu: its mapped page could not be read (SIGBUS)", at);
	return 1;
}

/* Hashes a range of a large file, read as --read-method says (see hash_range_read for what it
 * returns). Mapped, nothing is copied; a page that cannot be read (the file shrank, an I/O error)
 * is caught and told as pread would tell it. auto maps only ranges already in memory, and times its first
 * 2 * READ_TRIALS of them, mapped and by pread in turns: thread CPU time per byte (the copy's and
 * the faults' system time, mapping and unmapping included), less the time spent compressing
 * (what the ranges hold - how many blocks the compressibility sample picks - moved their cost
 * more than the way they were read). Then it keeps mapping if that was cheaper by MAP_MARGIN, in
 * the sum of the least costs of every thread that has timed both so far. */
static int hash_range(struct pipe *p, struct hstate *hs, const struct buf *b, uint8_t **fps, size_t *counts,
		      uint8_t *chunk, struct dd_err *err)
{
	struct map_range m;
	bool mapped = false;
	int trial = -1; /* auto: the way this range is timed (0 pread, 1 mapped) */
	double t0 = 0;
	if (hs->read_how == TRY_BOTH && b->len == p->cap) {
		trial = hs->trials[1] < hs->trials[0];
		hs->measure_s = 0;
		t0 = thread_cpu_s();
	}
	if (hs->read_how != BY_PREAD && trial != 0)
		mapped = map_range_open(b->file->fd, &b->file->map, b->off, b->len, hs->read_how != BY_MAP, &m) ==
			 MAP_OPEN_OK;
	if (trial == 1 && !mapped) /* not in memory (yet): neither way is timed on it */
		trial = -1;
	int rc;
	if (mapped) {
		struct mapped_work w = {p, hs, b, fps, counts, m.data, chunk, err};
		const void *fault;
		struct stat st;
		rc = map_guarded(&m, hash_mapped, &w, &fault);
		if (fault) {
			rc = mapped_fault(b, &m, fault, err);
		} else if (rc == 0 && (fstat(b->file->fd, &st) || (uint64_t)st.st_size < b->off + b->len)) {
			/* cut inside the range's last page: the bytes past the new end read as zeros there,
			 * without a fault; pread would have found the end */
			err_fail(err, -1, "%s", SHRANK);
			rc = 1;
		}
		map_range_close(&m);
	} else {
		rc = hash_range_read(p, hs, b, fps, counts, chunk, err);
	}
	__atomic_add_fetch(mapped ? &p->ranges_mapped : &p->ranges_read, 1, __ATOMIC_RELAXED);
	if (trial >= 0 && rc == 0) {
		double cost = (thread_cpu_s() - t0 - hs->measure_s) / (double)b->len;
		if (!hs->trials[trial]++ || cost < hs->best[trial])
			hs->best[trial] = cost;
		if (hs->trials[0] >= READ_TRIALS && hs->trials[1] >= READ_TRIALS) {
			/* the choice of every thread that has timed both so far, this one's included: 16
			 * threads choosing alone from 3 ranges each way split 12:4 on a 7 % difference */
			pthread_mutex_lock(&p->lock);
			p->read_best_sum[0] += hs->best[0];
			p->read_best_sum[1] += hs->best[1];
			bool map = p->read_best_sum[1] < p->read_best_sum[0] * MAP_MARGIN;
			pthread_mutex_unlock(&p->lock);
			hs->read_how = map ? BY_MAP_RESIDENT : BY_PREAD;
		}
	}
	return rc;
}

/* A large file's range is read: its last chunk ends with it (the next range is another thread's:
 * its first chunk starts afresh), its blocks at the first size go into the records. 0 or -1. */
static int range_end(const struct pipe *p, struct hstate *hs, const struct buf *b, const uint8_t *fps,
		     size_t n, struct dd_err *err)
{
	if (hs->cdc && cdc_end(hs->cdc, &hs->cur, hs->fc))
		return err_fail(err, -1, "out of memory for the chunks (or hashing failed)");
	return piece_records(hs, fps, fp_len(hs->fc), n, b->off / p->cfg->sizes[0].block_size, err);
}

/* "path: why" goes to the list of what the hashers could not read (one error each). */
static void pipe_bad(struct pipe *p, const char *path, const char *why)
{
	size_t len = strlen(path) + strlen(why) + 4;
	char *msg = malloc(len), **n;
	pthread_mutex_lock(&p->lock);
	if (msg && (n = realloc(p->bad, (p->nbad + 1) * sizeof *n))) {
		snprintf(msg, len, "%s: %s", path, why);
		p->bad = n;
		n[p->nbad++] = msg;
		msg = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	free(msg);
}

/* A file's range that could not be read is left out whole: its bytes are not counted as read, and
 * the file is one error however many of its ranges fail (a file that shrank fails every range
 * past its new end). */
static void range_bad(struct pipe *p, struct shared_file *f, const char *why, uint64_t len)
{
	pthread_mutex_lock(&p->lock);
	bool first = !f->reported;
	f->reported = true;
	p->unread_bytes += len;
	pthread_mutex_unlock(&p->lock);
	if (first)
		pipe_bad(p, f->path, why);
}

/* Reads a batch's files into its buffer (batchread.c: many in flight with io_uring), each at its
 * offset and up to the size the walk saw (a file that grew since is read that far; one that
 * shrank reads what it has, and the rest of its positions stay unused), tails zero-padded to the
 * largest block size. A file that cannot be opened, or fails a read, is reported and not counted
 * as read; what a failing read delivered before stays counted, as it did when the walker read
 * small files itself. */
static void read_batch(struct pipe *p, struct hstate *hs, struct buf *b)
{
	struct batch_item *items = hs->items;
	for (size_t j = 0; j < b->nfiles; j++)
		items[j] = (struct batch_item){.path = b->names + b->files[j].name, .buf = b->data + b->files[j].off,
					       .size = (size_t)b->files[j].size};
	bool ring = hs->br != NULL;
	if (!ring) {
		batch_read_sync(items, b->nfiles);
	} else if (batch_reader_read(hs->br, items, b->nfiles)) {
		batch_reader_free(hs->br); /* the ring failed: the next batches are read the plain way */
		hs->br = NULL;
	}
	/* A batch counts where it was sent; its files the ring did not read are counted apart. */
	__atomic_add_fetch(ring ? &p->batches_uring : &p->batches_sync, 1, __ATOMIC_RELAXED);
	uint64_t plain = 0;
	for (size_t j = 0; j < b->nfiles; j++) {
		struct batch_file *f = &b->files[j];
		const struct batch_item *it = &items[j];
		plain += it->plain;
		f->got = it->got;
		size_t padded = (f->got + p->maxbs - 1) / p->maxbs * p->maxbs;
		memset(b->data + f->off + f->got, 0, padded - f->got);
		if (it->err) {
			char why[256];
			if (!strcmp(it->what, "read error"))
				snprintf(why, sizeof why, "read error at offset %llu: %s", (unsigned long long)it->got,
					 strerror(it->err));
			else
				snprintf(why, sizeof why, "%s: %s", it->what, strerror(it->err));
			pipe_bad(p, it->path, why);
		}
		if (it->err || f->got < f->size) {
			pthread_mutex_lock(&p->lock);
			p->unread_files += it->err != 0;
			p->unread_bytes += f->size - f->got;
			pthread_mutex_unlock(&p->lock);
		}
	}
	if (plain)
		__atomic_add_fetch(&p->small_file_fallbacks, plain, __ATOMIC_RELAXED);
}

/* n fingerprints at consecutive positions from pos, of size i, into the counts and the locality
 * records. 0, or -1 with why filled. */
static int count_run(struct pipe *p, struct hstate *hs, int writer, int i, const uint8_t *fps, size_t n, uint64_t pos,
		     struct dd_err *err)
{
	const struct scan_config *cfg = p->cfg;
	if (!n)
		return 0;
	if (counter_add_batch(cfg->sizes[i].counter, writer, fps, n, pos, err))
		return -1;
	if (hs->loc[i] && loc_local_record(hs->loc[i], fps, n, pos)) {
		err_fail(err, -1, "out of memory for the locality records");
		return -1;
	}
	__atomic_add_fetch(&p->blocks[i], n, __ATOMIC_RELAXED);
	return 0;
}

/* Hashes (and measures) a read batch's blocks of size i into fps and counts them: one run per
 * stretch of files whose positions follow each other (all of them, unless one shrank). 0, or -1
 * with why filled. */
static int hash_batch(struct pipe *p, struct hstate *hs, int writer, const struct buf *b, int i, uint8_t *fps,
		      struct dd_err *err)
{
	uint64_t bs = p->cfg->sizes[i].block_size, run_pos = 0;
	size_t fl = fp_len(hs->fc), n = 0, run = 0;
	for (size_t j = 0; j < b->nfiles; j++) {
		const struct batch_file *f = &b->files[j];
		size_t nb = (size_t)blocks_of(p->cfg, f->got, bs);
		if (!nb)
			continue;
		if (n > run && f->pos[i] != run_pos + (n - run)) {
			if (count_run(p, hs, writer, i, fps + run * fl, n - run, run_pos, err))
				return -1;
			run = n;
		}
		if (n == run)
			run_pos = f->pos[i];
		const uint8_t *d = b->data + f->off;
		if (i == 0 && (gran_windows(hs, d, f->got, f->pos[0] * bs, err) ||
			       piece_chunks(hs, d, f->got, f->pos[0] * bs, err)))
			return -1;
		size_t from = n;
		for (size_t k = 0; k < nb; k++, n++) {
			if (fp_hash(hs->fc, d + k * bs, bs, fps + n * fl)) {
				err_fail(err, -1, "hashing failed (OpenSSL %s)", p->cfg->hash);
				return -1;
			}
			if (measure(hs, i, fps + n * fl, d + k * bs, f->pos[i] + k, err))
				return -1;
		}
		if (i == 0 && piece_records(hs, fps + from * fl, fl, nb, 0, err))
			return -1;
	}
	return count_run(p, hs, writer, i, fps + run * fl, n - run, run_pos, err);
}

static void file_unref(struct pipe *p, struct shared_file *f)
{
	pthread_mutex_lock(&p->lock);
	bool last = --f->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last) {
		close(f->fd);
		free(f->path);
		free(f);
	}
}

/* The thread's samples and records go to the shared per-size objects (once, at its end). */
static void hstate_flush(struct pipe *p, struct hstate *hs, bool keep)
{
	const struct scan_config *cfg = p->cfg;
	bool failed = false;
	for (int i = 0; i < cfg->nsizes; i++) {
		if (hs->comp[i].set) {
			if (keep)
				failed |= comp_local_flush(&hs->comp[i]) != 0;
			else
				comp_local_release(&hs->comp[i]);
		}
		if (hs->loc[i]) {
			if (keep)
				failed |= loc_local_flush(hs->loc[i]) != 0;
			else
				loc_local_free(hs->loc[i]);
			hs->loc[i] = NULL;
		}
	}
	if (hs->gran_pad && keep)
		gran_sampler_add(cfg->gran, &hs->gran);
	free(hs->gran_pad);
	hs->gran_pad = NULL;
	pthread_mutex_lock(&p->lock);
	if (hs->align && keep)
		failed |= align_set_merge(cfg->align, hs->align) != 0;
	if (hs->cdc && keep)
		failed |= cdc_set_merge(cfg->cdc, hs->cdc) != 0;
	pthread_mutex_unlock(&p->lock);
	align_set_free(hs->align);
	hs->align = NULL;
	cdc_set_free(hs->cdc);
	hs->cdc = NULL;
	cdc_cursor_free(&hs->cur);
	if (failed)
		pipe_fail(p, "out of memory gathering the compressibility samples and locality records");
}

static bool hstate_init(const struct scan_config *cfg, struct hstate *hs, uint64_t maxbs)
{
	memset(hs, 0, sizeof *hs);
	hs->read_how = cfg->read_method == SCAN_READ_PREAD ? BY_PREAD : cfg->read_method == SCAN_READ_MMAP ? BY_MAP : TRY_BOTH;
	if (!(hs->fc = fp_new(cfg->hash)) || !(hs->items = calloc(BATCH_MAX_FILES, sizeof *hs->items)))
		return false;
	hs->br = batch_reader_new(); /* NULL: no io_uring here, system calls then */
	for (int i = 0; i < cfg->nsizes; i++) {
		if (cfg->sizes[i].comp) {
			if (!hs->codec && !(hs->codec = compmodel_codecs_new(maxbs)))
				return false;
			if (comp_local_init(&hs->comp[i], cfg->sizes[i].comp))
				return false;
		}
		if (cfg->sizes[i].loc && !(hs->loc[i] = loc_local_new(cfg->sizes[i].loc)))
			return false;
	}
	if (cfg->gran) {
		hs->gran_period = gran_sampler_period(cfg->gran);
		if ((!hs->codec && !(hs->codec = compmodel_codecs_new(DIST_GRAN_WINDOW))) ||
		    !(hs->gran_pad = malloc(DIST_GRAN_WINDOW)))
			return false;
	}
	if (cfg->align) {
		size_t bs = (size_t)cfg->sizes[0].block_size;
		uint8_t *zero = calloc(1, bs), fp[64];
		bool ok = zero && !fp_hash(hs->fc, zero, bs, fp);
		free(zero);
		if (!ok || !(hs->align = align_set_new()))
			return false;
		hs->zero_id = align_block_id(fp);
	}
	if (cfg->cdc && (!(hs->cdc = cdc_set_new(cdc_set_params(cfg->cdc), cdc_set_rate(cfg->cdc))) ||
			 cdc_cursor_init(&hs->cur, cdc_set_params(cfg->cdc))))
		return false;
	return true;
}

/* A hashing thread's start: the pipe, and its writer number in the counters. */
struct hasher_arg {
	struct pipe *p;
	int writer;
};

static bool scan_stopped(const struct scan_config *cfg)
{
	return cfg->stop && *cfg->stop;
}

/* A buffer done with goes back to the walking thread's free list (its file reference dropped). */
static void give_back(struct pipe *p, struct buf *b)
{
	if (b->file) {
		file_unref(p, b->file);
		b->file = NULL;
	}
	pthread_mutex_lock(&p->lock);
	b->next = p->free_list;
	p->free_list = b;
	pthread_cond_signal(&p->cv_free);
	pthread_mutex_unlock(&p->lock);
}

/* The next unit of work for a hasher, or NULL when there is none left (the walk is done, or the
 * pipe failed). A whole file's range at the head of the queue is cut there: the hasher gets its
 * first buffer-sized range in *piece (and asks the kernel to read p->ahead further), and the rest
 * stays at the head for the next hasher. Otherwise the head itself is returned (*cut false): the
 * caller gives it back to the free list when done. Once the scan is stopped, whole-file ranges
 * are dropped rather than cut: what is left of a file may be terabytes. */
static struct buf *take_work(struct pipe *p, struct buf *piece, bool *cut)
{
	const struct scan_config *cfg = p->cfg;
	struct buf *b;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (!p->full_head && !p->done && !p->failed)
			pthread_cond_wait(&p->cv_full, &p->lock);
		b = p->failed ? NULL : p->full_head;
		if (!b) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		bool drop = b->file && b->len > p->cap && scan_stopped(cfg);
		*cut = b->file && b->len > p->cap && !drop;
		struct buf *mine = *cut ? piece : b;
		/* The file's first range asks the kernel for the next p->ahead bytes too; each later one
		 * for the range p->ahead past itself: the hashers keep that much in flight ahead of them,
		 * as the walking thread did when it posted each range ahead of them. Worked out here:
		 * once the lock is let go, the rest of the file's range is another hasher's. */
		uint64_t end = b->off + b->len, ask = 0, want = 0;
		int fd = b->file ? b->file->fd : -1;
		if (b->file && !drop && p->ahead) {
			bool first = b->off == b->start;
			ask = first ? b->off : b->off + p->ahead;
			want = first ? p->ahead + p->cap : p->cap;
			want = ask < end ? (end - ask < want ? end - ask : want) : 0;
		}
		if (*cut) {
			*piece = (struct buf){.file = b->file, .off = b->off, .len = p->cap};
			for (int i = 0; i < cfg->nsizes; i++) {
				piece->pos[i] = b->pos[i];
				b->pos[i] += p->cap / cfg->sizes[i].block_size; /* cap is a multiple of every size */
			}
			b->off += p->cap;
			b->len -= p->cap;
			b->file->refs++;
			p->uncut -= p->cap;
			pthread_cond_signal(&p->cv_full); /* the rest is there for another hasher */
		} else {
			if (!(p->full_head = b->next))
				p->full_tail = NULL;
			if (b->file)
				p->uncut -= b->len;
		}
		pthread_mutex_unlock(&p->lock);
		if (drop) {
			give_back(p, b);
			continue;
		}
		if (want) /* the file stays open: the range taken holds a reference */
			(void)posix_fadvise(fd, (off_t)ask, (off_t)want, POSIX_FADV_WILLNEED);
		return mine;
	}
}

/* Page-aligned memory for buffers read into and hashed: C11's aligned_alloc wants the size
 * a multiple of the alignment, which a chunk plus one 512-byte block is not. */
static void *page_alloc(size_t bytes)
{
	return aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}

static void *hasher(void *arg)
{
	struct pipe *p = ((struct hasher_arg *)arg)->p;
	int writer = ((struct hasher_arg *)arg)->writer;
	const struct scan_config *cfg = p->cfg;
	struct hstate hs;
	uint8_t *fps[GEN_SCAN_MAX_SIZES] = {0}, *chunk = page_alloc(p->chunk + p->maxbs);
	size_t counts[GEN_SCAN_MAX_SIZES];
	struct dd_err why;
	bool ok = hstate_init(cfg, &hs, p->maxbs) && chunk;

	for (int i = 0; i < cfg->nsizes && ok; i++)
		ok = (fps[i] = malloc(p->cap / cfg->sizes[i].block_size * fp_len(hs.fc))) != NULL;
	if (!ok) {
		pipe_fail(p, "cannot set up a hashing thread (%s)", hs.fc ? "out of memory" : "OpenSSL digest");
		goto out;
	}
	for (;;) {
		struct buf piece, *b;
		bool cut;
		if (!(b = take_work(p, &piece, &cut)))
			break;
		int h = 0;
		if (b->file) {
			memset(counts, 0, sizeof counts);
			h = hash_range(p, &hs, b, fps, counts, chunk, &why);
			if (h == 0)
				h = range_end(p, &hs, b, fps[0], counts[0], &why);
			hs.cur.done = 0; /* a range left out leaves no chunk under way */
			hs.cur.h = 0;
		} else if (b->batch) {
			read_batch(p, &hs, b); /* counted as it is hashed: below, nothing is left to count */
			for (int i = 0; i < cfg->nsizes && !h && !pipe_failed(p); i++)
				h = hash_batch(p, &hs, writer, b, i, fps[i], &why);
		} else {
			for (int i = 0; i < cfg->nsizes && !h; i++)
				if ((counts[i] = hash_packed(p, &hs, b, i, fps[i], &why)) == (size_t)-1)
					h = -1;
		}
		if (h < 0)
			pipe_fail(p, "%s", why.msg);
		for (int i = 0; i < cfg->nsizes && h == 0 && !b->batch && !pipe_failed(p); i++) {
			if (count_run(p, &hs, writer, i, fps[i], counts[i], b->pos[i], &why)) {
				pipe_fail(p, "%s", why.msg);
				break;
			}
		}
		if (h == 1) /* The range is left out whole (nothing of it was counted) */
			range_bad(p, b->file, why.msg, b->len);
		if (cut) /* a range cut from a whole file's: its buffer is still queued */
			file_unref(p, b->file);
		else
			give_back(p, b);
	}
out:
	hstate_flush(p, &hs, ok && !pipe_failed(p));
	pthread_mutex_lock(&p->lock);
	p->ended++;
	pthread_cond_signal(&p->cv_ended);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < cfg->nsizes; i++)
		free(fps[i]);
	free(chunk);
	compmodel_codecs_free(hs.codec);
	fp_free(hs.fc);
	batch_reader_free(hs.br);
	free(hs.items);
	return NULL;
}

static void submit(struct pipe *p, struct buf *b)
{
	pthread_mutex_lock(&p->lock);
	b->next = NULL;
	if (p->full_tail)
		p->full_tail->next = b;
	else
		p->full_head = b;
	p->full_tail = b;
	pthread_cond_signal(&p->cv_full);
	pthread_mutex_unlock(&p->lock);
}

static int add_seg(struct buf *b, size_t off, size_t len)
{
	if (b->nsegs == b->segcap) {
		size_t nc = b->segcap ? 2 * b->segcap : 64;
		struct seg *s = realloc(b->segs, nc * sizeof *s);
		if (!s)
			return -1;
		b->segs = s;
		b->segcap = nc;
	}
	b->segs[b->nsegs++] = (struct seg){off, len};
	return 0;
}

static void record_error(struct scan_stats *st, const char *path, const char *what, int err)
{
	st->errors++;
	if (st->nfirst < SCAN_FIRST_ERRORS) {
		size_t len = strlen(path) + strlen(what) + 128;
		char *m = malloc(len);
		if (m) {
			snprintf(m, len, "%s: %s%s%s", path, what, *what ? ": " : "", strerror(err));
			st->first_errors[st->nfirst++] = m;
		}
	}
}

struct reader {
	struct pipe *p;
	struct buf *cur;
	const struct scan_config *cfg;
	struct scan_stats *st;
	uint64_t total;
	double t0, last_progress;
	uint64_t next[GEN_SCAN_MAX_SIZES]; /* the next stream position per size */
};

/* The stream positions of len more bytes: the item's first block gets next[] (when it is the
 * item's first piece), then next[] moves past its blocks and the locality level follows. */
static void assign_positions(struct reader *r, struct buf *b, bool first_piece, uint64_t len)
{
	const struct scan_config *cfg = r->cfg;
	for (int i = 0; i < cfg->nsizes; i++) {
		if (first_piece)
			b->pos[i] = r->next[i];
		r->next[i] += blocks_of(cfg, len, cfg->sizes[i].block_size);
		if (cfg->sizes[i].loc)
			loc_recorder_advance(cfg->sizes[i].loc, r->next[i]);
	}
}

/* The progress line, once a second, of the bytes the hashers have taken (p->lock held: it is
 * let go while the line is written). */
static void progress_locked(struct reader *r)
{
	if (!r->cfg->progress)
		return;
	double t = now_s();
	if (t - r->last_progress < 1.0)
		return;
	r->last_progress = t;
	struct scan_progress pr = {r->st->bytes - r->p->uncut, r->total, t - r->t0};
	pthread_mutex_unlock(&r->p->lock);
	r->cfg->progress(&pr, r->cfg->progress_arg);
	pthread_mutex_lock(&r->p->lock);
}

static void maybe_progress(struct reader *r)
{
	if (!r->cfg->progress || now_s() - r->last_progress < 1.0)
		return;
	pthread_mutex_lock(&r->p->lock);
	progress_locked(r);
	pthread_mutex_unlock(&r->p->lock);
}

/* The walking thread waits on cv (p->lock held) no longer than until its next progress line is
 * due, and writes that line when it is: while the hashers cut a large file's ranges, nothing else
 * wakes this thread. */
static void reader_wait(struct reader *r, pthread_cond_t *cv)
{
	if (!r->cfg->progress) {
		pthread_cond_wait(cv, &r->p->lock);
		return;
	}
	double due = r->last_progress + 1.0;
	struct timespec ts = {(time_t)due, (long)((due - (double)(time_t)due) * 1e9)};
	if (pthread_cond_timedwait(cv, &r->p->lock, &ts) == ETIMEDOUT)
		progress_locked(r);
}

/* A buffer to fill, waiting for a hasher to return one; NULL when the pipe failed. */
static struct buf *get_free(struct reader *r)
{
	struct pipe *p = r->p;
	pthread_mutex_lock(&p->lock);
	while (!p->free_list && !p->failed)
		reader_wait(r, &p->cv_free);
	struct buf *b = p->failed ? NULL : p->free_list;
	if (b) {
		p->free_list = b->next;
		b->next = NULL;
		b->used = 0;
		b->nsegs = 0;
		b->batch = false;
		b->nfiles = 0;
		b->names_used = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return b;
}

static bool stopped(const struct reader *r)
{
	return scan_stopped(r->cfg);
}

static int post_ranges(struct reader *r, int fd, const char *path, uint64_t from, uint64_t to, off_t *done);

/* A small regular file joins the current batch (a new one when it would not fit): its stream
 * positions are reserved from the size the walk saw, and a hasher reads it. Returns 0, or -1
 * when the pipe failed or the scan was interrupted. */
static int batch_file(struct reader *r, const struct walk_entry *e)
{
	struct pipe *p = r->p;
	const struct scan_config *cfg = r->cfg;
	size_t padded = (size_t)((e->size + p->maxbs - 1) / p->maxbs * p->maxbs), len = strlen(e->path) + 1;
	struct buf *b = r->cur;
	if (b && (!b->batch || b->used + padded > p->cap || b->nfiles == BATCH_MAX_FILES)) {
		submit(p, b);
		b = r->cur = NULL;
	}
	if (!b) {
		if (!(b = r->cur = get_free(r)))
			return -1;
		b->batch = true;
	}
	if (array_reserve((void **)&b->files, &b->filecap, b->nfiles + 1, sizeof *b->files, 64) ||
	    array_reserve((void **)&b->names, &b->names_cap, b->names_used + len, 1, 64)) {
		pipe_fail(p, "out of memory");
		return -1;
	}
	struct batch_file *f = &b->files[b->nfiles++];
	*f = (struct batch_file){.name = b->names_used, .size = e->size, .off = b->used};
	memcpy(b->names + b->names_used, e->path, len);
	b->names_used += len;
	assign_positions(r, b, b->nfiles == 1, e->size);
	for (int i = 0; i < cfg->nsizes; i++)
		f->pos[i] = r->next[i] - blocks_of(cfg, e->size, cfg->sizes[i].block_size);
	b->used += padded;
	r->st->bytes += e->size;
	if (b->used == p->cap) {
		submit(p, b);
		r->cur = NULL;
	}
	maybe_progress(r);
	return stopped(r) || pipe_failed(p) ? -1 : 0;
}

/* A file the walk listed that cannot be opened keeps its place in the stream, as its blocks never
 * seen: so does a small one, whose positions are given out before a hasher opens it, and one
 * that the scan counted ahead (dedisgen-mpi's parts) - a large one used to take none, and the
 * positions after it depended on its size. */
static void keep_place(struct reader *r, const struct walk_entry *e)
{
	const struct scan_config *cfg = r->cfg;
	if (e->kind != WALK_FILE || e->start || e->len || !e->size)
		return;
	if (r->cur && r->cur->used) { /* a buffer's pieces are consecutive in the stream */
		submit(r->p, r->cur);
		r->cur = NULL;
	}
	for (int i = 0; i < cfg->nsizes; i++) {
		r->next[i] += blocks_of(cfg, e->size, cfg->sizes[i].block_size);
		if (cfg->sizes[i].loc)
			loc_recorder_advance(cfg->sizes[i].loc, r->next[i]);
	}
}

/* Reads fd from offset `at` (where it stands) to `end` or its end into the packed buffers. 0, 1
 * when a read failed (recorded as an error), -1 when the pipe failed or the scan was interrupted. */
static int stream_entry(struct reader *r, int fd, const char *path, uint64_t at, uint64_t end)
{
	struct pipe *p = r->p;
	bool eof = false;
	int rc = 0;
	size_t most = SIZE_MAX;        /* sysctl files refuse a large read with ENOMEM: then a page */
	while (!eof && at < end) {
		if (!r->cur && !(r->cur = get_free(r))) {
			rc = -1;
			break;
		}
		struct buf *b = r->cur;
		size_t space = p->cap - b->used, got = 0;
		if (end - at < space)
			space = (size_t)(end - at);
		while (got < space) {
			size_t want = space - got < most ? space - got : most;
			ssize_t n = read(fd, b->data + b->used + got, want);
			if (n < 0 && errno == EINTR) {
				if (stopped(r))
					break;
				continue;
			}
			if (n < 0 && errno == ENOMEM && want > PAGE_READ) {
				most = PAGE_READ;
				continue;
			}
			if (n < 0) {
				/* What was read of it so far stays counted: one record of the error. */
				char what[64];
				snprintf(what, sizeof what, "read error at offset %llu", (unsigned long long)(at + got));
				record_error(r->st, path, what, errno);
				rc = 1;
				eof = true;
				break;
			}
			if (n == 0) {
				eof = true;
				break;
			}
			got += (size_t)n;
		}
		if (got) {
			size_t padded = (got + p->maxbs - 1) / p->maxbs * p->maxbs;
			if (add_seg(b, b->used, got)) {
				pipe_fail(p, "out of memory");
				rc = -1;
				break;
			}
			assign_positions(r, b, b->nsegs == 1, got);
			memset(b->data + b->used + got, 0, padded - got);
			b->used += padded;
			r->st->bytes += got;
			at += got;
		}
		if (b->used == p->cap) {
			submit(p, b);
			r->cur = NULL;
		}
		maybe_progress(r);
		if (stopped(r) || pipe_failed(p)) {
			rc = -1;
			break;
		}
	}
	return rc;
}

/* Reads one file or device (or the part of it the entry names) to its end into the buffers.
 * Returns 0, 1 when it could not be read (recorded as an error), -1 when the pipe failed or the
 * scan was interrupted. */
static int read_entry(struct reader *r, const struct walk_entry *e)
{
	struct pipe *p = r->p;
	const char *path = e->path;
	uint64_t end = e->len ? e->start + e->len : UINT64_MAX;
	if (e->kind == WALK_FILE && !e->start && !e->len && e->size && e->size < RANGE_MIN)
		return batch_file(r, e);
	/* the batch in the making goes first: an item's blocks are consecutive in the stream */
	if (r->cur && r->cur->batch) {
		submit(p, r->cur);
		r->cur = NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NOCTTY);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		record_error(r->st, path, "cannot open", errno);
		keep_place(r, e);
		return 1;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	int rc = 0;
	off_t start = (off_t)e->start;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= RANGE_MIN) {
		uint64_t to = (uint64_t)st.st_size < end ? (uint64_t)st.st_size : end;
		/* the packed buffer goes first: an item's blocks are consecutive in the stream */
		if (r->cur && r->cur->used) {
			submit(p, r->cur);
			r->cur = NULL;
		}
		if ((rc = post_ranges(r, fd, path, e->start, to, &start)) != 0 || (uint64_t)start >= end) {
			close(fd);
			return rc;
		}
	}
	if (start && lseek(fd, start, SEEK_SET) != start) {
		record_error(r->st, path, "cannot seek", errno);
		close(fd);
		return 1;
	}
	rc = stream_entry(r, fd, path, (uint64_t)start, end);
	close(fd);
	return rc;
}

/* Hands [from, size) of a large regular file to the hashers as one range, which they cut into
 * ranges of the buffer size (take_work), asking the kernel to read ahead of them (so a file not in
 * the page cache streams while they work). Posting each range from here, this thread had to be
 * scheduled for every 4 MiB: with every core hashing, each time by preempting a hasher.
 * Sets *done to the offset reached; the caller read()s on from there (a file that grew). */
static int post_ranges(struct reader *r, int fd, const char *path, uint64_t from, uint64_t size, off_t *done)
{
	struct pipe *p = r->p;
	uint64_t off = from;
	int rc = 0;
	struct shared_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path)) || (f->fd = dup(fd)) < 0) {
		if (f)
			free(f->path);
		free(f);
		pipe_fail(p, "cannot share %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	f->refs = 1; /* ours, until the range is posted */
	if (p->cfg->read_method != SCAN_READ_PREAD)
		map_file_probe(f->fd, &f->map);
	struct buf *b = off < size ? get_free(r) : NULL;
	if (b) {
		pthread_mutex_lock(&p->lock);
		f->refs++;
		p->uncut += size - off;
		pthread_mutex_unlock(&p->lock);
		b->file = f;
		b->start = b->off = off;
		b->len = size - off;
		assign_positions(r, b, true, b->len);
		r->st->bytes += b->len;
		submit(p, b);
		off = size;
		maybe_progress(r);
	}
	if ((off < size && !b) || stopped(r) || pipe_failed(p))
		rc = -1;
	file_unref(p, f);
	*done = (off_t)off;
	return rc;
}

static int setup(struct pipe *p, const struct scan_config *cfg, int nbufs, struct buf **all)
{
	for (int i = 0; i < nbufs; i++) {
		struct buf *b = calloc(1, sizeof *b);
		if (!b)
			return -1;
		all[i] = b;
		if (!(b->data = page_alloc(p->cap)))
			return -1;
		b->next = p->free_list;
		p->free_list = b;
	}
	return 0;
}

/* One entry of the walk read, or recorded as unreadable and skipped. -1 ends the walk: a read
 * failed, or descriptors or memory ran out (the walk's failure, not an entry to skip: the tree
 * left out, it said "no data", exit 2). */
static int take_entry(struct reader *r, const struct walk_entry *e)
{
	if (e->kind == WALK_ERROR && errmsg_resource(e->err)) {
		pipe_fail(r->p, "%s: %s", e->path, strerror(e->err));
		return -1;
	}
	if (e->kind == WALK_ERROR) {
		record_error(r->st, e->path, "", e->err);
		return 0;
	}
	int got = read_entry(r, e);
	if (got == 0)
		r->st->files++;
	return got < 0 ? -1 : 0;
}

/* The pipe's sizes (its buffers hold 4 of the largest blocks), its lock and conditions;
 * reader_wait's deadlines are now_s()'s (monotonic). */
static void pipe_init(struct pipe *p, int nbufs)
{
	for (int i = 0; i < p->cfg->nsizes; i++)
		if (p->cfg->sizes[i].block_size > p->maxbs)
			p->maxbs = p->cfg->sizes[i].block_size;
	p->cap = 4 * p->maxbs > MIN_BUF ? 4 * p->maxbs : MIN_BUF;
	p->chunk = p->maxbs > CHUNK ? p->maxbs : CHUNK;
	p->ahead = (uint64_t)nbufs * p->cap; /* as far as the walking thread used to post ranges ahead */
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t monotonic;
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv_full, NULL);
	pthread_cond_init(&p->cv_free, &monotonic);
	pthread_cond_init(&p->cv_ended, &monotonic);
	pthread_condattr_destroy(&monotonic);
}

static void pipe_free(struct pipe *p, struct buf **all, int nbufs)
{
	for (int i = 0; i < nbufs; i++) {
		if (all[i]) {
			if (all[i]->file)
				file_unref(p, all[i]->file);
			free(all[i]->data);
			free(all[i]->segs);
			free(all[i]->files);
			free(all[i]->names);
			free(all[i]);
		}
	}
	free(p->blocks);
	pthread_cond_destroy(&p->cv_full);
	pthread_cond_destroy(&p->cv_free);
	pthread_cond_destroy(&p->cv_ended);
	pthread_mutex_destroy(&p->lock);
}

/* The reading thread's part: every entry of the walk into the buffers, the last one handed over,
 * until the end, a failure (the pipe's) or a stop. */
static void walk_entries(struct reader *r)
{
	const struct scan_config *cfg = r->cfg;
	struct pipe *p = r->p;
	struct walk_entry e;
	int w = 0;
	while (!pipe_failed(p) && (w = walk_next(cfg->walk, &e)) == 1) {
		if (stopped(r))
			break;
		if (take_entry(r, &e))
			break;
		if (cfg->strict && r->st->errors) {
			pipe_fail(p, "%s (--strict)", r->st->first_errors[0] ? r->st->first_errors[0] : "unreadable entry");
			break;
		}
	}
	if (!pipe_failed(p) && !stopped(r) && w < 0)
		pipe_fail(p, "walking the paths failed: %s", strerror(errno ? errno : ENOMEM));
	if (r->cur && (r->cur->used || r->cur->nfiles) && !pipe_failed(p) && !stopped(r)) {
		submit(p, r->cur);
		r->cur = NULL;
	}
}

/* The hashers' share of the figures, once they are joined: their unreadable entries (the first
 * kept), what was posted but not read, how the reads went. */
static void pipe_stats(struct pipe *p, struct scan_stats *st)
{
	for (size_t i = 0; i < p->nbad; i++) {
		st->errors++;
		if (st->nfirst < SCAN_FIRST_ERRORS)
			st->first_errors[st->nfirst++] = p->bad[i];
		else
			free(p->bad[i]);
	}
	free(p->bad);
	st->files -= p->unread_files;
	st->bytes -= p->unread_bytes;
	st->batches_uring = p->batches_uring;
	st->batches_sync = p->batches_sync;
	st->small_file_fallbacks = p->small_file_fallbacks;
	st->ranges_mapped = p->ranges_mapped;
	st->ranges_read = p->ranges_read;
	st->range = p->cap;
}

int scan_run(const struct scan_config *cfg, struct scan_stats *st)
{
	struct pipe p = {.cfg = cfg};
	struct reader r = {.p = &p, .cfg = cfg, .st = st};
	int nbufs = cfg->threads * 2 + 2, started = 0, rc = 0;
	if (nbufs > 64)
		nbufs = 64;
	struct buf *all[64] = {0};
	pthread_t tids[1024];
	struct hasher_arg args[1024];
	int nthreads = cfg->threads < 1024 ? cfg->threads : 1024;
	bool complete;

	memset(st, 0, sizeof *st);
	if (cfg->nsizes > GEN_SCAN_MAX_SIZES) {
		snprintf(st->failure, sizeof st->failure, "at most %d block sizes", GEN_SCAN_MAX_SIZES);
		return -1;
	}
	r.t0 = r.last_progress = now_s();
	for (int i = 0; i < cfg->nsizes; i++)
		r.next[i] = cfg->sizes[i].first_pos;
	r.total = walk_known_total(cfg->walk, &complete);
	if (!complete)
		r.total = 0;
	pipe_init(&p, nbufs);
	if (!(p.blocks = calloc((size_t)cfg->nsizes, sizeof *p.blocks)) || setup(&p, cfg, nbufs, all)) {
		snprintf(st->failure, sizeof st->failure, "out of memory for the read buffers");
		rc = -1;
		goto out;
	}
	for (int i = 0; i < cfg->nsizes; i++)
		if (counter_set_writers(cfg->sizes[i].counter, nthreads)) {
			snprintf(st->failure, sizeof st->failure, "out of memory for the hashing threads' indexes");
			rc = -1;
			goto out;
		}
	for (; started < nthreads; started++) {
		args[started] = (struct hasher_arg){&p, started};
		int err = pthread_create(&tids[started], NULL, hasher, &args[started]); /* returns it, errno untouched */
		if (err) {
			pipe_fail(&p, "cannot start hashing threads: %s", strerror(err));
			break;
		}
	}

	walk_entries(&r);
	pthread_mutex_lock(&p.lock);
	p.done = true;
	pthread_cond_broadcast(&p.cv_full);
	while (p.ended < started) /* the progress line goes on while they hash what is queued */
		reader_wait(&r, &p.cv_ended);
	pthread_mutex_unlock(&p.lock);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (stopped(&r)) {
		st->interrupted = true;
		snprintf(st->failure, sizeof st->failure, "interrupted");
		rc = -1;
	} else if (p.failed) {
		snprintf(st->failure, sizeof st->failure, "%s", p.failure);
		rc = -1;
	}
	pipe_stats(&p, st);
	if (p.nbad && cfg->strict && !rc) {
		snprintf(st->failure, sizeof st->failure, "%s (--strict)", st->first_errors[0]);
		rc = -1;
	}
	for (int i = 0; i < cfg->nsizes; i++) {
		cfg->sizes[i].blocks = p.blocks[i];
		cfg->sizes[i].stream_end = r.next[i];
	}
	if (cfg->progress && !rc) {
		struct scan_progress pr = {st->bytes, r.total, now_s() - r.t0};
		cfg->progress(&pr, cfg->progress_arg);
	}
out:
	st->seconds = now_s() - r.t0;
	pipe_free(&p, all, nbufs);
	return rc;
}

void scan_stats_free(struct scan_stats *st)
{
	for (int i = 0; i < st->nfirst; i++)
		free(st->first_errors[i]);
	st->nfirst = 0;
}
