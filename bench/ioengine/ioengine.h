/* ioengine.h - the I/O engine interface (fio's ioengine_ops pattern): one struct of function
 * pointers per engine; the worker loop drives every engine through it and never knows which. */
#ifndef DEDIS_BENCH_IOENGINE_H
#define DEDIS_BENCH_IOENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum io_dir { IO_READ = 0, IO_WRITE = 1 };

struct io_unit {
	enum io_dir dir;
	uint64_t offset;     /* absolute byte offset in the opened file or device */
	uint32_t len;
	void *buf;           /* aligned for O_DIRECT */
	uint64_t block;      /* block number within the worker's region */
	uint64_t content_id; /* writes: what buf holds */
	uint64_t due_ns;     /* latency is measured from here (scheduled time in nominal mode) */
	int error;           /* 0, or the errno the operation failed with */
	unsigned index;      /* slot number, for engines that keep per-slot state */
};

struct io_ctx {
	const char *path;    /* NULL for the null engine */
	int open_flags;      /* O_DIRECT / O_DSYNC as the sync mode asks */
	bool read_only;      /* the run only reads: opened O_RDONLY, so a read-only file or mount takes it */
	bool fsync_each;     /* fsync after every write */
	bool hints;          /* engine: a NODEDUP hint on writes of fresh unique content */
	unsigned depth;      /* slots in flight at most */
	struct io_unit *slots; /* the worker's depth units (their buffers may be registered once);
			        * queue() may also get a unit that is not one of them */
	const void *opts;    /* the engine's own option values, laid out as its option rows say */
	int fd;
	void *priv;          /* the engine's own state */
};

/* queue() results */
#define IO_Q_COMPLETED 0 /* done now; u->error tells how */
#define IO_Q_QUEUED 1    /* in flight; reported later by getevents/event */

/* The capabilities the core reads (it never tests an engine's name). */
#define IOENGINE_ASYNC 1u        /* queue() may return IO_Q_QUEUED: --iodepth above 1 applies */
#define IOENGINE_NEEDS_DIRECT 2u /* always O_DIRECT: --sync none becomes direct, fsync/dsync are refused */
#define IOENGINE_NO_FILE 4u      /* opens nothing */
#define IOENGINE_BY_TARGET 8u    /* chosen by the target kind (null, engine:), not offered by --ioengine */

/* Room for one engine's option values (its rows' struct) in the run's options. */
#define IOENGINE_OPTS_MAX 16

struct opt_row;
struct dd_err;

struct ioengine_ops {
	const char *name;
	unsigned flags;
	const char *help;            /* what --ioengine's help says after the name, "(...)"; or NULL */
	/* The engine's own options (--sqpoll...): rows whose offsets are into its option struct of
	 * opts_size bytes, which io_ctx.opts points to; the option table inserts them after the last
	 * row of their group. A row given with another engine chosen is refused. */
	const struct opt_row *options;
	size_t noptions, opts_size;
	/* Optional, called once before anything is written: can this engine run c's job on this
	 * kernel and c->path (the --target)? 0, or -1 with one line (what and why) in err. */
	int (*check)(const struct io_ctx *c, struct dd_err *err);
	int (*open)(struct io_ctx *c);                       /* 0 or -errno */
	int (*queue)(struct io_ctx *c, struct io_unit *u);   /* IO_Q_* or -errno */
	int (*commit)(struct io_ctx *c);                     /* submit what was queued; 0 or -errno */
	/* Wait for at least min completions (at most max), up to timeout_ns (UINT64_MAX: no limit).
	 * Returns how many, or -errno (-EINTR when a signal interrupted the wait). */
	int (*getevents)(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns);
	struct io_unit *(*event)(struct io_ctx *c, unsigned i);
	/* Release everything; 0, or -errno when flushing what was written on the way failed (the
	 * engine target's volume is flushed here). */
	int (*close)(struct io_ctx *c);
};

/* commit / getevents / event for engines whose queue() always completes (sync, null, engine). */
int ioengine_nop_commit(struct io_ctx *c);
int ioengine_nop_getevents(struct io_ctx *c, unsigned min, unsigned max, uint64_t timeout_ns);
struct io_unit *ioengine_nop_event(struct io_ctx *c, unsigned i);

/* The registry: one line per engine in registry.c. */
const struct ioengine_ops *ioengine_find(const char *name);
size_t ioengine_count(void);
const struct ioengine_ops *ioengine_at(size_t i);  /* registry order; NULL past the end */
/* --ioengine's choices: the engines without IOENGINE_BY_TARGET, in registry order; the option
 * stores the index. NULL past the end. */
const struct ioengine_ops *ioengine_choice(size_t i);
/* Where engine e's option values start among all engines' (each has its own slice, so a row
 * given for an engine that was not chosen can be seen and refused). */
size_t ioengine_opts_offset(const struct ioengine_ops *e);
/* The names of --ioengine's choices that have all of flags, joined by ", " and last_sep before
 * the last ("libaio or io_uring"). */
void ioengine_names_with(unsigned flags, const char *last_sep, char *buf, size_t len);

/* The engine whose option rows have `name` (io_uring for "sqpoll"), or NULL. */
const struct ioengine_ops *ioengine_option_owner(const char *name);

/* Unit u run to completion through e on c (opened with depth >= 1; u->index a free slot): queued,
 * and when e leaves it in flight, committed and waited for. 0, or the errno it failed with. */
int ioengine_run_one(const struct ioengine_ops *e, struct io_ctx *c, struct io_unit *u);

/* The engines a target kind picks itself (null: no I/O; engine:DIR in process). */
extern const struct ioengine_ops ioengine_null;
extern const struct ioengine_ops ioengine_engine;

#endif
