/* target.c - target validation and set-up: the refusal rules for block devices (mounted, or
 * holding a signature libblkid recognises), free-space checks, worker files and regions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "lib/blockdev.h"
#include "bench/target/claim.h"
#include "lib/dioalign.h"
#include "lib/errmsg.h"
#include "reference-engine/engine.h"
#include "reference-engine/fpindex.h"
#include "lib/pathwithin.h"
#include "bench/target/target.h"
#include "bench/target/volclaim.h"

#define fail(err, len, ...) errmsg_set(err, len, -1, __VA_ARGS__)

static struct file_id file_id_of(const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return (struct file_id){(uint64_t)st->st_rdev, ~0ULL};
	return (struct file_id){(uint64_t)st->st_dev, (uint64_t)st->st_ino};
}

static bool same_file(struct file_id a, struct file_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

/* A worker file's name inside a directory target. */
static void worker_name(unsigned worker, char *name, size_t len)
{
	snprintf(name, len, "dedisbench.%u", worker);
}

bool target_is_worker_name(const char *name)
{
	return !strncmp(name, "dedisbench.", 11) && name[11] && strspn(name + 11, "0123456789") == strlen(name + 11);
}

/* The run lock of the target (`what` names it in the message). */
static int take_lock_into(struct runlock *l, const char *path, enum runlock_kind kind, const char *what, char *err,
			  size_t errlen)
{
	char why[1600];
	int rc = runlock_acquire(l, path, kind, why, sizeof why);
	if (rc == 1)
		return fail(err, errlen, "target %s is %s; one run per target at a time", what, why);
	if (rc)
		return fail(err, errlen, "target %s: %s", what, why);
	return 0;
}

static int take_lock(struct target *t, const char *path, enum runlock_kind kind, const char *what, char *err,
		     size_t errlen)
{
	return take_lock_into(&t->lock, path, kind, what, err, errlen);
}

/* The lock of the file open at fd, by its inode (runlock_acquire_fd): a name made for it after the
 * run began still meets it. */
static int take_inode_lock(struct runlock *l, int fd, bool lock_inode, const char *what, char *err, size_t errlen)
{
	char why[1600];
	int rc = runlock_acquire_fd(l, fd, lock_inode, what, why, sizeof why);
	if (rc == 1)
		return fail(err, errlen, "target %s is %s; one run per target at a time", what, why);
	if (rc)
		return fail(err, errlen, "target %s: %s", what, why);
	return 0;
}

/* An engine volume by its superblock's inode, held with the run (in lock_around, which an engine
 * target has no other use for): a copy made of hard links (cp -al) is the same volume. 0 when
 * there is no superblock (yet). */
