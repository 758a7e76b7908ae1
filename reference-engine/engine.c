/* engine.c - the reference engine's paths: format, open/close, the Dmdedup write flowchart
 * (fingerprint, index lookup under the fingerprint's stripe lock, LBN remap by one atomic
 * exchange), reads, discard, flush, GC and stats. Recovery, fsck, quiescing, packing and
 * transactions live in their own modules (engine-int.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/units.h"
#include "reference-engine/engine-int.h"

/* Collections one write may run before it says ENOSPC although each left room: other writers
 * took that room first every time (a store that churns this fast is full in practice). */
#define MAX_COLLECTIONS 64

uint32_t engine_block_size(const struct engine *e) { return e->sb.block_size; }
uint64_t engine_logical_blocks(const struct engine *e) { return e->sb.logical_blocks; }

/* Entries the index may need: one per stored content (several per block when packed). */
static struct index_params index_params(const char *dir, const struct superblock *sb, unsigned commit_every)
{
	uint64_t cap = sb->data_blocks * (sb->compress ? 4 : 1);
	return (struct index_params){dir, sb->fp_len, cap, commit_every, 0, sb->index_stripes};
}

/* Half the map, 1 MiB to 64 MiB; but a small volume needs no more than room for 16 records of
 * its whole map (at least 16 KiB), so its journal scales with it (below about 8000 blocks). */
static uint64_t default_journal(uint64_t logical)
{
	uint64_t j = logical * 8 / 2;
	j = j < (1u << 20) ? (1u << 20) : j > (64u << 20) ? (64u << 20) : (j + 4095) & ~4095ULL;
	uint64_t small = (txn_record_bytes(logical) * 16 + 4095) & ~4095ULL;
	small = small < (16u << 10) ? (16u << 10) : small;
	return small < j ? small : j;
}

static bool dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *de;
	bool empty = true;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

/* A format killed before its superblock (written last) leaves only durable files: map, journal,
 * data.N, superblock.tmp, all regular. Such a directory is format's own to clear. */
bool engine_half_made(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *de;
	bool ours = true;
	unsigned files = 0;
	while (ours && (de = readdir(d))) {
		const char *n = de->d_name;
		unsigned k;
		char tail;
		struct stat st;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		files++;
		ours = (!strcmp(n, VOL_MAP) || !strcmp(n, VOL_JOURNAL) || !strcmp(n, VOL_SUPERBLOCK ".tmp") ||
			(sscanf(n, VOL_DATA ".%u%c", &k, &tail) == 1 && k < 64)) &&
		       !fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
	}
	closedir(d);
	return ours && files;
}

/* The durable files (map, journal, data files) and the superblock: what a format creates. */
static void remove_durable(const char *dir, unsigned stripes)
{
	char path[4096], name[64];
	for (unsigned f = 0; f < 2 + stripes; f++)
		if (!engine_durable_name(f, name, sizeof name) && !meta_path(path, sizeof path, dir, name))
			unlink(path);
	if (!meta_path(path, sizeof path, dir, VOL_SUPERBLOCK))
		unlink(path);
}

/* Empty, or holding only what a killed format left (engine_half_made), which is cleared. */
static bool dir_empty_or_cleared(const char *dir)
{
	if (dir_empty(dir))
		return true;
	if (!engine_half_made(dir))
		return false;
	remove_durable(dir, 64);
	char tmp[4096];
	if (!meta_path(tmp, sizeof tmp, dir, VOL_SUPERBLOCK ".tmp"))
		unlink(tmp);
	return dir_empty(dir);
}

/* What a format makes, settled from its parameters before anything is touched. */
struct format_plan {
	uint32_t bs;
	const char *hash, *iname, *comp;
	const struct index_ops *iops;
	unsigned digest_len;
	uint64_t logical, data;  /* blocks */
	uint64_t maps;           /* bytes of the working map and the references an open holds */
	enum store_room room;
	bool made;               /* format created the directory (and removes it when it fails) */
};

/* The block size, index, compression and hash by name. */
static int format_names(const struct engine_format_params *p, struct format_plan *pl, struct dd_err *err)
{
	pl->bs = p->block_size ? p->block_size : 4096;
	pl->hash = p->hash ? p->hash : "sha1";
	pl->iname = p->index ? p->index : fpindex_registry[0]->name;
	pl->comp = p->compress ? p->compress : "none";
	pl->iops = index_find(pl->iname);
	uint32_t bs = pl->bs;
	if (bs < ENGINE_MIN_BLOCK || bs > ENGINE_MAX_BLOCK || (bs & (bs - 1)))
		return err_fail(err, -EINVAL, "block size %u is not a power of two from 512 B to 64 KiB", bs);
	if (!pl->iops) {
		char names[128];
		return err_fail(err, -EINVAL, "unknown index '%s' (%s)", pl->iname, fpindex_names(names, sizeof names, ", ", 0));
	}
	if (strcmp(pl->comp, "none") && strcmp(pl->comp, "lz4"))
		return err_fail(err, -EINVAL, "unknown compression '%s' (none, lz4)", pl->comp);
	struct fp_ctx *fp = fp_new(pl->hash);
	if (!fp)
		return err_fail(err, -EINVAL, "unknown hash '%s' (sha1, sha256)", pl->hash);
	pl->digest_len = (unsigned)fp_len(fp);
	fp_free(fp);
	return 0;
}

/* The sizes in blocks, the journal and the preallocation. */
static int format_sizes(const struct engine_format_params *p, struct format_plan *pl, struct dd_err *err)
{
	uint32_t bs = pl->bs;
	/* A size between blocks is refused, as dm and VDO refuse one that is not a whole number of
	 * sectors or blocks: rounded down, a 6000-byte volume held one 4 KiB block and refused a
	 * 6000-byte file. */
	static const char *const what[2] = {"volume", "data"};
	const uint64_t bytes[2] = {p->logical_bytes, p->data_bytes};
	for (int k = 0; k < 2; k++) {
		if (k == 1 && !bytes[k])
			continue; /* the default: the logical blocks plus headroom */
		if (bytes[k] < bs)
			return err_fail(err, -EINVAL, "the %s size, %llu bytes, is less than one %u-byte block", what[k],
					(unsigned long long)bytes[k], bs);
		if (bytes[k] % bs)
			return err_fail(err, -EINVAL,
					"the %s size, %llu bytes, is not a whole number of %u-byte blocks (%llu or %llu would be)",
					what[k], (unsigned long long)bytes[k], bs, (unsigned long long)(bytes[k] / bs * bs),
					(unsigned long long)(bytes[k] / bs * bs + bs));
	}
	pl->logical = p->logical_bytes / bs;
	pl->data = p->data_bytes ? p->data_bytes / bs : pl->logical + (pl->logical + 15) / 16;
	if (pl->data >= (1ULL << 40) || pl->logical >= (1ULL << 40))
		return err_fail(err, -EINVAL, "volume too large (at most 2^40 blocks)");
	if (p->journal_bytes && p->journal_bytes < 4096)
		return err_fail(err, -EINVAL, "journal of %llu bytes is too small (at least 4 KiB)",
				(unsigned long long)p->journal_bytes);
	if (store_room_parse(p->preallocate, &pl->room))
		return err_fail(err, -EINVAL, "unknown preallocation '%s' (auto, full, sparse)", p->preallocate);
	return 0;
}

