/* io_uring.c - the io_uring engine: up to iodepth requests in flight on an O_DIRECT descriptor
 * through one ring per worker, with a registered file and buffers, optional SQPOLL and IOPOLL. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/opttable.h"
#include "bench/ioengine/ioengine.h"

/* Submission policy. The worker calls commit() after every request it prepares. Submitting there
 * (one io_uring_enter per request, as the libaio engine does with io_submit) keeps the device
 * fed but costs a system call each; deferring to getevents() puts everything prepared since the
 * last call into the same io_uring_enter that waits for completions: one system call per batch.
 * Which wins depends on who is waiting for whom, and the ring tells us: when getevents() finds
 * completions already there (or pending as task work), the device got ahead of us and the CPU is
 * the limit, so the next requests are batched; when it finds none, the device is the limit, the
 * CPU has time to spare, and each request goes in at once so the device never waits for a
 * batch to be filled. See doc/notes/dedisbench.md for the measurements. */
struct uring_state {
	struct io_uring ring;
	bool ring_up;
	bool fixed_bufs;             /* the slots' buffers are registered: READ_FIXED / WRITE_FIXED */
	bool eager;                  /* submit in commit() (device-bound) rather than in getevents() */
	unsigned unsubmitted;        /* prepared SQEs the kernel has not been told of */
	struct io_uring_cqe **cqes;  /* depth */
	struct io_unit **done;       /* what the last getevents reaped, depth */
	/* Requests to one offset run one after the other, in the order queued (see order_or_hold):
	 * an open-addressing table offset -> the last slot queued there, and per slot the one
	 * queued after it. */
	struct io_unit **last_at;
	size_t mask;
	struct io_unit **behind;     /* depth, by slot index */
};

/* The engine's own options (its rows below): where io_ctx.opts points. */
struct uring_opts {
	bool sqpoll; /* a kernel thread polls the submission queue */
	bool hipri;  /* completions are polled, not interrupt-driven */
};

static const struct opt_row uring_rows[] = {
	{"sqpoll", 0, NULL, OT_FLAG, offsetof(struct uring_opts, sqpoll), NULL, NULL, 0, 0, 0, 0, "I/O",
	 "io_uring: a kernel thread per worker polls for submissions (no system call to submit; "
	 "costs a CPU)", 0, NULL},
	{"hipri", 0, NULL, OT_FLAG, offsetof(struct uring_opts, hipri), NULL, NULL, 0, 0, 0, 0, "I/O",
	 "io_uring: poll for completions instead of waiting for interrupts (a device with poll "
	 "queues, such as NVMe with nvme.poll_queues)", 0, NULL},
};

static const struct uring_opts no_opts;

static const struct uring_opts *opts_of(const struct io_ctx *c)
{
	return c->opts ? c->opts : &no_opts;
}

static int ring_init(const struct io_ctx *c, struct io_uring *ring, unsigned extra)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	p.flags = extra;
	if (opts_of(c)->hipri)
		p.flags |= IORING_SETUP_IOPOLL;
	if (opts_of(c)->sqpoll)
		p.flags |= IORING_SETUP_SQPOLL;
	return io_uring_queue_init_params(c->depth, ring, &p);
}

/* Only this process submits, and completions may wait for its next system call instead of
 * interrupting it (Linux 6.0+); an older kernel gets a plain ring. */
static int ring_init_fast(const struct io_ctx *c, struct io_uring *ring)
{
	if (!opts_of(c)->sqpoll) {
		int rc = ring_init(c, ring, IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
						    IORING_SETUP_SINGLE_ISSUER);
		if (rc != -EINVAL)
			return rc;
	}
	return ring_init(c, ring, 0);
}

static int uring_open(struct io_ctx *c)
{
	struct uring_state *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	c->priv = s;
	s->eager = true;
	s->cqes = calloc(c->depth, sizeof *s->cqes);
	s->done = calloc(c->depth, sizeof *s->done);
	s->behind = calloc(c->depth, sizeof *s->behind);
	size_t buckets = 4;
	while (buckets < 2 * (size_t)c->depth)
		buckets *= 2;
	s->mask = buckets - 1;
	s->last_at = calloc(buckets, sizeof *s->last_at);
	if (!s->cqes || !s->done || !s->behind || !s->last_at)
		return -ENOMEM;
	c->fd = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT | c->open_flags);
	if (c->fd < 0)
		return -errno;
	int rc = ring_init_fast(c, &s->ring);
	if (rc < 0)
		return rc;
	s->ring_up = true;
	rc = io_uring_register_files(&s->ring, &c->fd, 1);
	if (rc < 0)
		return rc;
	if (c->slots) {
		struct iovec *iov = calloc(c->depth, sizeof *iov);
		if (!iov)
			return -ENOMEM;
		for (unsigned i = 0; i < c->depth; i++)
			iov[i] = (struct iovec){.iov_base = c->slots[i].buf, .iov_len = c->slots[i].len};
		rc = io_uring_register_buffers(&s->ring, iov, c->depth);
		free(iov);
		/* Pinned memory counts against RLIMIT_MEMLOCK for unprivileged users: without it the
		 * buffers are mapped per request instead, which costs a little, not correctness. */
		if (rc < 0 && rc != -ENOMEM)
			return rc;
		s->fixed_bufs = rc == 0;
	}
	/* Saves a file-table lookup per io_uring_enter (Linux 5.18+); optional. */
	io_uring_register_ring_fd(&s->ring);
	return 0;
}