static int lock_volume_inode(struct target *t, const char *what, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/superblock", t->path);
	/* through the held directory (engine_fd): never what a swapped path leads to */
	int fd = openat(t->engine_fd, "superblock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : fail(err, errlen, "target %s: %s: %s", what, path, strerror(errno));
	/* no flock on the file itself: the engine's openers share one there */
	int rc = take_inode_lock(&t->lock_around, fd, false, what, err, errlen);
	close(fd);
	return rc;
}

/* One set of data can be named two ways, each with its own lock: a directory as a directory
 * target and as an engine volume (engine:DIR), a worker file (DIR/dedisbench.N) as a file target
 * and through its directory. The second name's lock is taken too, so the two runs meet. */
static int take_lock_around(struct target *t, const char *path, bool dir, bool force, const char *what, char *err,
			    size_t errlen)
{
	if (dir)
		return take_lock_into(&t->lock_around, path, RUNLOCK_VOLUME, what, err, errlen);
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 0; /* it was just found: gone again, the worker's open will fail */
	char *slash = strrchr(real, '/');
	bool worker = target_is_worker_name(slash + 1);
	if (slash == real)
		slash++;
	*slash = 0;
	/* A file of an engine volume (its chunk store holds dedisbench's blocks as written, so they
	 * would pass for ours): the volume's own lock, and --force to write it at all. */
	struct engine_stats g;
	struct dd_err why;
	if (engine_describe(real, &g, &why) == 0) {
		if (!force)
			return fail(err, errlen, "target %s is a file of the engine volume %s (give engine:%s); refusing "
						 "to write it without --force", what, real, real);
		return take_lock_into(&t->lock_around, real, RUNLOCK_VOLUME, what, err, errlen);
	}
	return worker ? take_lock_into(&t->lock_around, real, RUNLOCK_OBJECT, what, err, errlen) : 0;
}

/* An existing file about to be used, its first `extent` bytes: refused unless it is dedisbench's,
 * holds nothing, or force; and, for a run that writes, unless it is this user's (another's file in
 * a shared directory would be left holding the run's data, theirs) or force. `label` names it in
 * messages. fd is open for reading. */
static int check_claim(int fd, const struct stat *st, uint64_t extent, const char *label, bool force, bool no_writes,
		       char *err, size_t errlen)
{
	if (!no_writes && !force && st->st_uid != geteuid())
		return fail(err, errlen, "%s belongs to another user (uid %lu); refusing to write it without --force", label,
			    (unsigned long)st->st_uid);
	const char *how;
	int e;
	enum claim_verdict v = claim_inspect(fd, extent, !no_writes, &how, &e);
	if (v == CLAIM_UNREADABLE)
		return fail(err, errlen, "%s: cannot read it to tell whose data it holds: %s", label, strerror(e));
	if (v == CLAIM_FOREIGN && !force)
		return fail(err, errlen, "%s: %s; refusing to %s it without --force", label, how,
			    no_writes ? "use" : "overwrite");
	return 0;
}

static int probe_blockdev(const struct target_request *req, struct target *t, const struct stat *st,
			  char *err, size_t errlen)
{
	char why[PATH_MAX + 300];
	uint64_t size = 0;
	int ssz = 512;
	int fd = blockdev_claim(req->path, st->st_rdev, O_RDONLY, !req->no_writes, req->force, &size, why, sizeof why);
	if (fd < 0)
		return fail(err, errlen, "target %s", why);
	if (ioctl(fd, BLKSSZGET, &ssz)) {
		int e = errno;
		close(fd);
		return fail(err, errlen, "target %s: cannot read its sector size: %s", req->path, strerror(e));
	}
	t->excl_fd = fd; /* held for the run: nothing mounts it meanwhile */
	t->excl_fd_open = true;
	t->kind = TARGET_BLOCKDEV;
	t->files[0] = file_id_of(st);
	t->device_size = size;
	t->sector_size = (unsigned)ssz;
	uint64_t per = size / req->procs / req->block_size * req->block_size;
	if (req->file_size_given && req->file_size > per)
		return req->size_from
			       ? fail(err, errlen, "target %s (%llu bytes) is smaller than %s (%llu bytes)", req->path,
				      (unsigned long long)size, req->size_from, (unsigned long long)req->file_size)
			       : fail(err, errlen, "target %s (%llu bytes) holds %u regions of at most %llu bytes, not "
						   "--file-size %llu", req->path, (unsigned long long)size, req->procs,
				      (unsigned long long)per, (unsigned long long)req->file_size);
	if (req->file_size_given)
		per = req->file_size;
	if (per < req->block_size)
		return fail(err, errlen, "target %s (%llu bytes) is too small for %u workers of %u-byte blocks",
			    req->path, (unsigned long long)size, req->procs, req->block_size);
	t->region_size = per;
	return 0;
}

static int probe_file(const struct target_request *req, struct target *t, const struct stat *st,
		      char *err, size_t errlen)
{
	t->kind = TARGET_FILE;
	char label[PATH_MAX + 16];
	snprintf(label, sizeof label, "target %s", req->path);
	if (access(req->path, R_OK | W_OK))
		return fail(err, errlen, "%s: %s", label, strerror(errno));
	/* Its own size, split; extended only when --file-size asks for more (as fio's size=). */
	uint64_t per = req->file_size;
	if (!req->file_size_given) {
		if ((uint64_t)st->st_size < (uint64_t)req->procs * req->block_size)
			return fail(err, errlen, "target %s (%llu bytes) holds less than one %u-byte block per worker (%u); "
						 "give --file-size to extend it", req->path, (unsigned long long)st->st_size,
				    req->block_size, req->procs);
		per = (uint64_t)st->st_size / req->procs / req->block_size * req->block_size;
	}
	t->region_size = per;
	int fd = open(req->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", label, strerror(errno));
	struct stat now;
	int rc = fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(st))
			 ? fail(err, errlen, "%s changed while it was being checked", label)
			 : check_claim(fd, &now, per * req->procs, label, req->force, req->no_writes, err, errlen);
	close(fd);
	if (rc)
		return rc;
	t->files[0] = file_id_of(st);
	t->device_size = (uint64_t)st->st_size;
	t->sector_size = dio_align(req->path);
	uint64_t need = per * req->procs;
	if (need > (uint64_t)st->st_size) {
		struct statvfs vfs;
		if (statvfs(req->path, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need - (uint64_t)st->st_size)
			return fail(err, errlen, "target %s: no room to extend it to %llu bytes", req->path,
				    (unsigned long long)need);
	}
	return 0;
}

/* A need in whole MiB, rounded up as the room beside it is rounded down: a refusal never reads
 * "12 MiB free, the volume needs 12 MiB". */
static uint64_t mib_up(uint64_t bytes)
{
	return (bytes + (1 << 20) - 1) >> 20;
}

/* Is id the file of a worker before w? */
static bool same_as_earlier_worker(const struct target *t, unsigned w, struct file_id id)
{
	for (unsigned i = 0; i < w; i++)
		if (same_file(t->files[i], id))
			return true;
	return false;
}

/* One worker file of a directory target, if it exists: never a link, never anything but a regular
 * file, and dedisbench's own unless --force. *have: the bytes it already holds. */
static int probe_worker_file(const struct target_request *req, struct target *t, unsigned w, uint64_t *have,
			     char *err, size_t errlen)
{
	char name[32], label[PATH_MAX + 64];
	worker_name(w, name, sizeof name);
	snprintf(label, sizeof label, "target %s: %s", req->path, name);
	struct stat st;
	*have = 0;
	if (fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : fail(err, errlen, "%s: %s", label, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return fail(err, errlen, "%s is a symbolic link; dedisbench never follows links inside a target "
					 "directory (remove it)", label);
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, "%s exists and is not a regular file", label);
	int fd = openat(t->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", label, strerror(errno));
	struct stat now;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", t->path, name);
	int rc = fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(&st))
			 ? fail(err, errlen, "%s changed while it was being checked", label)
		 : same_as_earlier_worker(t, w, file_id_of(&st))
			 ? fail(err, errlen, "%s is another worker's file too (a hard link); refusing it", label)
			 /* by its inode: another name of it (a hard link elsewhere) meets this run */
			 : take_inode_lock(&t->file_locks[w], fd, true, path, err, errlen)
			 ? -1
			 : check_claim(fd, &now, req->file_size, label, req->force, req->no_writes, err, errlen);
	close(fd);
	if (rc)
		return rc;
	t->files[w] = file_id_of(&st);
	*have = (uint64_t)st.st_blocks * 512;
	return 0;
}

/* Each worker file's lock holds two descriptors for the run (its lock file, the file itself), and
 * the launcher one more per worker (its tally): the soft limit on open files is raised toward the
 * hard one where it is lower than that needs (520 workers under a soft limit of 1024 failed). */
static void room_for_file_locks(unsigned procs)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)procs * 3 + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

static int probe_dir(const struct target_request *req, struct target *t, char *err, size_t errlen)
{
	t->kind = TARGET_DIR;
	t->sector_size = dio_align(req->path);
	t->region_size = req->file_size;
	if (access(req->path, W_OK | X_OK))
		return fail(err, errlen, "target directory %s is not writable: %s", req->path, strerror(errno));
	t->dir_fd = open(req->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0)
		return fail(err, errlen, "target directory %s: %s", req->path, strerror(errno));
	t->dir_fd_open = true;
	if (!(t->file_locks = calloc(req->procs, sizeof *t->file_locks)))
		return fail(err, errlen, "out of memory");
	t->nfile_locks = req->procs;
	room_for_file_locks(req->procs);
	/* Room: what the worker files still need beyond what existing ones (from --keep) hold. */
	uint64_t need = 0;
	for (unsigned w = 0; w < req->procs; w++) {
		uint64_t have;
		if (probe_worker_file(req, t, w, &have, err, errlen))
			return -1;
		if (have < req->file_size)
			need += req->file_size - have;
	}
	struct statvfs vfs;
	if (fstatvfs(t->dir_fd, &vfs))
		return fail(err, errlen, "target directory %s: %s", req->path, strerror(errno));
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (need > avail)
		return fail(err, errlen, "target directory %s has %llu MiB free, the run needs %llu MiB (%u x %llu MiB)",
			    req->path, (unsigned long long)(avail >> 20), (unsigned long long)mib_up(need), req->procs,
			    (unsigned long long)mib_up(req->file_size));
	return 0;
}

/* engine:DIR[,OPTION=VALUE]... - the embedded reference engine, formatted on first use. Each
 * option is a row: its name, where its value goes, and what accepts a value. */
static bool engine_index_ok(const char *v) { return index_find(v) != NULL; } /* the engine's own list */
static bool engine_compress_ok(const char *v) { return !strcmp(v, "none") || !strcmp(v, "lz4"); }

static const struct engine_opt {
	const char *name;
	size_t field;  /* offset of a char[8] in struct target */
	bool (*valid)(const char *v);
	const char *choices;
} engine_opts[] = {
	{"index", offsetof(struct target, engine_index), engine_index_ok, "mem|bdb|bloom"},
	{"compress", offsetof(struct target, engine_compress), engine_compress_ok, "none|lz4"},
};
#define ENGINE_OPTS (sizeof engine_opts / sizeof engine_opts[0])

/* engine_at: the held directory by a name the engine's API takes, checked to lead to it. */
static int name_held_volume(struct target *t, const char *shown, char *err, size_t errlen)
{
	struct stat held, named;
	snprintf(t->engine_at, sizeof t->engine_at, "/proc/self/fd/%d", t->engine_fd);
	if (fstat(t->engine_fd, &held) || stat(t->engine_at, &named) || !same_file(file_id_of(&held), file_id_of(&named)))
		return fail(err, errlen, "target %s: cannot name the volume's directory through /proc/self/fd (is /proc "
					 "mounted?); a run holds it open so that no later swap of %s is followed", shown, t->path);
	t->engine_dir = file_id_of(&held);
	return 0;
}

/* The engine's messages name the volume as they were given it (engine_at): say t->path instead. */
static int said_of_path(const struct target *t, char *err, size_t errlen)
{
	size_t at = strlen(t->engine_at);
	char *p = at ? strstr(err, t->engine_at) : NULL;
	if (p) {
		char rest[1024];
		snprintf(rest, sizeof rest, "%s", p + at);
		snprintf(p, errlen - (size_t)(p - err), "%s%s", t->path, rest);
	}
	return -1;
}

/* Resolves the volume's path once: the directory it is named in is held, and the volume's own
 * directory when it exists (opened beneath it, never through a link). Everything after works on
 * those: a component of the path swapped for a link during the run is never followed. */
static int hold_volume(const struct target_request *req, struct target *t, char *err, size_t errlen)
{
	char real[PATH_MAX], parent[PATH_MAX];
	if (realpath(t->path, real)) { /* it exists: its canonical name */
		path_parent(real, parent, sizeof parent);
	} else {
		path_parent(t->path, real, sizeof real);
		if (!realpath(real, parent))
			return fail(err, errlen, "target %s: cannot create a volume there: %s", req->path, strerror(errno));
		snprintf(real, sizeof real, "%s", t->path);
		for (size_t n = strlen(real); n > 1 && real[n - 1] == '/'; n--)
			real[n - 1] = 0; /* "vol/": the entry is vol */
	}
	const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || strlen(base) >= sizeof t->engine_name)
		return fail(err, errlen, "target %s: give the volume's own directory", req->path);
	snprintf(t->engine_name, sizeof t->engine_name, "%s", base);
	t->engine_parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->engine_parent_fd < 0)
		return fail(err, errlen, "target %s: cannot create a volume there: %s", req->path, strerror(errno));
	t->engine_fd = openat(t->engine_parent_fd, t->engine_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->engine_fd < 0)
		return errno == ENOENT ? 0 : fail(err, errlen, "target %s: cannot create a volume there: %s", req->path,
						  strerror(errno));
	return name_held_volume(t, req->path, err, errlen);
}

