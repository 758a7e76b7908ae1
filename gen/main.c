/* main.c - dedisgen's entry point: parse, check every input before any work (bad input: one
 * line, exit 2, nothing written), run scan / merge / show / compare, write the outputs. */
#include <dirent.h>
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
#include "compare.h"
#include "counter.h"
#include "fingerprint.h"
#include "merge.h"
#include "options.h"
#include "output.h"
#include "report.h"
#include "scan.h"
#include "units.h"

#define EXIT_FAILED 1
#define EXIT_BAD_INPUT 2

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
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

/* What one block size produced, scan or merge alike. */
struct size_out {
	uint64_t block_size;
	struct gindex *db;         /* --db or the temporary spill DB; NULL: memory only */
	struct counter *counter;
	struct index_meta meta;    /* the DB's figures before this run (-k), then after */
	struct pending out;        /* -o (inactive when not given) */
	char *plot;
	struct dist dist;
	uint64_t zero_blocks, blocks_read;
	uint8_t zero_fp[FP_MAX_LEN];
};

struct run {
	const struct gen_options *o;
	const char *hash;
	struct size_out *s;
	int n;
	char spill_dir[PATH_MAX];  /* temporary DB directory for --mem-limit without --db */
	struct pending json;
	char **sources;            /* absolute paths, this run's */
	int nsources;
};

static void remove_spill_dir(const char *dir)
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

