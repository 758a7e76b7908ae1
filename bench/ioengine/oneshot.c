/* oneshot.c - one unit run to completion through any engine (queued, committed and reaped when
 * the engine leaves it in flight): for workloads that issue one request at a time (replay, backup). */
#include <errno.h>
#include <stdint.h>
#include "bench/ioengine/ioengine.h"

int ioengine_run_one(const struct ioengine_ops *e, struct io_ctx *c, struct io_unit *u)
{
	u->error = 0;
	int rc = e->queue(c, u);
	if (rc == IO_Q_QUEUED) {
		rc = e->commit(c);
		/* A signal (the user's stop) interrupts the wait, not the transfer: the unit's buffer
		 * stays the kernel's until it completes, so wait on; the caller checks its stop after. */
		int got = 0;
		while (!rc && got != 1)
			if ((got = e->getevents(c, 1, 1, UINT64_MAX)) < 0 && got != -EINTR)
				rc = got;
		if (!rc && e->event(c, 0) != u)
			rc = -EIO; /* an engine's bug: the one unit in flight is not what came back */
	}
	return rc < 0 ? -rc : u->error;
}