/* engine:DIR[,OPTION=VALUE]...: DIR into t->path, the options into t. */
static int parse_engine_spec(const struct target_request *req, struct target *t, bool given[ENGINE_OPTS], char *err,
			     size_t errlen)
{
	const char *spec = req->path + strlen("engine:");
	const char *comma = strchr(spec, ',');
	size_t dlen = comma ? (size_t)(comma - spec) : strlen(spec);
	if (!dlen || dlen >= sizeof t->path)
		return fail(err, errlen, "target %s: give engine:DIR[,index=mem|bdb|bloom][,compress=none|lz4]", req->path);
	memcpy(t->path, spec, dlen);
	t->path[dlen] = 0;
	snprintf(t->engine_index, sizeof t->engine_index, "mem");
	snprintf(t->engine_compress, sizeof t->engine_compress, "none");
	for (const char *opt = comma; opt; opt = strchr(opt + 1, ',')) {
		const char *v = opt + 1;
		size_t n = strcspn(v, ","), k;
		const char *eq = memchr(v, '=', n);
		for (k = 0; eq && k < ENGINE_OPTS; k++)
			if ((size_t)(eq - v) == strlen(engine_opts[k].name) && !strncmp(v, engine_opts[k].name, (size_t)(eq - v)))
				break;
		if (!eq || k == ENGINE_OPTS)
			return fail(err, errlen, "target %s: unknown engine option '%.*s' (index=mem|bdb|bloom, compress=none|lz4)",
				    req->path, (int)n, v);
		char value[8] = "";
		size_t vlen = n - (size_t)(eq + 1 - v);
		if (vlen < sizeof value)
			memcpy(value, eq + 1, vlen);
		if (given[k]) /* the last would win silently */
			return fail(err, errlen, "target %s: engine option %s given twice", req->path, engine_opts[k].name);
		if (!value[0] || !engine_opts[k].valid(value))
			return fail(err, errlen, "target %s: engine option %s='%.*s' is not one of %s", req->path,
				    engine_opts[k].name, (int)vlen, eq + 1, engine_opts[k].choices);
		snprintf((char *)t + engine_opts[k].field, 8, "%s", value);
		given[k] = true;
	}
	return 0;
}

