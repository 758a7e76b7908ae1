/* config.c - cross-option rules (an always-direct I/O engine implies O_DIRECT, separate
 * read/write rates need a mixed run, ...), bundled-distribution lookup, the checks before any I/O. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/distname.h"
#include "bench/workload/access.h"
#include "bench/config.h"
#include "lib/pathwithin.h"
#include "bench/report/spacecheck.h"
#include "lib/plot.h"
#include "lib/safefile.h"

#define fail(err, ...) errmsg_set((err)->msg, sizeof (err)->msg, -1, __VA_ARGS__)
/* A failure of the machine, not of the input (memory ran out): exit 1, not 2. */
#define fail_resource(err, ...) ((err)->resource = true, fail(err, __VA_ARGS__))

/* An output path (JSON, output dir) must be creatable: its parent exists and is writable. */
static int check_output_parent(const char *what, const char *path, struct dd_err *err)
{
	char dir[PATH_MAX];
	path_parent(path, dir, sizeof dir);
	struct stat st;
	if (stat(dir, &st))
		return fail(err, "%s %s: %s: %s", what, path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(err, "%s %s: %s is not a directory", what, path, dir);
	if (access(dir, W_OK | X_OK))
		return fail(err, "%s %s: directory %s is not writable: %s", what, path, dir, strerror(errno));
	return 0;
}

static int check_output_dir(const char *path, struct dd_err *err)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return fail(err, "--output-dir %s exists and is not a directory", path);
		if (access(path, W_OK | X_OK))
			return fail(err, "--output-dir %s is not writable: %s", path, strerror(errno));
		return 0;
	}
	return check_output_parent("--output-dir", path, err);
}

/* A report written where the run's data lives would replace it (reports are renamed into place):
 * the target file or device itself, a worker file of a directory target, anything in an engine
 * volume. And a report path that is a directory is refused before the run, not after it, as is a
 * directory of reports that cannot be one (an existing file, an unwritable place). */