/* The directory: made when missing, else a directory holding nothing (or a killed format's files). */
static int format_claim_dir(const char *dir, struct format_plan *pl, struct dd_err *err)
{
	pl->made = mkdir(dir, 0755) == 0;
	if (!pl->made && errno != EEXIST)
		return err_fail_errno(err, -errno, errno, "cannot create %s", dir);
	struct stat dst;
	if (!pl->made && (stat(dir, &dst) || !S_ISDIR(dst.st_mode)))
		return err_fail(err, -EINVAL, "%s is not a directory: a volume is formatted into a new or empty directory",
				dir);
	struct superblock sb;
	char sbpath[4096];
	struct stat sbst;
	/* Any superblock, valid or damaged, means a volume lives here: never format over one. */
	if (meta_path(sbpath, sizeof sbpath, dir, VOL_SUPERBLOCK) || stat(sbpath, &sbst) == 0)
		return err_fail(err, -EEXIST, "%s already holds a volume%s", dir,
				sb_read(dir, &sb, NULL) == 0 ? "" : " (with a damaged superblock); refusing to format over it");
	/* Everything in a volume directory is the volume's (whoever removes it removes it all), and
	 * its files are created over nothing that is there: a new or empty directory only. */
	if (!dir_empty_or_cleared(dir))
		return err_fail(err, -EEXIST, "%s is not empty: a volume is formatted into a new or empty directory", dir);
	return 0;
}

/* Room for the chunk store, and memory for what an open holds. */
static int format_check_room(const char *dir, struct format_plan *pl, struct dd_err *err)
{
	uint64_t free_bytes, bs = pl->bs, logical = pl->logical;
	int rc = store_room_for(dir, pl->data * bs, &pl->room, &free_bytes);
	if (rc) { /* refused before anything is written: the directory is left as it was */
		if (rc != -ENOSPC)
			return err_fail(err, rc, "%s: %s", dir, strerror(-rc));
		char need[32], have[32];
		units_format_size(pl->data * bs, need, sizeof need);
		units_format_size(free_bytes, have, sizeof have);
		return err_fail(err, -EINVAL, "%s: a fully preallocated chunk store needs %s, its file system has %s free",
				dir, need, have);
	}
	/* An open may hold the working map and the references at once (a recovery touches all of
	 * them), with a checkpoint of the whole map and its two check areas: refused here, rather than
	 * by the allocation that fails ("Cannot allocate memory", after the files were made). */
	uint64_t frags = strcmp(pl->comp, "lz4") ? 1 : PACK_MAX_FRAGS;
	pl->maps = logical * 8 + pl->data * frags * 4; /* the working map and the references */
	uint64_t mem_need = pl->maps + txn_record_bytes(logical) + 2 * (logical / 8 + 512);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	if (ram && mem_need > ram) {
		char vol[32], mem[32], have[32];
		units_format_size(logical * bs, vol, sizeof vol);
		units_format_size(mem_need, mem, sizeof mem);
		units_format_size(ram, have, sizeof have);
		return err_fail(err, -EINVAL,
				"a %s volume needs about %s of memory for its map, references and a whole-map checkpoint; "
				"this machine has %s", vol, mem, have);
	}
	return 0;
}

static void format_superblock(const char *dir, const struct format_plan *pl, const struct engine_format_params *p,
			      struct superblock *sb)
{
	memset(sb, 0, sizeof *sb);
	memcpy(sb->magic, VOL_MAGIC, 8);
	sb->version = VOL_VERSION;
	sb->block_size = pl->bs;
	sb->logical_blocks = pl->logical;
	sb->data_blocks = pl->data;
	snprintf(sb->hash, sizeof sb->hash, "%s", pl->hash);
	snprintf(sb->index, sizeof sb->index, "%s", pl->iname);
	sb->fp_len = pl->digest_len;
	sb->stripes = VOL_STRIPES;
	sb->stripe_unit = SPACE_EXTENT; /* a process's allocation extent: one data file */
	sb->created = (uint64_t)time(NULL);
	sb->compress = strcmp(pl->comp, "lz4") ? VOL_COMPRESS_NONE : VOL_COMPRESS_LZ4;
	sb->frags = sb->compress ? PACK_MAX_FRAGS : 1;
	sb->journal_bytes = p->journal_bytes ? p->journal_bytes : default_journal(pl->logical);
	sb->index_stripes = index_stripes_for(index_params(dir, sb, 0).capacity);
	sb_seal(sb);
}

/* Room for the map and journal (allocated now) and for the caches the first open makes with all
 * their room (the working map, the references, the mem or Bloom table): a volume whose first open
 * could only fail "No space left on device" is refused here, nothing created. The chunk store's
 * own room was settled before. */
static int format_check_meta_room(const char *dir, const struct format_plan *pl, const struct superblock *sb,
				  struct dd_err *err)
{
	struct index_params ip = index_params(dir, sb, 0);
	uint64_t caches = pl->maps + sizeof(struct vol_state) + (pl->iops->created_bytes ? pl->iops->created_bytes(&ip) : 0);
	uint64_t meta = txn_map_bytes(pl->logical, true) + sb->journal_bytes;
	struct statvfs fsv;
	if (statvfs(dir, &fsv) == 0 && (uint64_t)fsv.f_bavail * fsv.f_frsize < meta + caches) {
		char need[32], cneed[32], have[32];
		units_format_size(meta + caches, need, sizeof need);
		units_format_size(caches, cneed, sizeof cneed);
		units_format_size((uint64_t)fsv.f_bavail * fsv.f_frsize, have, sizeof have);
		return err_fail(err, -EINVAL,
				"%s: the volume needs %s beside its chunk store (the map and journal, and %s of caches "
				"its first open makes), its file system has %s free", dir, need, cneed, have);
	}
	return 0;
}

/* Only the durable files: the first open builds the caches (state, working map, references,
 * index) from them, as it would after a power loss. A failure removes what it made. */
