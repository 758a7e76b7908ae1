/* target_engine.c - engine:DIR[,OPTION=VALUE]...: the embedded reference engine's volume as the
 * target, formatted on first use (or cleared), driven in process, validated by its own counters. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "bench/ioengine/ioengine.h"
#include "bench/target/claim.h"
#include "bench/target/targetkind.h"
#include "bench/target/volclaim.h"
#include "lib/dioalign.h"
#include "lib/opttable.h"
#include "lib/pathwithin.h"
#include "reference-engine/engine.h"
#include "reference-engine/fpindex.h"

/* An engine volume by its superblock's inode, held with the run (in lock_around, which an engine
 * target has no other use for): a copy made of hard links (cp -al) is the same volume. 0 when
 * there is no superblock (yet). */
static int lock_volume_inode(struct target *t, const char *what, struct dd_err *err)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/superblock", t->path);
	/* through the held directory (engine_fd): never what a swapped path leads to */
	int fd = openat(t->engine_fd, "superblock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_fail(err, -1, "target %s: %s: %s", what, path, strerror(errno));
	/* no flock on the file itself: the engine's openers share one there */
	int rc = target_lock_inode(&t->lock_around, fd, false, what, err);
	close(fd);
	return rc;
}

/* engine:DIR[,OPTION=VALUE]... - the embedded reference engine, formatted on first use. Each
 * option is an option table row: a choice, copied into a char[8] of struct target, its first
 * choice the default. The index names are the engine's index registry's (filled by
 * engine_option_rows). */
#define CHOICE_FIELD 8 /* the bytes of engine_index and engine_compress */
_Static_assert(sizeof ((struct target *)0)->engine_index == CHOICE_FIELD, "engine_index is a char[8]");
_Static_assert(sizeof ((struct target *)0)->engine_compress == CHOICE_FIELD, "engine_compress is a char[8]");
static const char *index_names[16];
static const char *const compress_names[] = {"none", "lz4", NULL};

