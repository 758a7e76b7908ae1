/* trace.h - an FIU IODedup block trace in memory: its requests in order, each written 4 KiB
 * block's MD5 numbered as a content id (equal MD5s, equal ids), and what the trace leaves live. */
#ifndef DEDIS_BENCH_TRACE_H
#define DEDIS_BENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/errmsg.h"

#define TRACE_SECTOR 512u   /* lba and size are in 512-byte sectors */
#define TRACE_BLOCK 4096u   /* one MD5 per 4 KiB */
#define TRACE_ZERO_ID 0     /* the MD5 of a 4 KiB zero block: written as zeros (content id 0) */

struct trace_req {
	uint64_t ts_ns;      /* the line's timestamp */
	uint64_t block;      /* first 4 KiB block (lba / 8) */
	uint32_t nblocks;    /* size / 8 */
	bool write;
	uint64_t first_id;   /* writes: index of the first block's id in trace.ids */
};

struct trace {
	struct trace_req *req;
	size_t n, cap;
	uint64_t *ids;        /* writes: one content id per block (TRACE_ZERO_ID or 1 + MD5 number) */
	size_t nids, idcap;
	uint64_t distinct;    /* distinct MD5s in the whole trace (reads' too), the zero block's included */
	uint64_t reads, writes, read_blocks, write_blocks;
	uint64_t end_bytes;   /* the highest byte addressed + 1 */
	uint32_t max_blocks;  /* the largest request */
	uint64_t lines;       /* lines read (comments and blank ones included) */
	/* the MD5 -> number table (open addressing) */
	unsigned char (*keys)[16];
	uint64_t *vals;       /* number + 1; 0 = empty slot */
	size_t slots;
};

/* Read PATH whole. Each line: `timestamp pid process lba size op major minor md5...` (size in
 * sectors, a multiple of 8; op W or R; one 32-hex-digit MD5 per 4 KiB; lba 4 KiB aligned);
 * blank lines and lines starting with '#' are skipped. 0, or -1 with "PATH:LINE: why" in err
 * (or "PATH: why"). trace_free() in any case. */
int trace_load(const char *path, struct trace *t, struct dd_err *err);
void trace_free(struct trace *t);

/* What the trace leaves on the target: blocks written at least once, and distinct contents
 * among their last writes (the zero block counted as one). 0, or -1 (memory). */
int trace_live(const struct trace *t, uint64_t *blocks, uint64_t *distinct);
/* The same after the first nreq requests, and which contents those are: an array indexed by
 * content id (TRACE_ZERO_ID .. t->distinct + 1), 1 where live; free() it. NULL: out of memory. */
uint8_t *trace_live_contents(const struct trace *t, size_t nreq, uint64_t *blocks, uint64_t *distinct);

#endif
