/* run.c - one analysis at each block size (dedisgen scan and merge, dedisgen-mpi): the outputs and
 * databases prepared before any work, the scan, the distribution and its sections, every output. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen/compare.h"
#include "lib/devnum.h"
#include "lib/report.h"
#include "lib/pathwithin.h"
#include "gen/alignshow.h"
#include "gen/run.h"
#include "lib/safefile.h"
#include "gen/sidedata.h"
#include "lib/units.h"

void run_say(const struct run *r, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (r->say)
		r->say(r->say_arg, line);
	else
		fprintf(stderr, "%s: %s\n", r->prog ? r->prog : "dedisgen", line);
}

void run_remove_spill_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX + 256];
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

int run_make_spill_dir(char *dir, const char *what)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, PATH_MAX, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/var/tmp", what);
	return mkdtemp(dir) ? 0 : -1;
}

void run_free(struct run *r)
{
	gran_sampler_free(r->gran);
	r->gran = NULL;
	align_set_free(r->align);
	r->align = NULL;
	cdc_set_free(r->cdc);
	r->cdc = NULL;
	/* Last size first: the first size's DB created the --db directory, and a refused run removes
	 * it on close only once the other sizes' files in it are gone. */
	for (int i = r->n - 1; i >= 0; i--) {
		struct size_out *s = &r->s[i];
		counter_free(s->counter);
		comp_sampler_free(s->comp);
		loc_recorder_free(s->loc);
		if (s->db && r->failed)
			index_bdb_discard(s->db);
		if (s->db)
			s->db->ops->close(s->db);
		index_meta_free(&s->meta);
		pending_abort(&s->out);
		pending_abort(&s->plot_out);
		free(s->plot);
		dist_free(&s->dist);
	}
	free(r->s);
	json_decref(r->json_mpi);
	pending_abort(&r->json);
	if (r->spill_dir[0])
		run_remove_spill_dir(r->spill_dir);
	for (int i = 0; i < r->nsources; i++)
		free(r->sources[i]);
	free(r->sources);
}

/* OUT with one size, OUT.<size> with several; for a .png plot, the size goes before ".png". */
static char *sized_name(const char *base, uint64_t bs, bool several)
{
	size_t len = strlen(base) + 32;
	char *p = malloc(len);
	if (!p)
		return NULL;
	const char *dot = strrchr(base, '.');
	if (!several)
		snprintf(p, len, "%s", base);
	else if (dot && !strcmp(dot, ".png"))
		snprintf(p, len, "%.*s.%" PRIu64 ".png", (int)(dot - base), base, bs);
	else
		snprintf(p, len, "%s.%" PRIu64, base, bs);
	return p;
}

/* The scanned directory (a PATH) whose walk would reach PATH, which may not exist yet, or NULL.
 * With honour_x and -x, a PATH on another file system than `dev` (when dev_known) is not walked
 * into. merge's PATHs are databases, read by key, not walked: NULL. */
static const char *walked_dir_holding(const struct gen_options *o, const char *path, bool honour_x, bool dev_known,
				      dev_t dev)
{
	struct stat ps;
	if (o->cmd == CMD_MERGE)
		return NULL;
	for (int i = 0; i < o->npaths; i++) {
		if (stat(o->paths[i], &ps) || !S_ISDIR(ps.st_mode))
			continue;
		if (honour_x && o->one_fs && dev_known && dev != ps.st_dev)
			continue;
		if (path_within(path, o->paths[i]) == 1)
			return o->paths[i];
	}
	return NULL;
}

/* The DB directory (--db, or one of merge's input DBs) that would hold OUT as one of its
 * dedisgen-<size>.db files, or NULL. The output's rename, after the DB is written (or read),
 * would replace that analysis with the output's text. */
static const char *db_file_named_by(const struct gen_options *o, const char *out)
{
	char parent[PATH_MAX];
	const char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	if (fnmatch("dedisgen-*.db", base, 0))
		return NULL;
	struct stat os, ds;
	path_parent(out, parent, sizeof parent);
	if (stat(parent, &os))
		return NULL; /* no such directory: the output cannot be opened, said there */
	if (o->db && stat(o->db, &ds) == 0 && ds.st_dev == os.st_dev && ds.st_ino == os.st_ino)
		return o->db;
	for (int i = 0; o->cmd == CMD_MERGE && i < o->npaths; i++)
		if (stat(o->paths[i], &ds) == 0 && ds.st_dev == os.st_dev && ds.st_ino == os.st_ino)
			return o->paths[i];
	return NULL;
}

/* Is the output OUT (of option OPT) one of the run's inputs? It is when it is a database file of
 * its --db (or of merge's DBs), a PATH's file (same dev and inode), or a regular file (or a new
 * one) inside a directory PATH's tree: the walk would read it (a new one's temporary file is
 * there while the walk runs, and a later scan would read the output itself), and the rename
 * would replace what was scanned. Said; true or false. */
