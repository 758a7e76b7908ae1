/* registry.c - the list of I/O engines by name (adding an engine is one line here plus its own
 * file), and the no-op completion callbacks of engines that finish inside queue(). */
#include <stddef.h>
#include <string.h>
#include "bench/ioengine/ioengine.h"

static const struct ioengine_ops *const engines[] = {
	&ioengine_sync,
	&ioengine_libaio,
	&ioengine_io_uring,
	&ioengine_null,
	&ioengine_engine,
};

const struct ioengine_ops *ioengine_find(const char *name)
{
	for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

int ioengine_nop_commit(struct io_ctx *c) { return 0; }

int ioengine_nop_getevents(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns) { return 0; }

struct io_unit *ioengine_nop_event(struct io_ctx *c, unsigned i) { return NULL; }
