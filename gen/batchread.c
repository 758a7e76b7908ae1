/* batchread.c - a hashing thread's reads of a batch of small files: with io_uring, up to 64 files
 * in flight, each an open -> read -> close chain on a direct descriptor; else system calls. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen/batchread.h"

/* Files in flight per thread. Each costs at most three submission entries at once (its chain),
 * so the ring's 256 never run short; on a tree in the page cache the gain is the system calls
 * saved (three per file in one io_uring_enter), on one that is not it is the reads in flight. */
#define IN_FLIGHT 64
#define RING_ENTRIES 256
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY)
#define DIRECT_FLAGS (O_RDONLY | O_NOCTTY) /* a direct descriptor is no fd: O_CLOEXEC is EINVAL */

enum op { OP_OPEN, OP_READ, OP_CLOSE, OP_NONE };

/* A direct-descriptor slot and the file it is reading. A chain breaks at its first failure or
 * short read (the rest complete as cancelled); what follows is decided once every request of the
 * chain has completed. */
struct slot {
	struct batch_item *it;
	int pending;     /* requests of the chain not completed yet */
	bool noatime;    /* this open asked for O_NOATIME */
	bool retry;      /* O_NOATIME refused (EPERM: not the owner): open again without it */
	bool failed;     /* this chain's open failed: what followed it was cancelled */
	bool opened;     /* the slot holds the file */
	bool closed;     /* its close completed */
	bool more;       /* a short read, not at the end: read on */
	bool sync_read;  /* the kernel could not run its open or read (-ECANCELED: no io-wq worker, as
			  * under a pids limit; -EAGAIN, -EINTR): read the file the plain way instead */
	bool fake_cancel; /* test seam: the rest of this chain reports -ECANCELED, as after a break */
};

struct batch_reader {
	struct io_uring ring;
	struct slot slots[IN_FLIGHT];
	int free_slots[IN_FLIGHT];
	int nfree;
	bool broken;     /* the ring failed once: everything is read with system calls from then on */
	unsigned long queued_total, reaped_total; /* requests queued and completions consumed, ever */
	unsigned cancel_every, fail_after; /* test seam (batch_reader_inject) */
	int cancel_errno;
	unsigned long completions, waits;
};

struct batch_reader *batch_reader_new(void)
{
	struct batch_reader *br = calloc(1, sizeof *br);
	if (!br)
		return NULL;
	if (io_uring_queue_init(RING_ENTRIES, &br->ring, 0) < 0) {
		free(br);
		return NULL;
	}
	if (io_uring_register_files_sparse(&br->ring, IN_FLIGHT) < 0) { /* kernels before 5.19 */
		io_uring_queue_exit(&br->ring);
		free(br);
		return NULL;
	}
	return br;
}

void batch_reader_free(struct batch_reader *br)
{
	if (!br)
		return;
	io_uring_queue_exit(&br->ring); /* closes any direct descriptor still held */
	free(br);
}

static void read_one_sync(struct batch_item *it)
{
	it->got = 0;
	it->err = 0;
	int fd = open(it->path, OPEN_FLAGS | O_NOATIME);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership */
		fd = open(it->path, OPEN_FLAGS);
	if (fd < 0) {
		it->err = errno;
		it->what = "cannot open";
		return;
	}
	while (it->got < it->size) {
		ssize_t n = read(fd, it->buf + it->got, it->size - it->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			it->err = errno;
			it->what = "read error";
			break;
		}
		if (n == 0)
			break;
		it->got += (size_t)n;
	}
	close(fd);
}

void batch_read_sync(struct batch_item *items, size_t n)
{
	for (size_t j = 0; j < n; j++)
		read_one_sync(&items[j]);
}

/* Items given to the ring that it will not read: read with system calls, and say so. */
static void read_plain(struct batch_item *items, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		read_one_sync(&items[j]);
		items[j].plain = true;
	}
}

