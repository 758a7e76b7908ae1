/* target.h - what dedisbench writes to: a directory (one file per worker), an existing file or a
 * block device (split into disjoint regions), null or an engine volume; each kind a plug-in. */
#ifndef DEDIS_BENCH_TARGET_H
#define DEDIS_BENCH_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include "lib/errmsg.h"
#include "lib/runlock.h"
#include "reference-engine/engine.h"

struct file_id;
struct ioengine_ops;
struct target;
struct target_request;

/* What a kind's flags promise; callers read these (and the ops), never which kind it is. */
#define TARGET_STORES_NOTHING 1u  /* its data goes nowhere: no ledger, verify, space or backup */
#define TARGET_VALIDATED 2u       /* every read checked and a ledger kept: its holdings are
				   * validated after the run (observe) */
#define TARGET_TAKES_HINTS 4u     /* writes may carry a NODEDUP hint (--hints) */
#define TARGET_SPARSE_FOR_COMMAND 8u /* made sparse when a --space-cmd measures it */
#define TARGET_SHOWN_BY_PATH 16u  /* workers open it by another name: messages show t->path */
#define TARGET_FILE_PER_WORKER 32u /* each worker writes a file of its own (else regions of one) */

/* How a target's used space is read (spacecheck.h turns it into its source). */
enum target_space { TARGET_SPACE_NONE, TARGET_SPACE_STATFS, TARGET_SPACE_ZRAM, TARGET_SPACE_SELF };

/* What a target that counts its own holdings (an engine volume) says of them. */
struct target_observation {
	struct engine_stats stats;
	long fsck_problems;    /* asked for: the problems fsck found, or -errno when it could not run */
	int close_rc;          /* 0, or -errno when closing (flushing) it failed */
};

/* One kind of target: a file of its own (target_KIND.c) and a line in registry.c. Optional ops
 * are NULL where the kind has nothing to do (target.c says what NULL means for each). */
struct opt_table;
struct target_ops {
	const char *name;      /* "directory", "file", "block device", "null", "engine volume" */
	/* How --help shows it: the --target form ("DEVICE", "engine:DIR"; a kind with options() has
	 * "[,KEY=a|b]" added from its rows) and what it is, a few words. */
	const char *usage, *about;
	unsigned flags;        /* TARGET_* above */
	/* Why --ioengine (other than sync) cannot drive it (NULL: any can): "--ioengine X does not
	 * apply to " this; and why dedisbench-mpi cannot (NULL: it can). */
	const char *ioengine_refusal, *mpi_refusal;
	/* The I/O path the kind forces (null, the in-process engine), or NULL: the run's --ioengine. */
	const struct ioengine_ops *io;
	/* Does --target PATH name this kind? st: what stat(2) says of it, or NULL in the first round,
	 * where only kinds named by their spelling match (null, engine:DIR). */
	bool (*match)(const char *path, const struct stat *st);
	/* A kind named by a spelling with OPTION=VALUE parts after it ("engine:DIR,index=bdb"): the
	 * spelling ("engine:") and its option rows (shell completion offers them). NULL: none. */
	const char *spelling;
	const struct opt_table *(*options)(void);
	/* Lock, validate and size it (nothing written): 0, or -1 with err. */
	int (*probe)(const struct target_request *req, struct target *t, const struct stat *st, struct dd_err *err);
	/* Create / size / format what the run writes to. NULL: nothing to make. */
	int (*prepare)(struct target *t, uint32_t block_size, struct dd_err *err);
	/* Worker `worker`'s path and the byte offset of its region in it. NULL: t->path, regions
	 * side by side. */
	void (*worker_path)(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base);
	int open_flags;        /* extra open(2) flags of a worker's open (O_NOFOLLOW in a directory) */
	/* The file worker `worker` must find it opened (its identity), or NULL: nothing to check. */
	const struct file_id *(*worker_file)(const struct target *t, unsigned worker);
	/* Do blocks nobody wrote read as zeros? ledger_kept: an earlier run's ledger describes the
	 * data (the run continues it). NULL: never known. */
	bool (*zeros_known)(const struct target *t, bool ledger_kept);
	/* Does it hold data this run did not create (another run's worker files)? NULL: no. */
	bool (*holds_earlier_data)(const struct target *t);
	/* How its used space is read, and from where (path: what statfs or the zram reader reads). */
	enum target_space (*space)(const struct target *t, char *path, size_t len);
	/* Its written data to the device before the space is read. NULL: nothing to flush. */
	void (*flush)(const struct target *t);
	/* Its own counters (TARGET_SPACE_SELF), and with fsck its check: 0, or -1 with err when it
	 * cannot be opened. NULL: it keeps none. */
	int (*observe)(const struct target *t, bool fsck, struct target_observation *obs, struct dd_err *err);
	/* A report (is_dir: a directory of them) at path would replace the target's data: -1 with
	 * "WHAT PATH is ...; write it elsewhere" in err. NULL: nothing to replace. */
	int (*refuse_output)(const struct target *t, const char *what, const char *path, bool is_dir,
			     struct dd_err *err);
	/* Remove what this run created (unless keep); mark what stays. NULL: nothing. */
	void (*cleanup)(struct target *t, bool keep);
	/* Close what probing opened (the locks are the core's). NULL: nothing. */
	void (*release)(struct target *t);
};