static int format_write(const char *dir, const struct format_plan *pl, const struct superblock *sb, struct dd_err *err)
{
	int rc = txn_create(dir, pl->logical, sb->journal_bytes);
	bool meta_full = rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG;
	if (!rc)
		rc = store_create(dir, pl->bs, pl->data, sb->stripes, sb->stripe_unit, pl->room);
	/* The superblock goes last: a volume without one is not a volume, so a failed format
	 * leaves nothing that looks usable. */
	if (!rc)
		rc = sb_write(dir, sb);
	if (!rc)
		return 0;
	remove_durable(dir, sb->stripes); /* the directory held nothing before */
	if (pl->made)
		rmdir(dir);
	if (meta_full) {
		char need_meta[32];
		units_format_size(txn_map_bytes(pl->logical, true) + sb->journal_bytes, need_meta, sizeof need_meta);
		return err_fail(err, -EINVAL, "cannot format %s: no room for the map and journal (%s, allocated at "
				"format: %s); nothing was created", dir, need_meta, strerror(-rc));
	}
	if (pl->room == STORE_ALLOCATE && (rc == -ENOSPC || rc == -EDQUOT || rc == -EOPNOTSUPP))
		return err_fail(err, -EINVAL, "%s: cannot preallocate the chunk store (%s); nothing was created", dir,
				strerror(-rc));
	return err_fail(err, rc, "cannot format %s: %s", dir, strerror(-rc));
}

int engine_format(const char *dir, const struct engine_format_params *p, struct dd_err *err)
{
	struct format_plan pl = {0};
	struct superblock sb;
	int rc = format_names(p, &pl, err);
	if (!rc)
		rc = format_sizes(p, &pl, err);
	if (!rc)
		rc = format_claim_dir(dir, &pl, err);
	if (rc)
		return rc;
	if (!(rc = format_check_room(dir, &pl, err))) {
		format_superblock(dir, &pl, p, &sb);
		rc = format_check_meta_room(dir, &pl, &sb, err);
	}
	if (rc) { /* refused before anything is written: the directory is left as it was */
		if (pl.made)
			rmdir(dir);
		return rc;
	}
	if ((rc = format_write(dir, &pl, &sb, err)))
		return rc;
	if (pl.made) { /* the new directory's own name */
		char parent[4096];
		snprintf(parent, sizeof parent, "%s/..", dir);
		if ((rc = meta_sync_dir(parent)))
			return err_fail(err, rc, "%s: formatted, but its directory could not be synced: %s", dir,
					strerror(-rc));
	}
	return 0;
}

const char *engine_cache_note(const struct engine *e)
{
	return e->cache_note;
}

int engine_describe(const char *dir, struct engine_stats *g, struct dd_err *err)
{
	struct superblock sb;
	char path[4096];
	struct stat st;
	if (meta_path(path, sizeof path, dir, VOL_SUPERBLOCK) == 0 && stat(path, &st) && errno == ENOENT)
		return -ENOENT;
	int rc = sb_read(dir, &sb, err);
	if (rc)
		return err_forward(err, rc, "%s", dir);
	/* Every durable file there, none shorter than format made it (the journal too: format
	 * allocates it whole, and a power loss does not shorten a file): otherwise the open failed with
	 * a bare "No such file or directory", and fsck with "Input/output error", naming neither the
	 * file nor the volume's damage. */
	for (unsigned f = 0; f < 2 + sb.stripes; f++) {
		char name[64];
		uint64_t want = f == 0 ? txn_map_bytes(sb.logical_blocks, sb.version >= VOL_VERSION)
				: f == 1 ? sb.journal_bytes
					 : store_file_bytes(sb.block_size, sb.data_blocks, sb.stripes, sb.stripe_unit, f - 2);
		if (engine_durable_name(f, name, sizeof name) || meta_path(path, sizeof path, dir, name))
			return err_fail(err, -ENAMETOOLONG, "%s: name too long", dir);
		if (lstat(path, &st))
			return err_fail(err, errno == ENOENT ? -EINVAL : -errno, "%s: the volume's %s %s (%s)", dir, name,
					errno == ENOENT ? "is missing" : "cannot be read", strerror(errno));
		/* a link is never followed (it was: a data file replaced by a link to another file had
		 * that file overwritten) */
		if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < want)
			return err_fail(err, -EINVAL, "%s: the volume's %s is %s (damaged)", dir, name,
					S_ISLNK(st.st_mode)    ? "a symbolic link; a volume's files are never followed"
					: !S_ISREG(st.st_mode) ? "not a regular file"
							       : "shorter than format made it");
	}
	memset(g, 0, sizeof *g);
	g->block_size = sb.block_size;
	g->logical_blocks = sb.logical_blocks;
	g->data_blocks = sb.data_blocks;
	snprintf(g->index, sizeof g->index, "%s", sb.index);
	snprintf(g->hash, sizeof g->hash, "%s", sb.hash);
	snprintf(g->compress, sizeof g->compress, "%s", sb.compress ? "lz4" : "none");
	return 0;
}