static bool output_is_input(const struct run *r, const char *opt, const char *out)
{
	const struct gen_options *o = r->o;
	const char *db = db_file_named_by(o, out);
	if (db) {
		run_say(r, "output %s %s is a database file of %s: it would replace the analysis", opt, out, db);
		return true;
	}
	if (o->cmd == CMD_MERGE)
		return false; /* merge's PATHs are databases, read by key, not walked */
	struct stat os, ps;
	bool exists = stat(out, &os) == 0;
	for (int i = 0; exists && i < o->npaths; i++) {
		if (stat(o->paths[i], &ps) == 0 && os.st_dev == ps.st_dev && os.st_ino == ps.st_ino) {
			run_say(r, "output %s %s is also an input", opt, out);
			return true;
		}
	}
	const char *dir = !exists || S_ISREG(os.st_mode) ? walked_dir_holding(o, out, false, false, 0) : NULL;
	if (dir)
		run_say(r, "output %s %s is also an input: it is inside the scanned directory %s", opt, out, dir);
	return dir != NULL;
}

/* Is the directory DIR (of option OPT; it may not exist yet) a scanned directory or inside one
 * (with -x, on its file system)? The walk would then read the Berkeley DB files the scan writes.
 * Said; true or false. */
static bool db_dir_is_input(const struct run *r, const char *opt, const char *dir)
{
	struct stat ds;
	char parent[PATH_MAX];
	path_parent(dir, parent, sizeof parent);
	bool dev_known = stat(dir, &ds) == 0 || stat(parent, &ds) == 0; /* a new one: its parent's */
	const char *scanned = walked_dir_holding(r->o, dir, true, dev_known, dev_known ? ds.st_dev : 0);
	if (scanned)
		run_say(r, "%s %s is inside the scanned directory %s: the scan would read the database it writes", opt,
			dir, scanned);
	return scanned != NULL;
}

/* Two outputs under one name (-o x --json x, or -o x -b 4096,8192 --json x.4096) would each
 * create its temp file: the second open failed with a bare "File exists". Said by name; true
 * when two collide. Names written in place (/dev/null) make no temp file: they are shared, as
 * dedisbench shares them. */
static bool outputs_collide(const struct run *r, const uint64_t *sizes, int n)
{
	const struct gen_options *o = r->o;
	char *names[1 + 2 * GEN_MAX_SIZES];
	const char *opts[1 + 2 * GEN_MAX_SIZES];
	int k = 0;
	bool collide = false;
	if (o->json) {
		names[k] = strdup(o->json);
		opts[k++] = "--json";
	}
	for (int i = 0; i < n; i++) {
		if (o->output) {
			names[k] = sized_name(o->output, sizes[i], n > 1);
			opts[k++] = "-o";
		}
		if (o->plot) {
			names[k] = sized_name(o->plot, sizes[i], n > 1);
			opts[k++] = "--plot";
		}
	}
	for (int i = 0; i < k && !collide; i++) {
		struct path_entry ei, ej;
		/* out of memory, or a directory that does not resolve: the checks after this say so */
		if (!names[i] || safefile_in_place(names[i]) || !path_entry_of(names[i], &ei))
			continue;
		for (int j = i + 1; j < k && !collide; j++) {
			if (!names[j] || safefile_in_place(names[j]) || !path_entry_of(names[j], &ej))
				continue;
			if (path_entry_same(&ei, &ej)) {
				run_say(r, "outputs %s %s and %s %s are the same file", opts[i], names[i], opts[j], names[j]);
				collide = true;
			}
		}
	}
	for (int i = 0; i < k; i++)
		free(names[i]);
	return collide;
}

int run_check_outputs(const struct run *r, const uint64_t *sizes, int n)
{
	const struct gen_options *o = r->o;
	if (outputs_collide(r, sizes, n))
		return EXIT_BAD_INPUT;
	if (o->json && output_is_input(r, "--json", o->json))
		return EXIT_BAD_INPUT;
	for (int i = 0; i < n; i++) {
		const char *base[2] = {o->output, o->plot}, *opt[2] = {"-o", "--plot"};
		for (int k = 0; k < 2; k++) {
			if (!base[k])
				continue;
			char *p = sized_name(base[k], sizes[i], n > 1);
			if (!p) {
				run_say(r, "out of memory");
				return EXIT_FAILED;
			}
			bool input = output_is_input(r, opt[k], p);
			free(p);
			if (input)
				return EXIT_BAD_INPUT;
		}
	}
	return 0;
}

/* The run's own refusals, before any block size's: gnuplot, the outputs, --json, --db, the spill
 * directory (made here). 0 or an exit status (said). */