/* Tell the kernel about every prepared SQE. */
static int submit_pending(struct io_ctx *c, struct uring_state *s)
{
	if (!s->unsubmitted)
		return 0;
	for (;;) {
		int n = io_uring_submit(&s->ring);
		if (n >= 0 && (opts_of(c)->sqpoll || io_uring_sq_ready(&s->ring) == 0))
			break;
		if (n < 0 && n != -EINTR && n != -EAGAIN)
			return n;
	}
	s->unsubmitted = 0;
	return 0;
}

static bool is_slot(const struct io_ctx *c, const struct io_unit *u)
{
	return c->slots && u->index < c->depth && u == &c->slots[u->index];
}

static size_t bucket(const struct uring_state *s, uint64_t offset)
{
	return (size_t)((offset * 0x9e3779b97f4a7c15ULL) >> 32) & s->mask;
}

/* The table entry holding offset, or the empty one where it would go. */
static size_t find_offset(const struct uring_state *s, uint64_t offset)
{
	size_t i = bucket(s, offset);
	while (s->last_at[i] && s->last_at[i]->offset != offset)
		i = (i + 1) & s->mask;
	return i;
}

/* Empty entry i, shifting back the entries of its probe run that may not stay behind a hole. */
static void forget_entry(struct uring_state *s, size_t i)
{
	for (size_t j = (i + 1) & s->mask; s->last_at[j]; j = (j + 1) & s->mask) {
		size_t home = bucket(s, s->last_at[j]->offset);
		bool stays = i <= j ? i < home && home <= j : i < home || home <= j;
		if (!stays) {
			s->last_at[i] = s->last_at[j];
			i = j;
		}
	}
	s->last_at[i] = NULL;
}

/* io_uring starts requests in any order (one that would block goes to a kernel worker while
 * later ones run inline; SQPOLL makes that common), and the device may reorder what it holds.
 * A read queued after a write of the same block must see that write, and of two writes the
 * later must land last, or verification and the ledger would be wrong. So a slot whose offset
 * has a request in flight waits behind it (true: held), and is started when that completes. */
static bool order_or_hold(const struct io_ctx *c, struct uring_state *s, struct io_unit *u)
{
	if (!is_slot(c, u))
		return false; /* populate and the final check: one request at a time */
	size_t i = find_offset(s, u->offset);
	struct io_unit *before = s->last_at[i];
	s->last_at[i] = u;
	s->behind[u->index] = NULL;
	if (!before)
		return false;
	s->behind[before->index] = u;
	return true;
}

/* u completed: the next request to its offset, if any, may start. */
static struct io_unit *release_next(const struct io_ctx *c, struct uring_state *s, const struct io_unit *u)
{
	if (!is_slot(c, u))
		return NULL;
	struct io_unit *next = s->behind[u->index];
	if (!next) {
		size_t i = find_offset(s, u->offset);
		if (s->last_at[i] == u)
			forget_entry(s, i);
	}
	return next;
}

static int start(struct io_ctx *c, struct uring_state *s, struct io_unit *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
	if (!sqe) { /* not with depth <= ring entries; a unit outside the slots could still meet it */
		int rc = submit_pending(c, s);
		if (rc < 0)
			return rc;
		sqe = io_uring_get_sqe(&s->ring);
		if (!sqe)
			return -EBUSY;
	}
	if (s->fixed_bufs && is_slot(c, u)) {
		if (u->dir == IO_WRITE)
			io_uring_prep_write_fixed(sqe, 0, u->buf, u->len, u->offset, (int)u->index);
		else
			io_uring_prep_read_fixed(sqe, 0, u->buf, u->len, u->offset, (int)u->index);
	} else if (u->dir == IO_WRITE) {
		io_uring_prep_write(sqe, 0, u->buf, u->len, u->offset);
	} else {
		io_uring_prep_read(sqe, 0, u->buf, u->len, u->offset);
	}
	sqe->flags |= IOSQE_FIXED_FILE; /* index 0 of the registered files: c->fd */
	io_uring_sqe_set_data(sqe, u);
	s->unsubmitted++;
	return 0;
}

