/* target.c - the target core: which kind --target names (registry.c), and every caller's way to a
 * target's ops (target.h); what the kinds share with it is in targetkind.c, below both. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "bench/ioengine/ioengine.h"
#include "bench/target/claim.h"
#include "bench/target/targetkind.h"
#include "lib/errmsg.h"
#include "lib/opttable.h"
#include "reference-engine/engine.h"

/* The first kind of the registry that takes path (st: NULL in the round before stat). */
static const struct target_ops *kind_of(const char *path, const struct stat *st)
{
	for (size_t i = 0; i < target_kind_count; i++)
		if (target_kinds[i]->match(path, st))
			return target_kinds[i];
	return NULL;
}

int target_probe(const struct target_request *req, struct target *t, struct dd_err *err)
{
	memset(t, 0, sizeof *t);
	t->dir_fd = t->excl_fd = t->engine_fd = t->engine_parent_fd = -1;
	t->procs = req->procs;
	t->no_writes = req->no_writes;
	if (req->procs > sizeof t->created / sizeof t->created[0])
		return err_fail(err, -1, "--procs %u is more than %zu", req->procs, sizeof t->created / sizeof t->created[0]);
	if (strlen(req->path) >= sizeof t->path - 32)
		return err_fail(err, -1, "target path is too long");
	snprintf(t->path, sizeof t->path, "%s", req->path);
	struct stat st;
	const struct target_ops *kind = kind_of(req->path, NULL);
	if (!kind) {
		if (stat(req->path, &st))
			return err_fail(err, -1, "target %s: %s (give a directory, an existing file, a block device or null)",
					req->path, strerror(errno));
		if (!(kind = kind_of(req->path, &st)))
			return err_fail(err, -1, "target %s is not a directory, regular file or block device", req->path);
	}
	t->ops = kind;
	return kind->probe(req, t, &st, err);
}

int target_probe_for_run(struct target_request *req, bool sync_direct, const struct ioengine_ops *chosen,
			 struct target *t, struct dd_err *err)
{
	req->direct = sync_direct || (chosen->flags & IOENGINE_NEEDS_DIRECT);
	int rc = target_probe(req, t, err);
	t->direct = req->direct;
	t->io = t->ops && t->ops->io ? t->ops->io : chosen;
	return rc;
}

int target_prepare(struct target *t, uint32_t block_size, struct dd_err *err)
{
	return t->ops->prepare ? t->ops->prepare(t, block_size, err) : 0;
}

void target_worker_path(const struct target *t, unsigned worker, char *path, size_t len, uint64_t *base)
{
	if (t->ops->worker_path) {
		t->ops->worker_path(t, worker, path, len, base);
		return;
	}
	/* target_probe bounds t->path well below PATH_MAX, so this never truncates. */
	int n = snprintf(path, len, "%s", t->path);
	*base = (uint64_t)worker * t->region_size;
	if (n < 0 || (size_t)n >= len)
		path[0] = 0;
}

int target_open_flags(const struct target *t)
{
	return t->ops->open_flags;
}

const char *target_shown(const struct target *t, const char *opened)
{
	return t->ops->flags & TARGET_SHOWN_BY_PATH ? t->path : opened;
}

/* With a kept ledger only the kind knows (its data was left as the ledger says, or not);
 * otherwise a run that writes every block first reads no unwritten one. */
bool target_zeros_known(const struct target *t, bool populated, bool ledger_kept)
{
	bool kind_says = t->ops->zeros_known && t->ops->zeros_known(t, ledger_kept);
	return ledger_kept ? kind_says : populated || kind_says;
}

bool target_holds_earlier_data(const struct target *t)
{
	return t->ops->holds_earlier_data && t->ops->holds_earlier_data(t);
}

void target_measured_by_command(struct target *t)
{
	if (t->ops->flags & TARGET_SPARSE_FOR_COMMAND)
		t->sparse = true;
}

enum target_space target_space_of(const struct target *t, char *path, size_t len)
{
	snprintf(path, len, "%s", t->path);
	return t->ops->space ? t->ops->space(t, path, len) : TARGET_SPACE_NONE;
}

void target_flush(const struct target *t)
{
	if (t->ops->flush)
		t->ops->flush(t);
}

unsigned target_file_count(const struct target *t)
{
	return t->ops->flags & TARGET_FILE_PER_WORKER ? t->procs : 1;
}

int target_observe(const struct target *t, bool fsck, struct target_observation *obs, struct dd_err *err)
{
	struct dd_err dropped;
	memset(obs, 0, sizeof *obs);
	if (!err)
		err = &dropped;
	if (!t->ops->observe)
		return err_fail(err, -1, "target %s keeps no counters of its own", t->path);
	return t->ops->observe(t, fsck, obs, err);
}

int target_refuse_output(const struct target *t, const char *what, const char *path, bool is_dir, struct dd_err *err)
{
	return t->ops->refuse_output ? t->ops->refuse_output(t, what, path, is_dir, err) : 0;
}

void target_cleanup(struct target *t, bool keep)
{
	if (t->ops && t->ops->cleanup)
		t->ops->cleanup(t, keep);
}

void target_release(struct target *t)
{
	if (t->ops && t->ops->release)
		t->ops->release(t);
	runlock_release(&t->lock);
	runlock_release(&t->lock_around);
	for (unsigned i = 0; i < t->nfile_locks; i++)
		runlock_release(&t->file_locks[i]);
	free(t->file_locks);
	t->file_locks = NULL;
	t->nfile_locks = 0;
}

void target_print_completion(FILE *f)
{
	char prefix[32];
	for (size_t i = 0; i < target_kind_count; i++) {
		if (!target_kinds[i]->options)
			continue;
		snprintf(prefix, sizeof prefix, "%s,", target_kinds[i]->spelling);
		opt_print_kv_completion(f, target_kinds[i]->options(), prefix);
	}
}

/* "[,KEY=a|b]" for each row of a kind's options, after its form. */
static size_t spell_options(const struct opt_table *t, char *buf, size_t len)
{
	size_t used = 0;
	for (size_t i = 0; i < t->count; i++) {
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "[,%s=", t->rows[i].name);
		for (size_t k = 0; t->rows[i].choices && t->rows[i].choices[k]; k++)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", k ? "|" : "",
						 t->rows[i].choices[k]);
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "]");
	}
	return used;
}

void target_help(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < target_kind_count && used < len; i++) {
		const struct target_ops *k = target_kinds[i];
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "; " : "", k->usage);
		if (k->options && used < len)
			used += spell_options(k->options(), buf + used, len - used);
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, " (%s)", k->about);
	}
}
