/* main.c - dedisgen's entry point: parse, then scan / merge (run.c: every input checked before any
 * work, the outputs written) / show / compare, and decide the exit status. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen/compare.h"
#include "lib/distname.h"
#include "lib/devnum.h"
#include "lib/fanout.h"
#include "gen/merge.h"
#include "gen/genopts.h"
#include "lib/pathwithin.h"
#include "lib/report.h"
#include "gen/run.h"
#include "gen/sidedata.h"
#include "lib/stopsignals.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* What a run that fails now leaves: nothing, unless it had begun changing an earlier analysis
 * in --db (a spill, -k), which stays marked interrupted - "nothing written" would hide that. */
static const char *left_behind(const struct run *r)
{
	static char note[4300];
	for (int i = 0; i < r->n; i++)
		if (r->s[i].db && index_bdb_altered(r->s[i].db)) {
			snprintf(note, sizeof note, "no output written; --db %s now holds an interrupted analysis "
				 "(-k and merge refuse it: scan again without -k)", r->o->db);
			return note;
		}
	return "nothing written";
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("dedisgen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* -k continues the stream a DB holds: a source it analysed already (by name, as a device under
 * another name or a disk and its partition, or one inside the other) would count twice. 0 or
 * EXIT_BAD_INPUT (said). */
static int keep_refuses_source(const char *db, const char *had, const char *now)
{
	if (!strcmp(had, now)) {
		say("--db %s already holds an analysis of %s: -k would count its blocks twice", db, now);
		return EXIT_BAD_INPUT;
	}
	/* a device under another name or node, or a disk and a partition of it */
	struct stat sh, sn;
	enum devnum_overlap ov = DEVNUM_APART;
	if (!stat(had, &sh) && !stat(now, &sn) && S_ISBLK(sh.st_mode) && S_ISBLK(sn.st_mode))
		ov = devnum_overlap(sh.st_rdev, sn.st_rdev);
	if (ov != DEVNUM_APART) {
		say("--db %s already holds an analysis of the device %s, %s %s: -k would count its "
		    "blocks twice", db, had, ov == DEVNUM_SAME ? "which is" :
		    ov == DEVNUM_B_HOLDS_A ? "the disk of" : "a partition of", now);
		return EXIT_BAD_INPUT;
	}
	/* One scan refuses a PATH inside a directory PATH (its files would count twice); -k, the
	 * same stream continued, must too, either way round. */
	bool inside = path_within(now, had) == 1, holds = path_within(had, now) == 1;
	if (inside || holds) {
		say("--db %s already holds an analysis of %s, %s %s: -k would count its blocks "
		    "twice", db, had, inside ? "which holds" : "which is inside", now);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

static int keep_refuses(const struct run *r)
{
	for (int i = 0; i < r->n && r->o->keep; i++)
		for (size_t k = 0; k < r->s[i].meta.nsources; k++)
			for (int j = 0; j < r->nsources; j++)
				if (keep_refuses_source(r->o->db, r->s[i].meta.sources[k], r->sources[j]))
					return EXIT_BAD_INPUT;
	return 0;
}

static int cmd_scan(const struct gen_options *o)
{
	struct run r = {.o = o, .prog = "dedisgen", .hash = gen_hash_names[o->hash]};
	struct dd_err why = {0};
	int rc;

	if (run_check_kind(&r))
		return EXIT_BAD_INPUT;
	/* Outputs and databases are checked before the walk starts: bad input reads nothing. */
	struct walk *w = NULL;
	/* a stop signal lets the scan or merge remove what it created (temp files, a spill
	 * directory, a new DB) and exit 1; killed, it left them. Before run_prepare creates them. */
	stop_signals_catch(on_signal);
	stop_signals_catch_pipe();
	for (int i = 0; i < o->npaths; i++) {
		if (run_add_source(&r, o->paths[i])) {
			say("out of memory");
			run_free(&r);
			return EXIT_FAILED;
		}
	}
	if ((rc = run_prepare(&r, o->sizes, o->nsizes)))
		goto out;
	if ((rc = keep_refuses(&r)))
		goto out;

	if (!(w = walk_open(o->paths, o->npaths, o->one_fs, &why))) {
		say("%s", why.msg);
		rc = EXIT_BAD_INPUT;
		goto out;
	}
	int threads = o->threads ? (int)o->threads : (int)fanout_cores();
	bool complete;
	uint64_t total = walk_known_total(w, &complete);
	if (run_setup_measuring(&r, total, complete, threads)) {
		say("out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	struct scan_stats st;
	if (run_scan(&r, w, threads, &stop_flag, &st)) {
		say("scan failed: %s; %s", st.failure, left_behind(&r));
		rc = EXIT_FAILED;
	} else if (!r.s[0].prior && !r.s[0].blocks_read) {
		/* refused before the DB is written: an earlier analysis in it stays as it was */
		say("no data: nothing to analyse");
		rc = EXIT_BAD_INPUT;
	} else if (!(rc = run_build(&r))) {
		if (stop_flag) { /* the last chance to stop before anything is renamed into place */
			say("scan interrupted; %s", left_behind(&r));
			rc = EXIT_FAILED;
		} else {
			rc = run_write(&r, st.seconds, st.bytes, st.files, st.errors);
		}
	}
	scan_stats_free(&st);
out:
	walk_close(w);
	r.failed = rc != 0;
	run_free(&r);
	return rc;
}

static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/* The merged result's sections: the smallest rate of all parts (none if a part has none); the
 * locality of each part as measured within it, summed (none if a part has none). */
static void merge_sections(const struct gen_options *o, struct size_out *s, const struct index_meta *sum,
			   uint64_t offset)
{
	double p = sum->sample_rate;
	bool loc = sum->locality;
	if (s->prior) {
		if (s->meta.sample_rate < p)
			p = s->meta.sample_rate;
		loc &= s->meta.locality;
	}
	if (p > 0) {
		comp_sampler_lower_rate(s->comp, p);
	} else {
		comp_sampler_free(s->comp);
		s->comp = NULL;
		if (!o->quiet)
			say("warning: merge (%" PRIu64 " B blocks): a part has no compressibility samples: the result "
			    "has none", s->block_size);
	}
	s->locality = loc;
	s->keep_windows = true;
	if (loc) {
		s->loc_own = s->prior ? s->meta.own : (struct dist_locality){0};
		s->loc_base = s->prior ? s->meta.base : (struct dist_locality){0};
		loc_add(&s->loc_base, &sum->base);
	} else if (!o->quiet) {
		say("warning: merge (%" PRIu64 " B blocks): a part has no locality analysis: the result has none",
		    s->block_size);
	}
	s->stream_end = offset + sum->stream_blocks;
}

/* No input twice, nor the output DB among them: counts would be added twice. 0 or -1 (said). */
static int merge_inputs_apart(const struct gen_options *o)
{
	for (int i = 0; i < o->npaths; i++) {
		if (o->db && same_dir(o->db, o->paths[i])) {
			say("merge: --db %s is also an input", o->db);
			return -1;
		}
		for (int j = 0; j < i; j++) {
			if (same_dir(o->paths[j], o->paths[i])) {
				say("merge: %s is given twice (as %s): its counts would be added twice", o->paths[i],
				    o->paths[j]);
				return -1;
			}
		}
	}
	return 0;
}

/* The hash is the inputs' (checked to agree by merge_into); found from the first. NULL (said). */
static const char *merge_hash(const struct gen_options *o, uint64_t block_size)
{
	struct dd_err why = {0};
	struct index_meta m0 = {0};
	struct gindex *probe = index_bdb_open(o->paths[0], block_size, "sha1", false, false, 1 << 20, &m0, &why);
	if (!probe && strstr(why.msg, "incompatible"))
		probe = index_bdb_open(o->paths[0], block_size, "sha256", false, false, 1 << 20, &m0, &why);
	if (!probe) {
		say("merge: %s", why.msg);
		return NULL;
	}
	probe->ops->close(probe);
	static char hash[16];
	snprintf(hash, sizeof hash, "%s", m0.hash);
	index_meta_free(&m0);
	return hash;
}

static int cmd_merge(const struct gen_options *o)
{
	struct run r = {.o = o, .prog = "dedisgen"};
	uint64_t sizes[GEN_MAX_SIZES];
	struct dd_err why = {0};
	int rc;

	int n = merge_sizes(o->paths, o->npaths, sizes, GEN_MAX_SIZES, &why);
	if (n < 0) {
		say("merge: %s", why.msg);
		return EXIT_BAD_INPUT;
	}
	if (merge_inputs_apart(o) || !(r.hash = merge_hash(o, sizes[0])))
		return EXIT_BAD_INPUT;
	/* a stop signal lets the scan or merge remove what it created (temp files, a spill
	 * directory, a new DB) and exit 1; killed, it left them. Before run_prepare creates them. */
	stop_signals_catch(on_signal);
	stop_signals_catch_pipe();
	if ((rc = run_prepare(&r, sizes, n)))
		goto out;
	for (int i = 0; i < r.n; i++) {
		struct index_meta sum = {0};
		struct size_out *s = &r.s[i];
		/* with -k the output DB's own analysis comes first in the merged stream */
		s->prior = o->keep && s->meta.nsources > 0;
		uint64_t offset = s->prior ? s->meta.stream_blocks : 0;
		err_clear(&why);
		if (!(s->comp = comp_sampler_new(r.fl, s->block_size, 1, s->zero_fp))) {
			say("out of memory");
			rc = EXIT_FAILED;
			goto out;
		}
		if (s->prior && s->meta.sample_rate > 0 && side_load_samples(s->db, s->comp, s->block_size, &why)) {
			say("merge: --db %s: %s", o->db, why.msg);
			rc = EXIT_FAILED;
			goto out;
		}
		int m = merge_into(o->paths, o->npaths, sizes[i], o->db_cache, offset, s->counter, s->comp, &sum,
				   &stop_flag, &why);
		if (m) {
			say("merge: %s%s%s", why.msg, stop_flag ? "; " : "", stop_flag ? left_behind(&r) : "");
			index_meta_free(&sum);
			rc = m == MERGE_REFUSED ? EXIT_BAD_INPUT : EXIT_FAILED;
			goto out;
		}
		merge_sections(o, s, &sum, offset);
		/* this run's figures: the inputs' sums, added to what an -k output DB held */
		for (size_t k = 0; k < sum.nsources; k++)
			index_meta_add_source(&r.s[i].meta, sum.sources[k]);
		r.s[i].meta.bytes += sum.bytes;
		r.s[i].meta.files += sum.files;
		r.s[i].meta.errors += sum.errors;
		index_meta_free(&sum);
	}
	if (!(rc = run_build(&r))) {
		if (stop_flag) { /* the last chance to stop before anything is renamed into place */
			say("merge: interrupted; %s", left_behind(&r));
			rc = EXIT_FAILED;
		} else {
			rc = run_write(&r, 0, 0, 0, 0);
		}
	}
out:
	r.failed = rc != 0;
	run_free(&r);
	return rc;
}

/* The file input i of show or compare reads: its path, or a bundled distribution's (by name, as
 * dedisbench --dist finds it). NULL after saying why. */
static const char *input_file(const struct gen_options *o, int i, char *path, size_t len)
{
	struct dd_err e;
	if (distname_resolve(o->paths[i], path, len, &e)) {
		say("%s", e.msg);
		return NULL;
	}
	return path;
}

/* show and compare render --plot into a temp name renamed over FILE.png: a device or FIFO cannot
 * take it (refused before reading, as the scan does), and a --plot naming one of
 * their distribution files (a slip of the tab key) would replace it with the PNG. The entry the
 * rename replaces (lstat: a link there is replaced, not written through) must not be a file they
 * read (stat: an input given through a link). Its directory must exist and take it, checked
 * before anything is printed. Said; true when refused. */
static bool plot_refused(const struct gen_options *o, int ninputs)
{
	struct stat ps, is;
	struct dd_err why = {0};
	if (o->plot && plot_target_refused(o->plot, &why)) {
		say("%s", why.msg);
		return true;
	}
	if (!o->plot)
		return false;
	/* its directory must take it: found after the report was printed, the exit 2 came with output */
	char dir[PATH_MAX];
	path_parent(o->plot, dir, sizeof dir);
	if (access(dir, W_OK | X_OK)) {
		say("--plot %s: %s: %s", o->plot, dir, strerror(errno));
		return true;
	}
	if (lstat(o->plot, &ps))
		return false;
	for (int i = 0; i < ninputs; i++) {
		char file[PATH_MAX];
		struct dd_err e;
		if (distname_resolve(o->paths[i], file, sizeof file, &e) == 0 && stat(file, &is) == 0 && is.st_dev == ps.st_dev && is.st_ino == ps.st_ino) {
			say("output --plot %s is also an input (%s)", o->plot, o->paths[i]);
			return true;
		}
	}
	return false;
}

/* Input i (a file, or a bundled distribution's name) loaded: 0, or the exit status: bad input,
 * or a failure when memory or descriptors ran out. */
static int load(const struct gen_options *o, int i, struct dist *d, bool quiet)
{
	struct dd_err e;
	char file[PATH_MAX];
	const char *path = o->paths[i];
	if (!input_file(o, i, file, sizeof file))
		return EXIT_BAD_INPUT;
	if (dist_load(file, d, &e)) {
		say("%s", e.msg);
		return e.resource ? EXIT_FAILED : EXIT_BAD_INPUT;
	}
	if (d->merged_rows && !quiet)
		say("warning: %s repeats %zu records (original DEDISbench format); they were added together", path,
		    d->merged_rows);
	return 0;
}

static int print_json(json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	json_decref(j);
	if (!text)
		return -1;
	int rc = printf("%s\n", text) < 0 ? -1 : 0;
	free(text);
	return rc;
}

static int cmd_show(const struct gen_options *o)
{
	struct dist d;
	struct dd_err why = {0};
	if (o->plot && !plot_available()) {
		say("--plot: gnuplot is not installed (apt-get install gnuplot-nox) or its script is missing");
		return EXIT_BAD_INPUT;
	}
	if (plot_refused(o, 1))
		return EXIT_BAD_INPUT;
	int rc = load(o, 0, &d, false);
	if (rc)
		return rc;
	if (o->json_stdout)
		rc = print_json(show_json(o->paths[0], &d, o->top)) ? EXIT_FAILED : 0;
	else
		show_text(stdout, o->paths[0], &d, o->top);
	if (!rc && o->plot && plot_histogram(&d, o->paths[0], o->plot, NULL, &why)) {
		say("%s", why.msg);
		rc = strstr(why.msg, "--plot ") ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	dist_free(&d);
	return rc;
}

static int cmd_compare(const struct gen_options *o)
{
	struct dist a, b;
	if (plot_refused(o, 2))
		return EXIT_BAD_INPUT;
	int rc = load(o, 0, &a, false);
	if (rc)
		return rc;
	if ((rc = load(o, 1, &b, false))) {
		dist_free(&a);
		return rc;
	}
	if (a.block_size && b.block_size && a.block_size != b.block_size)
		say("warning: comparing distributions of different block sizes (%" PRIu64 " and %" PRIu64 ")",
		    a.block_size, b.block_size);
	if (o->plot && !plot_available()) {
		say("--plot: gnuplot is not installed (apt-get install gnuplot-nox) or its script is missing");
		dist_free(&a);
		dist_free(&b);
		return EXIT_BAD_INPUT;
	}
	struct compare_result cr;
	struct compare_limits lim = {o->max_diff, o->max_ratio_diff, o->max_tv, o->max_loc_diff};
	compare_dists(&a, &b, &cr);
	struct dd_err why = {0};
	if (o->plot && plot_compare(&a, &b, o->paths[0], o->paths[1], cr.scale_note, o->plot, &why)) {
		say("%s", why.msg);
		rc = strstr(why.msg, "--plot ") ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	if (rc) {
		dist_free(&a);
		dist_free(&b);
		return rc;
	}
	if (o->json_stdout)
		rc = print_json(compare_json(o->paths[0], o->paths[1], &cr, &lim)) ? EXIT_FAILED : 0;
	else
		compare_text(stdout, o->paths[0], o->paths[1], &cr, &lim);
	if (!rc && !compare_within(&cr, &lim, NULL))
		rc = EXIT_FAILED;
	dist_free(&a);
	dist_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	struct gen_options o;
	struct dd_err err;
	int rc;

	if (getenv("DEDIS_PRINT_COMPLETION")) { /* read by the bash completion (completion/) */
		opt_print_completion(stdout, gen_options_table, 0);
		return 0;
	}
	if (getenv("DEDIS_PRINT_MAN_OPTIONS")) { /* used by the build to generate the man page */
		gen_options_print_man(stdout);
		return 0;
	}
	if (gen_options_parse(argc, argv, &o, &err)) {
		say("%s", err.msg);
		gen_options_free(&o);
		return EXIT_BAD_INPUT;
	}
	if (o.want_help || o.want_version) {
		if (o.want_help)
			gen_options_print_help(stdout);
		else
			printf("dedisgen %s\n", PACKAGE_VERSION);
		gen_options_free(&o);
		return 0;
	}
	switch (o.cmd) {
	case CMD_SCAN: rc = cmd_scan(&o); break;
	case CMD_MERGE: rc = cmd_merge(&o); break;
	case CMD_SHOW: rc = cmd_show(&o); break;
	default: rc = cmd_compare(&o); break;
	}
	gen_options_free(&o);
	if (fflush(stdout) && !rc) {
		say("standard output: %s", strerror(errno));
		rc = EXIT_FAILED;
	}
	return rc;
}
