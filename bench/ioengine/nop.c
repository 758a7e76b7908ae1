/* nop.c - the completion callbacks of engines whose queue() finishes every unit (sync, null,
 * engine): nothing to commit, no events to reap. Below the registry, which lists those engines. */
#include "bench/ioengine/ioengine.h"

int ioengine_nop_commit(struct io_ctx *c) { return 0; }

int ioengine_nop_getevents(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns) { return 0; }

struct io_unit *ioengine_nop_event(struct io_ctx *c, unsigned i) { return NULL; }
