/* targetkind.h - what the target kinds (target_KIND.c) share with the core (target.c): file
 * identities, the run locks, the claim check and file sizing. Not for callers outside bench/target/. */
#ifndef DEDIS_BENCH_TARGETKIND_H
#define DEDIS_BENCH_TARGETKIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include "lib/errmsg.h"
#include "lib/runlock.h"
#include "bench/target/target.h"

static inline struct file_id file_id_of(const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return (struct file_id){(uint64_t)st->st_rdev, ~0ULL};
	return (struct file_id){(uint64_t)st->st_dev, (uint64_t)st->st_ino};
}

static inline bool same_file(struct file_id a, struct file_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

/* A need in whole MiB, rounded up as the room beside it is rounded down: a refusal never reads
 * "12 MiB free, the volume needs 12 MiB". */
static inline uint64_t mib_up(uint64_t bytes)
{
	return (bytes + (1 << 20) - 1) >> 20;
}

/* The run lock of path into l (`what` names the target in the message). */
int target_lock(struct runlock *l, const char *path, enum runlock_kind kind, const char *what, struct dd_err *err);
/* The lock of the file open at fd, by its inode (runlock_acquire_fd): a name made for it after the
 * run began still meets it. */
int target_lock_inode(struct runlock *l, int fd, bool lock_inode, const char *what, struct dd_err *err);
/* One set of data can be named two ways, each with its own lock: a directory as a directory
 * target and as an engine volume (engine:DIR), a worker file (DIR/dedisbench.N) as a file target
 * and through its directory. The second name's lock is taken too (into t->lock_around). */
int target_lock_around(struct target *t, const char *path, bool dir, bool force, const char *what, struct dd_err *err);
/* An existing file about to be used, its first `extent` bytes: refused unless it is dedisbench's,
 * holds nothing, or force; and, for a run that writes, unless it is this user's or force. `label`
 * names it in messages. fd is open for reading. */
int target_check_claim(int fd, const struct stat *st, uint64_t extent, const char *label, bool force, bool no_writes,
		       struct dd_err *err);
/* Reserve len bytes (a full file system fails here, not mid-run), or just size the file where
 * reserving would defeat the system's savings or sparse asks; never shorter. 0 or an errno. */
int target_size_file(int fd, uint64_t len, bool sparse);
/* Below the alignment O_DIRECT needs (req->direct) every transfer fails: -1 with err. The
 * device's own sectors set it (device_sectors), else the file system's under the path. */
int target_check_direct(const struct target_request *req, const struct target *t, bool device_sectors,
			struct dd_err *err);
/* A file or device target's one file (target_ops.worker_file), and its report check
 * (target_ops.refuse_output): a report by the target's own name, or a link to it. */
const struct file_id *target_single_file(const struct target *t, unsigned worker);
int target_refuse_self(const struct target *t, const char *what, const char *path, bool is_dir, struct dd_err *err);
/* A path's device and inode equal a file's (stat, links followed). */
bool target_same_inode(const char *a, const char *b);

#endif
