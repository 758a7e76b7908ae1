/* target.h - what dedisbench writes to: a directory (one file per worker), an existing file or a
 * block device (split into disjoint regions), or null; validated before anything is written. */
#ifndef DEDIS_BENCH_TARGET_H
#define DEDIS_BENCH_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "lib/runlock.h"

enum target_kind { TARGET_DIR, TARGET_FILE, TARGET_BLOCKDEV, TARGET_NULL, TARGET_ENGINE };

/* A file's identity: (st_dev, st_ino), or (st_rdev, ~0) for a block device; {0, 0}: none. */
struct file_id {
	uint64_t dev, ino;
};

struct target {
	enum target_kind kind;
	char path[PATH_MAX];
	unsigned procs;
	uint64_t region_size;   /* bytes per worker, a multiple of the block size */
	uint64_t device_size;   /* block device or file: its size */
	unsigned sector_size;   /* logical sector (O_DIRECT alignment) */
	bool created[1024];     /* DIR: which worker files this run created (removed unless --keep) */
	struct file_id files[1024]; /* DIR: each worker file (after probe: those that existed); FILE,
	                         * BLOCKDEV: [0]. Workers check the file they open is this one. */
	int dir_fd;             /* DIR: the directory; worker files are created relative to it */
	bool dir_fd_open;
	int excl_fd;            /* BLOCKDEV: held open with O_EXCL for the run (no mount meanwhile) */
	bool excl_fd_open;
	struct runlock lock;    /* one run per target: taken first thing by target_probe */
	struct runlock lock_around; /* what else names the same data: a directory target as an engine
	                         * volume, a worker file's directory as a directory target, an engine
	                         * volume's superblock inode */
	struct runlock *file_locks; /* DIR: each worker file's lock, by its inode (another name of it
	                         * made during the run meets it) */
	unsigned nfile_locks;
	char engine_index[8];   /* ENGINE: the volume's index backend */
	char engine_compress[8]; /* ENGINE: "none" or "lz4" */
	bool engine_exists;     /* ENGINE: DIR already held a volume */
	bool engine_formatted;  /* ENGINE: this run formatted it (removed unless --keep) */
	bool engine_dir_made;   /* ENGINE: this run created the volume directory (removed with it) */
	bool engine_cleared;    /* ENGINE: this run discarded the volume's old data before its own */
	bool engine_marked;     /* ENGINE: the volume is dedisbench's (or --force): marked after the run */
	int engine_fd;          /* ENGINE: the volume's directory, held from probe (or format) to
	                         * cleanup: every open of the volume goes through it (engine_at), and
	                         * the removal goes beneath it, whatever the path names meanwhile */
	int engine_parent_fd;   /* ENGINE: the directory holding it (a new volume's is made there) */
	struct file_id engine_dir; /* ENGINE: the volume directory held (its removal checks it) */
	char engine_name[256];  /* ENGINE: its name in engine_parent_fd */
	char engine_at[32];     /* ENGINE: "/proc/self/fd/N": engine_fd by name, for the engine's API */
	bool keep_data;         /* an earlier run's data must stay (a kept ledger describes it) */
	bool no_writes;         /* the run only reads: an existing file is not marked dedisbench's */
	bool sparse;            /* size files without reserving their space, and format an engine
	                         * volume's chunk store sparse (issue 14: backup measures each
	                         * generation's space as it is written; so does a --space-cmd) */
};

struct target_request {
	const char *path;
	unsigned procs;
	uint64_t file_size;
	bool file_size_given;
	uint32_t block_size;
	bool force;
	bool direct;
	bool no_writes;         /* the run only reads (a read run that does not populate) */
	const char *size_from;  /* what file_size comes from, when not --file-size (for messages) */
};

/* Validate and size the target: no file is created or written. First of all it takes the target's
 * run lock (runlock.h): a target another run holds is refused, naming its pid and command line,
 * and stays locked until target_release. Inside a directory nothing is
 * followed: a worker file that is a symbolic link or not a regular file is refused, and an existing
 * one must be dedisbench's (claim.h) unless req->force. Returns 0, or -1 with a one-line reason in
 * err. target_release() undoes what probing opened, whatever it returned. */
int target_probe(const struct target_request *req, struct target *t, char *err, size_t errlen);
/* Create / extend the worker files (DIR, FILE), format or clear the engine volume (ENGINE).
 * Returns 0, or -1 with err. */
int target_prepare(struct target *t, uint32_t block_size, char *err, size_t errlen);
/* The path a worker opens and the byte offset of its region in it. */
void target_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base);
/* Extra open(2) flags a worker must use on its path (O_NOFOLLOW inside a directory). */
int target_open_flags(const struct target *t);
/* Is fd (a worker's open target) the file that was checked and prepared? 0, or -1 with errno. */
int target_check_opened(const struct target *t, unsigned worker, int fd);
/* True when this run created every worker file (a DIR target starts as zeros). */
bool target_all_created(const struct target *t);
/* ENGINE: true when the run starts from an empty volume (formatted or cleared by it). */
bool target_engine_emptied(const struct target *t);
/* ENGINE: the name the engine's API is given for the volume: its directory as held since probe
 * (a later swap of the path's components is not followed). t->path stays the name shown. */
const char *target_engine_dir(const struct target *t);
/* Remove the files this run created (unless keep). */
void target_cleanup(struct target *t, bool keep);
/* Close what probing opened and drop the run lock (safe on a zeroed or failed target, and twice). */
void target_release(struct target *t);
/* "dedisbench.N": the name of a directory target's worker file. */
bool target_is_worker_name(const char *name);

#endif