/* No volume there yet: a new or empty directory only (a volume's directory is all the volume's),
 * with room for it. */
static int probe_new_volume(const struct target_request *req, struct target *t, char *err, size_t errlen)
{
	/* Bad input, refused here: engine_format would refuse it only when the run prepares the
	 * target, a run failure (exit 1) rather than a bad option. */
	if (req->block_size > ENGINE_MAX_BLOCK)
		return fail(err, errlen, "target %s: --block-size %u is more than an engine volume's largest "
					 "block, %u bytes (64 KiB)", req->path, req->block_size, ENGINE_MAX_BLOCK);
	if (t->engine_fd >= 0) {
		DIR *d = opendir(t->engine_at);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
				;
			closedir(d);
			if (de)
				return fail(err, errlen, "target %s: %s holds no volume and is not empty; a volume is "
							 "formatted into a new or empty directory", req->path, t->path);
		}
	}
	int where = t->engine_fd >= 0 ? t->engine_fd : t->engine_parent_fd;
	if (faccessat(where, ".", W_OK | X_OK, 0))
		return fail(err, errlen, "target %s: cannot create a volume there", req->path);
	struct statvfs vfs;
	uint64_t need = req->file_size * req->procs + req->file_size * req->procs / 16;
	if (fstatvfs(where, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need)
		return fail(err, errlen, "target %s: %llu MiB free, the volume needs %llu MiB", req->path,
			    (unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20), (unsigned long long)mib_up(need));
	return 0;
}