static int prepare_run(struct run *r, const uint64_t *sizes, int n)
{
	const struct gen_options *o = r->o;
	if (!(r->s = calloc((size_t)n, sizeof *r->s))) {
		run_say(r, "out of memory");
		return EXIT_FAILED;
	}
	r->n = n;
	if (o->plot && !plot_available()) {
		run_say(r, "--plot: gnuplot is not installed (apt-get install gnuplot-nox) or its script is missing");
		return EXIT_BAD_INPUT;
	}
	int refused = run_check_outputs(r, sizes, n);
	if (refused)
		return refused;
	if (o->json && pending_open(&r->json, o->json)) {
		run_say(r, "--json %s: %s", o->json, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	if (o->db && db_dir_is_input(r, "--db", o->db))
		return EXIT_BAD_INPUT;
	if (o->mem_limit && !o->db) {
		const char *tmp = getenv("TMPDIR");
		if (db_dir_is_input(r, "--mem-limit's spill directory (TMPDIR)", tmp && *tmp ? tmp : "/var/tmp"))
			return EXIT_BAD_INPUT;
		if (run_make_spill_dir(r->spill_dir, "dedisgen-spill")) {
			run_say(r, "--mem-limit: cannot create a spill directory %s: %s", r->spill_dir, strerror(errno));
			r->spill_dir[0] = 0;
			return EXIT_BAD_INPUT;
		}
	}
	return 0;
}

/* One block size's outputs (pending), DB and counter. 0 or an exit status (said). */
static int prepare_size(struct run *r, struct size_out *s, uint64_t size, struct fp_ctx *fc)
{
	const struct gen_options *o = r->o;
	struct dd_err why = {0};
	s->block_size = size;
	uint8_t *zero = calloc(1, size);
	if (!zero || fp_hash(fc, zero, size, s->zero_fp)) {
		free(zero);
		run_say(r, "cannot hash the zero block");
		return EXIT_FAILED;
	}
	free(zero);
	if (o->output) {
		char *p = sized_name(o->output, size, r->n > 1);
		int bad = !p || pending_open(&s->out, p);
		if (bad)
			run_say(r, "-o %s: %s", p ? p : o->output, strerror(errno));
		free(p);
		if (bad)
			return EXIT_BAD_INPUT;
	}
	if (o->plot) {
		s->plot = sized_name(o->plot, size, r->n > 1);
		if (s->plot && plot_target_refused(s->plot, &why)) {
			run_say(r, "%s", why.msg);
			return EXIT_BAD_INPUT;
		}
		/* its temp file made, and its directory held, now: rendered into at the end */
		if (!s->plot || pending_open(&s->plot_out, s->plot)) {
			run_say(r, "--plot %s: %s", s->plot ? s->plot : o->plot, strerror(errno));
			return EXIT_BAD_INPUT;
		}
	}
	const char *dbdir = o->db ? o->db : r->spill_dir[0] ? r->spill_dir : NULL;
	if (dbdir) {
		s->db = index_bdb_open(dbdir, size, r->hash, true, o->db && o->keep, o->db_cache, &s->meta, &why);
		if (!s->db) {
			run_say(r, "%s", why.msg);
			return EXIT_BAD_INPUT;
		}
	}
	if (!(s->counter = counter_new(r->fl, o->mem_limit, s->db))) {
		run_say(r, "out of memory");
		return EXIT_FAILED;
	}
	return 0;
}

/* Everything that can be refused is checked here, before reading a byte. */
int run_prepare(struct run *r, const uint64_t *sizes, int n)
{
	struct fp_ctx *fc = fp_new(r->hash);
	if (!fc) {
		run_say(r, "OpenSSL does not provide %s", r->hash);
		return EXIT_BAD_INPUT;
	}
	r->fl = fp_len(fc);
	int rc = prepare_run(r, sizes, n);
	for (int i = 0; i < n && !rc; i++)
		rc = prepare_size(r, &r->s[i], sizes[i], fc);
	fp_free(fc);
	return rc;
}

void run_progress_line(const struct scan_progress *p, void *arg)
{
	char done[32], eta[32] = "";
	double rate = p->seconds > 0 ? (double)p->bytes / p->seconds : 0;
	units_format_size(p->bytes, done, sizeof done);
	if (p->total && rate > 0 && p->total > p->bytes)
		snprintf(eta, sizeof eta, ", ETA %.0f s", (double)(p->total - p->bytes) / rate);
	if (p->total)
		fprintf(stderr, "\r%s read (%.1f %%), %.1f MiB/s%s   ", done, 100.0 * (double)p->bytes / (double)p->total,
			rate / 1048576, eta);
	else
		fprintf(stderr, "\r%s read, %.1f MiB/s   ", done, rate / 1048576);
}

/* One walking thread's joins: its own compressibility cells and locality pipeline. */
struct join_part {
	struct comp_join_part *comp;
	struct loc_resolver *loc;
};

static int join_visit(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct join_part *j = arg;
	if (j->comp && comp_join_part_visit(j->comp, fp, count))
		return -1;
	if (j->loc)
		loc_resolver_visit(j->loc, fp, count, first);
	return 0;
}

/* The distribution and its sections, settle included: one walk of the final index, by as many
 * threads as hashed, gives the counts, joins the compressibility samples with their copies and
 * resolves the locality records' first positions (by copies where the records are the whole
 * stream, else against a table of the records built before the walk). With -k the DB's samples
 * and locality windows take part (its positions come first). */
/* The first size's [alignment 1] (its records, the copies' shifts when its locality was
 * analysed) and [cdc 1]. 0, or -1 out of memory. */
static int first_size_sections(struct run *r, struct size_out *s)
{
	if (r->align) {
		if (align_set_result(r->align, &s->dist.align))
			return -1;
		if (s->loc)
			loc_copy_shifts(s->loc, &s->dist.align);
	}
	if (r->cdc && cdc_set_result(r->cdc, s->block_size, r->cdc_range, &s->dist.cdc))
		return -1;
	return 0;
}

static int measured_sections(struct run *r, struct size_out *s, struct dd_err *err)
{
	uint64_t zero_first = UINT64_MAX;
	struct dd_err e;
	if (s->prior && s->db && r->o->cmd == CMD_SCAN) {
		if (s->comp && side_load_samples(s->db, s->comp, s->block_size, err))
			return -1;
		if (s->loc && side_load_windows(s->db, s->loc, err))
			return -1;
	}
	bool by_copies = s->loc && !s->prior && loc_records_complete(s->loc);
	if ((s->comp && comp_join_begin(s->comp)) ||
	    (s->loc && (by_copies ? loc_resolve_begin_copies(s->loc)
				  : loc_resolve_begin(s->loc, counter_distinct_bound(s->counter))))) {
		err_fail(err, -1, "out of memory");
		return -1;
	}
	if (counter_settle(s->counter, err))
		return -1;
	int n = r->threads > 1 ? r->threads : 1, rc = 0;
	struct join_part *parts = calloc((size_t)n, sizeof *parts);
	void **args = calloc((size_t)n, sizeof *args);
	for (int k = 0; parts && args && k < n && !rc; k++) {
		args[k] = &parts[k];
		if ((s->comp && !(parts[k].comp = comp_join_part_new(s->comp))) ||
		    (s->loc && !(parts[k].loc = loc_resolver_new(s->loc))))
			rc = -1;
	}
	if (!parts || !args || rc) {
		err_fail(err, -1, "out of memory joining the measured sections");
		rc = -1;
	} else {
		struct counter_walkers w = {n, s->comp || s->loc ? join_visit : NULL, args};
		rc = counter_distribution_by(s->counter, s->zero_fp, &w, &s->dist, &s->zero_blocks, &zero_first, err);
	}
	for (int k = 0; parts && k < n; k++) {
		if (parts[k].comp && comp_join_part_add(s->comp, parts[k].comp) && !rc) {
			err_fail(err, -1, "out of memory joining the measured sections");
			rc = -1;
		}
		comp_join_part_free(parts[k].comp);
		if (loc_resolver_finish(parts[k].loc) && !rc) {
			err_fail(err, -1, "out of memory resolving the locality records");
			rc = -1;
		}
	}
	free(parts);
	free(args);
	if (rc)
		return -1;
	if (s->loc && (loc_resolve_end(s->loc) || loc_compute(s->loc, s->stream_end, zero_first, (size_t)n, &s->loc_own))) {
		err_fail(err, -1, "out of memory computing the locality");
		return -1;
	}
	if (s->comp && comp_join_finish(s->comp, &s->dist.comp)) {
		err_fail(err, -1, "out of memory building the compressibility cells");
		return -1;
	}
	if (r->gran)
		gran_sampler_result(r->gran, &s->dist.gran);
	if (s == &r->s[0] && first_size_sections(r, s)) {
		err_fail(err, -1, "out of memory counting the records and the chunks");
		return -1;
	}
	if (s->locality) {
		s->dist.locality = s->loc_own;
		loc_add(&s->dist.locality, &s->loc_base);
		s->dist.locality.present = true;
	}
	if (dist_sections_check(&s->dist, &e)) { /* never write what would not read back */
		err_fail(err, -1, "internal error: the measured sections do not add up: %s", e.msg);
		return -1;
	}
	return 0;
}

/* What the DB keeps beside the counts, and the figures -k and merge continue from. */
static int save_measured(struct size_out *s, struct dd_err *err)
{
	if (side_save_samples(s->db, s->comp, err))
		return -1;
	if (!s->keep_windows && side_save_windows(s->db, s->locality ? s->loc : NULL, err))
		return -1;
	s->meta.stream_blocks = s->stream_end;
	s->meta.sample_rate = s->comp ? comp_sampler_rate(s->comp) : 0;
	s->meta.locality = s->locality;
	s->meta.own = s->locality ? s->loc_own : (struct dist_locality){0};
	s->meta.base = s->locality ? s->loc_base : (struct dist_locality){0};
	return 0;
}

int run_build(struct run *r)
{
	struct dd_err why = {0};
	for (int i = 0; i < r->n; i++) {
		struct size_out *s = &r->s[i];
		if (measured_sections(r, s, &why)) {
			run_say(r, "%s", why.msg);
			return strstr(why.msg, "no data") ? EXIT_BAD_INPUT : EXIT_FAILED;
		}
		s->dist.block_size = s->block_size;
		snprintf(s->dist.hash, sizeof s->dist.hash, "%s", r->hash);
		s->index_bytes_per_distinct = counter_bytes_per_distinct(s->counter);
		s->spills = counter_spills(s->counter);
	}
	return 0;
}

/* What run_write reports this run read. */
struct run_totals {
	double seconds;
	uint64_t bytes, files, errors;
};

/* The summary's lines for one block size: what this run read in its time; with -k the analysis
 * also holds the DB's earlier bytes. */
static void summary_size(FILE *summary, const struct size_out *s, const struct dist_rows *rows, uint64_t bytes,
			 double seconds)
{
	char sz[32], all[32], read[80] = "";
	units_format_size(bytes, sz, sizeof sz);
	units_format_size(s->meta.bytes, all, sizeof all);
	if (s->meta.bytes != bytes)
		snprintf(read, sizeof read, " read (%s in the analysis)", all);
	fprintf(summary,
		"block size %" PRIu64 ": %" PRIu64 " blocks, %" PRIu64 " distinct, %" PRIu64
		" zero; U0 %.3f %%, U1 %.3f %%, D %.3f %%, dedup ratio %.4f; %s%s in %.2f s "
		"(%.1f MiB/s), index %.1f B/distinct%s\n",
		s->block_size, rows->total_blocks, rows->distinct, s->zero_blocks, 100 * rows->u0,
		100 * rows->u1, 100 * rows->d, rows->ratio, sz, read, seconds,
		seconds > 0 ? (double)bytes / seconds / 1048576 : 0.0, s->index_bytes_per_distinct,
		s->spills ? " (spilled to Berkeley DB)" : "");
	sections_text(summary, &s->dist, "  ");
}

/* One block size's results: the analysis saved in the DB, the distribution written, its JSON
 * object added to results, its summary lines. 0 or an exit status (said). */
static int write_size(struct run *r, struct size_out *s, const struct run_totals *t, json_t *results, FILE *summary)
{
	const struct gen_options *o = r->o;
	struct dd_err why = {0};
	int rc = 0;
	bool dist_to_stdout = !o->output && r->n == 1;
	uint64_t bytes = t->bytes;
	double seconds = t->seconds;
	/* With -k, the DB's earlier sources and bytes are part of this distribution. */
	s->meta.bytes += bytes;
	s->meta.files += t->files;
	s->meta.errors += t->errors;
	for (int k = 0; k < r->nsources; k++)
		index_meta_add_source(&s->meta, r->sources[k]);
	s->meta.complete = true;
	/* The analysis is saved first: an output that fails after it (a full disk, a reader of
	 * standard output gone) no longer costs the DB the scan filled, which a merge can turn
	 * into the distribution again. */
	if (o->db && s->db && save_measured(s, &why)) {
		run_say(r, "--db %s: %s", o->db, why.msg);
		return EXIT_FAILED;
	}
	if (o->db && s->db && index_bdb_set_meta(s->db, &s->meta)) {
		run_say(r, "--db %s: %s", o->db, s->db->err.msg);
		return EXIT_FAILED;
	}
	struct dist_header h;
	dist_header_build(&h, PACKAGE_VERSION, s->meta.nsources ? s->meta.sources : r->sources,
			  s->meta.nsources ? (int)s->meta.nsources : r->nsources, s->block_size, r->hash,
			  s->meta.bytes, s->zero_blocks);
	if (s->out.f) {
		if (dist_write(s->out.f, &s->dist, h.ptrs, h.n)) {
			run_say(r, "writing %s: %s", s->out.path, strerror(errno));
			rc = EXIT_FAILED;
		}
	} else if (dist_to_stdout && dist_write(stdout, &s->dist, h.ptrs, h.n)) {
		run_say(r, "writing the distribution: %s", strerror(errno));
		rc = EXIT_FAILED;
	}
	struct dist_rows rows;
	dist_compute_rows(&s->dist, &rows);
	json_t *j = json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:I,s:f,s:I,s:I,s:f,s:I,s:o}", "block_size",
			      (json_int_t)s->block_size, "blocks", (json_int_t)rows.total_blocks, "distinct",
			      (json_int_t)rows.distinct, "zero_blocks", (json_int_t)s->zero_blocks, "U0", rows.u0,
			      "U1", rows.u1, "D", rows.d, "ratio", rows.ratio, "bytes", (json_int_t)s->meta.bytes,
			      "seconds", seconds, "files", (json_int_t)s->meta.files, "errors",
			      (json_int_t)s->meta.errors, "index_bytes_per_distinct",
			      s->index_bytes_per_distinct, "spills",
			      (json_int_t)s->spills, "histogram", pow2_json(&s->dist));
	json_object_set_new(j, "compressibility", comp_json(&s->dist.comp));
	json_object_set_new(j, "locality", loc_json(&s->dist.locality));
	json_object_set_new(j, "granularity", gran_json(&s->dist.gran));
	json_object_set_new(j, "alignment", align_json(&s->dist.align, s->block_size));
	json_object_set_new(j, "cdc", cdc_json(&s->dist.cdc));
	json_array_append_new(results, j);
	json_object_set_new(j, "bytes_read", json_integer((json_int_t)bytes));
	if (!o->quiet)
		summary_size(summary, s, &rows, bytes, seconds);
	return rc;
}