/* "a|b|c": the choices of row r. */
static const char *choices_spelled(const struct opt_row *r, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t k = 0; r->choices[k] && used < len; k++) {
		int n = snprintf(buf + used, len - used, "%s%s", k ? "|" : "", r->choices[k]);
		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* OT_CUSTOM: v, one of the row's choices, into the row's char[8]. */
static int parse_choice(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			struct dd_err *err)
{
	(void)label;
	(void)shown; /* the whole value is shown, as the target's other refusals show theirs */
	for (size_t k = 0; r->choices[k]; k++)
		if (!strcmp(v, r->choices[k]) && strlen(v) < CHOICE_FIELD) {
			snprintf((char *)base + r->offset, CHOICE_FIELD, "%s", v);
			return 0;
		}
	char list[128];
	return err_fail(err, -1, "engine option %s='%s' is not one of %s", r->name, v, choices_spelled(r, list, sizeof list));
}

static const struct opt_row engine_rows[] = {
	{.name = "index", .arg = "NAME", .type = OT_CUSTOM, .offset = offsetof(struct target, engine_index),
	 .choices = index_names, .help = "the volume's fingerprint index", .parse = parse_choice},
	{.name = "compress", .arg = "HOW", .type = OT_CUSTOM, .offset = offsetof(struct target, engine_compress),
	 .choices = compress_names, .help = "how the volume stores blocks", .parse = parse_choice},
};
#define ENGINE_OPTS (sizeof engine_rows / sizeof engine_rows[0])

/* The engine target's option table, its index choices taken from the engine's registry. */
static const struct opt_table *engine_option_rows(void)
{
	static const struct opt_table table = {engine_rows, ENGINE_OPTS, 0, 0};
	for (size_t i = 0; fpindex_registry[i] && i + 1 < sizeof index_names / sizeof index_names[0]; i++)
		index_names[i] = fpindex_registry[i]->name;
	return &table;
}

/* Each row as BEFOREname=a|b|cAFTER, the first without before's leading ", " (before ", ":
 * "index=mem|bdb|bloom, compress=none|lz4"; before "[,", after "]": "[,index=...][,compress=...]"). */
static const char *options_spelled(const struct opt_table *table, const char *before, const char *after, char *buf,
				   size_t len)
{
	char list[128];
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < table->count && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s=%s%s", i ? before : before + strspn(before, ", "),
				 table->rows[i].name, choices_spelled(&table->rows[i], list, sizeof list), after);
		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* engine_at: the held directory by a name the engine's API takes, checked to lead to it. */
static int name_held_volume(struct target *t, const char *shown, struct dd_err *err)
{
	struct stat held, named;
	snprintf(t->engine_at, sizeof t->engine_at, "/proc/self/fd/%d", t->engine_fd);
	if (fstat(t->engine_fd, &held) || stat(t->engine_at, &named) || !same_file(file_id_of(&held), file_id_of(&named)))
		return err_fail(err, -1, "target %s: cannot name the volume's directory through /proc/self/fd (is /proc "
					 "mounted?); a run holds it open so that no later swap of %s is followed", shown, t->path);
	t->engine_dir = file_id_of(&held);
	return 0;
}

/* The engine's messages name the volume as they were given it (engine_at): err's said of t->path
 * instead. -1. */
static int said_of_path(const struct target *t, struct dd_err *err)
{
	size_t at = strlen(t->engine_at);
	char *p = at ? strstr(err->msg, t->engine_at) : NULL;
	if (p) {
		char rest[sizeof err->msg];
		snprintf(rest, sizeof rest, "%s", p + at);
		snprintf(p, sizeof err->msg - (size_t)(p - err->msg), "%s%s", t->path, rest);
	}
	return -1;
}

/* The engine's own failure (in err's message buffer), said of t->path: -1. */
static int engine_failed(const struct target *t, struct dd_err *err)
{
	err->resource = false;
	return said_of_path(t, err);
}

/* Resolves the volume's path once: the directory it is named in is held, and the volume's own
 * directory when it exists (opened beneath it, never through a link). Everything after works on
 * those: a component of the path swapped for a link during the run is never followed. */
static int hold_volume(const struct target_request *req, struct target *t, struct dd_err *err)
{
	char real[PATH_MAX], parent[PATH_MAX];
	if (realpath(t->path, real)) { /* it exists: its canonical name */
		path_parent(real, parent, sizeof parent);
	} else {
		path_parent(t->path, real, sizeof real);
		if (!realpath(real, parent))
			return err_fail(err, -1, "target %s: cannot create a volume there: %s", req->path, strerror(errno));
		snprintf(real, sizeof real, "%s", t->path);
		for (size_t n = strlen(real); n > 1 && real[n - 1] == '/'; n--)
			real[n - 1] = 0; /* "vol/": the entry is vol */
	}
	const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || strlen(base) >= sizeof t->engine_name)
		return err_fail(err, -1, "target %s: give the volume's own directory", req->path);
	snprintf(t->engine_name, sizeof t->engine_name, "%s", base);
	t->engine_parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->engine_parent_fd < 0)
		return err_fail(err, -1, "target %s: cannot create a volume there: %s", req->path, strerror(errno));
	t->engine_fd = openat(t->engine_parent_fd, t->engine_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->engine_fd < 0)
		return errno == ENOENT ? 0 : err_fail(err, -1, "target %s: cannot create a volume there: %s", req->path,
						  strerror(errno));
	return name_held_volume(t, req->path, err);
}

/* engine:DIR[,OPTION=VALUE]...: DIR into t->path, the options into t (each row's first choice
 * unless given). Part by part, so that the first bad one is the one refused. */