int config_check_output(const struct target *t, const char *what, const char *path, bool is_dir,
			struct dd_err *err)
{
	struct stat st;
	if (!is_dir && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return fail(err, "%s %s is a directory", what, path);
	/* the parent check drops the trailing slash: newdir/ or afile/ passed it, and the run failed
	 * writing its report after it was over */
	size_t len = strlen(path);
	if (!is_dir && len && path[len - 1] == '/')
		return fail(err, "%s %s ends in '/': a report is written to a file, not into a directory", what, path);
	if (is_dir && check_output_dir(path, err))
		return -1;
	/* safefile refuses them when the report is written, after the whole run */
	const char *never = is_dir ? NULL : safefile_refused(path);
	if (never)
		return fail(err, "%s %s is a %s; a report is written to a file (or a character device or FIFO)", what,
			    path, never);
	struct dd_err clash;
	if (target_refuse_output(t, what, path, is_dir, &clash))
		return fail(err, "%s", clash.msg);
	return 0;
}

/* Would writing output `out` (renamed over its name) replace input `in`, the file the run reads
 * (links followed)? Its very name, or a name of the same inode. */
static bool replaces_input(const char *out, const char *in)
{
	struct stat so, si;
	struct path_entry eo, ei;
	if (lstat(out, &so) == 0 && stat(in, &si) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
		return true;
	return path_entry_of(out, &eo) && path_entry_of(in, &ei) && path_entry_same(&eo, &ei);
}

/* The files --output-dir receives (besides a latency log per worker, latency.N.csv), and when. */
enum od_when { OD_ALWAYS, OD_PLOT, OD_SCALED };
static const struct {
	const char *name;
	enum od_when when;
} output_dir_names[] = {
	{"timeseries.csv", OD_ALWAYS},     {"latency-percentiles.csv", OD_ALWAYS}, {"dist-buckets.csv", OD_ALWAYS},
	{"access-frequency.csv", OD_ALWAYS}, {"scaled-target.dist", OD_SCALED}, {"timeseries.png", OD_PLOT},
	{"latency.png", OD_PLOT},          {"distribution.png", OD_PLOT},      {"access.png", OD_PLOT},
};
#define OUTPUT_DIR_NAMES (sizeof output_dir_names / sizeof output_dir_names[0])

static bool output_dir_writes(const struct bench_options *o, size_t i)
{
	enum od_when w = output_dir_names[i].when;
	return w == OD_ALWAYS || (w == OD_PLOT && o->plot) || (w == OD_SCALED && o->content == CONTENT_SCALED);
}

/* Is name one of the files --output-dir receives in this run? */
static bool output_dir_file(const struct bench_options *o, const char *name)
{
	for (size_t i = 0; i < OUTPUT_DIR_NAMES; i++)
		if (output_dir_writes(o, i) && !strcmp(name, output_dir_names[i].name))
			return true;
	unsigned long long n;
	int end = 0;
	return o->latency_log && sscanf(name, "latency.%llu.csv%n", &n, &end) == 1 && end > 0 && !name[end] &&
	       name[8] >= '0' && name[8] <= '9';
}

/* Is path (a name, existing or not) one of the files --output-dir receives? */
static bool in_output_dir(const struct bench_options *o, const char *path)
{
	struct path_entry e;
	struct stat d;
	return o->output_dir && path_entry_of(path, &e) && stat(o->output_dir, &d) == 0 && e.dev == d.st_dev &&
	       e.ino == d.st_ino && output_dir_file(o, e.base);
}

int config_check_outputs(const struct target *t, const struct bench_options *o, const char *dist_path,
			 struct dd_err *err)
{
	const struct {
		const char *what, *path;
		bool dir;
	} outs[] = {{"--json", o->json, false},
		    {"--dist-report", o->dist_report, false},
		    {"--access-report", o->access_report, false},
		    {"--ledger", o->ledger, false},
		    {"--output-dir", o->output_dir, true}};
	size_t nouts = sizeof outs / sizeof outs[0];
	/* Creatable (found only after the run otherwise), and not the target's data. What is written
	 * in place (/dev/null, /dev/stdout, a FIFO) creates nothing in its directory: /dev is not
	 * writable but to root, and --json /dev/null was refused to everyone else. */
	for (size_t i = 0; i < nouts; i++) {
		if (!outs[i].path)
			continue;
		/* a directory's own checks are config_check_output's */
		int bad = outs[i].dir || safefile_in_place(outs[i].path) ? 0
									  : check_output_parent(outs[i].what, outs[i].path, err);
		if (bad || config_check_output(t, outs[i].what, outs[i].path, outs[i].dir, err))
			return -1;
	}
	/* What the run reads: a report renamed over one of them would destroy it (an existing
	 * ledger is read too: it says what the target holds). */
	struct stat lst;
	const struct {
		const char *what, *path;
	} ins[] = {{"--dist", dist_path},
		   {"--config", o->config},
		   {"--trace", o->trace},
		   {"--ledger", o->ledger && lstat(o->ledger, &lst) == 0 ? o->ledger : NULL}};
	size_t nins = sizeof ins / sizeof ins[0];
	for (size_t i = 0; i < nouts; i++) {
		const char *out = outs[i].path;
		/* /dev/null, /dev/stdout: written in place, so shared and nothing replaced */
		if (!out || outs[i].dir || safefile_in_place(out))
			continue;
		for (size_t k = 0; k < nins; k++)
			if (ins[k].path && out != ins[k].path && replaces_input(out, ins[k].path))
				return fail(err, "%s %s is the %s file the run reads; write it elsewhere", outs[i].what, out,
					    ins[k].what);
		/* Two outputs under one name: the second written replaces the first. */
		struct path_entry a, b;
		for (size_t k = i + 1; k < nouts; k++)
			if (outs[k].path && !outs[k].dir && path_entry_of(out, &a) && path_entry_of(outs[k].path, &b) &&
			    path_entry_same(&a, &b))
				return fail(err, "%s and %s both name %s; give each its own file", outs[i].what,
					    outs[k].what, out);
		if (in_output_dir(o, out))
			return fail(err, "%s %s is a file --output-dir %s writes; write it elsewhere", outs[i].what, out,
				    o->output_dir);
	}
	/* An input under a name --output-dir writes (a scaled-target.dist replayed into the same
	 * directory), by its name or, through a link, by its file. */
	for (size_t k = 0; o->output_dir && k < nins; k++) {
		if (!ins[k].path)
			continue;
		struct stat si, so;
		bool hit = in_output_dir(o, ins[k].path);
		if (!hit && stat(ins[k].path, &si) == 0) {
			char path[PATH_MAX + NAME_MAX + 2];
			for (size_t n = 0; !hit && n < OUTPUT_DIR_NAMES; n++) {
				snprintf(path, sizeof path, "%s/%s", o->output_dir, output_dir_names[n].name);
				hit = output_dir_writes(o, n) && lstat(path, &so) == 0 && so.st_dev == si.st_dev &&
				      so.st_ino == si.st_ino;
			}
		}
		if (hit)
			return fail(err, "%s %s is a file --output-dir %s writes; move it out of there or give another "
					 "--output-dir", ins[k].what, ins[k].path, o->output_dir);
	}
	return 0;
}

int config_ioengine_rules(struct bench_options *o, struct dd_err *err)
{
	const struct ioengine_ops *engine = ioengine_choice((size_t)o->ioengine), *owner;
	if (engine->flags & IOENGINE_NEEDS_DIRECT) {
		if (o->sync == SYNC_FSYNC || o->sync == SYNC_DSYNC || o->sync == SYNC_DIRECT_FSYNC)
			return fail(err, "--ioengine %s works with --sync none or direct (it always uses O_DIRECT)",
				    engine->name);
		o->sync = SYNC_DIRECT;
	}
	if (!(engine->flags & IOENGINE_ASYNC) && o->iodepth > 1) {
		char async[96];
		ioengine_names_with(IOENGINE_ASYNC, " or ", async, sizeof async);
		return fail(err, "--iodepth %llu needs --ioengine %s (the %s engine has one operation in flight)",
			    (unsigned long long)o->iodepth, async, engine->name);
	}
	const char *foreign = ioengine_foreign_option(o, engine, &owner);
	if (foreign)
		return fail(err, "--%s needs --ioengine %s", foreign, owner->name);
	return 0;
}

int config_ioengine_fits(const struct bench_options *o, const struct target *t, struct dd_err *err)
{
	/* (the default engine, the first choice, is the one a target with its own I/O path leaves alone) */
	if (t->ops->ioengine_refusal && o->ioengine != 0)
		return fail(err, "--ioengine %s does not apply to %s", ioengine_choice((size_t)o->ioengine)->name,
			    t->ops->ioengine_refusal);
	/* What only the engine knows (kernel support, the device's abilities), before any write. */
	struct io_ctx probe = {.path = o->target, .depth = (unsigned)o->iodepth,
			       .opts = ioengine_options(o, t->io), .fd = -1};
	return t->io->check ? t->io->check(&probe, err) : 0;
}

static int check_rules(struct bench_config *c, struct dd_err *err)
{
	struct bench_options *o = &c->o;
	if (!o->target) /* (dedisbench's main says so first; dedisbench-mpi's rank 0 says this) */
		return fail(err, "no target: give --target PATH (--target . for the current directory)");
	if (o->block_size & (o->block_size - 1))
		return fail(err, "--block-size %llu is not a power of two (512 B to 1 MiB)", (unsigned long long)o->block_size);
	if (o->file_size < o->block_size)
		return fail(err, "--file-size %llu is smaller than one block (%llu)", (unsigned long long)o->file_size,
			    (unsigned long long)o->block_size);
	o->file_size -= o->file_size % o->block_size;
	/* Everything sized from it (files, an engine volume, the ledger) is procs x file-size bytes:
	 * past what a file offset holds it wrapped to a few bytes, and the run failed (exit 1) after
	 * creating the worker files. */
	if (o->procs && o->file_size > (uint64_t)INT64_MAX / o->procs)
		return fail(err, "--procs %llu x --file-size %llu is more than a file can hold (8 EiB)",
			    (unsigned long long)o->procs, (unsigned long long)o->file_size);
	if (o->peak && (o->rate > 0 || o->read_rate > 0 || o->write_rate > 0))
		return fail(err, "-p (peak) and -n (nominal rate) exclude each other");
	if ((o->read_rate > 0 || o->write_rate > 0)) {
		if (o->mode != MODE_MIXED)
			return fail(err, "separate read/write rates (-nr, -nw) need a mixed run (-m)");
		if (o->rate > 0)
			return fail(err, "give either a total rate (-n RATE) or read and write rates (-nrR -nwW), not both");
		if (!(o->read_rate > 0 && o->write_rate > 0))
			return fail(err, "a mixed nominal run with separate rates needs both -nrR and -nwW");
	}
	c->nominal = o->rate > 0 || o->read_rate > 0;
	if (config_ioengine_rules(o, err))
		return -1;
	c->direct = o->sync == SYNC_DIRECT || o->sync == SYNC_DIRECT_FSYNC;
	c->fsync_each = o->sync == SYNC_FSYNC || o->sync == SYNC_DIRECT_FSYNC;
	c->dsync = o->sync == SYNC_DSYNC;
	c->populate = o->populate != POPULATE_DEFAULT ? (enum populate_mode)o->populate
			 : o->mode == MODE_WRITE ? POPULATE_NONE : POPULATE_CONTENT;
	if (o->latency_log && !o->output_dir)
		return fail(err, "--latency-log needs --output-dir");
	if (o->plot && !o->output_dir)
		return fail(err, "--plot needs --output-dir (the PNGs go there)");
	char script[4096];
	if (o->plot && (!plot_gnuplot_available() || plot_script("dedisbench-timeseries.gp", script, sizeof script)))
		return fail(err, "--plot needs gnuplot (apt-get install gnuplot-nox) and the plot scripts (DEDIS_PLOTS_DIR)");
	return 0; /* the outputs are checked in config_check_outputs, as replay's and backup's are */
}

/* The block size the distribution was extracted at ("# block-size:"; an original DEDISbench
 * file has none) is the run's when -b is not given; another -b is refused: its duplicates were
 * counted at that size, and written at another they describe different data. */
static int dist_block_size(struct bench_config *c, struct dd_err *err)
{
	uint64_t at = c->dist.block_size, *bs = &c->o.block_size;
	if (!at || (*bs & (*bs - 1))) /* (a -b that is no power of two is refused as such) */
		return 0;
	if (options_given(c->given, "block-size") && *bs != at)
		return fail(err, "--block-size %llu: --dist %s was extracted at %llu-byte blocks (leave -b out, or give a "
				 "distribution of %llu-byte blocks)", (unsigned long long)*bs, c->o.dist,
			    (unsigned long long)at, (unsigned long long)*bs);
	if (at < 512 || at > 1048576 || (at & (at - 1)))
		return fail(err, "--dist %s: blocks of %llu bytes (its # block-size), and dedisbench writes powers of "
				 "two from 512 B to 1 MiB", c->o.dist, (unsigned long long)at);
	*bs = at;
	return 0;
}

static int load_dist(struct bench_config *c, struct dd_err *err)
{
	struct dd_err de;
	if (distname_resolve(c->o.dist, c->dist_path, sizeof c->dist_path, &de))
		return fail(err, "--dist %s", de.msg);
	if (dist_load(c->dist_path, &c->dist, &de)) {
		err->resource = de.resource;
		return fail(err, "--dist: %s", de.msg);
	}
	if (dupgen_build(&c->dup, &c->dist))
		return fail_resource(err, "--dist: out of memory building the sampler");
	return dist_block_size(c, err);
}

/* The run's seed: given, fixed by an earlier run's ledger, or drawn (and said in the report). */
static int resolve_seed(struct bench_config *c, struct dd_err *err)
{
	struct bench_options *o = &c->o;
	bool seed_given = options_given(c->given, "seed");
	c->seed = o->seed;
	/* A ledger kept by an earlier run fixes the seed: its content ids mean those bytes. */
	uint64_t ledger_seed;
	if (o->ledger && ledger_peek_seed(o->ledger, &ledger_seed) == 0) {
		if (seed_given && o->seed != ledger_seed)
			return fail(err, "--seed %llu differs from the seed %llu recorded in --ledger %s",
				    (unsigned long long)o->seed, (unsigned long long)ledger_seed, o->ledger);
		seed_given = true;
		c->seed = ledger_seed;
	}
	c->seed_given = seed_given;
	if (!seed_given && getrandom(&c->seed, sizeof c->seed, 0) != sizeof c->seed)
		c->seed = (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	if (!seed_given)
		c->seed &= (1ULL << 53) - 1; /* a JSON number (a double to most readers) holds it exactly */
	o->seed = c->seed;
	return 0;
}

int config_probe(struct bench_cli *cli, struct bench_config *c, struct dd_err *err)
{
	err->resource = false;
	memset(c, 0, sizeof *c);
	c->o = cli->o;
	memset(&cli->o, 0, sizeof cli->o);
	memcpy(c->given, cli->given, sizeof c->given);
	struct bench_options *o = &c->o;

	/* the distribution first: its block size is the run's unless -b says otherwise */
	if (load_dist(c, err) || check_rules(c, err))
		return -1;

	if (resolve_seed(c, err))
		return -1;
	o->peak = !c->nominal;

	bool file_size_given = options_given(c->given, "file-size");
	struct target_request req = {
		.path = o->target, .procs = (unsigned)o->procs, .file_size = o->file_size,
		.file_size_given = file_size_given, .block_size = (uint32_t)o->block_size,
		.force = o->force, .direct = c->direct,
		.no_writes = o->mode == MODE_READ && c->populate == POPULATE_NONE,
	};
	struct dd_err terr;
	if (target_probe_for_run(&req, c->direct, ioengine_choice((size_t)o->ioengine), &c->target, &terr)) {
		snprintf(err->msg, sizeof err->msg, "%s", terr.msg);
		err->resource = errmsg_resource(errno); /* (the probe's last call: its failure) */
		return -1;
	}
	if (config_check_outputs(&c->target, o, c->dist_path, err))
		return -1;
	o->file_size = c->target.region_size;
	c->region_blocks = c->target.region_size / o->block_size;

	unsigned tflags = c->target.ops->flags;
	if (config_ioengine_fits(o, &c->target, err))
		return -1;
	c->engine = c->target.io;
	if ((tflags & TARGET_STORES_NOTHING) && (o->verify != VERIFY_NONE || o->ledger))
		return fail(err, "--verify and --ledger need a real target (null stores nothing)");
	if (o->hints && !(tflags & TARGET_TAKES_HINTS))
		return fail(err, "--hints applies to engine targets (engine:DIR): nothing else takes a NODEDUP hint");
	if (options_given(c->given, "read-pct") && o->mode != MODE_MIXED)
		return fail(err, "--read-pct applies to a mixed run (-m): a %s run does only %ss", mode_names[o->mode],
			    o->mode == MODE_READ ? "read" : "write");
	if ((tflags & TARGET_STORES_NOTHING) && o->space_cmd)
		return fail(err, "--space-cmd needs a real target (null stores nothing)");
	c->scaled = o->content == CONTENT_SCALED;
	c->check_reads = o->verify == VERIFY_ONLINE || o->verify == VERIFY_BOTH || (tflags & TARGET_VALIDATED);
	c->final_pass = o->verify == VERIFY_FINAL || o->verify == VERIFY_BOTH;
	if (o->verify == VERIFY_ONLINE && o->mode == MODE_WRITE)
		return fail(err, "--verify online checks reads, and a write run has none (use --verify final)");
	c->ledger = c->scaled || (tflags & TARGET_VALIDATED) || o->verify != VERIFY_NONE || o->dist_report ||
		    o->ledger || space_source_of(&c->target, o->space_cmd) != SPACE_NONE; /* space: the live data */
	c->nurand_a = o->nurand_a ? o->nurand_a : access_default_a(c->region_blocks);
	if (c->nurand_a >= c->region_blocks && c->region_blocks > 1)
		return fail(err, "--nurand-a %llu must be below the blocks per worker (%llu)",
			    (unsigned long long)c->nurand_a, (unsigned long long)c->region_blocks);
	c->nurand_c = access_draw_c(c->seed, c->nurand_a);
	o->nurand_a = c->nurand_a;
	if (o->size && o->size < o->block_size)
		return fail(err, "--size %llu is less than one block", (unsigned long long)o->size);
	return 0;
}

uint64_t config_share_ops(uint64_t ops, uint64_t workers, uint64_t first, uint64_t n)
{
	uint64_t q = ops / workers, r = ops % workers;
	uint64_t extra = first >= r ? 0 : (r - first < n ? r - first : n);
	return n * q + extra;
}

void config_part_alone(const struct bench_config *c, struct bench_part *part)
{
	uint64_t capacity = c->region_blocks * c->o.procs;
	memset(part, 0, sizeof *part);
	part->workers = c->o.procs;
	part->blocks = capacity;
	/* Neither bound: one pass over the target, as fio does. */
	part->run_ops = c->o.size ? c->o.size / c->o.block_size : c->o.time_ns ? 0 : capacity;
	part->space_ops = part->run_ops;
}

/* The recipes identification rebuilds a shifted block's halves by: those of the layout the blocks
 * were written with - the earlier run's (the verify layout) when this one only reads, else this
 * run's own. */
static void config_identify_recipes(struct bench_config *c)
{
	bool earlier = c->have_verify_layout && c->o.mode == MODE_READ && c->populate == POPULATE_NONE;
	if (c->scaled)
		dupgen_init_scaled(&c->identify_dup, earlier ? &c->verify_layout : &c->layout, 0);
	else
		dupgen_init(&c->identify_dup, &c->dup, 0);
	c->identify_recipes = (struct dupgen_recipes){c->model, c->seed, &c->identify_dup};
}

/* The shifted copies the layout reproduces: the distribution's [cdc 1], when it has one. */
static const struct dist_cdc *shifted_source(const struct bench_config *c)
{
	return c->dist.cdc.present ? &c->dist.cdc : NULL;
}

int config_place(struct bench_config *c, const struct bench_part *part, struct dd_err *err)
{
	struct bench_options *o = &c->o;
	c->part = *part;
	if (!o->time_ns && !o->size)
		o->size = part->run_ops * o->block_size;
	c->total_ops = config_share_ops(part->run_ops, part->workers, part->worker_base, o->procs);
	if (o->size && !c->total_ops)
		return fail(err, "--size %llu leaves no block to this part's %llu workers (of %llu)",
			    (unsigned long long)o->size, (unsigned long long)o->procs, (unsigned long long)part->workers);

	/* Scale to what the run leaves on the target: the amount it writes, or the capacity when it
	 * is time-bounded, populates, or writes more than the target holds. */
	uint64_t capacity = part->blocks;
	c->scale_by_block = !(o->size && !o->time_ns && c->populate == POPULATE_NONE && part->space_ops < capacity);
	c->scale_blocks = c->scale_by_block ? capacity : part->space_ops;
	if (c->scaled && scaled_build(&c->layout, &c->dist, c->dist.zero_blocks, c->scale_blocks, c->seed))
		return fail_resource(err, "out of memory scaling the distribution");
	if (c->scaled && o->layout == LAYOUT_RUNS && c->dist.locality.present &&
	    scaled_build_runs(&c->layout, &c->dist.locality, shifted_source(c), (uint32_t)o->block_size, c->seed))
		return fail_resource(err, "out of memory laying the distribution out in copied runs");
	/* Verifying an earlier run's data without its ledger, its seed given: what each block's first
	 * write put there follows from the layout that run had (scaled to the whole target). */
	if (o->verify != VERIFY_NONE && c->scaled && c->seed_given && !o->ledger) {
		if (scaled_build(&c->verify_layout, &c->dist, c->dist.zero_blocks, capacity, c->seed))
			return fail_resource(err, "out of memory scaling the distribution");
		c->have_verify_layout = true;
		if (o->layout == LAYOUT_RUNS && c->dist.locality.present &&
		    scaled_build_runs(&c->verify_layout, &c->dist.locality, shifted_source(c), (uint32_t)o->block_size,
				      c->seed))
			return fail_resource(err, "out of memory laying the distribution out in copied runs");
	}
	c->placed = true;
	c->content_compress = o->compress == COMPRESS_DIST ? 1 : (uint32_t)o->compress;
	struct dd_err model;
	if (o->compress == COMPRESS_DIST && c->dist.comp.present &&
	    compmodel_build(&c->model, &c->dist.comp, (uint32_t)o->block_size, &model))
		return fail(err, "%s", model.msg);
	if (c->model && o->layout == LAYOUT_RUNS &&
	    grancal_fit(c->model, &c->dist, (uint32_t)o->block_size, c->seed, &c->vocabulary, &model))
		return fail(err, "%s", model.msg);
	config_identify_recipes(c);
	return 0;
}

int config_build(struct bench_cli *cli, struct bench_config *c, struct dd_err *err)
{
	if (config_probe(cli, c, err))
		return -1;
	if (options_given(c->given, "rank-content") || options_given(c->given, "peer-timeout"))
		return fail(err, "--%s applies to dedisbench-mpi (one part of the run per MPI rank)",
			    options_given(c->given, "rank-content") ? "rank-content" : "peer-timeout");
	struct bench_part part;
	config_part_alone(c, &part);
	return config_place(c, &part, err);
}

int config_content_init(const struct bench_config *c, struct content_gen *gen, uint64_t seed)
{
	if (content_init(gen, seed, (uint32_t)c->o.block_size, c->content_compress))
		return -1;
	gen->recipe_of = dupgen_recipe;
	gen->recipe_ctx = &c->identify_recipes;
	return 0;
}

void config_fill_content(const struct bench_config *c, const struct content_gen *gen, const struct dupgen *g,
			 uint64_t id, void *buf)
{
	struct dupgen_recipes recipes = {c->model, c->seed, g};
	content_recipe r = dupgen_recipe(&recipes, id);
	if (!content_is_shifted(id)) {
		content_fill_recipe(gen, id, r, buf);
		return;
	}
	/* a shifted block's halves by the caller's layout, as the blocks it copies were written */
	struct content_gen by_caller = *gen;
	by_caller.recipe_of = dupgen_recipe;
	by_caller.recipe_ctx = &recipes;
	content_fill_recipe(&by_caller, id, r, buf);
}

int config_open_ledger(struct bench_config *c, struct dd_err *err)
{
	if (!c->ledger)
		return 0;
	return ledger_open(&c->ledger_map, c->o.ledger, (uint32_t)c->o.block_size, c->o.procs, c->region_blocks, c->seed,
			   err);
}

static const char *output_given(const struct bench_options *o, enum config_output k)
{
	return k == OUT_JSON ? o->json : k == OUT_DIST_REPORT ? o->dist_report : k == OUT_ACCESS_REPORT ? o->access_report
	       : o->output_dir;
}

int config_hold_outputs(struct bench_config *c, struct dd_err *err)
{
	static const char *const opt[] = {"--json", "--dist-report", "--access-report", "--output-dir"};
	for (int k = 0; k < 4; k++)
		c->held[k].dir.fd = -1;
	c->outputs_held = true;
	for (int k = 0; k < 4; k++) {
		const char *path = output_given(&c->o, k);
		struct held_output *h = &c->held[k];
		if (path && (k == OUT_DIR ? safedir_hold(&h->dir, path, h->via, sizeof h->via)
					  : safedir_hold_parent(&h->dir, path, h->via, sizeof h->via)) && !(h->via[0] = 0))
			return err_fail_errno(err, -1, errno, "%s %s: cannot hold its directory", opt[k], path);
	}
	return 0;
}

const char *config_output_at(const struct bench_config *c, enum config_output k)
{
	const char *path = output_given(&c->o, k);
	return path && c->outputs_held && c->held[k].via[0] ? c->held[k].via : path;
}

void config_free(struct bench_config *c)
{
	for (int k = 0; c->outputs_held && k < 4; k++)
		safedir_release(&c->held[k].dir);
	target_release(&c->target);
	ledger_close(&c->ledger_map);
	compmodel_free(c->model);
	scaled_free(&c->layout);
	if (c->have_verify_layout)
		scaled_free(&c->verify_layout);
	options_free(&c->o);
	dist_free(&c->dist);
	dupgen_free(&c->dup);
}