/* An existing volume: taken as it is, with the geometry the run asks for, and only when its data
 * is dedisbench's (volclaim.h) unless --force. */
static int probe_volume(const struct target_request *req, struct target *t, const struct engine_stats *g,
			const bool given[ENGINE_OPTS], char *err, size_t errlen)
{
	t->engine_exists = true;
	/* a run opens the volume to write (its state page, at least): on read-only storage the open
	 * failed once the run had begun (exit 1) */
	struct statvfs rofs;
	if (fstatvfs(t->engine_fd, &rofs) == 0 && (rofs.f_flag & ST_RDONLY))
		return fail(err, errlen, "target %s is on read-only storage: a run opens the volume to write (dedisengine "
					 "stat and export read a clean one there)", req->path);
	if (g->block_size != req->block_size)
		return fail(err, errlen, "target %s: the volume has %llu-byte blocks, the run uses --block-size %u",
			    req->path, (unsigned long long)g->block_size, req->block_size);
	if (given[0] && strcmp(g->index, t->engine_index))
		return fail(err, errlen, "target %s: the volume was formatted with index=%s", req->path, g->index);
	if (given[1] && strcmp(g->compress, t->engine_compress))
		return fail(err, errlen, "target %s: the volume was formatted with compress=%s", req->path, g->compress);
	snprintf(t->engine_index, sizeof t->engine_index, "%s", g->index);
	snprintf(t->engine_compress, sizeof t->engine_compress, "%s", g->compress);
	uint64_t have = g->logical_blocks * g->block_size;
	if (!req->file_size_given)
		t->region_size = have / req->procs / req->block_size * req->block_size;
	if (t->region_size < req->block_size || t->region_size * req->procs > have)
		return fail(err, errlen, "target %s: the volume holds %llu bytes, %u workers x %llu need more", req->path,
			    (unsigned long long)have, req->procs, (unsigned long long)t->region_size);
	const char *how;
	int e;
	enum claim_verdict v = volclaim_inspect(t->engine_at, t->engine_fd, &how, &e);
	if (v == CLAIM_UNREADABLE)
		return fail(err, errlen, "target %s: cannot read the volume to tell whose data it holds: %s", req->path,
			    strerror(e));
	if (v == CLAIM_FOREIGN && !req->force)
		return fail(err, errlen, "target %s: %s; refusing to %s it without --force", req->path, how,
			    req->no_writes ? "use" : "overwrite");
	/* As a file: a run that only reads never marks another's volume dedisbench's. */
	t->engine_marked = v != CLAIM_FOREIGN || !req->no_writes;
	return 0;
}

/* A file target's lock, by the inode `st` found (runlock_acquire_fd, with a flock on the file). */
static int lock_file_target(struct target *t, const char *path, const struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "target %s: %s", path, strerror(errno));
	struct stat now;
	int rc = fstat(fd, &now) || !same_file(file_id_of(&now), file_id_of(st))
			 ? fail(err, errlen, "target %s changed while it was being checked", path)
			 : take_inode_lock(&t->lock, fd, true, path, err, errlen);
	close(fd);
	return rc;
}