static int uring_queue(struct io_ctx *c, struct io_unit *u)
{
	struct uring_state *s = c->priv;
	if (order_or_hold(c, s, u))
		return IO_Q_QUEUED;
	int rc = start(c, s, u);
	if (rc < 0) { /* not in flight after all: nothing may wait behind it */
		release_next(c, s, u);
		return rc;
	}
	return IO_Q_QUEUED;
}

static int uring_commit(struct io_ctx *c)
{
	struct uring_state *s = c->priv;
	/* With SQPOLL a submission is a store to the ring (and a wake-up only when the kernel thread
	 * went idle): always at once. */
	if (opts_of(c)->sqpoll || s->eager)
		return submit_pending(c, s);
	return 0;
}

/* Completions the kernel has finished: in the CQ ring, or as task work it will run at our next
 * system call (COOP_TASKRUN says so with IORING_SQ_TASKRUN). */
static bool completions_waiting(struct uring_state *s)
{
	return io_uring_cq_ready(&s->ring) || (IO_URING_READ_ONCE(*s->ring.sq.kflags) & IORING_SQ_TASKRUN);
}

static int uring_getevents(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns)
{
	struct uring_state *s = c->priv;
	bool polled = s->ring.flags & IORING_SETUP_IOPOLL;
	if (min)
		s->eager = !completions_waiting(s);
	unsigned ready = io_uring_cq_ready(&s->ring);
	if (s->unsubmitted || ready < min || (!ready && polled)) {
		struct __kernel_timespec ts, *tsp = NULL;
		if (timeout_ns != UINT64_MAX) {
			ts.tv_sec = (long long)(timeout_ns / 1000000000ULL);
			ts.tv_nsec = (long long)(timeout_ns % 1000000000ULL);
			tsp = &ts;
		}
		struct io_uring_cqe *cqe;
		int rc;
		if (s->unsubmitted) {
			/* One system call submits the batch and waits for the first completions. */
			rc = io_uring_submit_and_wait_timeout(&s->ring, &cqe, min, tsp, NULL);
			if (opts_of(c)->sqpoll || io_uring_sq_ready(&s->ring) == 0)
				s->unsubmitted = 0;
		} else {
			rc = io_uring_wait_cqes(&s->ring, &cqe, min, tsp, NULL);
		}
		/* -ETIME: the timeout passed; -EAGAIN: nothing to reap and nothing asked for. */
		if (rc < 0 && rc != -ETIME && rc != -EAGAIN && rc != -EINTR)
			return rc;
		if (rc == -EINTR && !io_uring_cq_ready(&s->ring))
			return -EINTR;
	}
	unsigned n = io_uring_peek_batch_cqe(&s->ring, s->cqes, max), reaped = n;
	for (unsigned i = 0; i < n; i++) {
		struct io_unit *u = io_uring_cqe_get_data(s->cqes[i]);
		int res = s->cqes[i]->res;
		if (res < 0)
			u->error = -res;
		else if ((unsigned)res != u->len)
			u->error = u->dir == IO_WRITE ? ENOSPC : EIO; /* short: past the end */
		else
			u->error = 0;
		s->done[i] = u;
		/* A request that cannot start is reported failed (done has room: depth in all), and
		 * the one behind it gets its turn. */
		for (struct io_unit *next = release_next(c, s, u); next; next = release_next(c, s, next)) {
			int rc = start(c, s, next);
			if (rc >= 0)
				break;
			next->error = -rc;
			s->done[reaped++] = next;
		}
	}
	io_uring_cq_advance(&s->ring, n);
	return (int)reaped;
}

static struct io_unit *uring_event(struct io_ctx *c, unsigned i)
{
	struct uring_state *s = c->priv;
	return s->done[i];
}

static int uring_close(struct io_ctx *c)
{
	struct uring_state *s = c->priv;
	if (s) {
		if (s->ring_up)
			io_uring_queue_exit(&s->ring);
		free(s->cqes);
		free(s->done);
		free(s->behind);
		free(s->last_at);
		free(s);
	}
	c->priv = NULL;
	int rc = c->fd >= 0 && close(c->fd) ? -errno : 0;
	c->fd = -1;
	return rc;
}