/* A file's identity: (st_dev, st_ino), or (st_rdev, ~0) for a block device; {0, 0}: none. */
struct file_id {
	uint64_t dev, ino;
};

struct target {
	const struct target_ops *ops; /* its kind (NULL before target_probe matched one) */
	const struct ioengine_ops *io; /* target_probe_for_run: the I/O path the run takes to it */
	bool direct;            /* target_probe_for_run: the run uses O_DIRECT */
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
	bool dir_read_only;     /* DIR: a run that only reads, in a directory it may not write: its
	                         * worker files are opened as they are, read-only */
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
int target_probe(const struct target_request *req, struct target *t, struct dd_err *err);
/* target_probe for a run driven by I/O engine `chosen` (--ioengine), --sync asking for O_DIRECT
 * or not: the one place that decides how a run reaches its target. It uses O_DIRECT when the
 * sync mode asks or the engine needs it (req->direct, t->direct), through the I/O path the
 * target forces or else `chosen` (t->io). */
int target_probe_for_run(struct target_request *req, bool sync_direct, const struct ioengine_ops *chosen,
			 struct target *t, struct dd_err *err);
/* Create / extend the worker files (DIR, FILE), format or clear the engine volume (ENGINE).
 * Returns 0, or -1 with err. */
int target_prepare(struct target *t, uint32_t block_size, struct dd_err *err);
/* The path a worker opens and the byte offset of its region in it. */
void target_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base);
/* Extra open(2) flags a worker must use on its path (O_NOFOLLOW inside a directory). */
int target_open_flags(const struct target *t);
/* Is fd (a worker's open target) the file that was checked and prepared? 0, or -1 with errno. */
int target_check_opened(const struct target *t, unsigned worker, int fd);
/* The name messages give a worker's target, opened as `opened`. */
const char *target_shown(const struct target *t, const char *opened);
/* Do blocks nobody wrote read as zeros, on this prepared target? populated: the run writes every
 * block first; ledger_kept: an earlier run's ledger describes the data. */
bool target_zeros_known(const struct target *t, bool populated, bool ledger_kept);
/* Does the target hold data this run did not create (an earlier run's worker files)? */
bool target_holds_earlier_data(const struct target *t);
/* A --space-cmd will measure it: whatever it formats is made sparse where the kind asks. */
void target_measured_by_command(struct target *t);
/* How its used space is read (and path: from where). */
enum target_space target_space_of(const struct target *t, char *path, size_t len);
/* Its written data flushed to the device (before a space reading). */
void target_flush(const struct target *t);
/* The files its workers write: one per worker in a directory, else one. */
unsigned target_file_count(const struct target *t);
/* Its own counters (t->ops->observe): 0, or -1 with err. */
int target_observe(const struct target *t, bool fsck, struct target_observation *obs, struct dd_err *err);
/* ENGINE: true when the run starts from an empty volume (formatted or cleared by it). */
bool target_engine_emptied(const struct target *t);
/* ENGINE: the name the engine's API is given for the volume: its directory as held since probe
 * (a later swap of the path's components is not followed). t->path stays the name shown. */
const char *target_engine_dir(const struct target *t);
/* A report at path must not replace the target's data: 0, or -1 with err (target_ops.refuse_output). */
int target_refuse_output(const struct target *t, const char *what, const char *path, bool is_dir, struct dd_err *err);
/* Remove the files this run created (unless keep). */
void target_cleanup(struct target *t, bool keep);
/* Close what probing opened and drop the run lock (safe on a zeroed or failed target, and twice). */
void target_release(struct target *t);
/* The completion data of the kinds' OPTION=VALUE rows, one line each: "SPELLING,KEY= METAVAR
 * CHOICE..." ("engine:,index= NAME mem bdb bloom"); read by completion/dedisbench. */
void target_print_completion(FILE *f);
/* --target's help from the registry, every kind in match order: "FORM (about), ..." into buf. */
void target_help(char *buf, size_t len);
/* "dedisbench.N": the name of a directory target's worker file. */
bool target_is_worker_name(const char *name);

/* The registry (registry.c): every kind, in the order target_probe tries them. */
extern const struct target_ops *const target_kinds[];
extern const size_t target_kind_count;
extern const struct target_ops target_dir_ops, target_file_ops, target_blockdev_ops, target_null_ops,
	target_engine_ops;

#endif