/* The JSON document around the results: tool, version, command, sources, hash, reads, MPI. */
static json_t *run_doc(struct run *r, json_t *results)
{
	const struct gen_options *o = r->o;
	json_t *doc = json_object(), *srcs = json_array();
	for (int k = 0; k < r->nsources; k++)
		json_array_append_new(srcs, json_string(r->sources[k]));
	json_object_set_new(doc, "tool", json_string(r->prog));
	json_object_set_new(doc, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(doc, "command", json_string(o->cmd == CMD_MERGE ? "merge" : "scan"));
	json_object_set_new(doc, "sources", srcs);
	json_object_set_new(doc, "hash", json_string(r->hash));
	json_object_set_new(doc, "results", results);
	if (r->reads_known && !r->json_mpi) /* (dedisgen-mpi: each rank its own; not summed) */
		json_object_set_new(doc, "reads", json_pack("{s:i, s:{s:I, s:I}, s:I, s:{s:I, s:I}}", "threads", r->threads,
							     "small_file_batches", "io_uring", (json_int_t)r->batches_uring,
							     "syscalls", (json_int_t)r->batches_sync, "small_file_fallbacks",
							     (json_int_t)r->small_file_fallbacks, "large_file_ranges", "mapped",
							     (json_int_t)r->ranges_mapped, "pread", (json_int_t)r->ranges_read));
	if (r->json_mpi) {
		json_object_set_new(doc, "mpi", r->json_mpi);
		r->json_mpi = NULL;
	}
	return doc;
}

/* The plots rendered, then every output written and synced before any is renamed into place.
 * 0 or an exit status (said). */
static int publish_outputs(struct run *r, json_t *doc)
{
	const struct gen_options *o = r->o;
	struct dd_err why = {0};
	int rc = 0;
	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		if (s->plot) {
			char title[256];
			snprintf(title, sizeof title, "copies per content, %" PRIu64 " B blocks", s->block_size);
			if (plot_histogram(&s->dist, title, s->plot, &s->plot_out, &why)) {
				run_say(r, "%s", why.msg);
				rc = EXIT_FAILED;
			}
		}
	}
	/* Every output is written and synced before any is renamed into place: they appear together
	 * or (a write or sync fails) none does. */
	if (!rc && o->json) {
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		if (!text || fprintf(r->json.f, "%s\n", text) < 0 || pending_sync(&r->json)) {
			run_say(r, "--json %s: %s", o->json, strerror(errno));
			rc = EXIT_FAILED;
		}
		free(text);
	}
	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		if (s->out.f && pending_sync(&s->out)) {
			run_say(r, "writing %s: %s", s->out.path ? s->out.path : o->output, strerror(errno));
			rc = EXIT_FAILED;
		}
	}
	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		char name[4200];
		snprintf(name, sizeof name, "%s", s->out.path ? s->out.path : s->plot ? s->plot : "");
		if ((s->out.path && pending_publish(&s->out)) || (s->plot_out.path && pending_publish(&s->plot_out))) {
			run_say(r, "writing %s: %s", name, strerror(errno));
			rc = EXIT_FAILED;
		}
	}
	if (!rc && o->json && pending_publish(&r->json)) {
		run_say(r, "--json %s: %s", o->json, strerror(errno));
		rc = EXIT_FAILED;
	}
	return rc;
}