int engine_durable_name(unsigned file, char *buf, size_t len)
{
	int n = file == 0 ? snprintf(buf, len, "%s", VOL_MAP)
		: file == 1 ? snprintf(buf, len, "%s", VOL_JOURNAL)
			    : snprintf(buf, len, "%s.%u", VOL_DATA, file - 2);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static const char *const cache_files[] = {VOL_STATE, VOL_LBNMAP, VOL_REFS, VOL_DIRTY, VOL_LOCKS};

static void remove_caches(const char *dir, const struct superblock *sb)
{
	char path[4096];
	for (size_t i = 0; i < sizeof cache_files / sizeof cache_files[0]; i++)
		if (!meta_path(path, sizeof path, dir, cache_files[i]))
			unlink(path);
	const struct index_ops *iops = index_find(sb->index);
	struct index_params ip = index_params(dir, sb, 0);
	if (iops)
		iops->destroy(&ip);
}

int engine_remove(const char *dir)
{
	struct superblock sb;
	char path[4096];
	if (sb_read(dir, &sb, NULL) == 0) {
		remove_caches(dir, &sb);
		remove_durable(dir, sb.stripes);
	} else if (!meta_path(path, sizeof path, dir, VOL_SUPERBLOCK)) {
		unlink(path);
	}
	return rmdir(dir) ? -errno : 0;
}

static void unmap_all(struct engine *e)
{
	if (e->st)
		munmap(e->st, sizeof *e->st);
	if (e->lbnmap)
		munmap(e->lbnmap, e->lbnmap_len);
	if (e->space.refs)
		munmap(e->space.refs, e->refs_len);
	if (e->space.refs_fd > 0)
		close(e->space.refs_fd);
	e->space.refs_fd = 0;
	e->st = NULL;
	e->lbnmap = NULL;
	e->space.refs = NULL;
}

static void destroy(struct engine *e)
{
	if (e->ix)
		e->iops->close(e->ix);
	txn_close(&e->txn);
	store_close(&e->store);
	stripes_close(&e->stripes);
	packer_free(&e->pack);
	unmap_all(e);
	if (e->fp)
		fp_free(e->fp);
	if (e->lock_fd >= 0)
		close(e->lock_fd);
	free(e->scratch);
	free(e->scratch2);
	free(e);
}

/* From here on the caches are ahead of the disk: say so on disk first (with this boot's id, which
 * tells a killed process from a power loss), so a power loss never leaves a stale "clean" behind. */
static int mark_unclean(struct engine *e)
{
	e->st->clean = 0;
	meta_boot_id(e->st->boot_id, sizeof e->st->boot_id);
	return msync(e->st, sizeof *e->st, MS_SYNC) ? -errno : 0;
}

/* How an opener that has the volume alone finds its caches. */
enum cache_state { CACHES_CLEAN, CACHES_CRASHED, CACHES_LOST };

static enum cache_state probe_caches(const char *dir, struct engine *e)
{
	char path[4096], boot[40];
	struct stat st;
	for (size_t i = 0; i < sizeof cache_files / sizeof cache_files[0]; i++)
		if (meta_path(path, sizeof path, dir, cache_files[i]) || stat(path, &st))
			return CACHES_LOST;
	/* Only the state's head is needed: read, not mapped (an unmap costs a TLB flush). A state
	 * file shorter than the state is lost, as map_caches would find it (one closed before the
	 * checks existed lacks them: map_caches extends it). */
	struct vol_state head;
	const size_t head_len = offsetof(struct vol_state, world);
	int fd = meta_path(path, sizeof path, dir, VOL_STATE) ? -1 : open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return CACHES_LOST;
	bool whole = fstat(fd, &st) == 0 && (size_t)st.st_size >= offsetof(struct vol_state, checks) &&
		     pread(fd, &head, head_len, 0) == (ssize_t)head_len;
	close(fd);
	if (!whole)
		return CACHES_LOST;
	const struct vol_state *s = &head;
	if (s->magic != VOL_STATE_MAGIC && s->magic != VOL_STATE_MAGIC_UNCHECKED)
		snprintf(e->cache_note, sizeof e->cache_note, "the %s cache is not this volume's", VOL_STATE);
	meta_boot_id(boot, sizeof boot);
	enum cache_state r = s->magic != VOL_STATE_MAGIC && s->magic != VOL_STATE_MAGIC_UNCHECKED ? CACHES_LOST
			     : s->clean			  ? CACHES_CLEAN
			     : strncmp(s->boot_id, boot, sizeof s->boot_id) ? CACHES_LOST /* the machine went down with them */
							  : CACHES_CRASHED;
	return r;
}

static int map_caches(struct engine *e, bool create, bool init_locks)
{
	const char *dir = e->dir;
	e->lbnmap_len = e->sb.logical_blocks * 8;
	e->refs_len = e->sb.data_blocks * e->sb.frags * 4;
	/* Created as zeros (an empty map) with their room (meta_map): the open that created them used
	 * to write them whole, rebuilding them, and so took their room. */
	/* The first opener extends a state from before the checks (init_locks: alone) */
	if (!(e->st = meta_map(dir, VOL_STATE, sizeof *e->st, create || init_locks, NULL)) ||
	    !(e->lbnmap = meta_map(dir, VOL_LBNMAP, e->lbnmap_len, create, NULL)) ||
	    !(e->space.refs = meta_map(dir, VOL_REFS, e->refs_len, create, &e->space.refs_fd)))
		return errno ? -errno : -EIO;
	if (e->space.refs_fd == 0) { /* a caller with stdin closed: 0 means "none" here */
		e->space.refs_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		close(0);
	}
	if (create) {
		memset(e->st, 0, sizeof *e->st);
		e->st->magic = VOL_STATE_MAGIC;
	}
	if (init_locks && e->st->magic == VOL_STATE_MAGIC_UNCHECKED) {
		e->unchecked_state = true; /* closed by a build without the checks: trusted this once */
		e->st->magic = VOL_STATE_MAGIC;
	}
	if (e->st->magic != VOL_STATE_MAGIC)
		return -EINVAL;
	e->space.blocks = e->sb.data_blocks;
	e->space.frags = e->sb.frags;
	e->space.block_size = e->sb.block_size;
	e->space.cursor = &e->st->alloc_cursor;
	return stripes_open(&e->stripes, dir, e->sb.index_stripes, init_locks);
}

/* The state's digest: all of it but its checks and its locks (re-initialised by every first
 * opener, and changed by a lock and unlock). */
static uint64_t state_digest(const struct vol_state *st)
{
	uint64_t h = meta_digest(VCK_STATE, st, offsetof(struct vol_state, world));
	return meta_digest(h, &st->quiesce, offsetof(struct vol_state, checks) - offsetof(struct vol_state, quiesce));
}

static uint64_t index_digest(struct engine *e)
{
	return e->iops->digest ? e->iops->digest(e->ix) : 0;
}

/* The last closer, with everything else written: the checks the next opener alone compares. An
 * opener that checked them and neither changed the volume nor shared it (a stat, an export) keeps
 * those of the references and the index: a second pass over them would find what the first did. */
static void caches_seal(struct engine *e)
{
	if (!e->checked_clean || e->mutated || e->st->slots_used > 1) {
		e->st->checks[VCK_REFS] = meta_digest(VCK_REFS, e->space.refs, e->refs_len);
		e->st->checks[VCK_INDEX] = index_digest(e);
	}
	e->st->clean = 1;
	e->st->checks[VCK_STATE] = state_digest(e->st);
}

/* The caches of a clean close, before they are trusted: each against the check the close sealed,
 * the working map against the durable map's checkpoint. Once per open alone, never on the data
 * path. -EBADMSG (e->cache_note naming the cache) when one differs. */
static int caches_check(struct engine *e)
{
	const char *bad = state_digest(e->st) != e->st->checks[VCK_STATE]				? VOL_STATE
			  : meta_digest(VCK_REFS, e->space.refs, e->refs_len) != e->st->checks[VCK_REFS] ? VOL_REFS
			  : index_digest(e) != e->st->checks[VCK_INDEX]					? "index"
													: NULL;
	if (!bad) {
		int rc = txn_check_working(e->dir, e->sb.logical_blocks, e->sb.version >= VOL_VERSION, e->lbnmap);
		if (rc && rc != -EBADMSG)
			return rc;
		bad = rc ? VOL_LBNMAP : NULL;
	}
	if (!bad)
		return 0;
	snprintf(e->cache_note, sizeof e->cache_note, "the %s cache%s failed its check", bad,
		 strcmp(bad, "index") ? "" : "'s files");
	return -EBADMSG;
}

/* Caches are removed for a rebuild only when the durable map loads: one damaged too, and the
 * caches are all that is left of it (the open fails naming the damage). */
static int durable_loads(struct engine *e)
{
	return txn_check_durable(e->dir, e->sb.logical_blocks, e->sb.journal_bytes, e->sb.version >= VOL_VERSION,
				 &e->txn.why); /* what open_failure says */
}

/* The first opener alone: caches trusted (once checked), repaired or rebuilt; locks
 * re-initialised. A cache that fails its check or turns out cut short or not this volume's
 * (-EBADMSG: a file that lost its tail, a damaged header) is not trusted: every cache is rebuilt
 * from the durable map, as after a power loss (*cs says so from then on). */
static int open_alone(struct engine *e, const struct index_params *ip, enum cache_state *cs)
{
	int rc = e->p.rebuild_caches ? durable_loads(e) : 0;
	if (rc)
		return rc;
	for (;;) {
		if (*cs == CACHES_LOST) {
			remove_caches(e->dir, &e->sb);
			rc = e->iops->create(ip);
		}
		if (!rc)
			rc = map_caches(e, *cs == CACHES_LOST, true);
		if (!rc && !(rc = meta_init_mutex(&e->st->world)))
			rc = meta_init_mutex(&e->st->commit);
		if (!rc) /* an index just created has nothing to recover (a recount of an empty mem table
			  * read every page of it: 16 GiB at 1 TiB) */
			rc = e->iops->open(ip, *cs == CACHES_CRASHED, &e->ix);
		if (!rc && *cs == CACHES_CLEAN && !e->unchecked_state)
			e->checked_clean = !(rc = caches_check(e));
		if (rc == -EBADMSG && !e->cache_note[0])
			snprintf(e->cache_note, sizeof e->cache_note, "a cache was cut short, unreadable or not this volume's");
		if (rc != -EBADMSG || *cs == CACHES_LOST)
			break;
		if (e->read_only) { /* a rebuild writes */
			snprintf(e->cache_note + strlen(e->cache_note), sizeof e->cache_note - strlen(e->cache_note),
				 " and its rebuild would write");
			return -EROFS;
		}
		if ((rc = durable_loads(e)))
			return rc;
		if (e->ix)
			e->iops->close(e->ix);
		e->ix = NULL;
		stripes_close(&e->stripes);
		unmap_all(e);
		*cs = CACHES_LOST;
	}
	if (rc)
		return rc;
	e->st->quiesce = 0;
	/* Nobody else is here: every slot is stale. Those below slots_used hold a closed or dead
	 * process's counts; any beyond it can only be damage, and a live pid left there (damaged, or
	 * a dead writer's reused) would make every later quiesce wait for it forever. */
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++)
		if (e->st->slots[i].pid)
			for (int c = 0; c < VC_COUNT; c++)
				e->st->base[c] += e->st->slots[i].c[c];
	memset(e->st->slots, 0, sizeof e->st->slots);
	e->st->slots_used = 0;
	return 0;
}