static void run_free(struct run *r)
{
	for (int i = 0; i < r->n; i++) {
		struct size_out *s = &r->s[i];
		counter_free(s->counter);
		if (s->db)
			s->db->ops->close(s->db);
		index_meta_free(&s->meta);
		pending_abort(&s->out);
		free(s->plot);
		dist_free(&s->dist);
	}
	free(r->s);
	pending_abort(&r->json);
	if (r->spill_dir[0])
		remove_spill_dir(r->spill_dir);
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

/* Everything that can be refused is checked here, before reading a byte. */
static int prepare(struct run *r, const uint64_t *sizes, int n)
{
	const struct gen_options *o = r->o;
	char why[1024];
	struct fp_ctx *fc = fp_new(r->hash);
	if (!fc) {
		say("OpenSSL does not provide %s", r->hash);
		return EXIT_BAD_INPUT;
	}
	size_t fl = fp_len(fc);
	if (!(r->s = calloc((size_t)n, sizeof *r->s))) {
		fp_free(fc);
		say("out of memory");
		return EXIT_FAILED;
	}
	r->n = n;
	if (o->plot && !plot_available()) {
		fp_free(fc);
		say("--plot: gnuplot is not installed (apt-get install gnuplot-nox) or its script is missing");
		return EXIT_BAD_INPUT;
	}
	if (o->json && pending_open(&r->json, o->json)) {
		fp_free(fc);
		say("--json %s: %s", o->json, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	if (o->mem_limit && !o->db) {
		const char *tmp = getenv("TMPDIR");
		snprintf(r->spill_dir, sizeof r->spill_dir, "%s/dedisgen-spill.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
		if (!mkdtemp(r->spill_dir)) {
			say("--mem-limit: cannot create a spill directory %s: %s", r->spill_dir, strerror(errno));
			r->spill_dir[0] = 0;
			fp_free(fc);
			return EXIT_BAD_INPUT;
		}
	}
	for (int i = 0; i < n; i++) {
		struct size_out *s = &r->s[i];
		s->block_size = sizes[i];
		uint8_t *zero = calloc(1, sizes[i]);
		if (!zero || fp_hash(fc, zero, sizes[i], s->zero_fp)) {
			free(zero);
			fp_free(fc);
			say("cannot hash the zero block");
			return EXIT_FAILED;
		}
		free(zero);
		if (o->output) {
			char *p = sized_name(o->output, sizes[i], n > 1);
			int bad = !p || pending_open(&s->out, p);
			if (bad)
				say("-o %s: %s", p ? p : o->output, strerror(errno));
			free(p);
			if (bad) {
				fp_free(fc);
				return EXIT_BAD_INPUT;
			}
		}
		if (o->plot) {
			struct pending probe;
			s->plot = sized_name(o->plot, sizes[i], n > 1);
			if (!s->plot || pending_open(&probe, s->plot)) {
				say("--plot %s: %s", s->plot ? s->plot : o->plot, strerror(errno));
				fp_free(fc);
				return EXIT_BAD_INPUT;
			}
			pending_abort(&probe);
		}
		const char *dbdir = o->db ? o->db : r->spill_dir[0] ? r->spill_dir : NULL;
		if (dbdir) {
			s->db = index_bdb_open(dbdir, sizes[i], r->hash, true, o->db && o->keep, o->db_cache, &s->meta, why,
					       sizeof why);
			if (!s->db) {
				fp_free(fc);
				say("%s", why);
				return EXIT_BAD_INPUT;
			}
		}
		if (!(s->counter = counter_new(fl, o->mem_limit, s->db))) {
			fp_free(fc);
			say("out of memory");
			return EXIT_FAILED;
		}
	}
	fp_free(fc);
	return 0;
}

static void progress_line(const struct scan_progress *p, void *arg)
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

/* Settles the counts, builds each size's distribution, writes every output. */
static int finish(struct run *r, double seconds, uint64_t bytes, uint64_t files, uint64_t errors)
{
	const struct gen_options *o = r->o;
	char why[1024];
	json_t *doc = json_object(), *results = json_array(), *srcs = json_array();
	int rc = 0;
	bool dist_to_stdout = !o->output && r->n == 1;
	FILE *summary = dist_to_stdout ? stderr : stdout;

	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		if (counter_settle(s->counter, why, sizeof why) ||
		    counter_distribution(s->counter, s->zero_fp, &s->dist, &s->zero_blocks, why, sizeof why)) {
			say("%s", why);
			rc = strstr(why, "no data") ? EXIT_BAD_INPUT : EXIT_FAILED;
			break;
		}
		s->dist.block_size = s->block_size;
		snprintf(s->dist.hash, sizeof s->dist.hash, "%s", r->hash);
		/* With -k, the DB's earlier sources and bytes are part of this distribution. */
		s->meta.bytes += bytes;
		s->meta.files += files;
		s->meta.errors += errors;
		for (int k = 0; k < r->nsources; k++)
			index_meta_add_source(&s->meta, r->sources[k]);
		s->meta.complete = true;
		struct dist_header h;
		dist_header_build(&h, PACKAGE_VERSION, s->meta.nsources ? s->meta.sources : r->sources,
				  s->meta.nsources ? (int)s->meta.nsources : r->nsources, s->block_size, r->hash,
				  s->meta.bytes, s->zero_blocks);
		if (s->out.f) {
			if (dist_write(s->out.f, &s->dist, h.ptrs, h.n)) {
				say("writing %s: %s", s->out.path, strerror(errno));
				rc = EXIT_FAILED;
			}
		} else if (dist_to_stdout && dist_write(stdout, &s->dist, h.ptrs, h.n)) {
			say("writing the distribution: %s", strerror(errno));
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
				      counter_bytes_per_distinct(s->counter), "spills",
				      (json_int_t)counter_spills(s->counter), "histogram", pow2_json(&s->dist));
		json_array_append_new(results, j);
		if (!o->quiet) {
			char sz[32];
			units_format_size(s->meta.bytes, sz, sizeof sz);
			fprintf(summary,
				"block size %" PRIu64 ": %" PRIu64 " blocks, %" PRIu64 " distinct, %" PRIu64
				" zero; U0 %.3f %%, U1 %.3f %%, D %.3f %%, dedup ratio %.4f; %s in %.2f s "
				"(%.1f MiB/s), index %.1f B/distinct%s\n",
				s->block_size, rows.total_blocks, rows.distinct, s->zero_blocks, 100 * rows.u0,
				100 * rows.u1, 100 * rows.d, rows.ratio, sz, seconds,
				seconds > 0 ? (double)bytes / seconds / 1048576 : 0.0, counter_bytes_per_distinct(s->counter),
				counter_spills(s->counter) ? " (spilled to Berkeley DB)" : "");
		}
	}
	for (int k = 0; k < r->nsources; k++)
		json_array_append_new(srcs, json_string(r->sources[k]));
	json_object_set_new(doc, "tool", json_string("dedisgen"));
	json_object_set_new(doc, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(doc, "command", json_string(o->cmd == CMD_MERGE ? "merge" : "scan"));
	json_object_set_new(doc, "sources", srcs);
	json_object_set_new(doc, "hash", json_string(r->hash));
	json_object_set_new(doc, "results", results);
	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		if (s->plot) {
			char title[256];
			snprintf(title, sizeof title, "copies per content, %" PRIu64 " B blocks", s->block_size);
			if (plot_histogram(&s->dist, title, s->plot, why, sizeof why)) {
				say("%s", why);
				rc = EXIT_FAILED;
			}
		}
	}
	for (int i = 0; i < r->n && !rc; i++) {
		struct size_out *s = &r->s[i];
		if (s->out.f && pending_commit(&s->out)) {
			say("writing %s: %s", o->output, strerror(errno));
			rc = EXIT_FAILED;
		}
		if (o->db && s->db && index_bdb_set_meta(s->db, &s->meta)) {
			say("--db %s: %s", o->db, s->db->err);
			rc = EXIT_FAILED;
		}
	}
	if (!rc && o->json) {
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		if (!text || fprintf(r->json.f, "%s\n", text) < 0 || pending_commit(&r->json)) {
			say("--json %s: %s", o->json, strerror(errno));
			rc = EXIT_FAILED;
		}
		free(text);
	}
	json_decref(doc);
	return rc;
}

static int add_source(struct run *r, const char *path)
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

/* Every PATH exists, is readable and is of the kind -f / -d asked for: checked before any
 * output or database is created. */
static int check_kind(const struct gen_options *o)
{
	for (int i = 0; i < o->npaths; i++) {
		struct stat st;
		if (stat(o->paths[i], &st) || access(o->paths[i], R_OK)) {
			say("%s: %s", o->paths[i], strerror(errno));
			return -1;
		}
		if (!o->kind)
			continue;
		if (o->kind == 'f' && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			say("%s: -f expects a directory or a file", o->paths[i]);
			return -1;
		}
		if (o->kind == 'd' && !S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
			say("%s: -d expects a block device (or an image file)", o->paths[i]);
			return -1;
		}
	}
	return 0;
}

static int cmd_scan(const struct gen_options *o)
{
	struct run r = {.o = o, .hash = gen_hash_names[o->hash]};
	char why[1024];
	int rc;

	if (check_kind(o))
		return EXIT_BAD_INPUT;
	/* Outputs and databases are checked before the walk starts: bad input reads nothing. */
	struct walk *w = NULL;
	for (int i = 0; i < o->npaths; i++) {
		if (add_source(&r, o->paths[i])) {
			say("out of memory");
			run_free(&r);
			return EXIT_FAILED;
		}
	}
	if ((rc = prepare(&r, o->sizes, o->nsizes)))
		goto out;
	for (int i = 0; i < r.n && o->keep; i++) {
		for (size_t k = 0; k < r.s[i].meta.nsources; k++) {
			for (int j = 0; j < r.nsources; j++) {
				if (!strcmp(r.s[i].meta.sources[k], r.sources[j])) {
					say("--db %s already holds an analysis of %s: -k would count its blocks twice", o->db,
					    r.sources[j]);
					rc = EXIT_BAD_INPUT;
					goto out;
				}
			}
		}
	}

	if (!(w = walk_open(o->paths, o->npaths, o->one_fs, why, sizeof why))) {
		say("%s", why);
		rc = EXIT_BAD_INPUT;
		goto out;
	}
	struct scan_size *sizes = calloc((size_t)r.n, sizeof *sizes);
	if (!sizes) {
		rc = EXIT_FAILED;
		goto out;
	}
	for (int i = 0; i < r.n; i++)
		sizes[i] = (struct scan_size){r.s[i].block_size, r.s[i].counter, 0};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	bool show_progress = !o->quiet && isatty(2);
	struct scan_config cfg = {
		.walk = w,
		.hash = r.hash,
		.sizes = sizes,
		.nsizes = r.n,
		.threads = o->threads ? (int)o->threads : (cores > 0 ? (int)cores : 1),
		.skip_tails = o->skip_tails,
		.strict = o->strict,
		.stop = &stop_flag,
		.progress = show_progress ? progress_line : NULL,
	};
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct scan_stats st;
	int failed = scan_run(&cfg, &st);
	if (show_progress)
		fputc('\n', stderr);
	free(sizes);
	if (st.errors && !o->quiet) {
		say("warning: %" PRIu64 " entr%s could not be read and %s skipped:", st.errors, st.errors == 1 ? "y" : "ies",
		    st.errors == 1 ? "was" : "were");
		for (int i = 0; i < st.nfirst; i++)
			fprintf(stderr, "  %s\n", st.first_errors[i]);
		if ((uint64_t)st.nfirst < st.errors)
			fprintf(stderr, "  ...\n");
	}
	if (failed) {
		say("scan failed: %s; nothing written", st.failure);
		rc = EXIT_FAILED;
	} else {
		rc = finish(&r, st.seconds, st.bytes, st.files, st.errors);
	}
	scan_stats_free(&st);
out:
	walk_close(w);
	run_free(&r);
	return rc;
}

static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int cmd_merge(const struct gen_options *o)
{
	struct run r = {.o = o};
	uint64_t sizes[GEN_MAX_SIZES];
	char why[1024] = "";
	int rc;

	int n = merge_sizes(o->paths, o->npaths, sizes, GEN_MAX_SIZES, why, sizeof why);
	if (n < 0) {
		say("merge: %s", why);
		return EXIT_BAD_INPUT;
	}
	for (int i = 0; i < o->npaths; i++) {
		if (o->db && same_dir(o->db, o->paths[i])) {
			say("merge: --db %s is also an input", o->db);
			return EXIT_BAD_INPUT;
		}
	}
	/* The hash is the inputs' (checked to agree by merge_into); find it from the first. */
	struct index_meta m0 = {0};
	struct gindex *probe = index_bdb_open(o->paths[0], sizes[0], "sha1", false, false, 1 << 20, &m0, why, sizeof why);
	if (!probe && strstr(why, "incompatible"))
		probe = index_bdb_open(o->paths[0], sizes[0], "sha256", false, false, 1 << 20, &m0, why, sizeof why);
	if (!probe) {
		say("merge: %s", why);
		return EXIT_BAD_INPUT;
	}
	probe->ops->close(probe);
	static char hash[16];
	snprintf(hash, sizeof hash, "%s", m0.hash);
	index_meta_free(&m0);
	r.hash = hash;
	if ((rc = prepare(&r, sizes, n)))
		goto out;
	for (int i = 0; i < r.n; i++) {
		struct index_meta sum = {0};
		why[0] = 0;
		if (merge_into(o->paths, o->npaths, sizes[i], o->db_cache, r.s[i].counter, &sum, why, sizeof why)) {
			say("merge: %s", why);
			index_meta_free(&sum);
			rc = EXIT_BAD_INPUT;
			goto out;
		}
		/* this run's figures: the inputs' sums, added to what an -k output DB held */
		for (size_t k = 0; k < sum.nsources; k++)
			index_meta_add_source(&r.s[i].meta, sum.sources[k]);
		r.s[i].meta.bytes += sum.bytes;
		r.s[i].meta.files += sum.files;
		r.s[i].meta.errors += sum.errors;
		index_meta_free(&sum);
	}
	rc = finish(&r, 0, 0, 0, 0);
out:
	run_free(&r);
	return rc;
}

static int load(const char *path, struct dist *d, bool quiet)
{
	struct dist_error e;
	if (dist_load(path, d, &e)) {
		say("%s", e.msg);
		return -1;
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
	char why[512];
	if (o->plot && !plot_available()) {
		say("--plot: gnuplot is not installed (apt-get install gnuplot-nox) or its script is missing");
		return EXIT_BAD_INPUT;
	}
	if (load(o->paths[0], &d, false))
		return EXIT_BAD_INPUT;
	int rc = 0;
	if (o->json_stdout)
		rc = print_json(show_json(o->paths[0], &d, o->top)) ? EXIT_FAILED : 0;
	else
		show_text(stdout, o->paths[0], &d, o->top);
	if (!rc && o->plot && plot_histogram(&d, o->paths[0], o->plot, why, sizeof why)) {
		say("%s", why);
		rc = strstr(why, "--plot ") ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	dist_free(&d);
	return rc;
}

static int cmd_compare(const struct gen_options *o)
{
	struct dist a, b;
	struct dist_diff df;
	if (load(o->paths[0], &a, false))
		return EXIT_BAD_INPUT;
	if (load(o->paths[1], &b, false)) {
		dist_free(&a);
		return EXIT_BAD_INPUT;
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
	dist_compare(&a, &b, &df);
	int rc = 0;
	char why[1024];
	if (o->plot && plot_compare(&a, &b, o->paths[0], o->paths[1], o->plot, why, sizeof why)) {
		say("%s", why);
		rc = strstr(why, "--plot ") ? EXIT_BAD_INPUT : EXIT_FAILED;
	}
	if (rc) {
		dist_free(&a);
		dist_free(&b);
		return rc;
	}
	if (o->json_stdout)
		rc = print_json(compare_json(o->paths[0], o->paths[1], &df, o->max_diff)) ? EXIT_FAILED : 0;
	else
		compare_text(stdout, o->paths[0], o->paths[1], &df, o->max_diff);
	if (!rc && !compare_within(&df, o->max_diff))
		rc = EXIT_FAILED;
	dist_free(&a);
	dist_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	struct gen_options o;
	struct gen_opt_error err;
	int rc;

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
