/* sync.c - the synchronous engine: pread/pwrite on the worker's descriptor (short transfers
 * resumed), optional fsync after each write; every operation completes inside queue(). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stddef.h>
#include "lib/fullio.h"
#include "bench/ioengine/ioengine.h"

static int sync_open(struct io_ctx *c)
{
	c->fd = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | c->open_flags);
	return c->fd < 0 ? -errno : 0;
}

/* A positive errno for u->error; past the end of a file or device a write is ENOSPC, a read EIO. */
static int transfer(int fd, struct io_unit *u)
{
	int rc = u->dir == IO_WRITE ? fullio_pwrite(fd, u->buf, u->len, u->offset, ENOSPC)
				    : fullio_pread(fd, u->buf, u->len, u->offset, EIO);
	return -rc;
}

static int sync_queue(struct io_ctx *c, struct io_unit *u)
{
	u->error = transfer(c->fd, u);
	if (!u->error && u->dir == IO_WRITE && c->fsync_each && fsync(c->fd))
		u->error = errno;
	return IO_Q_COMPLETED;
}

static int sync_close(struct io_ctx *c)
{
	int rc = c->fd >= 0 && close(c->fd) ? -errno : 0;
	c->fd = -1;
	return rc;
}

const struct ioengine_ops ioengine_sync = {
	.name = "sync",
	.flags = 0,
	.help = "pread/pwrite",
	.open = sync_open,
	.queue = sync_queue,
	.commit = ioengine_nop_commit,
	.getevents = ioengine_nop_getevents,
	.event = ioengine_nop_event,
	.close = sync_close,
};