static int probe_engine(const struct target_request *req, struct target *t, char *err, size_t errlen)
{
	bool given[ENGINE_OPTS] = {false};
	t->kind = TARGET_ENGINE;
	if (parse_engine_spec(req, t, given, err, errlen))
		return -1;
	/* A link to the volume's directory: the run works on what it names (removing a volume it
	 * formatted there, which the removal, never following links, left behind). A dangling one was
	 * taken for a new directory, and its mkdir failed after the run had begun (exit 1). */
	struct stat lst;
	if (lstat(t->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char real[PATH_MAX];
		if (!realpath(t->path, real))
			return fail(err, errlen, "target %s: %s is a symbolic link to nothing: %s", req->path, t->path,
				    strerror(errno));
		if (strlen(real) >= sizeof t->path - 32)
			return fail(err, errlen, "target path is too long");
		snprintf(t->path, sizeof t->path, "%s", real);
	}
	if (take_lock(t, t->path, RUNLOCK_VOLUME, req->path, err, errlen) || hold_volume(req, t, err, errlen))
		return -1;
	/* the chunk store's files are in DIR (O_DIRECT there with a direct run), made there if new */
	char up[PATH_MAX];
	path_parent(t->path, up, sizeof up);
	t->sector_size = dio_align(t->engine_fd >= 0 ? t->engine_at : up);
	t->region_size = req->file_size;
	struct engine_stats g;
	struct dd_err why;
	int rc = t->engine_fd < 0 ? -ENOENT : engine_describe(t->engine_at, &g, &why);
	if (rc == -ENOENT)
		return probe_new_volume(req, t, err, errlen);
	if (rc) {
		said_of_path(t, why.msg, sizeof why.msg);
		return fail(err, errlen, "target %s: %s", req->path, why.msg);
	}
	if (lock_volume_inode(t, req->path, err, errlen)) /* an existing volume: by its inode too */
		return -1;
	return probe_volume(req, t, &g, given, err, errlen);
}

/* Below the alignment O_DIRECT needs every transfer fails with EINVAL: bad input, not a run failure. */
static int check_direct(const struct target_request *req, const struct target *t, char *err, size_t errlen)
{
	if (!req->direct || req->block_size % t->sector_size == 0)
		return 0;
	if (t->kind == TARGET_BLOCKDEV)
		return fail(err, errlen, "--block-size %u is not a multiple of %s's %u-byte sectors (needed for O_DIRECT)",
			    req->block_size, req->path, t->sector_size);
	return fail(err, errlen, "--block-size %u is not a multiple of the %u bytes O_DIRECT needs on %s (the sector "
				 "size under its file system)", req->block_size, t->sector_size, req->path);
}

int target_probe(const struct target_request *req, struct target *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	t->dir_fd = t->excl_fd = t->engine_fd = t->engine_parent_fd = -1;
	t->procs = req->procs;
	t->no_writes = req->no_writes;
	if (req->procs > sizeof t->created / sizeof t->created[0])
		return fail(err, errlen, "--procs %u is more than %zu", req->procs, sizeof t->created / sizeof t->created[0]);
	if (strlen(req->path) >= sizeof t->path - 32)
		return fail(err, errlen, "target path is too long");
	snprintf(t->path, sizeof t->path, "%s", req->path);
	if (!strncmp(req->path, "engine:", 7))
		return probe_engine(req, t, err, errlen) ? -1 : check_direct(req, t, err, errlen);
	if (!strcmp(req->path, "null")) {
		t->kind = TARGET_NULL;
		t->region_size = req->file_size;
		t->sector_size = 512;
		return 0;
	}
	struct stat st;
	if (stat(req->path, &st))
		return fail(err, errlen, "target %s: %s (give a directory, an existing file, a block device or null)",
			    req->path, strerror(errno));
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return fail(err, errlen, "target %s is not a directory, regular file or block device", req->path);
	if ((S_ISREG(st.st_mode) ? lock_file_target(t, req->path, &st, err, errlen)
				  : take_lock(t, req->path, RUNLOCK_OBJECT, req->path, err, errlen)) ||
	    (!S_ISBLK(st.st_mode) && take_lock_around(t, req->path, S_ISDIR(st.st_mode), req->force, req->path, err, errlen)))
		return -1;
	int rc;
	if (S_ISBLK(st.st_mode))
		rc = probe_blockdev(req, t, &st, err, errlen);
	else if (S_ISREG(st.st_mode))
		rc = probe_file(req, t, &st, err, errlen);
	else
		rc = probe_dir(req, t, err, errlen);
	if (rc)
		return rc;
	return check_direct(req, t, err, errlen);
}

void target_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base)
{
	/* target_probe bounds t->path well below PATH_MAX, so these never truncate. */
	int n;
	if (t->kind == TARGET_DIR) {
		n = snprintf(path, len, "%s/dedisbench.%u", t->path, worker);
		*base = 0;
	} else {
		n = snprintf(path, len, "%s", t->kind == TARGET_ENGINE ? target_engine_dir(t) : t->path);
		*base = (uint64_t)worker * t->region_size;
	}
	if (n < 0 || (size_t)n >= len)
		path[0] = 0;
}

int target_open_flags(const struct target *t)
{
	return t->kind == TARGET_DIR ? O_NOFOLLOW : 0;
}

int target_check_opened(const struct target *t, unsigned worker, int fd)
{
	if (t->kind != TARGET_DIR && t->kind != TARGET_FILE && t->kind != TARGET_BLOCKDEV)
		return 0;
	struct stat st;
	if (fstat(fd, &st))
		return -1;
	if (!same_file(file_id_of(&st), t->files[t->kind == TARGET_DIR ? worker : 0])) {
		errno = ESTALE; /* replaced between the checks and the run */
		return -1;
	}
	return 0;
}

/* A new volume's directory, made beneath the directory probing held (or the empty one it found,
 * held since), held from here to its removal. */