/* What a failed open says: the damage the durable map's checks found, a cache read-only storage
 * cannot rebuild, or the error. */
static const char *open_failure(const struct engine *e, int rc)
{
	return rc == -EBADMSG && e->txn.why.msg[0] ? e->txn.why.msg
	       : rc == -EROFS && e->cache_note[0] ? e->cache_note
						  : strerror(-rc);
}

/* Why a volume on read-only storage cannot be opened as asked, or NULL when it can. */
static const char *read_only_refusal(const struct engine *e, const struct engine_open_params *p, char *buf, size_t len)
{
	if (!p->read_only)
		return "this command writes to the volume (stat and export read a clean one there)";
	if (e->iops->flags & FPINDEX_OPENS_READ_ONLY)
		return NULL;
	char names[64];
	snprintf(buf, len, "only a volume with the %s index opens there without writing",
		 fpindex_names(names, sizeof names, " or ", FPINDEX_OPENS_READ_ONLY));
	return buf;
}

/* The superblock read, its index and hash found, and the superblock held open for its lock; a
 * volume on read-only storage refused unless this open only reads one that can open there. */
static int open_superblock(struct engine *e, const char *dir, const struct engine_open_params *p, struct dd_err *err)
{
	int rc = sb_read(dir, &e->sb, err);
	if (rc)
		return err_forward(err, rc, "%s", dir);
	e->iops = index_find(e->sb.index);
	e->fp = fp_new(e->sb.hash);
	if (!e->iops || !e->fp)
		return err_fail(err, -EINVAL, "%s: unknown index or hash in the superblock", dir);
	char path[4096];
	meta_path(path, sizeof path, dir, VOL_SUPERBLOCK);
	e->lock_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (e->lock_fd < 0)
		return err_fail_errno(err, -errno, errno, "%s: cannot open the superblock", dir);
	/* Read-only storage: a caller that only reads gets a clean volume's durable state and caches
	 * mapped private (counters and slots change in memory only); recovery, a bdb environment or
	 * anything that writes cannot run there. */
	struct statvfs vfs;
	e->read_only = statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
	char ro_buf[160];
	const char *ro_why = e->read_only ? read_only_refusal(e, p, ro_buf, sizeof ro_buf) : NULL;
	if (ro_why)
		return err_fail(err, -EROFS, "%s is on read-only storage: %s", dir, ro_why);
	return 0;
}

/* The volume's lock: exclusive when nobody else has it open (*alone), else shared. */
static int open_lock(struct engine *e, const char *dir, const struct engine_open_params *p, bool *alone,
		     struct dd_err *err)
{
	/* Whoever gets the volume alone first (LOCK_EX) repairs or rebuilds its caches. */
	*alone = flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0;
	if (!*alone && p->exclusive)
		return err_fail(err, -EBUSY, "%s is in use by another process that has it open (a stat or an export)", dir);
	if (!*alone && flock(e->lock_fd, LOCK_SH))
		return err_fail_errno(err, -errno, errno, "%s: cannot lock", dir);
	return 0;
}

/* The first opener, its slot claimed: caches brought up to date with the durable files (nothing
 * to do on the first open after format), the volume marked in use, the lock shared from now on. */
static int open_claim_alone(struct engine *e, const struct engine_open_params *p, enum cache_state cs)
{
	int rc = slot_claim(e);
	int fresh = !rc && cs == CACHES_LOST ? txn_durable_empty(&e->txn) : 0;
	if (fresh < 0) {
		rc = fresh;
	} else if (fresh) {
		/* Never written (the first open after format): the new caches - sparse files, all
		 * zeros - already say what the durable map says. Loading and checkpointing the
		 * whole map, as a recovery does, wrote and held GBs for a large empty volume. */
		e->st->next_seq = 1;
		e->st->journal_tail = 0;
	} else if (!rc && cs == CACHES_LOST)
		rc = recovery_from_durable(e);
	else if (!rc && cs == CACHES_CRASHED && !(rc = recovery_rebuild(e))) {
		/* A committer may have died holding dirty bits it never made durable. */
		txn_mark_all(&e->txn);
		rc = txn_commit(&e->txn, true);
	}
	if (!rc && !e->read_only)
		rc = mark_unclean(e);
	if (!rc && !p->exclusive && flock(e->lock_fd, LOCK_SH))
		rc = -errno;
	return rc;
}