/* A prepared request of slot k's chain, tagged and (link) linked to the next: flags and tag are set
 * after the io_uring_prep_* call, which clears them. */
static void queued(struct batch_reader *br, struct io_uring_sqe *sqe, int k, enum op op, unsigned flags)
{
	io_uring_sqe_set_data64(sqe, (uint64_t)k << 2 | op);
	sqe->flags |= (uint8_t)flags;
	br->slots[k].pending++;
	br->queued_total++;
}

/* The slot's next chain: open (unless it holds the file), read what is left (unless the file is
 * empty or done), close. Every chain ends with the close, so a slot is never left holding a file. */
static void submit_chain(struct batch_reader *br, int k)
{
	struct slot *s = &br->slots[k];
	struct batch_item *it = s->it;
	bool read = it->got < it->size && !it->err && !s->sync_read && (!s->opened || s->more);
	struct io_uring_sqe *sqe;
	/* Each slot has one chain queued or in flight at a time, so at most 192 of the ring's 256
	 * entries are ever in use; should the kernel have left some unsubmitted, submit them first.
	 * Still no room is a broken ring: nothing of this chain is queued, the caller reads the
	 * slot's file the plain way. */
	if (io_uring_sq_space_left(&br->ring) < 3)
		(void)io_uring_submit(&br->ring);
	if (io_uring_sq_space_left(&br->ring) < 3) {
		br->broken = true;
		return;
	}
	s->more = s->retry = s->closed = s->failed = s->fake_cancel = false;
	if (!s->opened) {
		sqe = io_uring_get_sqe(&br->ring);
		io_uring_prep_openat_direct(sqe, AT_FDCWD, it->path, DIRECT_FLAGS | (s->noatime ? O_NOATIME : 0), 0,
					    (unsigned)k);
		queued(br, sqe, k, OP_OPEN, IOSQE_IO_LINK);
	}
	if (read) {
		sqe = io_uring_get_sqe(&br->ring);
		io_uring_prep_read(sqe, k, it->buf + it->got, (unsigned)(it->size - it->got), it->got);
		queued(br, sqe, k, OP_READ, IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	}
	sqe = io_uring_get_sqe(&br->ring);
	io_uring_prep_close_direct(sqe, (unsigned)k);
	queued(br, sqe, k, OP_CLOSE, 0);
}

/* A result that says the kernel did not run the request (rather than that the file failed). */
static bool not_run(int res)
{
	return res == -ECANCELED || res == -EAGAIN || res == -EINTR;
}

/* One completion; true when it finished its slot's file (the slot is free again). */
static bool complete(struct batch_reader *br, int k, enum op op, int res)
{
	struct slot *s = &br->slots[k];
	struct batch_item *it = s->it;
	switch (s->failed ? OP_NONE : op) {
	case OP_OPEN:
		if (res >= 0) {
			s->opened = true;
			break;
		}
		s->failed = true;
		if (res == -EPERM && s->noatime) {
			s->retry = true;
		} else if (not_run(res)) {
			s->sync_read = true;
		} else {
			it->err = -res;
			it->what = "cannot open";
		}
		break;
	case OP_READ:
		if (res > 0) {
			it->got += (size_t)res;
			s->more = it->got < it->size;
		} else if (not_run(res)) { /* its own cancellation: a broken link cancels nothing before it */
			s->sync_read = true;
		} else if (res < 0) {
			it->err = -res;
			it->what = "read error";
		}
		break; /* 0: the end of the file */
	case OP_CLOSE:
		if (res != -ECANCELED) { /* a failed close still releases the slot */
			s->opened = false;
			s->closed = true;
		}
		break;
	case OP_NONE:
		break;
	}
	if (--s->pending)
		return false;
	if (s->retry && !s->opened) {
		s->noatime = false;
		submit_chain(br, k);
		return false;
	}
	if (s->opened) { /* the chain broke before its close: read on if a read fell short, then close */
		submit_chain(br, k);
		return false;
	}
	if (s->sync_read)
		read_plain(it, 1);
	s->it = NULL;
	br->free_slots[br->nfree++] = k;
	return true;
}

/* Test seam: every cancel_every-th open or read reports -cancel_errno, and what follows it in its
 * chain -ECANCELED, as the kernel reports a request no worker could run and the links it broke. */
static int injected(struct batch_reader *br, int k, enum op op, int res)
{
	struct slot *s = &br->slots[k];
	if (s->fake_cancel)
		return -ECANCELED;
	if ((op == OP_OPEN || op == OP_READ) && ++br->completions % br->cancel_every == 0) {
		s->fake_cancel = true;
		return -br->cancel_errno;
	}
	return res;
}

static void reap(struct batch_reader *br, size_t *active)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	io_uring_for_each_cqe(&br->ring, head, cqe) {
		uint64_t d = io_uring_cqe_get_data64(cqe);
		int k = (int)(d >> 2), res = cqe->res;
		enum op op = (enum op)(d & 3);
		if (br->cancel_every)
			res = injected(br, k, op, res);
		*active -= complete(br, k, op, res);
		seen++;
	}
	io_uring_cq_advance(&br->ring, seen);
	br->reaped_total += seen;
}