static int parse_engine_spec(const struct target_request *req, struct target *t, bool given[ENGINE_OPTS],
			     struct dd_err *err)
{
	const struct opt_table *table = engine_option_rows();
	const char *spec = req->path + strlen("engine:");
	const char *comma = strchr(spec, ',');
	size_t dlen = comma ? (size_t)(comma - spec) : strlen(spec);
	char list[256];
	if (!dlen || dlen >= sizeof t->path)
		return err_fail(err, -1, "target %s: give engine:DIR%s", req->path,
			    options_spelled(table, "[,", "]", list, sizeof list));
	memcpy(t->path, spec, dlen);
	t->path[dlen] = 0;
	for (size_t i = 0; i < table->count; i++)
		snprintf((char *)t + table->rows[i].offset, CHOICE_FIELD, "%s", table->rows[i].choices[0]);
	for (const char *opt = comma; opt; opt = strchr(opt + 1, ',')) {
		const char *v = opt + 1;
		size_t n = strcspn(v, ",");
		const char *eq = memchr(v, '=', n);
		char key[16] = "", part[640]; /* longer: the message (512) is cut before the value it shows */
		if (eq && (size_t)(eq - v) < sizeof key)
			memcpy(key, v, (size_t)(eq - v));
		if (!eq || opt_find_long(table, key) < 0)
			return err_fail(err, -1, "target %s: unknown engine option '%.*s' (%s)", req->path, (int)n, v,
				    options_spelled(table, ", ", "", list, sizeof list));
		snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), v);
		if (opt_parse_kv(table, t, part, ',', given, "engine option", err) < 0)
			return err_forward(err, -1, "target %s", req->path);
	}
	return 0;
}

/* No volume there yet: a new or empty directory only (a volume's directory is all the volume's),
 * with room for it. */
static int probe_new_volume(const struct target_request *req, struct target *t, struct dd_err *err)
{
	/* Bad input, refused here: engine_format would refuse it only when the run prepares the
	 * target, a run failure (exit 1) rather than a bad option. */
	if (req->block_size > ENGINE_MAX_BLOCK)
		return err_fail(err, -1, "target %s: --block-size %u is more than an engine volume's largest "
					 "block, %u bytes (64 KiB)", req->path, req->block_size, ENGINE_MAX_BLOCK);
	if (t->engine_fd >= 0) {
		DIR *d = opendir(t->engine_at);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
				;
			closedir(d);
			if (de)
				return err_fail(err, -1, "target %s: %s holds no volume and is not empty; a volume is "
							 "formatted into a new or empty directory", req->path, t->path);
		}
	}
	int where = t->engine_fd >= 0 ? t->engine_fd : t->engine_parent_fd;
	if (faccessat(where, ".", W_OK | X_OK, 0))
		return err_fail(err, -1, "target %s: cannot create a volume there", req->path);
	struct statvfs vfs;
	uint64_t need = req->file_size * req->procs + req->file_size * req->procs / 16;
	if (fstatvfs(where, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need)
		return err_fail(err, -1, "target %s: %llu MiB free, the volume needs %llu MiB", req->path,
			    (unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20), (unsigned long long)mib_up(need));
	return 0;
}

/* An existing volume: taken as it is, with the geometry the run asks for, and only when its data
 * is dedisbench's (volclaim.h) unless --force. */
static int probe_volume(const struct target_request *req, struct target *t, const struct engine_stats *g,
			const bool given[ENGINE_OPTS], struct dd_err *err)
{
	t->engine_exists = true;
	/* a run opens the volume to write (its state page, at least): on read-only storage the open
	 * failed once the run had begun (exit 1) */
	struct statvfs rofs;
	if (fstatvfs(t->engine_fd, &rofs) == 0 && (rofs.f_flag & ST_RDONLY))
		return err_fail(err, -1, "target %s is on read-only storage: a run opens the volume to write (dedisengine "
					 "stat and export read a clean one there)", req->path);
	if (g->block_size != req->block_size)
		return err_fail(err, -1, "target %s: the volume has %llu-byte blocks, the run uses --block-size %u",
			    req->path, (unsigned long long)g->block_size, req->block_size);
	if (given[0] && strcmp(g->index, t->engine_index))
		return err_fail(err, -1, "target %s: the volume was formatted with index=%s", req->path, g->index);
	if (given[1] && strcmp(g->compress, t->engine_compress))
		return err_fail(err, -1, "target %s: the volume was formatted with compress=%s", req->path, g->compress);
	snprintf(t->engine_index, sizeof t->engine_index, "%s", g->index);
	snprintf(t->engine_compress, sizeof t->engine_compress, "%s", g->compress);
	uint64_t have = g->logical_blocks * g->block_size;
	if (!req->file_size_given)
		t->region_size = have / req->procs / req->block_size * req->block_size;
	if (t->region_size < req->block_size || t->region_size * req->procs > have)
		return err_fail(err, -1, "target %s: the volume holds %llu bytes, %u workers x %llu need more", req->path,
			    (unsigned long long)have, req->procs, (unsigned long long)t->region_size);
	const char *how;
	int e;
	enum claim_verdict v = volclaim_inspect(t->engine_at, t->engine_fd, &how, &e);
	if (v == CLAIM_UNREADABLE)
		return err_fail(err, -1, "target %s: cannot read the volume to tell whose data it holds: %s", req->path,
			    strerror(e));
	if (v == CLAIM_FOREIGN && !req->force)
		return err_fail(err, -1, "target %s: %s; refusing to %s it without --force", req->path, how,
			    req->no_writes ? "use" : "overwrite");
	/* As a file: a run that only reads never marks another's volume dedisbench's. */
	t->engine_marked = v != CLAIM_FOREIGN || !req->no_writes;
	return 0;
}