/* Another opener has the volume: its slot claimed under the world lock. */
static int open_claim_shared(struct engine *e)
{
	int rc = world_enter(e);
	if (rc)
		return rc;
	rc = slot_claim(e);
	/* The last one out may have marked the volume clean while this opener waited for the
	 * shared lock behind its checkpoint: its caches are sound to join, but a crash from here
	 * on must not find "clean". */
	if (!rc && e->st->clean)
		rc = mark_unclean(e);
	world_leave(e);
	return rc;
}

/* Caches, index, chunk store, map and journal, packer and buffers, and this handle's slot. */
static int open_volume_files(struct engine *e, const char *dir, const struct engine_open_params *p, bool alone,
			     enum cache_state cs)
{
	struct index_params ip = index_params(dir, &e->sb, p->commit_every);
	ip.alone = alone;
	int rc = alone ? open_alone(e, &ip, &cs) : map_caches(e, false, false);
	if (!rc && !alone)
		rc = e->iops->open(&ip, 0, &e->ix);
	if (!rc)
		rc = store_open(&e->store, dir, e->sb.block_size, e->sb.data_blocks, e->sb.stripes, e->sb.stripe_unit,
				p->direct, p->recorder);
	if (!rc)
		rc = txn_open(&e->txn, dir, e->sb.logical_blocks, e->sb.journal_bytes,
			      e->sb.version >= VOL_VERSION, /* v4: the durable map has chunk checks */
			      e->lbnmap, e->st, &e->store, p->recorder);
	if (!rc)
		rc = packer_init(&e->pack, e->sb.block_size);
	if (!rc && (posix_memalign(&e->scratch, 4096, e->sb.block_size) || posix_memalign(&e->scratch2, 4096, e->sb.block_size)))
		rc = -ENOMEM;
	if (!rc)
		rc = alone ? open_claim_alone(e, p, cs) : open_claim_shared(e);
	return rc;
}

int engine_open(const char *dir, const struct engine_open_params *p, struct engine **out, struct dd_err *err)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return err_fail(err, -ENOMEM, "out of memory");
	e->lock_fd = -1;
	e->txn.map_fd = e->txn.journal_fd = -1; /* destroy() before txn_open must not close fd 0 */
	e->p = *p;
	snprintf(e->dir, sizeof e->dir, "%s", dir);
	bool alone = false;
	int rc = open_superblock(e, dir, p, err);
	if (!rc)
		rc = open_lock(e, dir, p, &alone, err);
	if (rc) {
		destroy(e);
		return rc;
	}
	enum cache_state cs = !alone ? CACHES_CLEAN : p->rebuild_caches ? CACHES_LOST : probe_caches(dir, e);
	if (e->read_only && (!alone || cs != CACHES_CLEAN)) {
		destroy(e);
		return err_fail(err, -EROFS, "%s is on read-only storage and %s", dir,
				!alone ? "in use by another process (its state here would be stale)"
				       : "was not closed cleanly: its recovery writes to the volume");
	}
	if ((rc = open_volume_files(e, dir, p, alone, cs))) {
		char what[sizeof e->txn.why.msg];
		snprintf(what, sizeof what, "%s", open_failure(e, rc));
		destroy(e);
		return err_fail(err, rc, "%s: cannot open the volume: %s", dir, what);
	}
	*out = e;
	return 0;
}

/* A stored content gained an LBN reference / lost one: the gauges follow the word's transitions. */
static void ref_up(struct engine *e, uint64_t addr)
{
	if (!REF_LBNS(space_ref(&e->space, addr))) {
		count(e, VC_REFERENCED, 1);
		count(e, VC_PHYSICAL_BYTES, space_bytes(&e->space, addr));
		count(e, VC_LIVE_FRAGMENTS, addr_packed(addr));
	}
}

static void ref_down(struct engine *e, uint64_t addr)
{
	if (!space_valid(&e->space, addr))
		return;
	if (REF_LBNS(space_unref(&e->space, addr)) == 1) {
		count(e, VC_REFERENCED, -1);
		count(e, VC_PHYSICAL_BYTES, -(int64_t)space_bytes(&e->space, addr));
		count(e, VC_LIVE_FRAGMENTS, -(int64_t)addr_packed(addr));
	}
}

/* Point lbn at addr (already referenced for it): one atomic exchange, then the old content loses
 * its reference (it stays held until GC) and the map chunk is marked for the next commit. */
static void remap(struct engine *e, uint64_t lbn, uint64_t addr)
{
	uint64_t old = __atomic_exchange_n(&e->lbnmap[lbn], addr, __ATOMIC_SEQ_CST);
	txn_mark(&e->txn, lbn);
	if (old) {
		ref_down(e, old);
		count(e, VC_OVERWRITES, 1);
	} else {
		count(e, VC_MAPPED, 1);
	}
}

static void close_bin(struct engine *e)
{
	if (!e->pack.open)
		return;
	space_clear(&e->space, e->pack.pbn * e->space.frags, REF_RESERVED);
	e->pack.open = false;
	e->me->bin_pbn = 0;
}

static bool pbn_has_room(void *arg, uint64_t pbn)
{
	return store_has_room(arg, pbn);
}

/* A PBN for new content; ENGINE_FULL when none is free. After the file system's ENOSPC, one that
 * GC freed (its file blocks still there) while there is one: the cursor's next PBNs, never
 * written on a sparse store, would fail again and again. */
static int alloc_pbn(struct engine *e, uint64_t *pbn)
{
	if (e->reuse_first) {
		if (!space_alloc_reused(&e->space, &e->reuse_pos, pbn_has_room, &e->store, pbn))
			return 0;
		e->reuse_first = false; /* none left: new room, which the file system may have again */
	}
	int rc = space_alloc(&e->space, e->me, pbn);
	return rc == -ENOSPC ? ENGINE_FULL : rc;
}

/* Store new content: a fragment appended to this process's open bin when it compresses, else a
 * whole block of its own. The address comes back reserved, not yet published. */