static int make_volume_dir(struct target *t, char *err, size_t errlen)
{
	if (t->engine_fd >= 0)
		return 0;
	if (mkdirat(t->engine_parent_fd, t->engine_name, 0755))
		return fail(err, errlen, errno == EEXIST ? "%s appeared after it was checked; refusing to format it"
							 : "cannot create %s: %s", t->path, strerror(errno));
	t->engine_dir_made = true;
	t->engine_fd = openat(t->engine_parent_fd, t->engine_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (t->engine_fd < 0 || fstat(t->engine_fd, &st) || st.st_uid != geteuid())
		return fail(err, errlen, "%s was replaced as it was made; refusing to format it", t->path);
	fsync(t->engine_parent_fd); /* the new directory's own name */
	return name_held_volume(t, t->path, err, errlen);
}

/* A run that writes starts from an empty volume (an existing one is discarded whole: its blocks
 * stay in the index for dedup until GC), so what the engine holds afterwards is exactly this
 * run's. A run that only reads, or one continuing a kept ledger, takes it as it is. */
static int prepare_engine(struct target *t, uint32_t block_size, char *err, size_t errlen)
{
	if (t->engine_exists && (t->keep_data || t->no_writes))
		return 0;
	if (!t->engine_exists) {
		if (make_volume_dir(t, err, errlen))
			return -1;
		struct engine_format_params fp = {
			.logical_bytes = t->region_size * t->procs, .data_bytes = 0, /* the engine's default headroom */
			.block_size = block_size, .index = t->engine_index, .hash = "sha1",
			.compress = t->engine_compress, .journal_bytes = 0,
			/* a space command (du, df) must see the blocks as they are written */
			.preallocate = t->sparse ? "sparse" : NULL,
		};
		t->engine_formatted = t->engine_marked = true; /* whatever is in the directory is this run's */
		struct dd_err de;
		if (!engine_format(t->engine_at, &fp, &de))
			return 0;
		snprintf(err, errlen, "%s", de.msg);
		return said_of_path(t, err, errlen);
	}
	struct engine_open_params op = {0};
	struct engine *e;
	struct dd_err de;
	if (engine_open(t->engine_at, &op, &e, &de)) {
		snprintf(err, errlen, "%s", de.msg);
		return said_of_path(t, err, errlen);
	}
	int rc = engine_discard(e, 0, engine_logical_blocks(e));
	int rc2 = engine_close(e);
	if (rc || rc2)
		return fail(err, errlen, "cannot clear the volume in %s: %s", t->path, strerror(-(rc ? rc : rc2)));
	t->engine_cleared = true;
	return 0;
}

/* issue 14: on a copy-on-write file system a preallocated extent is written in place, neither
 * compressed nor deduplicated (btrfs writes into prealloc extents NOCOW), so there the files are
 * sized sparse: the savings a run measures are the file system's, not defeated by the benchmark. */
static bool preallocation_defeats_savings(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf))
		return false;
	unsigned long type = (unsigned long)sf.f_type;
	return type == 0x9123683EUL /* btrfs */ || type == 0x2FC12FC1UL /* zfs */ || type == 0xCA451A4EUL /* bcachefs */;
}

/* Reserve len bytes (a full file system fails here, not mid-run), or just size the file where
 * reserving would defeat the system's savings or the caller asks; never shorter (what lies past
 * the run's part was not checked as the run's to lose). 0 or an errno. */
static int size_file(int fd, uint64_t len, bool sparse)
{
	int rc = sparse || preallocation_defeats_savings(fd) ? EOPNOTSUPP : posix_fallocate(fd, 0, (off_t)len);
	struct stat st;
	if (rc == EOPNOTSUPP || rc == EINVAL)
		rc = fstat(fd, &st) ? errno : (uint64_t)st.st_size >= len ? 0 : ftruncate(fd, (off_t)len) ? errno : 0;
	return rc;
}

/* A worker file this run just created, locked by its inode as one probing found is (another run
 * may have taken a hard link made this instant: then this run fails). Closes fd on an error. */
static int lock_created(struct target *t, unsigned w, int fd, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/dedisbench.%u", t->path, w);
	struct stat st;
	if (fstat(fd, &st) == 0)
		t->files[w] = file_id_of(&st); /* what the cleanup removes */
	if (take_inode_lock(&t->file_locks[w], fd, true, path, err, errlen)) {
		close(fd);
		return -1;
	}
	return 0;
}