int run_write(struct run *r, double seconds, uint64_t bytes, uint64_t files, uint64_t errors)
{
	const struct run_totals t = {seconds, bytes, files, errors};
	json_t *results = json_array();
	int rc = 0;
	FILE *summary = !r->o->output && r->n == 1 ? stderr : stdout; /* the distribution on stdout */
	for (int i = 0; i < r->n && !rc; i++)
		rc = write_size(r, &r->s[i], &t, results, summary);
	json_t *doc = run_doc(r, results);
	if (!rc)
		rc = publish_outputs(r, doc);
	json_decref(doc);
	return rc;
}

int run_add_source(struct run *r, const char *path)
{
	char abs[PATH_MAX];
	char **n = realloc(r->sources, (size_t)(r->nsources + 1) * sizeof *n);
	if (!n)
		return -1;
	r->sources = n;
	if (!(n[r->nsources] = strdup(realpath(path, abs) ? abs : path)))
		return -1;
	r->nsources++;
	return 0;
}

/* Is PATH (st), on another file system than a -x walk's root (root), still listed by that walk:
 * not a directory (the walk does not descend into those), in a directory on the root's file
 * system? */
static bool file_listed_by_walk(const char *path, const struct stat *st, const struct stat *root)
{
	char parent[PATH_MAX];
	struct stat ps;
	if (S_ISDIR(st->st_mode))
		return false;
	path_parent(path, parent, sizeof parent);
	return stat(parent, &ps) == 0 && ps.st_dev == root->st_dev;
}

