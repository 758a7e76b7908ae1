/* libaio.c - the Linux native AIO engine: up to iodepth requests in flight on an O_DIRECT
 * descriptor, submitted in batches by commit() and reaped by io_getevents. */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "bench/ioengine/ioengine.h"

struct aio_state {
	io_context_t ctx;
	struct iocb *iocbs;     /* one per slot */
	struct iocb **pending;  /* queued, not yet submitted */
	unsigned npending;
	struct io_event *events;
	unsigned nevents;
};

static int aio_open(struct io_ctx *c)
{
	struct aio_state *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->iocbs = calloc(c->depth, sizeof *s->iocbs);
	s->pending = calloc(c->depth, sizeof *s->pending);
	s->events = calloc(c->depth, sizeof *s->events);
	c->priv = s;
	if (!s->iocbs || !s->pending || !s->events)
		return -ENOMEM;
	c->fd = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT | c->open_flags);
	if (c->fd < 0)
		return -errno;
	int rc = io_setup((int)c->depth, &s->ctx);
	return rc < 0 ? rc : 0;
}

static int aio_queue(struct io_ctx *c, struct io_unit *u)
{
	struct aio_state *s = c->priv;
	struct iocb *cb = &s->iocbs[u->index];
	if (u->dir == IO_WRITE)
		io_prep_pwrite(cb, c->fd, u->buf, u->len, (long long)u->offset);
	else
		io_prep_pread(cb, c->fd, u->buf, u->len, (long long)u->offset);
	cb->data = u;
	s->pending[s->npending++] = cb;
	return IO_Q_QUEUED;
}

static int aio_commit(struct io_ctx *c)
{
	struct aio_state *s = c->priv;
	unsigned done = 0;
	while (done < s->npending) {
		int rc = io_submit(s->ctx, (long)(s->npending - done), s->pending + done);
		if (rc == -EAGAIN || rc == -EINTR)
			continue;
		if (rc < 0)
			return rc;
		done += (unsigned)rc;
	}
	s->npending = 0;
	return 0;
}

static int aio_getevents(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns)
{
	struct aio_state *s = c->priv;
	struct timespec ts, *tp = NULL;
	if (timeout_ns != UINT64_MAX) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000ULL);
		ts.tv_nsec = (long)(timeout_ns % 1000000000ULL);
		tp = &ts;
	}
	int n = io_getevents(s->ctx, (long)min, (long)max, s->events, tp);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct io_unit *u = s->events[i].data;
		long res = (long)s->events[i].res;
		if (res < 0)
			u->error = (int)-res;
		else if ((unsigned long)res != u->len)
			u->error = u->dir == IO_WRITE ? ENOSPC : EIO;
		else
			u->error = 0;
	}
	s->nevents = (unsigned)n;
	return n;
}

static struct io_unit *aio_event(struct io_ctx *c, unsigned i)
{
	struct aio_state *s = c->priv;
	return s->events[i].data;
}

static int aio_close(struct io_ctx *c)
{
	struct aio_state *s = c->priv;
	if (s) {
		if (s->ctx)
			io_destroy(s->ctx);
		free(s->iocbs);
		free(s->pending);
		free(s->events);
		free(s);
	}
	c->priv = NULL;
	int rc = c->fd >= 0 && close(c->fd) ? -errno : 0;
	c->fd = -1;
	return rc;
}

const struct ioengine_ops ioengine_libaio = {
	.name = "libaio",
	.flags = IOENGINE_ASYNC | IOENGINE_NEEDS_DIRECT,
	.open = aio_open,
	.queue = aio_queue,
	.commit = aio_commit,
	.getevents = aio_getevents,
	.event = aio_event,
	.close = aio_close,
};