int target_prepare(struct target *t, uint32_t block_size, char *err, size_t errlen)
{
	if (t->kind == TARGET_ENGINE) /* a volume formatted here: locked by its inode from now on */
		return prepare_engine(t, block_size, err, errlen) ||
		       (!t->lock_around.held && lock_volume_inode(t, t->path, err, errlen)) ? -1 : 0;
	if (t->kind == TARGET_DIR) {
		for (unsigned w = 0; w < t->procs; w++) {
			char name[32];
			worker_name(w, name, sizeof name);
			/* Created here, or the very file probing checked: never a link, never a newcomer. */
			int fd = openat(t->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd >= 0) {
				t->created[w] = true;
				if (lock_created(t, w, fd, err, errlen))
					return -1;
			} else if (errno == EEXIST) {
				fd = openat(t->dir_fd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
				struct stat st;
				if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
						!same_file(file_id_of(&st), t->files[w]))) {
					close(fd);
					return fail(err, errlen, "target %s: %s appeared or changed after it was checked; "
								 "refusing to write it", t->path, name);
				}
			}
			if (fd < 0)
				return fail(err, errlen, "cannot create %s/%s: %s", t->path, name,
					    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
			struct stat st;
			if (fstat(fd, &st)) {
				int e = errno;
				close(fd);
				return fail(err, errlen, "cannot create %s/%s: %s", t->path, name, strerror(e));
			}
			t->files[w] = file_id_of(&st);
			/* A run that only reads marks only a file it made: marked, another's file would
			 * pass later runs' check as dedisbench's and be overwritten without --force. */
			if (!t->no_writes || t->created[w])
				claim_mark(fd);
			/* Reserve the space now so a full filesystem fails here, not mid-run. */
			int rc = size_file(fd, t->region_size, t->sparse);
			close(fd);
			if (rc)
				return fail(err, errlen, "cannot size %s/%s to %llu bytes: %s", t->path, name,
					    (unsigned long long)t->region_size, strerror(rc));
		}
	} else if (t->kind == TARGET_FILE) {
		int fd = open(t->path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return fail(err, errlen, "cannot open %s: %s", t->path, strerror(errno));
		if (target_check_opened(t, 0, fd)) {
			close(fd);
			return fail(err, errlen, "target %s changed after it was checked; refusing to write it", t->path);
		}
		if (!t->no_writes) /* as for a worker file, above */
			claim_mark(fd);
		uint64_t need = t->region_size * t->procs;
		int rc = need > t->device_size ? size_file(fd, need, t->sparse) : 0;
		close(fd);
		if (rc)
			return fail(err, errlen, "cannot extend %s to %llu bytes: %s", t->path, (unsigned long long)need,
				    strerror(rc));
	}
	return 0;
}

/* Everything under fd (a directory), without following links: what a volume directory holds. */
static void remove_under(int fd)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno != EISDIR)
			continue;
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_under(sub);
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

/* A volume this run formatted: its files (whatever the engine made them), beneath the directory
 * held since it was made or probed wherever that now is, and that directory if this run created
 * it and its name still leads to it. Only formatted into a new or empty directory, so all of it
 * is the run's; nothing is reached through a link, nor by the path, which may lead elsewhere now. */
static void remove_volume(const struct target *t)
{
	int fd = t->engine_fd >= 0 ? fcntl(t->engine_fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0)
		return;
	remove_under(fd);
	struct stat st;
	if (t->engine_dir_made &&
	    fstatat(t->engine_parent_fd, t->engine_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    same_file(file_id_of(&st), t->engine_dir))
		unlinkat(t->engine_parent_fd, t->engine_name, AT_REMOVEDIR);
}

bool target_all_created(const struct target *t)
{
	for (unsigned w = 0; w < t->procs; w++)
		if (!t->created[w])
			return false;
	return true;
}

bool target_engine_emptied(const struct target *t)
{
	return t->engine_formatted || t->engine_cleared;
}

const char *target_engine_dir(const struct target *t)
{
	return t->engine_at[0] ? t->engine_at : t->path;
}

void target_cleanup(struct target *t, bool keep)
{
	if (t->kind == TARGET_ENGINE && t->engine_formatted && !keep)
		remove_volume(t);
	else if (t->kind == TARGET_ENGINE && t->engine_marked && t->engine_fd >= 0)
		volclaim_mark(t->engine_at, t->engine_fd); /* it stays: the next run knows it for ours */
	if (t->kind == TARGET_ENGINE)
		t->engine_formatted = t->engine_marked = false;
	if (t->kind != TARGET_DIR || keep || !t->dir_fd_open)
		return;
	for (unsigned w = 0; w < t->procs; w++) {
		if (!t->created[w])
			continue;
		char name[32];
		struct stat st;
		worker_name(w, name, sizeof name);
		/* only the file this run created, not whatever took its name since */
		if (fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && same_file(file_id_of(&st), t->files[w]))
			unlinkat(t->dir_fd, name, 0);
		t->created[w] = false;
	}
}

void target_release(struct target *t)
{
	if (t->dir_fd_open)
		close(t->dir_fd);
	if (t->excl_fd_open)
		close(t->excl_fd);
	t->dir_fd_open = t->excl_fd_open = false;
	t->dir_fd = t->excl_fd = -1;
	if (t->kind == TARGET_ENGINE) {
		if (t->engine_fd >= 0)
			close(t->engine_fd);
		if (t->engine_parent_fd >= 0)
			close(t->engine_parent_fd);
		t->engine_fd = t->engine_parent_fd = -1;
		t->engine_at[0] = 0;
	}
	runlock_release(&t->lock);
	runlock_release(&t->lock_around);
	for (unsigned i = 0; i < t->nfile_locks; i++)
		runlock_release(&t->file_locks[i]);
	free(t->file_locks);
	t->file_locks = NULL;
	t->nfile_locks = 0;
}