/* A directory PATH given twice, or a PATH inside a directory PATH, would have its files counted
 * twice (the walk remembers inodes only for hard links and files given as PATHs: a file given
 * twice is read once), unless -x keeps the directory's walk from reaching it; so would a
 * partition given beside its disk. Said; true when they overlap. */
static bool paths_overlap(const struct run *r)
{
	const struct gen_options *o = r->o;
	/* A partition beside its disk: the walk reads each device once, by its number, and a
	 * partition has a number of its own. */
	for (int i = 0; i < o->npaths; i++) {
		struct stat st, sj;
		if (stat(o->paths[i], &st) || !S_ISBLK(st.st_mode))
			continue;
		for (int j = 0; j < o->npaths; j++)
			if (j != i && !stat(o->paths[j], &sj) && S_ISBLK(sj.st_mode) &&
			    devnum_overlap(st.st_rdev, sj.st_rdev) == DEVNUM_A_HOLDS_B) {
				run_say(r, "%s is a partition of the device %s: its blocks would be counted twice", o->paths[j],
					o->paths[i]);
				return true;
			}
	}
	for (int i = 0; i < o->npaths; i++) {
		struct stat st;
		if (stat(o->paths[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		for (int j = 0; j < o->npaths; j++) {
			struct stat sj;
			if (j == i || stat(o->paths[j], &sj))
				continue;
			bool same = sj.st_dev == st.st_dev && sj.st_ino == st.st_ino;
			/* -x: a PATH on another file system than the directory's is past a mount point
			 * the directory's walk does not cross (dedisgen -x / /home) - unless it is a file
			 * mounted over a name in a directory the walk reads (a bind-mounted file): the
			 * walk lists that one, and it was read twice */
			if (!same && o->one_fs && sj.st_dev != st.st_dev && !file_listed_by_walk(o->paths[j], &sj, &st))
				continue;
			if ((same && j > i) || (!same && path_within(o->paths[j], o->paths[i]) == 1)) {
				run_say(r, "%s %s %s: its files would be counted twice", o->paths[j],
					same ? "repeats the directory" : "is inside the directory", o->paths[i]);
				return true;
			}
		}
	}
	return false;
}

/* Every PATH exists, is readable and is of the kind -f / -d asked for: checked before any
 * output or database is created. */
int run_check_kind(const struct run *r)
{
	const struct gen_options *o = r->o;
	for (int i = 0; i < o->npaths; i++) {
		struct stat st;
		if (stat(o->paths[i], &st) || access(o->paths[i], R_OK)) {
			run_say(r, "%s: %s", o->paths[i], strerror(errno));
			return -1;
		}
		if (!o->kind)
			continue;
		if (o->kind == 'f' && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			run_say(r, "%s: -f expects a directory or a file", o->paths[i]);
			return -1;
		}
		if (o->kind == 'd' && !S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
			run_say(r, "%s: -d expects a block device (or an image file)", o->paths[i]);
			return -1;
		}
	}
	return paths_overlap(r) ? -1 : 0;
}

/* The granularity curve's sampler: it follows --compress-sample (off: none; auto: about 1024
 * windows; a rate: that share of windows). A DB keeps no curve: with -k onto an analysis the
 * result has none (said). 0, or -1 out of memory. */
static int setup_gran(struct run *r, uint64_t total, bool complete, bool keep)
{
	const struct gen_options *o = r->o;
	double p = o->compress_sample;
	if (o->no_granularity || r->no_gran || p == 0)
		return 0;
	if (!keep) {
		if (!o->quiet)
			run_say(r, "warning: --db %s keeps no granularity curve: the result has none", o->db);
		return 0;
	}
	if (p == GEN_SAMPLE_AUTO)
		p = gran_auto_rate(complete ? total : 0);
	return (r->gran = gran_sampler_new(p)) ? 0 : -1;
}

/* The records of 2..32 blocks and the chunker, unless turned off; a DB keeps neither, so with -k
 * onto an analysis the result has none (said). 0, or -1 out of memory. */
static int setup_align_cdc(struct run *r, uint64_t total, bool complete, bool keep)
{
	const struct gen_options *o = r->o;
	bool align = !o->no_alignment && !r->no_align_cdc, cdc = !o->no_cdc && !r->no_align_cdc;
	struct cdc_params params;
	if (!keep && (align || cdc)) {
		if (!o->quiet)
			run_say(r, "warning: --db %s keeps no records of 2 to 32 blocks nor chunks: the result has no "
				"alignment nor cdc section", o->db);
		return 0;
	}
	if (align && !(r->align = align_set_new()))
		return -1;
	if (cdc && (cdc_params_init(&params, (uint32_t)(o->cdc_avg ? o->cdc_avg : CDC_AVG_DEFAULT)) ||
		    !(r->cdc = cdc_set_new(&params, cdc_auto_rate(complete ? total : 0, params.avg)))))
		return -1;
	return 0;
}

/* The samplers and recorders of a scan: the rate per block size (auto: from the blocks the walk
 * will read), and with -k the DB's state (its stream goes first, the smaller rate wins, a part
 * without a section leaves it out of the result). */
int run_setup_measuring(struct run *r, uint64_t total, bool complete, int threads)
{
	const struct gen_options *o = r->o;
	bool keep_gran = true;
	for (int i = 0; i < r->n; i++) {
		struct size_out *s = &r->s[i];
		size_t fl = r->fl;
		s->prior = o->keep && s->meta.nsources > 0;
		double p = o->compress_sample;
		if (p == GEN_SAMPLE_AUTO)
			/* blocks rounded up: data of less than one block is one (0 says "size unknown") */
			p = gen_auto_sample_rate(complete ? (total + s->block_size - 1) / s->block_size : 0);
		if (p > 0 && s->prior && s->meta.sample_rate <= 0) {
			if (!o->quiet)
				run_say(r, "warning: --db %s (%" PRIu64 " B blocks) holds no compressibility samples: the result "
				    "has none", o->db, s->block_size);
			p = 0;
		}
		if (p > 0) {
			if (!(s->comp = comp_sampler_new(fl, s->block_size, p, s->zero_fp)))
				return -1;
			if (s->prior)
				comp_sampler_lower_rate(s->comp, s->meta.sample_rate);
			if (complete)
				comp_sampler_expect(s->comp, (uint64_t)(p * (double)(total / s->block_size)) / threads + 1);
		}
		s->locality = !o->no_locality;
		if (s->prior)
			keep_gran = false;
		if (s->locality && s->prior && !s->meta.locality) {
			if (!o->quiet)
				run_say(r, "warning: --db %s (%" PRIu64 " B blocks) holds no locality analysis: the result has none",
				    o->db, s->block_size);
			s->locality = false;
		}
		if (s->locality && !(s->loc = loc_recorder_new(fl)))
			return -1;
		if (s->locality && s->prior)
			s->loc_base = s->meta.base;
	}
	if (setup_gran(r, total, complete, keep_gran))
		return -1;
	return setup_align_cdc(r, total, complete, keep_gran);
}


int run_scan(struct run *r, struct walk *w, int threads, volatile sig_atomic_t *stop, struct scan_stats *st)
{
	const struct gen_options *o = r->o;
	r->threads = threads;
	struct scan_size *sizes = calloc((size_t)r->n, sizeof *sizes);
	if (!sizes) {
		memset(st, 0, sizeof *st);
		snprintf(st->failure, sizeof st->failure, "out of memory");
		return -1;
	}
	for (int i = 0; i < r->n; i++) {
		struct size_out *s = &r->s[i];
		sizes[i] = (struct scan_size){.block_size = s->block_size, .counter = s->counter, .comp = s->comp,
					      .loc = s->loc, .first_pos = s->prior ? s->meta.stream_blocks : s->first_pos};
	}
	bool show_progress = !o->quiet && isatty(2);
	struct scan_config cfg = {
		.walk = w,
		.hash = r->hash,
		.sizes = sizes,
		.nsizes = r->n,
		.threads = threads,
		.read_method = (enum scan_read)o->read_method,
		.skip_tails = o->skip_tails,
		.strict = o->strict,
		.gran = r->gran,
		.align = r->align,
		.cdc = r->cdc,
		.stop = stop,
		.progress = show_progress ? run_progress_line : NULL,
	};
	int failed = scan_run(&cfg, st);
	if (show_progress)
		fputc('\n', stderr);
	if (st->errors && !o->quiet) {
		run_say(r, "warning: %" PRIu64 " entr%s could not be read and %s skipped:", st->errors,
			st->errors == 1 ? "y" : "ies", st->errors == 1 ? "was" : "were");
		for (int i = 0; i < st->nfirst; i++)
			fprintf(stderr, "  %s\n", st->first_errors[i]);
		if ((uint64_t)st->nfirst < st->errors)
			fprintf(stderr, "  ...\n");
	}
	for (int i = 0; i < r->n; i++) {
		r->s[i].stream_end = sizes[i].stream_end;
		r->s[i].blocks_read = sizes[i].blocks;
	}
	r->reads_known = true;
	r->batches_uring = st->batches_uring;
	r->batches_sync = st->batches_sync;
	r->small_file_fallbacks = st->small_file_fallbacks;
	r->ranges_mapped = st->ranges_mapped;
	r->ranges_read = st->ranges_read;
	r->cdc_range = st->range;
	free(sizes);
	return failed;
}
