/* engine.c - the in-process engine: each worker opens the reference dedup engine's volume
 * itself and turns offsets into logical block numbers; operations complete inside queue(). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include "lib/content.h"
#include "reference-engine/engine.h"
#include "bench/ioengine/ioengine.h"

static int eng_open(struct io_ctx *c)
{
	struct engine_open_params p = {.direct = (c->open_flags & O_DIRECT) != 0};
	struct engine *e;
	struct dd_err err;
	int rc = engine_open(c->path, &p, &e, &err);
	c->priv = rc ? NULL : e;
	c->fd = -1;
	return rc;
}

static int eng_queue(struct io_ctx *c, struct io_unit *u)
{
	struct engine *e = c->priv;
	uint32_t bs = engine_block_size(e);
	int rc = 0;
	/* A unit may span several blocks (populate writes 1 MiB at a time); a one-block write of a
	 * fresh unique content carries the NODEDUP hint when asked (no other write can equal it). */
	unsigned hints = c->hints && u->len == bs && (u->content_id & CONTENT_UNIQUE_BIT) ? ENGINE_NODEDUP : 0;
	for (uint32_t off = 0; off < u->len && !rc; off += bs) {
		uint64_t lbn = (u->offset + off) / bs;
		char *p = (char *)u->buf + off;
		rc = u->dir == IO_WRITE ? engine_write_hint(e, lbn, p, hints) : engine_read(e, lbn, p);
	}
	if (!rc && u->dir == IO_WRITE && c->fsync_each)
		rc = engine_flush(e);
	u->error = -rc;
	return IO_Q_COMPLETED;
}

static int eng_close(struct io_ctx *c)
{
	int rc = c->priv ? engine_close(c->priv) : 0; /* flushes the volume */
	c->priv = NULL;
	return rc;
}

const struct ioengine_ops ioengine_engine = {
	.name = "engine",
	.flags = IOENGINE_BY_TARGET,
	.open = eng_open,
	.queue = eng_queue,
	.commit = ioengine_nop_commit,
	.getevents = ioengine_nop_getevents,
	.event = ioengine_nop_event,
	.close = eng_close,
};