static int engine_probe(const struct target_request *req, struct target *t, const struct stat *st, struct dd_err *err)
{
	(void)st;
	bool given[ENGINE_OPTS] = {false};
	if (parse_engine_spec(req, t, given, err))
		return -1;
	/* A link to the volume's directory: the run works on what it names (removing a volume it
	 * formatted there, which the removal, never following links, left behind). A dangling one was
	 * taken for a new directory, and its mkdir failed after the run had begun (exit 1). */
	struct stat lst;
	if (lstat(t->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char real[PATH_MAX];
		if (!realpath(t->path, real))
			return err_fail(err, -1, "target %s: %s is a symbolic link to nothing: %s", req->path, t->path,
				    strerror(errno));
		if (strlen(real) >= sizeof t->path - 32)
			return err_fail(err, -1, "target path is too long");
		snprintf(t->path, sizeof t->path, "%s", real);
	}
	if (target_lock(&t->lock, t->path, RUNLOCK_VOLUME, req->path, err) || hold_volume(req, t, err))
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
		return probe_new_volume(req, t, err) ? -1 : target_check_direct(req, t, false, err);
	if (rc) {
		said_of_path(t, &why);
		return err_fail(err, -1, "target %s: %s", req->path, why.msg);
	}
	if (lock_volume_inode(t, req->path, err)) /* an existing volume: by its inode too */
		return -1;
	return probe_volume(req, t, &g, given, err) ? -1 : target_check_direct(req, t, false, err);
}

/* A new volume's directory, made beneath the directory probing held (or the empty one it found,
 * held since), held from here to its removal. */
static int make_volume_dir(struct target *t, struct dd_err *err)
{
	if (t->engine_fd >= 0)
		return 0;
	if (mkdirat(t->engine_parent_fd, t->engine_name, 0755))
		return err_fail(err, -1, errno == EEXIST ? "%s appeared after it was checked; refusing to format it"
							 : "cannot create %s: %s", t->path, strerror(errno));
	t->engine_dir_made = true;
	t->engine_fd = openat(t->engine_parent_fd, t->engine_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (t->engine_fd < 0 || fstat(t->engine_fd, &st) || st.st_uid != geteuid())
		return err_fail(err, -1, "%s was replaced as it was made; refusing to format it", t->path);
	fsync(t->engine_parent_fd); /* the new directory's own name */
	return name_held_volume(t, t->path, err);
}

/* A run that writes starts from an empty volume (an existing one is discarded whole: its blocks
 * stay in the index for dedup until GC), so what the engine holds afterwards is exactly this
 * run's. A run that only reads, or one continuing a kept ledger, takes it as it is. */
static int prepare_engine(struct target *t, uint32_t block_size, struct dd_err *err)
{
	if (t->engine_exists && (t->keep_data || t->no_writes))
		return 0;
	if (!t->engine_exists) {
		if (make_volume_dir(t, err))
			return -1;
		struct engine_format_params fp = {
			.logical_bytes = t->region_size * t->procs, .data_bytes = 0, /* the engine's default headroom */
			.block_size = block_size, .index = t->engine_index, .hash = "sha1",
			.compress = t->engine_compress, .journal_bytes = 0,
			/* a space command (du, df) must see the blocks as they are written */
			.preallocate = t->sparse ? "sparse" : NULL,
		};
		t->engine_formatted = t->engine_marked = true; /* whatever is in the directory is this run's */
		return engine_format(t->engine_at, &fp, err) ? engine_failed(t, err) : 0;
	}
	struct engine_open_params op = {0};
	struct engine *e;
	if (engine_open(t->engine_at, &op, &e, err))
		return engine_failed(t, err);
	int rc = engine_discard(e, 0, engine_logical_blocks(e));
	int rc2 = engine_close(e);
	if (rc || rc2)
		return err_fail(err, -1, "cannot clear the volume in %s: %s", t->path, strerror(-(rc ? rc : rc2)));
	t->engine_cleared = true;
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

bool target_engine_emptied(const struct target *t)
{
	return t->engine_formatted || t->engine_cleared;
}

const char *target_engine_dir(const struct target *t)
{
	return t->engine_at[0] ? t->engine_at : t->path;
}


static bool engine_match(const char *path, const struct stat *st)
{
	return !st && !strncmp(path, "engine:", 7);
}

/* A volume formatted here: locked by its inode from now on. */
static int engine_prepare(struct target *t, uint32_t block_size, struct dd_err *err)
{
	if (prepare_engine(t, block_size, err))
		return -1;
	return !t->lock_around.held && lock_volume_inode(t, t->path, err) ? -1 : 0;
}

static void engine_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base)
{
	int n = snprintf(path, len, "%s", target_engine_dir(t));
	*base = (uint64_t)worker * t->region_size;
	if (n < 0 || (size_t)n >= len)
		path[0] = 0;
}

/* It starts as zeros when this run emptied it, and a kept ledger's run left it as the ledger says. */
static bool engine_zeros_known(const struct target *t, bool ledger_kept)
{
	return ledger_kept || target_engine_emptied(t);
}

static enum target_space engine_space(const struct target *t, char *path, size_t len)
{
	(void)t, (void)path, (void)len;
	return TARGET_SPACE_SELF;
}

static int engine_observe(const struct target *t, bool fsck, struct target_observation *obs, struct dd_err *err)
{
	struct engine_open_params op = {0};
	struct engine *e;
	if (engine_open(target_engine_dir(t), &op, &e, err))
		return -1;
	engine_stats(e, &obs->stats);
	obs->fsck_problems = fsck ? engine_fsck(e, NULL, NULL) : 0;
	obs->close_rc = engine_close(e);
	return 0;
}

static int engine_refuse_output(const struct target *t, const char *what, const char *path, bool is_dir,
				struct dd_err *err)
{
	(void)is_dir;
	if (path_within(path, t->path) == 1)
		return err_fail(err, -1, "%s %s is inside the engine volume %s; write it elsewhere", what, path, t->path);
	return 0;
}

static void engine_cleanup(struct target *t, bool keep)
{
	if (t->engine_formatted && !keep)
		remove_volume(t);
	else if (t->engine_marked && t->engine_fd >= 0)
		volclaim_mark(t->engine_at, t->engine_fd); /* it stays: the next run knows it for ours */
	t->engine_formatted = t->engine_marked = false;
}

static void engine_release(struct target *t)
{
	if (t->engine_fd >= 0)
		close(t->engine_fd);
	if (t->engine_parent_fd >= 0)
		close(t->engine_parent_fd);
	t->engine_fd = t->engine_parent_fd = -1;
	t->engine_at[0] = 0;
}

const struct target_ops target_engine_ops = {
	.name = "engine volume",
	.usage = "engine:DIR",
	.about = "the embedded reference engine's volume, formatted on first use",
	.flags = TARGET_VALIDATED | TARGET_TAKES_HINTS | TARGET_SPARSE_FOR_COMMAND | TARGET_SHOWN_BY_PATH,
	.ioengine_refusal = "an engine target (it runs in process)",
	.mpi_refusal = "an engine target is one process's volume: dedisbench-mpi drives targets of their own per rank",
	.io = &ioengine_engine,
	.match = engine_match,
	.spelling = "engine:",
	.options = engine_option_rows,
	.probe = engine_probe,
	.prepare = engine_prepare,
	.worker_path = engine_worker_path,
	.zeros_known = engine_zeros_known,
	.space = engine_space,
	.observe = engine_observe,
	.refuse_output = engine_refuse_output,
	.cleanup = engine_cleanup,
	.release = engine_release,
};