/* The kernel's io_uring policy (kernel.io_uring_disabled, Linux 6.6+): -1 where absent. */
static int sysctl_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int setup_refused(const struct io_ctx *c, int rc, struct dd_err *err)
{
	int v;
	switch (rc) {
	case -ENOSYS:
		return err_fail(err, -1, "--ioengine io_uring: this kernel has no io_uring (io_uring_setup: %s); "
				   "use --ioengine libaio", strerror(-rc));
	case -EPERM:
		v = sysctl_disabled();
		if (v == 2)
			return err_fail(err, -1, "--ioengine io_uring: io_uring is disabled on this system (sysctl "
					   "kernel.io_uring_disabled = 2); use --ioengine libaio");
		else if (v == 1)
			return err_fail(err, -1, "--ioengine io_uring: io_uring is limited to the group in "
					   "kernel.io_uring_group (sysctl kernel.io_uring_disabled = 1); use --ioengine libaio");
		else
			return err_fail(err, -1, "--ioengine io_uring: io_uring_setup is not permitted here (%s: a seccomp "
					   "filter or container policy forbids it); use --ioengine libaio", strerror(-rc));
	default:
		return err_fail(err, -1, "--ioengine io_uring: cannot set up a ring of %u entries: %s", c->depth,
			 strerror(-rc));
	}
}

/* Is the device under path (a block device, or the filesystem holding a file or directory)
 * able to poll for completions? Its request queue says so in sysfs (queue/io_poll). */
static bool device_polls(const char *path, char *reason, size_t len)
{
	struct stat st;
	if (stat(path, &st)) {
		snprintf(reason, len, "%s", strerror(errno));
		return false;
	}
	dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	if (major(dev) == 0) {
		snprintf(reason, len, "it is not on a block device");
		return false;
	}
	char sys[128];
	/* A partition's queue is its disk's, one directory up. */
	const char *const where[] = {"/sys/dev/block/%u:%u/queue/io_poll", "/sys/dev/block/%u:%u/../queue/io_poll"};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		snprintf(sys, sizeof sys, where[i], major(dev), minor(dev));
		FILE *f = fopen(sys, "r");
		if (!f)
			continue;
		int v = 0;
		bool ok = fscanf(f, "%d", &v) == 1 && v == 1;
		fclose(f);
		if (!ok)
			snprintf(reason, len, "block device %u:%u has no poll queues (its queue/io_poll is 0; NVMe "
					      "needs nvme.poll_queues)", major(dev), minor(dev));
		return ok;
	}
	snprintf(reason, len, "block device %u:%u does not say it can poll (no queue/io_poll in sysfs)", major(dev),
		 minor(dev));
	return false;
}

static int uring_check(const struct io_ctx *c, struct dd_err *err)
{
	struct io_uring ring;
	int rc = ring_init(c, &ring, 0);
	if (rc < 0) {
		struct io_ctx plain = *c;
		plain.opts = &no_opts;
		if ((opts_of(c)->sqpoll || opts_of(c)->hipri) && ring_init(&plain, &ring, 0) == 0) {
			io_uring_queue_exit(&ring);
			return err_fail(err, -1, "%s: this kernel refuses a ring with %s: %s",
					opts_of(c)->sqpoll ? "--sqpoll" : "--hipri",
					opts_of(c)->sqpoll ? "a submission-polling thread" : "polled completions",
					strerror(-rc));
		}
		return setup_refused(c, rc, err);
	}
	unsigned features = ring.features;
	io_uring_queue_exit(&ring);
	/* Waiting with a timeout without spending an SQE on it (nominal pacing relies on it). */
	if (!(features & IORING_FEAT_EXT_ARG))
		return err_fail(err, -1, "--ioengine io_uring needs Linux 5.11 or later (IORING_FEAT_EXT_ARG); "
					 "use --ioengine libaio");
	char reason[256];
	if (opts_of(c)->hipri && !device_polls(c->path, reason, sizeof reason))
		return err_fail(err, -1, "--hipri: %s cannot poll for completions: %s; run without --hipri", c->path,
				reason);
	return 0;
}

const struct ioengine_ops ioengine_io_uring = {
	.name = "io_uring",
	.flags = IOENGINE_ASYNC | IOENGINE_NEEDS_DIRECT,
	.options = uring_rows,
	.noptions = sizeof uring_rows / sizeof uring_rows[0],
	.opts_size = sizeof(struct uring_opts),
	.check = uring_check,
	.open = uring_open,
	.queue = uring_queue,
	.commit = uring_commit,
	.getevents = uring_getevents,
	.event = uring_event,
	.close = uring_close,
};