static int store_new(struct engine *e, const void *buf, uint64_t *addr)
{
	uint64_t pbn;
	int rc;
	uint32_t clen = e->sb.compress ? packer_compress(&e->pack, buf) : 0;
	if (clen) {
		if (!packer_fits(&e->pack, clen)) {
			close_bin(e);
			if ((rc = alloc_pbn(e, &pbn)))
				return rc;
			packer_open_bin(&e->pack, pbn);
			e->me->bin_pbn = pbn + 1;
		}
		unsigned slot = packer_append(&e->pack, clen);
		e->me->bin_used = e->pack.used;
		e->me->bin_frags = e->pack.frags;
		if ((rc = store_write(&e->store, e->pack.pbn, e->pack.bin)))
			return rc;
		*addr = addr_fragment(e->pack.pbn, slot, clen);
		count(e, VC_COMPRESSED_WRITES, 1);
		return 0;
	}
	if ((rc = alloc_pbn(e, &pbn)))
		return rc;
	if ((rc = store_write(&e->store, pbn, buf))) {
		space_clear(&e->space, pbn * e->space.frags, REF_RESERVED);
		return rc;
	}
	*addr = addr_whole(pbn);
	return 0;
}

/* Make a stored content visible with its first reference: held (and indexed) from now on. */
static void publish(struct engine *e, uint64_t addr, uint32_t bits)
{
	uint64_t idx = space_index(&e->space, addr);
	space_set(&e->space, idx, REF_HELD | bits);
	ref_up(e, addr);
	if (!addr_packed(addr))
		space_clear(&e->space, idx, REF_RESERVED);
}

/* The write path with the fingerprint's stripe held from the lookup to the insert, so one
 * content is stored once however many writers race on it. */
static int write_dedup(struct engine *e, uint64_t lbn, const void *buf, const uint8_t *fp)
{
	unsigned stripe = index_stripe(fp);
	int rc = stripe_lock(&e->stripes, stripe);
	if (rc < 0)
		return rc;
	if (rc == STRIPE_OWNER_DIED) {
		stripe_unlock(&e->stripes, stripe);
		return ENGINE_REPAIR;
	}
	count(e, VC_INDEX_LOOKUPS, 1);
	uint64_t addr = 0;
	bool collision = false;
	int hit = e->iops->lookup(e->ix, fp, &addr);
	if (hit == INDEX_ABSENT_FILTERED) {
		count(e, VC_BLOOM_NEGATIVES, 1);
		hit = 0;
	}
	if (hit == 1 && !space_valid(&e->space, addr))
		hit = 0; /* a damaged entry: store anew (the insert replaces it) */
	if (hit == 1 && e->p.verify_hits) {
		if ((rc = engine_read_addr(e, addr, e->scratch)))
			goto out;
		if (memcmp(e->scratch, buf, e->sb.block_size)) {
			count(e, VC_COLLISIONS, 1);
			collision = true; /* stored unindexed: the index keeps the first owner */
			hit = 0;
		}
	}
	if (hit < 0) {
		rc = hit;
		goto out;
	}
	if (hit == 1) {
		count(e, VC_LOGICAL_WRITES, 1);
		if (__atomic_load_n(&e->lbnmap[lbn], __ATOMIC_SEQ_CST) == addr) {
			count(e, VC_INPLACE_REWRITES, 1); /* case 1: the same data rewritten in place */
			rc = 0;
			goto out;
		}
		ref_up(e, addr); /* under the stripe: GC cannot take it from between lookup and here */
		stripe_unlock(&e->stripes, stripe);
		remap(e, lbn, addr); /* cases 2 and 3 */
		count(e, VC_DUPLICATE_WRITES, 1);
		return 0;
	}
	/* Cases 4 and 5, new data. */
	if ((rc = store_new(e, buf, &addr)))
		goto out;
	uint32_t bits = 0;
	if (!collision) {
		rc = e->iops->insert(e->ix, fp, addr);
		if (!rc)
			bits = REF_INDEXED;
		else if (rc == -ENOSPC)
			rc = 0; /* the index is full: stored unindexed, it just will not deduplicate */
	}
	publish(e, addr, bits);
	stripe_unlock(&e->stripes, stripe);
	if (rc)
		return rc; /* published unreferenced: GC takes it back */
	remap(e, lbn, addr);
	count(e, VC_UNIQUE_WRITES, 1);
	count(e, VC_LOGICAL_WRITES, 1);
	return 0;
out:
	stripe_unlock(&e->stripes, stripe);
	return rc;
}

/* NODEDUP: no fingerprint, no index, no stripe lock. */
static int write_nodedup(struct engine *e, uint64_t lbn, const void *buf)
{
	uint64_t addr;
	int rc = store_new(e, buf, &addr);
	if (rc)
		return rc;
	publish(e, addr, 0);
	remap(e, lbn, addr);
	count(e, VC_NODEDUP_WRITES, 1);
	count(e, VC_UNIQUE_WRITES, 1);
	count(e, VC_LOGICAL_WRITES, 1);
	return 0;
}

static int repair(struct engine *e)
{
	int rc = world_enter(e);
	if (rc)
		return rc;
	rc = recovery_rebuild(e);
	world_leave(e);
	return rc;
}

static int gc(struct engine *e, uint64_t *reclaimed, uint64_t *free_pbns)
{
	close_bin(e);
	int rc = world_enter(e);
	if (rc)
		return rc;
	rc = recovery_gc(e, reclaimed, free_pbns);
	world_leave(e);
	return rc;
}

int engine_write_hint(struct engine *e, uint64_t lbn, const void *buf, unsigned hints)
{
	if (e->read_only)
		return -EROFS;
	e->mutated = true;
	if (lbn >= e->sb.logical_blocks)
		return -EINVAL;
	uint8_t fp[FP_MAX_LEN];
	bool nodedup = hints & ENGINE_NODEDUP;
	if (!nodedup && fp_hash(e->fp, buf, e->sb.block_size, fp))
		return -EIO;
	unsigned collections = 0;
	bool fs_retried = false;
	for (;;) {
		int rc = op_enter(e);
		if (rc)
			return rc;
		rc = nodedup ? write_nodedup(e, lbn, buf) : write_dedup(e, lbn, buf, fp);
		op_exit(e);
		if (rc == ENGINE_REPAIR) {
			if ((rc = repair(e)))
				return rc;
			continue;
		}
		if (rc == ENGINE_FULL || (rc == -ENOSPC && !fs_retried)) {
			/* No free PBN, the store full of stale blocks (overwrites are not reclaimed on the
			 * write path): collect. The verdict is the room a pass leaves, counted while every
			 * writer is stopped, not what this pass freed: another writer's pass may have just
			 * taken the stale blocks (ours then frees nothing with room free: a false ENOSPC,
			 * seen with the suite's two engine writers under load), and other writers may take
			 * the room before this one retries (collect again). The file system under a
			 * sparse store full (its ENOSPC): one collection, whose freed PBNs have their
			 * file blocks, and one retry that takes one of them (alloc_pbn); free PBNs say
			 * nothing about that room. */
			bool fs_full = rc == -ENOSPC;
			fs_retried |= fs_full;
			e->reuse_first |= fs_full;
			if (collections == MAX_COLLECTIONS)
				return -ENOSPC;
			const struct engine_recorder *r = e->p.recorder;
			if (r && r->collect)
				r->collect(r->arg, collections, false);
			uint64_t freed = 0, free_pbns = 0;
			if ((rc = gc(e, &freed, &free_pbns)))
				return rc;
			if (r && r->collect)
				r->collect(r->arg, collections, true);
			collections++;
			if (fs_full || free_pbns)
				continue;
			return -ENOSPC;
		}
		if (!rc && e->p.commit_every && ++e->since_commit >= e->p.commit_every) {
			e->since_commit = 0;
			rc = txn_commit(&e->txn, false);
			count(e, VC_COMMITS, 1);
		}
		return rc;
	}
}

