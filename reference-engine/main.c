/* main.c - dedisengine: format, stat, fsck, gc, import, export and discard on a reference-engine
 * volume; bad input exits 2 before anything is written, failures exit 1. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/blockdev.h"
#include "lib/dioalign.h"
#include "lib/fullio.h"
#include "lib/pathwithin.h"
#include "reference-engine/cli.h"
#include "reference-engine/engine.h"
#include "reference-engine/meta.h"
#include "lib/plot.h"
#include "lib/runlock.h"
#include "lib/safefile.h"
#include "lib/stopsignals.h"
#include "lib/units.h"

#define EXIT_FAILED 1
#define EXIT_BAD_INPUT 2

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "dedisengine: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return EXIT_BAD_INPUT;
}

/* Open for a command; a missing or damaged volume is bad input. */
enum { OPEN_EXCLUSIVE = 1, OPEN_REBUILD = 2 };

/* `how`: OPEN_EXCLUSIVE (refuse other openers), OPEN_REBUILD (with it: rebuild the caches) */
static int open_volume(const char *dir, const struct engine_cli *c, unsigned how, struct engine **e)
{
	struct engine_stats g;
	struct dd_err err;
	int rc = engine_describe(dir, &g, &err);
	if (rc == -ENOENT)
		return bad("%s holds no volume (%s)", dir, engine_half_made(dir) ? "a format of it did not finish, "
						      "no superblock: format it again" : "format it first");
	if (rc)
		return bad("%s%s", err.msg, " (refusing to open it)");
	if (c->direct) {
		/* below the chunk store's O_DIRECT alignment every transfer fails (EINVAL) */
		char data[PATH_MAX + 16], why[128];
		snprintf(data, sizeof data, "%s/%s.0", dir, VOL_DATA);
		unsigned align = dio_align(data);
		snprintf(why, sizeof why, "%llu-byte blocks, and O_DIRECT there needs multiples of %u bytes",
			 (unsigned long long)g.block_size, align);
		if (g.block_size % align)
			return bad("--direct: the volume %s has %s", dir, why);
	}
	struct engine_open_params p = {.direct = c->direct, .verify_hits = c->verify_hits,
				       .commit_every = (unsigned)c->commit_every, .exclusive = how & OPEN_EXCLUSIVE,
				       .rebuild_caches = how & OPEN_REBUILD,
				       .read_only = !strcmp(c->command, "stat") || !strcmp(c->command, "export")};
	if ((rc = engine_open(dir, &p, e, &err))) {
		fprintf(stderr, "dedisengine: %s\n", err.msg);
		/* Refused before anything was written. A volume another process has open (stat and
		 * export take no run lock) is "in use by another command", exit 2 as the man page says:
		 * exit 1 is fsck's "inconsistent", which a stat running alongside must not fake. */
		return rc == -EROFS || rc == -EBUSY ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	/* Damage found, even with --quiet; fsck says it in its report. */
	if (engine_cache_note(*e)[0] && strcmp(c->command, "fsck"))
		fprintf(stderr, "dedisengine: %s: %s; rebuilt from the durable files\n", dir, engine_cache_note(*e));
	return 0;
}

static json_t *stats_json(const struct engine_stats *s)
{
	json_t *j = json_object();
#define PUT(k) json_object_set_new(j, #k, json_integer((json_int_t)s->k))
	PUT(block_size); PUT(logical_blocks); PUT(data_blocks); PUT(logical_writes); PUT(unique_writes);
	PUT(duplicate_writes); PUT(overwrites); PUT(inplace_rewrites); PUT(discards); PUT(reads);
	PUT(mapped_blocks); PUT(physical_blocks); PUT(referenced_blocks); PUT(index_entries); PUT(index_lookups);
	PUT(bloom_negatives); PUT(meta_reads); PUT(meta_writes); PUT(gc_reclaimed); PUT(collisions); PUT(index_bytes);
	PUT(nodedup_writes); PUT(compressed_writes); PUT(physical_bytes); PUT(compressed_fragments);
#undef PUT
	json_object_set_new(j, "dedup_ratio", json_real(s->dedup_ratio));
	json_object_set_new(j, "index", json_string(s->index));
	json_object_set_new(j, "hash", json_string(s->hash));
	json_object_set_new(j, "compress", json_string(s->compress));
	return j;
}

static void print_stats(const struct engine_stats *s)
{
	char lsz[32], psz[32], isz[32], bsz[32];
	units_format_size(s->mapped_blocks * s->block_size, lsz, sizeof lsz);
	units_format_size(s->physical_blocks * s->block_size, psz, sizeof psz);
	units_format_size(s->physical_bytes, bsz, sizeof bsz);
	units_format_size(s->index_bytes, isz, sizeof isz);
	printf("volume: %llu-byte blocks, %llu logical, %llu physical (%s index, %s, compression %s)\n",
	       (unsigned long long)s->block_size, (unsigned long long)s->logical_blocks,
	       (unsigned long long)s->data_blocks, s->index, s->hash, s->compress);
	printf("space: %llu mapped blocks (%s), %llu physical blocks in use (%s), %llu referenced; dedup ratio %.3f\n",
	       (unsigned long long)s->mapped_blocks, lsz, (unsigned long long)s->physical_blocks, psz,
	       (unsigned long long)s->referenced_blocks, s->dedup_ratio);
	printf("stored: %s for the referenced contents (%llu of them compressed fragments)\n", bsz,
	       (unsigned long long)s->compressed_fragments);
	printf("writes: %llu logical = %llu unique (%llu NODEDUP, %llu compressed) + %llu duplicate + %llu in-place "
	       "rewrites; %llu overwrites, %llu discards, %llu reads\n",
	       (unsigned long long)s->logical_writes, (unsigned long long)s->unique_writes,
	       (unsigned long long)s->nodedup_writes, (unsigned long long)s->compressed_writes,
	       (unsigned long long)s->duplicate_writes, (unsigned long long)s->inplace_rewrites,
	       (unsigned long long)s->overwrites, (unsigned long long)s->discards, (unsigned long long)s->reads);
	printf("index: %llu entries (%s), %llu lookups, %llu answered by the Bloom filter; metadata I/O %llu reads, "
	       "%llu writes; GC reclaimed %llu; collisions %llu\n",
	       (unsigned long long)s->index_entries, isz, (unsigned long long)s->index_lookups,
	       (unsigned long long)s->bloom_negatives, (unsigned long long)s->meta_reads,
	       (unsigned long long)s->meta_writes, (unsigned long long)s->gc_reclaimed,
	       (unsigned long long)s->collisions);
}

static int cmd_format(const struct engine_cli *c)
{
	struct engine_format_params p = {c->size, c->data_size, (uint32_t)c->block_size, c->index, c->hash, c->compress, 0,
					 c->preallocate};
	struct dd_err err;
	if (c->block_size > UINT32_MAX)
		return bad("--block-size %s is too large%s", "", "");
	/* A stop signal waits for the format's end (a failed one has removed what it made): killed
	 * midway, it left data files and no superblock, which every later format refused ("not
	 * empty") and nothing else took for a volume, until removed by hand. */
	sigset_t stop, old;
	sigemptyset(&stop);
	stop_signals_set(&stop);
	sigprocmask(SIG_BLOCK, &stop, &old);
	int rc = engine_format(c->args[0], &p, &err);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		fprintf(stderr, "dedisengine: %s\n", err.msg);
		/* read-only storage is where the volume was asked for, as a full one is */
		return rc == -EINVAL || rc == -EEXIST || rc == -EROFS ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	if (!c->quiet)
		printf("formatted %s\n", c->args[0]);
	return 0;
}

/* stat --plot: the counters as "KEY VALUE" lines for plots/dedisengine-stat.gp, rendered to a
 * temp name beside the PNG and renamed into place. */
static int plot_stats(const struct engine_stats *s, const char *dir, const char *png)
{
	char data[] = "/tmp/dedisengine-stat.XXXXXX";
	struct dd_err err;
	int fd = mkstemp(data);
	if (fd < 0) {
		fprintf(stderr, "dedisengine: --plot: temp file: %s\n", strerror(errno));
		return EXIT_FAILED;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(data);
		fprintf(stderr, "dedisengine: --plot: temp file: %s\n", strerror(errno));
		return EXIT_FAILED;
	}
	fprintf(f, "block_size %llu\nmapped_blocks %llu\nphysical_blocks %llu\nreferenced_blocks %llu\n"
		   "index_bytes %llu\nunique_writes %llu\nduplicate_writes %llu\ninplace_rewrites %llu\n"
		   "overwrites %llu\ndedup_ratio %.6f\n",
		(unsigned long long)s->block_size, (unsigned long long)s->mapped_blocks,
		(unsigned long long)s->physical_blocks, (unsigned long long)s->referenced_blocks,
		(unsigned long long)s->index_bytes, (unsigned long long)s->unique_writes,
		(unsigned long long)s->duplicate_writes, (unsigned long long)s->inplace_rewrites,
		(unsigned long long)s->overwrites, s->dedup_ratio);
	/* a full /tmp: the data cut short, and gnuplot drew an empty chart over the earlier PNG, exit 0 */
	int unwritten = ferror(f);
	if (fclose(f) || unwritten) {
		fprintf(stderr, "dedisengine: --plot: writing the data to %s: %s\n", data, strerror(errno));
		unlink(data);
		return EXIT_FAILED;
	}
	/* gnuplot writes a temp file this process created (O_EXCL, no link followed), renamed after */
	struct safefile sf;
	if (safefile_open(&sf, png) || !sf.tmp) {
		err_fail(&err, -1, "--plot %s: %s", png, sf.path ? "not a regular file" : strerror(errno));
		safefile_abort(&sf);
		unlink(data);
		fprintf(stderr, "dedisengine: %s\n", err.msg);
		return EXIT_FAILED;
	}
	close(sf.fd);
	sf.fd = -1;
	const char *args[] = {data, sf.tmp, dir};
	int rc = plot_render("dedisengine-stat.gp", args, 3, sf.tmp, png, &err);
	unlink(data);
	if (!rc && safefile_commit(&sf, false)) {
		rc = err_fail(&err, -1, "--plot %s: %s", png, strerror(errno));
	}
	if (rc) {
		safefile_abort(&sf);
		fprintf(stderr, "dedisengine: %s\n", err.msg);
		return EXIT_FAILED;
	}
	return 0;
}

static int in_volume(const char *dir, const char *path);

static int cmd_stat(const struct engine_cli *c)
{
	char script[4096];
	/* The PNG is renamed over its name: naming a file of the volume would replace it (stat
	 * --plot DIR/superblock left a PNG where the superblock was). */
	if (c->plot && in_volume(c->args[0], c->plot) == 1)
		return bad("stat: --plot %s is a file of the volume %s or inside its directory: refusing to overwrite the volume",
			   c->plot, c->args[0]);
	if (c->plot && (!plot_gnuplot_available() || plot_script("dedisengine-stat.gp", script, sizeof script)))
		return bad("--plot needs gnuplot (apt-get install gnuplot-nox) and plots/dedisengine-stat.gp%s%s", "", "");
	if (c->plot && safefile_refused(c->plot))
		return bad("stat: --plot %s is a %s; the PNG is written to a file", c->plot, safefile_refused(c->plot));
	if (c->plot) { /* the PNG's directory must take it: checked before anything is read */
		char dir[4200];
		snprintf(dir, sizeof dir, "%s", c->plot);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		if (access(slash ? (dir[0] ? dir : "/") : ".", W_OK))
			return bad("--plot %s: %s", c->plot, strerror(errno));
	}
	struct engine *e;
	int rc = open_volume(c->args[0], c, false, &e);
	if (rc)
		return rc;
	struct engine_stats s;
	engine_stats(e, &s);
	engine_close(e);
	if (c->plot && (rc = plot_stats(&s, c->args[0], c->plot)))
		return rc;
	if (c->json) {
		json_t *j = stats_json(&s);
		json_dumpf(j, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		print_stats(&s);
	}
	return 0;
}

static void print_problem(void *arg, const char *line)
{
	json_t *list = arg;
	if (list)
		json_array_append_new(list, json_string(line));
	else
		printf("%s\n", line);
}

/* fsck on a volume opened alone; a cache that failed its check at the open, or index files that
 * fail a read during the check, rebuilt (said in the report, and in `rebuilt`) and checked again.
 * 0 with *problems, or the open's exit status. */
static int fsck_volume(const struct engine_cli *c, json_t *list, char *rebuilt, size_t len, long *problems)
{
	bool again = true;
	rebuilt[0] = 0;
	*problems = 0;
	for (unsigned how = OPEN_EXCLUSIVE; again && how <= (OPEN_EXCLUSIVE | OPEN_REBUILD); how |= OPEN_REBUILD) {
		struct engine *e;
		int rc = open_volume(c->args[0], c, how, &e);
		if (rc)
			return rc;
		char found[64];
		snprintf(found, sizeof found, *problems == -EBADMSG ? "the index's files could not be read"
					      : "the caches had %ld problems", *problems);
		const char *note = how & OPEN_REBUILD ? found : engine_cache_note(e);
		if (note[0]) {
			snprintf(rebuilt, len, "%s", note);
			if (!c->json)
				printf("%s: %s; rebuilt from the durable files\n", c->args[0], note);
		}
		if (list)
			json_array_clear(list);
		*problems = engine_fsck(e, print_problem, list);
		/* the index unreadable, or problems only a cache holds: rebuilt, then checked again */
		again = *problems == -EBADMSG || (*problems > 0 && engine_fsck_caches_only(e));
		engine_close(e);
	}
	return 0;
}

static int cmd_fsck(const struct engine_cli *c)
{
	json_t *list = c->json ? json_array() : NULL;
	char rebuilt[160];
	long problems;
	int rc = fsck_volume(c, list, rebuilt, sizeof rebuilt, &problems);
	if (rc) {
		json_decref(list);
		return rc;
	}
	if (problems < 0) {
		fprintf(stderr, "dedisengine: fsck %s: %s\n", c->args[0], strerror((int)-problems));
		json_decref(list);
		return EXIT_FAILED;
	}
	if (list) {
		json_t *j = json_pack("{s:b, s:I, s:o, s:s?}", "consistent", problems == 0, "problems",
				      (json_int_t)problems, "details", list, "rebuilt", rebuilt[0] ? rebuilt : NULL);
		json_dumpf(j, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else if (!c->quiet) {
		printf("%s: %s (%ld problem%s)\n", c->args[0], problems ? "INCONSISTENT" : "consistent", problems,
		       problems == 1 ? "" : "s");
	}
	return problems ? EXIT_FAILED : 0;
}

static int cmd_gc(const struct engine_cli *c)
{
	struct engine *e;
	int rc = open_volume(c->args[0], c, true, &e);
	if (rc)
		return rc;
	uint64_t reclaimed;
	rc = engine_gc(e, &reclaimed);
	int rc2 = engine_close(e);
	if (rc || rc2) {
		fprintf(stderr, "dedisengine: gc %s: %s\n", c->args[0], strerror(-(rc ? rc : rc2)));
		return EXIT_FAILED;
	}
	if (c->json)
		printf("{\"reclaimed_blocks\": %llu}\n", (unsigned long long)reclaimed);
	else if (!c->quiet)
		printf("reclaimed %llu blocks\n", (unsigned long long)reclaimed);
	return 0;
}

/* Whether `path` (existing or about to be created) is one of the volume's files or lies inside
 * its directory: an export there would rename its output over the volume's own files, an import
 * would read the volume while writing it. Compared by (device, inode), so links and bind mounts
 * of the directory or its files are found too. 1, 0, or -errno. */
static int in_volume(const char *dir, const char *path)
{
	struct stat vol, st;
	if (stat(dir, &vol))
		return -errno;
	if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1) {
		/* a hard link elsewhere to a file of the volume (a rename over it would spare the
		 * volume, but writing through it or reading it would not) */
		DIR *d = opendir(dir);
		struct dirent *de;
		int found = 0;
		while (d && !found && (de = readdir(d))) {
			struct stat f;
			found = fstatat(dirfd(d), de->d_name, &f, AT_SYMLINK_NOFOLLOW) == 0 && f.st_dev == st.st_dev &&
				f.st_ino == st.st_ino;
		}
		if (d)
			closedir(d);
		if (found)
			return 1;
	}
	return path_within(path, dir);
}

static int file_size(int fd, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) ? -errno : 0;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Everything import can refuse, checked before the volume is opened (opening writes): 0 or the
 * exit status. */
static int import_refusal(const struct engine_cli *c, int fd)
{
	struct stat src;
	if (fstat(fd, &src) == 0 && S_ISDIR(src.st_mode))
		return bad("import: %s is a directory (import reads a file or a device image)%s", c->args[1], "");
	struct engine_stats g;
	struct dd_err err;
	uint64_t size = 0;
	int rc = engine_describe(c->args[0], &g, &err);
	if (rc == -ENOENT)
		return bad("%s holds no volume (format it first)%s", c->args[0], "");
	if (rc)
		return bad("%s%s", err.msg, " (refusing to open it)");
	if (file_size(fd, &size))
		return bad("import: cannot size %s%s", c->args[1], "");
	if ((size + g.block_size - 1) / g.block_size > g.logical_blocks) {
		char need[32];
		snprintf(need, sizeof need, "%llu", (unsigned long long)size);
		return bad("import: %s (%s bytes) does not fit in the volume", c->args[1], need);
	}
	return 0;
}

/* Fills buf with up to len bytes, stopping early only at the end of the input (*eof): a pipe's
 * reads end anywhere, and a short one taken as the tail, padded with zeros, shifted everything
 * after it. 0 or -errno. */
static int fill_chunk(int fd, char *buf, size_t len, size_t *got, bool *eof)
{
	*got = 0;
	while (*got < len) {
		ssize_t n = read(fd, buf + *got, len - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*eof = true;
			return n < 0 ? -errno : 0;
		}
		*got += (size_t)n;
	}
	return 0;
}

/* The input written block by block from LBN 0; *lbn ends as the blocks written (the one that
 * failed, on failure). -EFBIG with *too_long when the input goes on past the volume. */
static int import_blocks(struct engine *e, int fd, char *buf, size_t chunk, uint64_t *lbn, bool *too_long)
{
	uint32_t bs = engine_block_size(e);
	bool eof = false;
	int rc = 0;
	while (!eof && !rc) {
		size_t len;
		if ((rc = fill_chunk(fd, buf, chunk, &len, &eof)) || !len)
			break;
		if (len % bs) { /* the file's tail: zero-padded to a block, as a filesystem stores it */
			memset(buf + len, 0, bs - len % bs);
			len += bs - len % bs;
		}
		for (size_t off = 0; off < len && !rc; off += bs) {
			if (*lbn >= engine_logical_blocks(e)) { /* a pipe, which could not be sized before */
				*too_long = true;
				rc = -EFBIG;
			} else if (!(rc = engine_write(e, *lbn, buf + off))) {
				(*lbn)++; /* on failure lbn stays the block that failed */
			}
		}
	}
	return rc;
}

static int cmd_import(const struct engine_cli *c)
{
	if (in_volume(c->args[0], c->args[1]) == 1)
		return bad("import: %s is a file of the volume %s or inside its directory: a volume is never read into itself", c->args[1],
			   c->args[0]);
	int fd = open(c->args[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bad("import: %s: %s", c->args[1], strerror(errno));
	struct engine *e = NULL;
	int rc = import_refusal(c, fd);
	if (!rc)
		rc = open_volume(c->args[0], c, false, &e);
	if (rc) {
		close(fd);
		return rc;
	}
	uint32_t bs = engine_block_size(e);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	size_t chunk = 1 << 20;
	char *buf;
	if (posix_memalign((void **)&buf, 4096, chunk)) {
		close(fd);
		engine_close(e);
		return EXIT_FAILED;
	}
	uint64_t lbn = 0;
	bool too_long = false;
	rc = import_blocks(e, fd, buf, chunk, &lbn, &too_long);
	free(buf);
	close(fd);
	int rc2 = engine_close(e); /* flushes: what was imported before a failure is kept */
	if (too_long) {
		fprintf(stderr, "dedisengine: import %s into %s: the input goes on past the volume's %llu blocks; those were "
				"imported\n", c->args[1], c->args[0], (unsigned long long)lbn);
		return EXIT_FAILED;
	}
	if (rc) {
		fprintf(stderr, "dedisengine: import %s into %s: block %llu (byte %llu): %s\n", c->args[1], c->args[0],
			(unsigned long long)lbn, (unsigned long long)lbn * bs, strerror(-rc));
		return EXIT_FAILED;
	}
	if (rc2) {
		fprintf(stderr, "dedisengine: import %s into %s: flushing the volume: %s\n", c->args[1], c->args[0],
			strerror(-rc2));
		return EXIT_FAILED;
	}
	if (!c->quiet)
		printf("imported %llu blocks from %s\n", (unsigned long long)lbn, c->args[1]);
	return 0;
}

/* A block device export is about to overwrite in place: never a mounted or busy one (O_EXCL is
 * held until the export ends), never one smaller than the volume (it would fail part-way, the
 * device half overwritten), and one holding a filesystem, RAID or partition signature only with
 * --force - as dedisbench treats a device target. *fd: open for writing; or an exit status. */
static int open_export_device(const struct engine_cli *c, const struct stat *st, struct engine *e, int *fd)
{
	struct dd_err why;
	uint64_t size = 0, need = engine_logical_blocks(e) * engine_block_size(e);
	/* held O_EXCL from here, so nothing mounts it before the export has written it */
	if ((*fd = blockdev_claim(c->args[1], st->st_rdev, O_WRONLY, true, c->force, &size, &why)) < 0)
		return bad("export: %s%s", why.msg, "");
	if (size < need) {
		close(*fd);
		*fd = -1;
		err_fail(&why, -1, "%s (%llu bytes) is smaller than the volume (%llu bytes)", c->args[1],
			 (unsigned long long)size, (unsigned long long)need);
		return bad("export: %s%s", why.msg, "");
	}
	return 0;
}

static bool all_zero(const char *buf, size_t len)
{
	return len == 0 || (buf[0] == 0 && !memcmp(buf, buf + 1, len - 1));
}

/* The volume's blocks into fd, in block order. A device or a pipe gets every block (a FIFO cannot
 * seek, a device holds old data); a new regular file (sparse) gets holes where a block is unmapped
 * or all zeros, so a small import of a large volume exports as a small file of the volume's size.
 * 0 or -errno. */
static int export_blocks(struct engine *e, int fd, bool sparse)
{
	uint32_t bs = engine_block_size(e);
	uint64_t n = engine_logical_blocks(e);
	char *buf;
	if (posix_memalign((void **)&buf, 4096, bs))
		return -ENOMEM;
	int rc = 0;
	for (uint64_t lbn = 0; lbn < n && !rc; lbn++) {
		if (sparse && !engine_lbn_mapped(e, lbn))
			continue;
		if ((rc = engine_read(e, lbn, buf)))
			break;
		if (sparse) {
			if (!all_zero(buf, bs))
				rc = fullio_pwrite(fd, buf, bs, lbn * bs, ENOSPC);
		} else if (fullio_write(fd, buf, bs)) {
			rc = -errno;
		}
	}
	free(buf);
	/* the holes at the end too: the file is the volume's size */
	if (!rc && sparse && ftruncate(fd, (off_t)(n * bs)))
		rc = -errno;
	return rc;
}

static int cmd_export(const struct engine_cli *c)
{
	if (in_volume(c->args[0], c->args[1]) == 1)
		return bad("export: %s is a file of the volume %s or inside its directory: refusing to overwrite the volume",
			   c->args[1], c->args[0]);
	struct engine *e;
	int rc = open_volume(c->args[0], c, false, &e);
	if (rc)
		return rc;
	/* A device is written in place (restoring an image onto a disk); a file is built as a temp
	 * file and renamed over the name - never written through a link or into an existing file. */
	struct safefile sf = {.fd = -1};
	struct stat st;
	int fd;
	if (stat(c->args[1], &st) == 0 && S_ISBLK(st.st_mode)) {
		if ((rc = open_export_device(c, &st, e, &fd))) {
			engine_close(e);
			return rc;
		}
	} else if (stat(c->args[1], &st) == 0 && S_ISCHR(st.st_mode)) {
		fd = open(c->args[1], O_WRONLY | O_CLOEXEC);
	} else {
		fd = safefile_open(&sf, c->args[1]) ? -1 : sf.fd;
	}
	if (fd < 0) {
		engine_close(e);
		return bad("export: %s: %s", c->args[1], strerror(errno));
	}
	uint64_t n = engine_logical_blocks(e);
	/* holes only in a regular file: safefile writes a FIFO (/dev/stdout | gzip) in place */
	struct stat out;
	rc = export_blocks(e, fd, fstat(fd, &out) == 0 && S_ISREG(out.st_mode));
	if (!sf.path) { /* a device (/dev/null and a pipe take no fsync) */
		if (!rc && fsync(fd) && errno != EINVAL)
			rc = -errno;
		close(fd);
	} else if (rc) {
		safefile_abort(&sf);
	} else if (safefile_commit(&sf, true)) {
		rc = -errno;
	}
	int rc2 = engine_close(e);
	if (rc || rc2) {
		fprintf(stderr, "dedisengine: export to %s: %s\n", c->args[1], strerror(-(rc ? rc : rc2)));
		return EXIT_FAILED;
	}
	if (!c->quiet)
		printf("exported %llu blocks to %s\n", (unsigned long long)n, c->args[1]);
	return 0;
}

static int cmd_discard(const struct engine_cli *c)
{
	uint64_t start, len;
	if (units_parse_count(c->args[1], &start, NULL) || units_parse_count(c->args[2], &len, NULL))
		return bad("discard: START and LEN are block counts (%s %s)", c->args[1], c->args[2]);
	struct engine_stats g;
	struct dd_err err;
	int rc = engine_describe(c->args[0], &g, &err);
	if (!rc && (start > g.logical_blocks || len > g.logical_blocks - start))
		return bad("discard: blocks %s+%s are outside the volume", c->args[1], c->args[2]);
	struct engine *e;
	if ((rc = open_volume(c->args[0], c, false, &e)))
		return rc;
	rc = engine_discard(e, start, len);
	int rc2 = engine_close(e);
	if (rc) {
		fprintf(stderr, "dedisengine: discard: %s\n", strerror(-rc));
		return EXIT_FAILED;
	}
	if (rc2) { /* the working map holds it: the next opener commits it unless the power goes first */
		fprintf(stderr, "dedisengine: discard %s: blocks %s+%s unmapped but not made durable (%s): a power loss "
			"before the volume's next clean close brings them back\n", c->args[0], c->args[1], c->args[2],
			strerror(-rc2));
		return EXIT_FAILED;
	}
	return 0;
}

/* A volume's run locks: by its path, and by its superblock's inode (as dedisbench locks an
 * engine:DIR target), so a copy made of hard links (cp -al) of a volume in use is refused too.
 * Returns as runlock_acquire; both released by the caller (a lock not taken is a no-op). */
static int lock_volume(const char *dir, struct runlock *by_path, struct runlock *by_inode, struct dd_err *err)
{
	int rc = runlock_acquire(by_path, dir, RUNLOCK_VOLUME, err);
	if (rc)
		return rc;
	char sb[PATH_MAX];
	if (snprintf(sb, sizeof sb, "%s/superblock", dir) >= (int)sizeof sb)
		return 0; /* the command itself names the over-long path */
	int fd = open(sb, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no volume yet (format), or one the command refuses with its own reason */
	/* no flock on the superblock itself: the engine's openers share one there */
	rc = runlock_acquire_fd(by_inode, fd, false, dir, err);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct engine_cli c;
	if (getenv("DEDIS_PRINT_COMPLETION")) { /* read by the bash completion (completion/) */
		opt_print_completion(stdout, cli_options(), 0);
		return 0;
	}
	if (getenv("DEDIS_PRINT_MAN_OPTIONS")) { /* used by the build to generate the man page */
		cli_print_man(stdout);
		return 0;
	}
	struct dd_err perr;
	if (cli_parse(argc, argv, &c, &perr)) {
		fprintf(stderr, "dedisengine: %s\n", perr.msg);
		return EXIT_BAD_INPUT;
	}
	if (c.help) {
		cli_print_help(stdout);
		return 0;
	}
	if (c.version) {
		printf("dedisengine %s\n", PACKAGE_VERSION);
		return 0;
	}
	/* Commands that change the volume (fsck may recover it) hold its run lock, as dedisbench does
	 * for a whole run on engine:DIR: one at a time, and never under a run. */
	static const struct {
		const char *name;
		int (*run)(const struct engine_cli *);
		bool locks;
	} cmds[] = {{"format", cmd_format, true}, {"stat", cmd_stat, false}, {"fsck", cmd_fsck, true},
		    {"gc", cmd_gc, true}, {"import", cmd_import, true}, {"export", cmd_export, false},
		    {"discard", cmd_discard, true}};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		if (strcmp(cmds[i].name, c.command))
			continue;
		struct runlock lock = {0}, inode_lock = {0};
		int rc = cmds[i].locks ? lock_volume(c.args[0], &lock, &inode_lock, &perr) : 0;
		if (rc) {
			fprintf(stderr, rc == 1 ? "dedisengine: volume %s is %s\n" : "dedisengine: %s%s\n",
				rc == 1 ? c.args[0] : "", perr.msg);
			runlock_release(&inode_lock);
			runlock_release(&lock);
			return EXIT_BAD_INPUT;
		}
		rc = cmds[i].run(&c);
		runlock_release(&inode_lock);
		runlock_release(&lock);
		/* stat --json > FILE on a full disk: the figures lost are a failure, not a success */
		errno = 0;
		if ((fflush(stdout) || ferror(stdout)) && rc == 0) {
			fprintf(stderr, "dedisengine: standard output: %s\n", errno ? strerror(errno) : "a write failed");
			rc = EXIT_FAILED;
		}
		return rc;
	}
	return EXIT_BAD_INPUT;
}