/* The ring refused to submit or wait: let what the kernel holds finish (its reads write into the
 * items' buffers; requests still queued on our side never left), then read the files it had not
 * finished, and those not started, the plain way. */
static int fail(struct batch_reader *br, struct batch_item *rest, size_t nrest)
{
	br->broken = true; /* entries still queued on our side point into this batch's buffers */
	long outstanding = -(long)io_uring_sq_ready(&br->ring);
	for (int k = 0; k < IN_FLIGHT; k++)
		outstanding += br->slots[k].it ? br->slots[k].pending : 0;
	while (outstanding > 0) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_wait_cqe(&br->ring, &cqe);
		if (rc == -EINTR)
			continue;
		if (rc < 0) /* requests may still write into our buffers, and there is no way to wait for them */
			abort();
		io_uring_cqe_seen(&br->ring, cqe);
		br->reaped_total++;
		outstanding--;
	}
	for (int k = 0; k < IN_FLIGHT; k++) {
		if (br->slots[k].it)
			read_plain(br->slots[k].it, 1);
		br->slots[k].it = NULL;
	}
	read_plain(rest, nrest);
	return -1;
}

int batch_reader_read(struct batch_reader *br, struct batch_item *items, size_t n)
{
	size_t next = 0, active = 0;
	if (br->broken) {
		read_plain(items, n);
		return -1;
	}
	br->nfree = 0;
	for (int k = IN_FLIGHT - 1; k >= 0; k--)
		br->free_slots[br->nfree++] = k;
	while (next < n || active) {
		while (br->nfree && next < n) {
			int k = br->free_slots[--br->nfree];
			struct batch_item *it = &items[next++];
			it->got = 0;
			it->err = 0;
			it->plain = false;
			br->slots[k] = (struct slot){.it = it, .noatime = true};
			submit_chain(br, k);
			active++;
		}
		if (br->broken)
			return fail(br, items + next, n - next);
		int rc = io_uring_submit_and_wait(&br->ring, 1);
		if (br->fail_after && ++br->waits == br->fail_after)
			rc = -ENOMEM; /* test seam: what it submitted is in the kernel all the same */
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
			return fail(br, items + next, n - next);
		reap(br, &active);
		if (br->broken)
			return fail(br, items + next, n - next);
	}
	return 0;
}

void batch_reader_inject(struct batch_reader *br, unsigned cancel_every, int cancel_errno, unsigned fail_after)
{
	br->cancel_every = cancel_every;
	br->cancel_errno = cancel_errno;
	br->fail_after = fail_after;
	br->completions = br->waits = 0;
}

unsigned long batch_reader_unreaped(struct batch_reader *br)
{
	return br->queued_total - br->reaped_total - io_uring_sq_ready(&br->ring);
}