int engine_write(struct engine *e, uint64_t lbn, const void *buf)
{
	return engine_write_hint(e, lbn, buf, 0);
}

int engine_read(struct engine *e, uint64_t lbn, void *buf)
{
	if (lbn >= e->sb.logical_blocks)
		return -EINVAL;
	count(e, VC_READS, 1);
	/* Lock-free: the map entry is one atomic word and stored contents are never rewritten.
	 * Only a GC pass can free (and a write then reuse) a block under us: if one ran, re-read. */
	for (;;) {
		uint64_t epoch = __atomic_load_n(&e->st->gc_epoch, __ATOMIC_SEQ_CST);
		uint64_t a = __atomic_load_n(&e->lbnmap[lbn], __ATOMIC_SEQ_CST);
		int rc = a ? engine_read_addr(e, a, buf) : (memset(buf, 0, e->sb.block_size), 0);
		if (__atomic_load_n(&e->st->gc_epoch, __ATOMIC_SEQ_CST) == epoch)
			return rc;
	}
}

bool engine_lbn_mapped(struct engine *e, uint64_t lbn)
{
	return lbn < e->sb.logical_blocks && __atomic_load_n(&e->lbnmap[lbn], __ATOMIC_SEQ_CST) != 0;
}

int engine_discard(struct engine *e, uint64_t lbn, uint64_t n)
{
	if (e->read_only)
		return -EROFS;
	if (lbn > e->sb.logical_blocks || n > e->sb.logical_blocks - lbn)
		return -EINVAL;
	e->mutated = true;
	int rc = op_enter(e);
	if (rc)
		return rc;
	for (uint64_t l = lbn; l < lbn + n; l++) {
		if (!__atomic_load_n(&e->lbnmap[l], __ATOMIC_RELAXED))
			continue;
		uint64_t old = __atomic_exchange_n(&e->lbnmap[l], 0, __ATOMIC_SEQ_CST);
		if (!old)
			continue;
		txn_mark(&e->txn, l);
		ref_down(e, old);
		count(e, VC_MAPPED, -1);
		count(e, VC_DISCARDS, 1);
	}
	op_exit(e);
	return 0;
}

int engine_flush(struct engine *e)
{
	if (e->read_only)
		return 0; /* nothing was written, nothing to make durable */
	count(e, VC_FLUSHES, 1);
	count(e, VC_COMMITS, 1);
	e->since_commit = 0;
	return txn_commit(&e->txn, false);
}

int engine_gc(struct engine *e, uint64_t *reclaimed)
{
	*reclaimed = 0;
	if (e->read_only)
		return -EROFS;
	e->mutated = true;
	uint64_t free_pbns;
	return gc(e, reclaimed, &free_pbns);
}

void engine_stats(struct engine *e, struct engine_stats *s)
{
	struct index_stats is;
	e->iops->stats(e->ix, &is);
	memset(s, 0, sizeof *s);
	s->block_size = e->sb.block_size;
	s->logical_blocks = e->sb.logical_blocks;
	s->data_blocks = e->sb.data_blocks;
#define C(f, k) s->f = (uint64_t)vol_counter(e, k)
	C(logical_writes, VC_LOGICAL_WRITES);
	C(unique_writes, VC_UNIQUE_WRITES);
	C(nodedup_writes, VC_NODEDUP_WRITES);
	C(compressed_writes, VC_COMPRESSED_WRITES);
	C(duplicate_writes, VC_DUPLICATE_WRITES);
	C(overwrites, VC_OVERWRITES);
	C(inplace_rewrites, VC_INPLACE_REWRITES);
	C(discards, VC_DISCARDS);
	C(reads, VC_READS);
	C(mapped_blocks, VC_MAPPED);
	C(referenced_blocks, VC_REFERENCED);
	C(physical_bytes, VC_PHYSICAL_BYTES);
	C(compressed_fragments, VC_LIVE_FRAGMENTS);
	C(index_lookups, VC_INDEX_LOOKUPS);
	C(bloom_negatives, VC_BLOOM_NEGATIVES);
	C(gc_reclaimed, VC_GC_RECLAIMED);
	C(collisions, VC_COLLISIONS);
	C(commits, VC_COMMITS);
	C(checkpoints, VC_CHECKPOINTS);
#undef C
	s->physical_blocks = space_used_blocks(&e->space);
	s->dedup_ratio = s->referenced_blocks ? (double)s->mapped_blocks / (double)s->referenced_blocks : 0;
	s->index_entries = is.entries;
	s->meta_reads = is.meta_reads;
	s->meta_writes = is.meta_writes;
	s->index_bytes = is.bytes;
	snprintf(s->index, sizeof s->index, "%s", e->sb.index);
	snprintf(s->hash, sizeof s->hash, "%s", e->sb.hash);
	snprintf(s->compress, sizeof s->compress, "%s", e->sb.compress ? "lz4" : "none");
}

int engine_close(struct engine *e)
{
	if (e->read_only) { /* its caches were private: nothing to write back */
		destroy(e);
		return 0;
	}
	close_bin(e);
	int rc = engine_flush(e);
	int wrc = world_enter(e);
	if (!wrc) {
		slot_release(e);
		world_leave(e);
	}
	/* The last one out checkpoints the map and marks the volume clean. */
	if (!rc && !wrc && flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0) {
		e->st->base[VC_CHECKPOINTS]++;
		rc = txn_commit(&e->txn, true);
		if (!rc)
			rc = e->iops->flush(e->ix);
		if (!rc && (msync(e->lbnmap, e->lbnmap_len, MS_SYNC) || msync(e->space.refs, e->refs_len, MS_SYNC)))
			rc = -errno;
		if (!rc) {
			caches_seal(e);
			if (msync(e->st, sizeof *e->st, MS_SYNC))
				rc = -errno;
		}
	}
	destroy(e);
	return rc ? rc : wrc;
}
