/* results.c - the summary printed at the end of a run, its JSON twin, and the per-second
 * time series sampled from the workers' shared counters while they run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/distcmp.h"
#include "lib/errmsg.h"
#include "lib/plot.h"
#include "lib/report.h"
#include "bench/report/results.h"
#include "lib/safefile.h"
#include "lib/units.h"

static void snapshot_dir(struct dir_stats *dst, const struct dir_stats *src)
{
	dst->ops += __atomic_load_n(&src->ops, __ATOMIC_RELAXED);
	dst->bytes += __atomic_load_n(&src->bytes, __ATOMIC_RELAXED);
	hist_merge(&dst->lat, &src->lat);
}

static void zero_dir(struct dir_stats *d)
{
	d->ops = d->bytes = 0;
	hist_init(&d->lat);
}

bool results_verify_ok(const struct run_result *r)
{
	return r->read_checks + r->final_checks > 0 && r->read_mismatches + r->final_mismatches == 0 && !r->interrupted &&
	       !r->failed;
}

const char *const run_status_names[] = {"ok", "interrupted", "failed", "mismatch"};

enum run_status results_status(const struct bench_config *c, const struct run_result *r, struct dd_err *why)
{
	uint64_t mismatched = r->read_mismatches + r->final_mismatches;
	if (r->failed)
		return err_fail(why, RUN_FAILED, "%s", r->failure);
	if (mismatched)
		return err_fail(why, RUN_MISMATCH, "verification failed: %llu mismatched block%s; first: %s",
				(unsigned long long)mismatched, mismatched == 1 ? "" : "s", r->mismatch[0]);
	if (c->o.verify != VERIFY_NONE && !r->interrupted && r->read_checks + r->final_checks == 0)
		return err_fail(why, RUN_MISMATCH, "--verify %s checked no block%s", verify_names[c->o.verify],
				c->unknown == UNKNOWN_SKIP ? ": the ledger records no write to what the run read, and "
							       "nothing else is known about those blocks"
							     : "");
	if (r->have_engine && r->engine_unchecked)
		return err_fail(why, RUN_FAILED, "the engine volume could not be validated: %s",
				r->mismatch[r->nmismatch - 1]);
	if (r->have_engine && !r->engine_match)
		return err_fail(why, RUN_MISMATCH, "the engine does not hold what the run wrote%s%s",
				r->nmismatch ? ": " : "", r->nmismatch ? r->mismatch[0] : "");
	return r->interrupted ? RUN_INTERRUPTED : RUN_OK;
}

void results_merge(struct run_result *r)
{
	for (int d = 0; d < 2; d++)
		zero_dir(&r->total[d]);
	hist_init(&r->all);
	for (unsigned i = 0; i < r->procs; i++)
		for (int d = 0; d < 2; d++)
			snapshot_dir(&r->total[d], &r->w[i].dir[d]);
	hist_merge(&r->all, &r->total[0].lat);
	hist_merge(&r->all, &r->total[1].lat);
}

static double mib_s(uint64_t bytes, double s) { return s > 0 ? (double)bytes / 1048576.0 / s : 0; }
static double per_s(uint64_t n, double s) { return s > 0 ? (double)n / s : 0; }

/* What the live data should follow: with --content scaled, the distribution scaled to this run
 * (the layout the generator lays down); sampled, the distribution itself (each write draws from it). */
struct run_target {
	struct dist scaled;
	const struct dist *d;
	bool is_scaled;
};

static int target_of(const struct bench_config *c, struct run_target *t)
{
	memset(t, 0, sizeof *t);
	t->d = &c->dist;
	if (!c->scaled || !c->layout.n)
		return 0;
	if (scaled_to_dist(&c->layout, &t->scaled))
		return -1;
	t->d = &t->scaled;
	t->is_scaled = true;
	return 0;
}

static void target_free(struct run_target *t)
{
	if (t->is_scaled)
		dist_free(&t->scaled);
}

/* What scaling did, in one sentence (the summary's `scaling:` line and the plot's caption). */
static void scaling_caption(const struct bench_config *c, char *buf, size_t len)
{
	const struct scaled_layout *l = &c->layout;
	if (!c->scaled || !l->n) {
		snprintf(buf, len, "%s as it is: each write draws from it (--content sampled), no scaling", c->o.dist);
		return;
	}
	int at = snprintf(buf, len, "%s scaled from %llu to %llu blocks: ", c->o.dist,
			  (unsigned long long)l->dataset_blocks, (unsigned long long)l->n);
	if (at < 0 || (size_t)at >= len)
		return;
	if (l->dominant_contents)
		snprintf(buf + at, len - (size_t)at,
			 "%llu dominant content%s (over %llu copies in the dataset, 1/64 of the run%s) keep%s %s share of the "
			 "blocks (%.2f %%) with fewer copies (at most %llu); the other rows keep their copies, their counts "
			 "rounded with the error carried to the next row",
			 (unsigned long long)l->dominant_contents, l->dominant_contents == 1 ? "" : "s",
			 (unsigned long long)l->dominant_above, l->zero_copies > l->dominant_above ? "; the zero block among them" : "",
			 l->dominant_contents == 1 ? "s" : "", l->dominant_contents == 1 ? "its" : "their",
			 100.0 * (double)l->dominant_blocks / (double)l->n, (unsigned long long)l->dominant_max_copies);
	else
		snprintf(buf + at, len - (size_t)at,
			 "every row keeps its copies, its count rounded with the error carried to the next row");
}

/* The caption for a picture: lines broken at spaces to about `width` characters. */
static void wrap(char *s, size_t width)
{
	size_t col = 0;
	char *last_space = NULL;
	for (char *p = s; *p; p++, col++) {
		if (*p == ' ')
			last_space = p;
		if (col >= width && last_space) {
			*last_space = '\n';
			col = (size_t)(p - last_space);
			last_space = NULL;
		}
	}
}

/* Live against target: the largest difference of a power-of-two bucket's share, in points. */
static double max_bucket_pp(const struct dist *a, const struct dist *b)
{
	struct dist_pow2 ha, hb;
	dist_pow2_histogram(a, &ha);
	dist_pow2_histogram(b, &hb);
	double m = 0;
	for (int k = 0; k < DIST_POW2_BUCKETS; k++) {
		double d = 100 * (ha.share[k] - hb.share[k]);
		if (d < 0)
			d = -d;
		if (d > m)
			m = d;
	}
	return m;
}

/* The run's tolerance for live against the scaled target, in points of share: each target block
 * the run never wrote, and each copy the workers still owe back to overwritten contents (at most
 * DUPGEN_QUEUE a worker), leaves about one block out of place. */
static double live_tolerance_pp(const struct bench_config *c, const struct run_result *r, uint64_t *never_written)
{
	uint64_t n = c->layout.n;
	*never_written = r->live_rows.total_blocks < n ? n - r->live_rows.total_blocks : 0;
	return n ? 100.0 * (double)(*never_written + (uint64_t)r->procs * DUPGEN_QUEUE) / (double)n : 0;
}

/* A worker's own time, its first issue to its last completion: its IOPS and MiB/s while it ran.
 * The run's span (the last worker's end) understated every worker that finished earlier. */
static double worker_seconds(const struct worker_shared *w)
{
	return w->last_ns > w->first_ns ? (double)(w->last_ns - w->first_ns) / 1e9 : 0;
}

static void print_line(FILE *f, const char *label, uint64_t ops, uint64_t bytes, const struct histogram *h, double s)
{
	fprintf(f, "  %-8s %12llu ops %10.1f IOPS %9.2f MiB/s  lat us: mean %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		label, (unsigned long long)ops, per_s(ops, s), mib_s(bytes, s), hist_mean(h) / 1e3,
		(double)hist_percentile(h, 50) / 1e3, (double)hist_percentile(h, 90) / 1e3,
		(double)hist_percentile(h, 99) / 1e3, (double)hist_percentile(h, 99.9) / 1e3, (double)h->max / 1e3);
}

void results_print_engine(FILE *f, const struct run_result *r)
{
	const struct engine_stats *ob = &r->observed;
	double want_ratio = r->expected_distinct ? (double)r->expected_mapped / (double)r->expected_distinct : 0;
	fprintf(f, "engine (%s index): ", ob->index);
	if (r->engine_holdings_unknown)
		fprintf(f, "expected not known (the volume's data predates the run, no ledger describes it); observed "
			   "%llu mapped, %llu distinct stored (ratio %.3f), %llu blocks in use, fsck %s; physical bytes %llu "
			   "(compression %s)",
			(unsigned long long)ob->mapped_blocks, (unsigned long long)ob->referenced_blocks, ob->dedup_ratio,
			(unsigned long long)ob->physical_blocks, r->fsck_problems == 0 ? "clean" : "FAILED",
			(unsigned long long)ob->physical_bytes, ob->compress);
	else
		fprintf(f, "expected %llu mapped blocks, %llu distinct (ratio %.3f); observed %llu mapped, %llu distinct "
			   "stored (ratio %.3f), %llu blocks in use, fsck %s; physical bytes expected %llu, observed %llu "
			   "(%+.2f %%, compression %s)",
			(unsigned long long)r->expected_mapped, (unsigned long long)r->expected_distinct, want_ratio,
			(unsigned long long)ob->mapped_blocks, (unsigned long long)ob->referenced_blocks, ob->dedup_ratio,
			(unsigned long long)ob->physical_blocks, r->fsck_problems == 0 ? "clean" : "FAILED",
			(unsigned long long)r->expected_physical_bytes, (unsigned long long)ob->physical_bytes,
			100 * r->physical_deviation, ob->compress);
	fprintf(f, "; reads checked %llu, mismatched %llu: %s\n", (unsigned long long)r->read_checks,
		(unsigned long long)r->read_mismatches, r->engine_match ? "MATCH" : "MISMATCH");
}

/* The header, each worker's line, the totals and the rate. */
static void print_operations(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	char bs[32], fsz[32];
	units_format_size(o->block_size, bs, sizeof bs);
	units_format_size(c->target.region_size, fsz, sizeof fsz);
	fprintf(f, "dedisbench: %s %s, %s, %s blocks, %llu workers x %s on %s (%s), dist %s, seed %llu\n",
		c->nominal ? "nominal" : "peak", mode_names[o->mode], access_names[o->access], bs,
		(unsigned long long)o->procs, fsz, o->target, c->engine->name, o->dist, (unsigned long long)c->seed);
	if (r->interrupted)
		fprintf(f, "interrupted: results cover the %.2f s that ran\n", r->seconds);
	if (r->failed)
		fprintf(f, "FAILED: %s\n", r->failure);
	fprintf(f, "elapsed %.3f s\n", r->seconds);
	for (unsigned i = 0; i < r->procs; i++) {
		char label[24];
		snprintf(label, sizeof label, "worker%u", i);
		struct histogram h;
		hist_init(&h);
		hist_merge(&h, &r->w[i].dir[0].lat);
		hist_merge(&h, &r->w[i].dir[1].lat);
		print_line(f, label, r->w[i].dir[0].ops + r->w[i].dir[1].ops, r->w[i].dir[0].bytes + r->w[i].dir[1].bytes,
			   &h, worker_seconds(&r->w[i]));
	}
	if (r->total[IO_READ].ops)
		print_line(f, "reads", r->total[0].ops, r->total[0].bytes, &r->total[0].lat, r->seconds);
	if (r->total[IO_WRITE].ops)
		print_line(f, "writes", r->total[1].ops, r->total[1].bytes, &r->total[1].lat, r->seconds);
	print_line(f, "total", r->total[0].ops + r->total[1].ops, r->total[0].bytes + r->total[1].bytes, &r->all,
		   r->seconds);
	if (c->nominal) {
		double req = o->rate > 0 ? o->rate : o->read_rate + o->write_rate;
		fprintf(f, "rate: requested %.1f ops/s, achieved %.1f ops/s\n", req,
			per_s(r->total[0].ops + r->total[1].ops, r->seconds));
		if (r->missed)
			fprintf(f, "rate: %llu operations due before the end were never issued (the target fell behind at the "
				   "end): their latency is in no figure above\n", (unsigned long long)r->missed);
	}
}

/* The scaled target, the distribution, and how far the live data is from the target. */
static void print_scaled(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	struct dist_rows want;
	struct run_target tg;
	if (target_of(c, &tg) == 0 && tg.is_scaled) {
		struct dist_rows sc;
		dist_compute_rows(tg.d, &sc);
		fprintf(f, "scaled:  %llu blocks, %llu distinct: U0 %.2f %%  U1 %.2f %%  D %.2f %%  dedup ratio %.3f"
			   " (the target: the distribution scaled to this run)\n",
			(unsigned long long)sc.total_blocks, (unsigned long long)sc.distinct, 100 * sc.u0, 100 * sc.u1,
			100 * sc.d, sc.ratio);
	}
	dist_compute_rows(&c->dist, &want);
	fprintf(f, "distribution %s: U0 %.2f %%  U1 %.2f %%  D %.2f %%  dedup ratio %.3f\n", o->dist, 100 * want.u0,
		100 * want.u1, 100 * want.d, want.ratio);
	if (r->have_live && tg.is_scaled) {
		struct dist_diff dd;
		dist_compare(tg.d, &r->live, &dd);
		uint64_t never;
		double tol = live_tolerance_pp(c, r, &never), worst = max_bucket_pp(tg.d, &r->live);
		fprintf(f, "live vs scaled: largest bucket difference %.3f pp, row %.3f pp, histogram TV distance %.4f; "
			   "%s the tolerance %.2f pp (%llu target blocks never written, up to %llu copies owed)\n",
			worst, dd.max_pp, dd.tv, worst <= tol ? "within" : "BEYOND", tol, (unsigned long long)never,
			(unsigned long long)r->procs * DUPGEN_QUEUE);
	}
	target_free(&tg);
}

/* Copy classes with too few measured contents take their cells from their neighbours
 * (compmodel_borrowed): said, since their compressibility is then not their own. */
static void print_borrowed(FILE *f, const struct bench_config *c)
{
	if (!c->model)
		return;
	bool present[DIST_CLASSES] = {false};
	for (size_t i = 0; i < c->dist.nrows; i++)
		present[compmodel_class(c->dist.rows[i].dups + 1)] = true;
	for (unsigned k = 0; k < DIST_CLASSES; k++) {
		unsigned lo, hi;
		if (!present[k] || !compmodel_borrowed(c->model, k, &lo, &hi))
			continue;
		fprintf(f, "compressibility: copy class %u (%llu measured) uses classes %u-%u\n", k,
			(unsigned long long)c->dist.comp.class_measured[k], lo, hi);
	}
}

/* The vocabulary fitted to the distribution's granularity curve (bench/content/grancal.h). */
static void print_vocabulary(FILE *f, const struct bench_config *c)
{
	const struct grancal_result *v = &c->vocabulary;
	if (!v->fitted)
		return;
	int last = DIST_GRAN_SIZES - 1;
	fprintf(f, "granularity: neighbours share %u %% of literals (pool %u KiB); zstd -3 4->128 KiB: "
		"data x%.2f, replica x%.2f\n", v->share * 100 / 128, 4u << v->pool,
		grancal_ratio(&c->dist.gran, 1, last) / grancal_ratio(&c->dist.gran, 1, 0),
		grancal_growth(v, 1, last));
}

/* How the run's content was made: scaling, content kind, compressibility, overwrites. */
static void print_content(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	char how[512];
	scaling_caption(c, how, sizeof how);
	fprintf(f, "scaling: %s\n", how);
	fprintf(f, "content: %s", content_names[o->content]);
	if (c->scaled)
		fprintf(f, " to %llu blocks", (unsigned long long)c->scale_blocks);
	if (c->layout.has_runs)
		fprintf(f, " in copied runs");
	const struct locality_stats *ls = &c->layout.runs.stats;
	if (c->layout.has_runs && ls->shifted_runs)
		fprintf(f, " (%llu shifted copies, %llu blocks)", (unsigned long long)ls->shifted_runs,
			(unsigned long long)ls->shifted_blocks);
	if (c->model)
		fprintf(f, ", each content compressible as its copy class in the distribution");
	else if (o->compress > 1)
		fprintf(f, ", compressible %llu:1%s", (unsigned long long)o->compress,
			/* doc/notes/content.md: below 4 KiB a block alone pays its frame past R = 2 */
			o->compress > 2 && o->block_size < 4096
			    ? " in a stream (a block this small compressed alone reaches less: see physical)"
			    : "");
	if (r->overwrites)
		fprintf(f, "; %llu overwrites, %.1f %% changed the block's content", (unsigned long long)r->overwrites,
			100.0 * (double)r->overwrites_changed / (double)r->overwrites);
	fputc('\n', f);
	print_borrowed(f, c);
	print_vocabulary(f, c);
}

/* What the run wrote and what stays live, against the distribution. */
static void print_written(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct dist_rows *w = &r->written_rows;
	fprintf(f, "written: %llu blocks, %llu distinct: U0 %.2f %%  U1 %.2f %%  D %.2f %%  dedup ratio %.3f\n",
		(unsigned long long)w->total_blocks, (unsigned long long)w->distinct, 100 * w->u0, 100 * w->u1,
		100 * w->d, w->ratio);
	if (r->have_live) {
		const struct dist_rows *lv = &r->live_rows;
		fprintf(f, "live:    %llu blocks, %llu distinct: U0 %.2f %%  U1 %.2f %%  D %.2f %%  dedup ratio %.3f\n",
			(unsigned long long)lv->total_blocks, (unsigned long long)lv->distinct, 100 * lv->u0,
			100 * lv->u1, 100 * lv->d, lv->ratio);
	}
	print_scaled(f, c, r);
	print_content(f, c, r);
}

/* What the verify checks found, and how they checked. */
static void print_verify(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	/* An engine target checks its reads unasked: a run without reads has nothing to say here (the
	 * engine line above proves what was written). Asked for, a verify that checked nothing says so. */
	bool asked = o->verify != VERIFY_NONE, read_any = r->read_checks + r->read_mismatches + r->unchecked > 0;
	if ((c->check_reads || c->final_pass) && (asked || read_any)) {
		fprintf(f, "verify (%s):", o->verify == VERIFY_NONE ? "reads, as on every engine target" : verify_names[o->verify]);
		if (c->check_reads)
			fprintf(f, " %llu reads checked, %llu mismatched;", (unsigned long long)r->read_checks,
				(unsigned long long)r->read_mismatches);
		if (c->final_pass)
			fprintf(f, " final pass %llu blocks checked, %llu mismatched;", (unsigned long long)r->final_checks,
				(unsigned long long)r->final_mismatches);
		const char *verdict = r->read_mismatches + r->final_mismatches ? "MISMATCH"
				      : r->read_checks + r->final_checks == 0 ? "NOTHING CHECKED"
				      : r->interrupted || r->failed	      ? "incomplete"
									      : "ok";
		fprintf(f, " %s\n", verdict);
		static const char *const how[VM_METHODS] = {"against the ledger", "as never written (zeros)",
							    "identified from their bytes (no ledger)",
							    "against the layout of the seed"};
		fprintf(f, "  how:");
		int said = 0;
		for (int m = 0; m < VM_METHODS; m++)
			if (r->checks_by[m])
				fprintf(f, "%s %llu %s", said++ ? "," : "", (unsigned long long)r->checks_by[m], how[m]);
		if (r->checks_by[VM_LAYOUT])
			fprintf(f, " %llu", (unsigned long long)c->seed);
		fprintf(f, "%s; %llu not checkable\n", said ? "" : " nothing checked", (unsigned long long)r->unchecked);
		fprintf(f, "  found: %llu valid, %llu zeros, %llu garbage, %llu of another seed",
			(unsigned long long)r->found[CONTENT_IS_VALID], (unsigned long long)r->found[CONTENT_IS_ZERO],
			(unsigned long long)r->found[CONTENT_IS_GARBAGE], (unsigned long long)r->found[CONTENT_IS_FOREIGN]);
		if (r->found[CONTENT_IS_FOREIGN])
			fprintf(f, " (e.g. %llu)", (unsigned long long)r->foreign_seed);
		fputc('\n', f);
		for (unsigned i = 0; i < r->nmismatch; i++)
			fprintf(f, "  %s\n", r->mismatch[i]);
	}
}

/* The observed space, the host's load and the access skew. */
static void print_space_host_access(FILE *f, const struct run_result *r)
{
	if (r->space.have) {
		const struct space_report *s = &r->space;
		fprintf(f, "space (%s, %s): logical %.1f MiB, expected %.1f MiB (ideal %s, %.2f:1), ",
			space_source_names[s->source], s->detail, (double)s->logical_bytes / 1048576,
			(double)s->expected_bytes / 1048576, s->basis,
			s->expected_bytes ? (double)s->logical_bytes / (double)s->expected_bytes : 0);
		if (s->observed_bytes)
			fprintf(f, "observed %.1f MiB (%.2f:1): efficiency %.2f\n", (double)s->observed_bytes / 1048576,
				(double)s->logical_bytes / (double)s->observed_bytes, s->efficiency);
		else
			fprintf(f, "observed nothing (used space did not grow: other writers freed more meanwhile?): "
				   "efficiency unknown\n");
	}
	if (r->host.have)
		fprintf(f, "host: CPU %.1f %% busy (busiest second %.1f %%, iowait %.1f %%), memory used %.1f MiB at start, "
			   "%.1f MiB at most, of %.1f MiB\n",
			hostload_busy_pct(&r->host.cpu_start, &r->host.cpu_end), r->host.busy_pct_max,
			hostload_iowait_pct(&r->host.cpu_start, &r->host.cpu_end), (double)r->host.mem_start.used / 1048576,
			(double)r->host.mem_used_max / 1048576, (double)r->host.mem_start.total / 1048576);
	fprintf(f, "access: hottest 10 %% of blocks took %.1f %% of operations (%llu of %llu blocks accessed)\n",
		100 * r->hottest10, (unsigned long long)r->accessed_blocks, (unsigned long long)r->region_blocks);
}

/* What each kind of store should keep, a short line each: per block (VDO, Dmdedup+LZ4), per
 * 128 KiB record (ZFS, btrfs), per content-defined chunk (backup stores). */
static void print_physical(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	const struct physical_estimate *p = &r->physical;
	const struct record_estimate *rec = &p->record;
	double logical = (double)r->live_rows.total_blocks * (double)c->o.block_size;
	char z[32], l[32];
	units_format_size((uint64_t)(p->zstd_bytes + 0.5), z, sizeof z);
	units_format_size((uint64_t)(p->lz4_bytes + 0.5), l, sizeof l);
	fprintf(f, "physical per block (VDO): %s%s zstd-1 (%.2f:1), %s LZ4 (%.2f:1)\n",
		p->sampled < p->distinct ? "~" : "", z, logical / p->zstd_bytes, l, logical / p->lz4_bytes);
	if (rec->have && rec->records > rec->zero_records) {
		const char *approx = rec->sample_rate < 1 ? "~" : "";
		double dedup = (double)(rec->records - rec->zero_records) / rec->distinct;
		units_format_size((uint64_t)(rec->dedup_alloc_bytes + 0.5), z, sizeof z);
		if (rec->have_zstd3)
			fprintf(f, "physical per record (ZFS): %s%s zstd-3 (%.2f:1), record dedup %.3f:1\n", approx,
				z, logical / rec->dedup_alloc_bytes, dedup);
		else
			fprintf(f, "physical per record (ZFS): zstd-3 unknown (see JSON), record dedup %s%.3f:1\n",
				approx, dedup);
	}
	if (p->cdc.have) { /* a distribution without [cdc 1]: nothing known, no line (the JSON says why) */
		units_format_size((uint64_t)(p->cdc.dedup_bytes + 0.5), z, sizeof z);
		fprintf(f, "physical per chunk (CDC): %s dedup (%.2f:1)", z, p->cdc.dedup_ratio);
		if (p->cdc.have_lz4) {
			units_format_size((uint64_t)(p->cdc.lz4_bytes + 0.5), l, sizeof l);
			fprintf(f, ", %s LZ4 (%.2f:1)", l, logical / p->cdc.lz4_bytes);
		}
		fputc('\n', f);
	}
}

void results_print(FILE *f, const struct bench_config *c, const struct run_result *r)
{
	print_operations(f, c, r);
	if (r->have_written && r->written_rows.total_blocks)
		print_written(f, c, r);
	if (r->have_physical && r->physical.distinct)
		print_physical(f, c, r);
	if (r->have_engine)
		results_print_engine(f, r);
	print_verify(f, c, r);
	print_space_host_access(f, r);
}

static json_t *dir_json(uint64_t ops, uint64_t bytes, const struct histogram *h, double s)
{
	return json_pack("{s:I, s:I, s:f, s:f, s:f, s:o}", "ops", (json_int_t)ops, "bytes", (json_int_t)bytes,
			 "seconds", s, "iops", per_s(ops, s), "mib_per_s", mib_s(bytes, s), "latency_us", report_latency(h));
}

/* The options by name, in the JSON's one key style: "file_size" for --file-size. */
static json_t *config_json(const struct bench_options *o)
{
	json_t *cfg = options_to_json(o);
	report_keys_snake_case(cfg); /* out of memory: the run's options' own names, still readable */
	return cfg;
}

json_t *results_json_header(const struct bench_options *o, const char *command, const char *ioengine, bool failed,
			    bool interrupted, const char *failure)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "tool", json_string("dedisbench " PACKAGE_VERSION));
	json_object_set_new(doc, "schema_version", json_integer(RESULTS_SCHEMA_VERSION));
	json_object_set_new(doc, "command", json_string(command));
	json_t *cfg = config_json(o);
	json_object_set_new(cfg, "ioengine", json_string(ioengine));
	json_object_set_new(doc, "config", cfg);
	json_object_set_new(doc, "status", json_string(failed ? "failed" : interrupted ? "interrupted" : "ok"));
	if (failed)
		json_object_set_new(doc, "error", json_string(failure));
	return doc;
}

/* The document's head: the tool, its configuration, the status, the totals and the rate. */
static json_t *json_head(const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	json_t *doc = json_object();
	json_t *cfg = config_json(o);
	json_object_set_new(cfg, "dist_path", json_string(c->dist_path));
	json_object_set_new(cfg, "populate", json_string(populate_names[c->populate]));
	json_object_set_new(cfg, "ioengine", json_string(c->engine->name));
	json_object_set_new(doc, "tool", json_string("dedisbench " PACKAGE_VERSION));
	json_object_set_new(doc, "schema_version", json_integer(RESULTS_SCHEMA_VERSION));
	json_object_set_new(doc, "config", cfg);
	struct dd_err why;
	enum run_status status = results_status(c, r, &why);
	json_object_set_new(doc, "status", json_string(run_status_names[status]));
	if (status >= RUN_FAILED)
		json_object_set_new(doc, "error", json_string(why.msg));
	uint64_t ops = r->total[0].ops + r->total[1].ops, bytes = r->total[0].bytes + r->total[1].bytes;
	json_object_set_new(doc, "totals", dir_json(ops, bytes, &r->all, r->seconds));
	json_object_set_new(doc, "reads", dir_json(r->total[0].ops, r->total[0].bytes, &r->total[0].lat, r->seconds));
	json_object_set_new(doc, "writes", dir_json(r->total[1].ops, r->total[1].bytes, &r->total[1].lat, r->seconds));
	if (c->nominal) {
		double req = o->rate > 0 ? o->rate : o->read_rate + o->write_rate;
		json_t *rate = json_pack("{s:f, s:f, s:I}", "requested", req, "achieved", per_s(ops, r->seconds), "missed",
					 (json_int_t)r->missed);
		if (o->read_rate > 0) {
			json_object_set_new(rate, "read_requested", json_real(o->read_rate));
			json_object_set_new(rate, "read_achieved", json_real(per_s(r->total[0].ops, r->seconds)));
			json_object_set_new(rate, "write_requested", json_real(o->write_rate));
			json_object_set_new(rate, "write_achieved", json_real(per_s(r->total[1].ops, r->seconds)));
		}
		json_object_set_new(doc, "rate", rate);
	}
	return doc;
}

/* Each worker's figures. */
static json_t *json_workers(const struct run_result *r)
{
	json_t *workers = json_array();
	for (unsigned i = 0; i < r->procs; i++) {
		const struct worker_shared *w = &r->w[i];
		struct histogram h;
		hist_init(&h);
		hist_merge(&h, &w->dir[0].lat);
		hist_merge(&h, &w->dir[1].lat);
		json_t *wj = dir_json(w->dir[0].ops + w->dir[1].ops, w->dir[0].bytes + w->dir[1].bytes, &h,
				      worker_seconds(w));
		json_object_set_new(wj, "worker", json_integer(i));
		json_object_set_new(wj, "read_ops", json_integer((json_int_t)w->dir[0].ops));
		json_object_set_new(wj, "write_ops", json_integer((json_int_t)w->dir[1].ops));
		if (w->error)
			json_object_set_new(wj, "error", json_string(w->errmsg));
		json_array_append_new(workers, wj);
	}
	return workers;
}

/* A distribution as the JSON shows one: its derived rows and its (dups, blocks) records. */
static json_t *dist_json(const struct dist *d, const struct dist_rows *derived)
{
	json_t *obj = report_dist_rows(derived);
	json_t *rows = json_array();
	for (size_t i = 0; i < d->nrows; i++)
		json_array_append_new(rows, json_pack("[I, I]", (json_int_t)d->rows[i].dups, (json_int_t)d->rows[i].blocks));
	json_object_set_new(obj, "rows", rows);
	return obj;
}

/* What was written: its rows against the distribution's. */
static json_t *json_written(const struct bench_config *c, const struct run_result *r)
{
	json_t *wr = dist_json(&r->written, &r->written_rows);
	struct dist_rows want;
	dist_compute_rows(&c->dist, &want);
	json_object_set_new(wr, "target", report_dist_rows(&want));
	return wr;
}

/* The engine volume's counters against what the run's ledger says it must hold. */
json_t *results_engine_json(const struct run_result *r)
{
	const struct engine_stats *ob = &r->observed;
	json_t *exp = json_pack("{s:I, s:I, s:f, s:I}", "mapped_blocks", (json_int_t)r->expected_mapped,
				"distinct_blocks", (json_int_t)r->expected_distinct, "dedup_ratio",
				r->expected_distinct ? (double)r->expected_mapped / (double)r->expected_distinct : 0.0,
				"physical_bytes", (json_int_t)r->expected_physical_bytes);
	json_t *obs = json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "mapped_blocks",
				(json_int_t)ob->mapped_blocks, "distinct_blocks", (json_int_t)ob->referenced_blocks,
				"dedup_ratio", ob->dedup_ratio, "physical_blocks", (json_int_t)ob->physical_blocks,
				"logical_writes", (json_int_t)ob->logical_writes, "unique_writes",
				(json_int_t)ob->unique_writes, "duplicate_writes", (json_int_t)ob->duplicate_writes,
				"overwrites", (json_int_t)ob->overwrites, "index_entries", (json_int_t)ob->index_entries,
				"index_lookups", (json_int_t)ob->index_lookups, "bloom_negatives",
				(json_int_t)ob->bloom_negatives, "fsck_problems", (json_int_t)r->fsck_problems);
	json_object_set_new(obs, "physical_bytes", json_integer((json_int_t)ob->physical_bytes));
	json_object_set_new(obs, "compressed_fragments", json_integer((json_int_t)ob->compressed_fragments));
	json_object_set_new(obs, "nodedup_writes", json_integer((json_int_t)ob->nodedup_writes));
	json_t *eng = json_pack("{s:s, s:s, s:f, s:o, s:b, s:o, s:b, s:I, s:I}", "index", ob->index, "compress",
				ob->compress, "physical_deviation", r->physical_deviation, "expected", exp,
				"expected_known", !r->engine_holdings_unknown, "observed", obs, "match", r->engine_match,
				"read_checks", (json_int_t)r->read_checks, "read_mismatches", (json_int_t)r->read_mismatches);
	if (r->nmismatch)
		json_object_set_new(eng, "first_mismatch", json_string(r->mismatch[0]));
	return eng;
}

/* The distribution as scaled to this run, and how far the live data is from it. */
static void json_scaled_target(const struct bench_config *c, const struct run_result *r, json_t *content)
{
	struct run_target tg;
	if (target_of(c, &tg) == 0 && tg.is_scaled) {
		struct dist_rows rows;
		dist_compute_rows(tg.d, &rows);
		json_t *sc = report_dist_rows(&rows);
		json_object_set_new(sc, "dominant_above", json_integer((json_int_t)c->layout.dominant_above));
		json_object_set_new(sc, "dominant_contents", json_integer((json_int_t)c->layout.dominant_contents));
		json_object_set_new(sc, "dominant_blocks", json_integer((json_int_t)c->layout.dominant_blocks));
		if (r->have_live) {
			struct dist_diff dd;
			dist_compare(tg.d, &r->live, &dd);
			json_object_set_new(sc, "live_max_row_diff_pp", json_real(dd.max_pp));
			json_object_set_new(sc, "live_max_bucket_diff_pp", json_real(max_bucket_pp(tg.d, &r->live)));
			json_object_set_new(sc, "live_tv", json_real(dd.tv));
			uint64_t never;
			double tol = live_tolerance_pp(c, r, &never);
			json_object_set_new(sc, "live_never_written", json_integer((json_int_t)never));
			json_object_set_new(sc, "tolerance_pp", json_real(tol));
			json_object_set_new(sc, "live_within_tolerance", json_boolean(max_bucket_pp(tg.d, &r->live) <= tol));
		}
		json_object_set_new(content, "scaled_target", sc);
	}
	target_free(&tg);
}

/* The fitted vocabulary and the growth of the ratio from 4 KiB, data and replica sample, per
 * codec and piece size. */
static json_t *json_vocabulary(const struct bench_config *c)
{
	const struct grancal_result *v = &c->vocabulary;
	static const char *const codec[3] = {"zstd1", "zstd3", "lz4"};
	json_t *growth = json_object();
	for (int k = 0; k < 3; k++) {
		json_t *data = json_array(), *rep = json_array();
		for (int i = 0; i < DIST_GRAN_SIZES; i++) {
			json_array_append_new(data, json_real(grancal_ratio(&c->dist.gran, k, i) / grancal_ratio(&c->dist.gran, k, 0)));
			json_array_append_new(rep, json_real(grancal_growth(v, k, i)));
		}
		json_object_set_new(growth, codec[k], json_pack("{s:o, s:o}", "data", data, "replica_sample", rep));
	}
	return json_pack("{s:I, s:I, s:I, s:o}", "share_of_128", (json_int_t)v->share, "pool_bytes",
			 (json_int_t)(CONTENT_SECTOR << v->pool), "band_ids", (json_int_t)(1 << CONTENT_BAND_BITS),
			 "growth_from_4k", growth);
}

/* How the content was made (model, layout, compressibility, scaling, overwrites). */
static json_t *json_content(const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	json_t *content = json_pack("{s:s, s:s, s:I, s:I}", "model", content_names[o->content], "layout",
				    c->layout.has_runs ? "runs" : "scattered", "overwrites", (json_int_t)r->overwrites,
				    "overwrites_changed", (json_int_t)r->overwrites_changed);
	json_object_set_new(content, "compress", c->model	       ? json_string("dist")
						 : o->compress == COMPRESS_DIST ? json_integer(1)
									 : json_integer((json_int_t)o->compress));
	if (c->scaled)
		json_object_set_new(content, "scale_blocks", json_integer((json_int_t)c->scale_blocks));
	if (c->layout.has_runs)
		json_object_set_new(content, "shifted_copies",
				    json_pack("{s:I, s:I}", "runs", (json_int_t)c->layout.runs.stats.shifted_runs, "blocks",
					      (json_int_t)c->layout.runs.stats.shifted_blocks));
	char how[512];
	scaling_caption(c, how, sizeof how);
	json_object_set_new(content, "scaling", json_string(how));
	json_scaled_target(c, r, content);
	json_object_set_new(content, "changed_share",
			    json_real(r->overwrites ? (double)r->overwrites_changed / (double)r->overwrites : 0.0));
	if (c->vocabulary.fitted)
		json_object_set_new(content, "vocabulary", json_vocabulary(c));
	return content;
}

/* What the verify checks found, and how they checked. */
static json_t *json_verify(const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	json_t *mm = json_array();
	for (unsigned i = 0; i < r->nmismatch; i++)
		json_array_append_new(mm, json_string(r->mismatch[i]));
	json_t *how = json_object();
	for (int m = 0; m < VM_METHODS; m++)
		json_object_set_new(how, verify_method_names[m], json_integer((json_int_t)r->checks_by[m]));
	json_t *found = json_pack("{s:I, s:I, s:I, s:I}", "valid", (json_int_t)r->found[CONTENT_IS_VALID], "zero",
				  (json_int_t)r->found[CONTENT_IS_ZERO], "garbage",
				  (json_int_t)r->found[CONTENT_IS_GARBAGE], "foreign_seed",
				  (json_int_t)r->found[CONTENT_IS_FOREIGN]);
	if (r->found[CONTENT_IS_FOREIGN])
		json_object_set_new(found, "a_foreign_seed", json_integer((json_int_t)r->foreign_seed));
	json_t *v = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:b, s:b}", "mode",
			      o->verify == VERIFY_NONE ? "online" : verify_names[o->verify], "checked",
			      (json_int_t)(r->read_checks + r->final_checks), "unchecked", (json_int_t)r->unchecked,
			      "read_checks", (json_int_t)r->read_checks, "read_mismatches",
			      (json_int_t)r->read_mismatches, "final_checks", (json_int_t)r->final_checks,
			      "final_mismatches", (json_int_t)r->final_mismatches, "how", how, "found", found,
			      "mismatches", mm, "complete", !r->interrupted && !r->failed, "ok",
			      results_verify_ok(r));
	if (r->checks_by[VM_LAYOUT])
		json_object_set_new(v, "layout_seed", json_integer((json_int_t)c->seed));
	return v;
}

/* The observed space against the ideal. */
static json_t *json_space(const struct run_result *r)
{
	const struct space_report *s = &r->space;
	json_t *sj = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:I, s:I}", "source",
			       space_source_names[s->source], "detail", s->detail, "basis", s->basis, "logical_bytes",
			       (json_int_t)s->logical_bytes, "expected_bytes", (json_int_t)s->expected_bytes,
			       "observed_bytes", (json_int_t)s->observed_bytes, "efficiency",
			       s->observed_bytes ? json_real(s->efficiency) : json_null(), "before_bytes",
			       (json_int_t)s->before.used, "after_bytes", (json_int_t)s->after.used);
	json_object_set_new(sj, "model", json_string(s->model ? s->model : "block"));
	json_object_set_new(sj, "model_reason", json_string(s->model_reason));
	if (s->source == SPACE_STATFS) {
		json_object_set_new(sj, "allocated_bytes_before", json_integer((json_int_t)s->before.allocated));
		json_object_set_new(sj, "allocated_bytes_after", json_integer((json_int_t)s->after.allocated));
	}
	if (s->source == SPACE_ZRAM)
		json_object_set_new(sj, "mm_stat",
				    json_pack("{s:I, s:I, s:I, s:I}", "orig_data_size",
					      (json_int_t)s->after.zram.orig_data_size, "compr_data_size",
					      (json_int_t)s->after.zram.compr_data_size, "mem_used_total",
					      (json_int_t)s->after.zram.mem_used_total, "same_pages",
					      (json_int_t)s->after.zram.same_pages));
	return sj;
}

/* The 128 KiB record store's figures (physical.h); null where a figure is not known. */
static json_t *json_record(const struct record_estimate *rec)
{
	json_t *j = json_pack("{s:i, s:I, s:I, s:I, s:f, s:f, s:I}", "record_bytes", (int)PHYSICAL_RECORD, "records",
			      (json_int_t)rec->records, "zero_records", (json_int_t)rec->zero_records,
			      "distinct_records", (json_int_t)(rec->distinct + 0.5), "sample_rate", rec->sample_rate,
			      "dedup_ratio",
			      rec->distinct > 0 ? (double)(rec->records - rec->zero_records) / rec->distinct : 1.0,
			      "dedup_raw_bytes", (json_int_t)(rec->distinct * PHYSICAL_RECORD + 0.5));
	if (rec->have_zstd3) {
		json_object_set_new(j, "zstd3_ratio", json_real(rec->zstd3_ratio));
		json_object_set_new(j, "alloc_per_record", json_real(rec->alloc_per_record));
		json_object_set_new(j, "alloc_bytes", json_integer((json_int_t)(rec->alloc_bytes + 0.5)));
		json_object_set_new(j, "dedup_alloc_bytes", json_integer((json_int_t)(rec->dedup_alloc_bytes + 0.5)));
	} else {
		json_object_set_new(j, "zstd3_ratio", json_null());
		json_object_set_new(j, "alloc_bytes", json_null());
		json_object_set_new(j, "dedup_alloc_bytes", json_null());
		json_object_set_new(j, "zstd3_unknown", json_string(rec->why_no_zstd3));
	}
	return j;
}

static json_t *json_physical(const struct bench_config *c, const struct run_result *r)
{
	const struct physical_estimate *p = &r->physical;
	double bs = (double)c->o.block_size;
	json_t *j = json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "logical_bytes",
			      (json_int_t)(r->live_rows.total_blocks * c->o.block_size), "distinct_blocks",
			      (json_int_t)p->distinct, "sampled_blocks", (json_int_t)p->sampled, "zstd1_bytes", p->zstd_bytes,
			      "lz4_bytes", p->lz4_bytes, "zstd1_ratio_after_dedup", (double)p->distinct * bs / p->zstd_bytes,
			      "lz4_ratio_after_dedup", (double)p->distinct * bs / p->lz4_bytes);
	if (p->record.have)
		json_object_set_new(j, "record", json_record(&p->record));
	const struct cdc_estimate *cdc = &p->cdc;
	json_object_set_new(j, "cdc",
			    cdc->have ? json_pack("{s:i, s:f, s:f, s:I, s:o, s:o}", "avg_chunk_bytes", (int)cdc->avg,
						  "dedup_ratio", cdc->dedup_ratio, "shifted_share", cdc->shifted_share,
						  "dedup_bytes", (json_int_t)(cdc->dedup_bytes + 0.5), "lz4_ratio",
						  cdc->have_lz4 ? json_real(cdc->lz4_ratio) : json_null(), "lz4_bytes",
						  cdc->have_lz4 ? json_integer((json_int_t)(cdc->lz4_bytes + 0.5)) : json_null())
				      : json_pack("{s:s}", "unknown", cdc->why_not));
	return j;
}

json_t *results_json(const struct bench_config *c, const struct run_result *r)
{
	const struct bench_options *o = &c->o;
	json_t *doc = json_head(c, r);
	json_object_set_new(doc, "workers", json_workers(r));
	if (r->have_written)
		json_object_set_new(doc, "written", json_written(c, r));
	if (r->have_engine)
		json_object_set_new(doc, "engine", results_engine_json(r));
	json_object_set_new(doc, "content", json_content(c, r));
	if (r->have_physical && r->physical.distinct)
		json_object_set_new(doc, "physical", json_physical(c, r));
	if (r->have_live) {
		json_t *lv = dist_json(&r->live, &r->live_rows);
		json_object_set_new(lv, "zero_blocks", json_integer((json_int_t)r->live.zero_blocks));
		json_object_set_new(doc, "live", lv);
	}
	if (c->check_reads || c->final_pass)
		json_object_set_new(doc, "verify", json_verify(c, r));
	if (r->space.have)
		json_object_set_new(doc, "space", json_space(r));
	if (r->host.have)
		json_object_set_new(doc, "host",
				    json_pack("{s:f, s:f, s:f, s:I, s:I, s:I, s:i}", "cpu_busy_pct",
					      hostload_busy_pct(&r->host.cpu_start, &r->host.cpu_end), "cpu_busy_pct_max",
					      r->host.busy_pct_max, "cpu_iowait_pct",
					      hostload_iowait_pct(&r->host.cpu_start, &r->host.cpu_end), "mem_total_bytes",
					      (json_int_t)r->host.mem_start.total, "mem_used_bytes_start",
					      (json_int_t)r->host.mem_start.used, "mem_used_bytes_max",
					      (json_int_t)r->host.mem_used_max, "samples", (int)r->host.samples));
	json_object_set_new(doc, "access", json_pack("{s:s, s:f, s:I, s:I}", "pattern", access_names[o->access],
						     "hottest_10pct_share", r->hottest10, "blocks",
						     (json_int_t)r->region_blocks, "blocks_accessed",
						     (json_int_t)r->accessed_blocks));
	return doc;
}

/* DIR/NAME as a temp file renamed into place on close_in (safefile.h: no link followed, no
 * existing file written through). */
static FILE *open_in(const char *dir, const char *name, char *path, size_t len, struct safefile *sf)
{
	snprintf(path, len, "%s/%s", dir, name);
	if (safefile_open(sf, path))
		return NULL;
	FILE *f = safefile_stream(sf);
	if (!f)
		safefile_abort(sf);
	return f;
}

static int close_in(FILE *f, struct safefile *sf)
{
	if (fclose(f)) {
		int e = errno;
		safefile_abort(sf);
		errno = e;
		return -1;
	}
	return safefile_commit(sf, false);
}

/* The helpers below return 0, -1 when a file could not be written (errno says why) or -2 with
 * err filled. */

/* latency-percentiles.csv: latency percentiles on a "nines" ladder, per direction (its path in lat). */
static int write_latency_csv(const char *at, const struct run_result *r, char *lat, size_t len)
{
	struct safefile sf;
	FILE *f = open_in(at, "latency-percentiles.csv", lat, len, &sf);
	if (!f)
		return -1;
	static const double ladder[] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 99.9999};
	fputs("percentile,read_us,write_us\n", f);
	for (size_t i = 0; i < sizeof ladder / sizeof ladder[0]; i++)
		fprintf(f, "%g,%.3f,%.3f\n", ladder[i], (double)hist_percentile(&r->total[IO_READ].lat, ladder[i]) / 1e3,
			(double)hist_percentile(&r->total[IO_WRITE].lat, ladder[i]) / 1e3);
	return close_in(f, &sf) ? -1 : 0;
}

/* dist-buckets.csv (its path in dist): what the target holds at the end (live) against what it
 * should hold (the distribution as scaled to this run); the write stream (overwrites included)
 * and the dataset at its own size are separate columns. live_share is empty when no ledger was
 * kept. */
static int write_dist_buckets(const char *at, const struct bench_config *c, const struct run_result *r, char *dist,
			      size_t len, struct dd_err *err)
{
	struct dist_pow2 live, target, written, dataset;
	struct run_target tg;
	if (target_of(c, &tg)) {
		return err_fail(err, -2, "out of memory");
	}
	dist_pow2_histogram(&r->live, &live);
	dist_pow2_histogram(tg.d, &target);
	dist_pow2_histogram(&r->written, &written);
	dist_pow2_histogram(&c->dist, &dataset);
	target_free(&tg);
	if (!r->have_live)
		live.top = -1;
	if (!r->have_written)
		written.top = -1;
	struct safefile sf;
	FILE *f = open_in(at, "dist-buckets.csv", dist, len, &sf);
	if (!f)
		return -1;
	fputs("copies_low,copies_high,live_share,scaled_share,written_share,dataset_share\n", f);
	int top = live.top;
	if (target.top > top)
		top = target.top;
	if (written.top > top)
		top = written.top;
	if (dataset.top > top)
		top = dataset.top;
	for (int k = 0; k <= top; k++) {
		fprintf(f, "%llu,%llu,", 1ULL << k, (2ULL << k) - 1);
		if (r->have_live)
			fprintf(f, "%.9g", live.share[k]);
		fprintf(f, ",%.9g,", target.share[k]);
		if (r->have_written)
			fprintf(f, "%.9g", written.share[k]);
		fprintf(f, ",%.9g\n", dataset.share[k]);
	}
	return close_in(f, &sf) ? -1 : 0;
}

/* scaled-target.dist: what the target should hold, for `dedisgen compare` against the live
 * distribution (--dist-report): the right pair, unlike the dataset at its own size. */
static int write_scaled_target(const char *at, const struct bench_config *c, struct dd_err *err)
{
	char path[4200], l1[128], l2[700], l3[64], l4[64];
	struct run_target t;
	struct safefile sf;
	if (target_of(c, &t)) {
		return err_fail(err, -2, "out of memory");
	}
	FILE *f = open_in(at, "scaled-target.dist", path, sizeof path, &sf);
	snprintf(l1, sizeof l1, "dedisbench %s: %s scaled to this run (its target)", PACKAGE_VERSION, c->o.dist);
	scaling_caption(c, l2, sizeof l2);
	snprintf(l3, sizeof l3, "block-size: %llu", (unsigned long long)c->o.block_size);
	snprintf(l4, sizeof l4, "zero-blocks: %llu", (unsigned long long)t.d->zero_blocks);
	const char *const header[] = {l1, l2, l3, l4};
	int bad = !f;
	if (f && dist_write(f, t.d, header, 4)) {
		fclose(f);
		safefile_abort(&sf);
		bad = 1;
	} else if (f && close_in(f, &sf)) {
		bad = 1;
	}
	target_free(&t);
	return bad ? -1 : 0;
}

/* access-frequency.csv (its path in acc). */
static int write_access_csv(const char *at, const struct run_result *r, char *acc, size_t len)
{
	struct safefile sf;
	FILE *f = open_in(at, "access-frequency.csv", acc, len, &sf);
	if (!f)
		return -1;
	fputs("accesses,blocks\n", f);
	for (size_t i = 0; i < r->access.n; i++)
		fprintf(f, "%llu,%llu\n", (unsigned long long)r->access.count[i], (unsigned long long)r->access.blocks[i]);
	return close_in(f, &sf) ? -1 : 0;
}

/* The PNGs gnuplot draws from the CSVs (lat, dist, acc: their paths), beneath at; dir names them. */
static int render_plots(const struct bench_config *c, const char *dir, const char *at, const char *lat,
			const char *dist, const char *acc, struct dd_err *err)
{
	char ts[4200], png[4200], shown[4200], title[160];
	struct safefile sf;
	snprintf(ts, sizeof ts, "%s/timeseries.csv", at);
	snprintf(title, sizeof title, "dedisbench %s %s, %s, %s", c->nominal ? "nominal" : "peak", mode_names[c->o.mode],
		 access_names[c->o.access], c->o.dist);
	const struct {
		const char *script, *data, *png;
	} plots[] = {
		{"dedisbench-timeseries.gp", ts, "timeseries.png"},
		{"dedisbench-latency.gp", lat, "latency.png"},
		{"dedisbench-distribution.gp", dist, "distribution.png"},
		{"dedisbench-access.gp", acc, "access.png"},
	};
	char caption[600];
	scaling_caption(c, caption, sizeof caption);
	wrap(caption, 150);
	for (size_t i = 0; i < sizeof plots / sizeof plots[0]; i++) {
		/* gnuplot writes the temp file this run created (never a planted one), renamed after */
		snprintf(png, sizeof png, "%s/%s", at, plots[i].png);
		snprintf(shown, sizeof shown, "%s/%s", dir, plots[i].png);
		if (safefile_open(&sf, png) || !sf.tmp) {
			if (!sf.tmp && sf.path)
				safefile_abort(&sf);
			return err_fail(err, -1, "cannot write %s: %s", shown, sf.path ? "not a regular file" : strerror(errno));
		}
		close(sf.fd);
		sf.fd = -1;
		const char *args[] = {plots[i].data, sf.tmp, title, caption};
		/* the distribution's picture carries the caption saying what scaling did */
		if (plot_render(plots[i].script, args, i == 2 ? 4 : 3, sf.tmp, shown, err)) {
			safefile_abort(&sf);
			return -1;
		}
		if (safefile_commit(&sf, false)) {
			return err_fail_errno(err, -1, errno, "cannot write %s", shown);
		}
	}
	return 0;
}

int results_write_plots(const struct bench_config *c, const struct run_result *r, struct dd_err *err)
{
	/* written beneath the directory held since the start; named as given */
	const char *dir = c->o.output_dir, *at = config_output_at(c, OUT_DIR);
	char lat[4200], dist[4200], acc[4200];
	if (!dir)
		return 0;
	int rc = write_latency_csv(at, r, lat, sizeof lat);
	if (!rc)
		rc = write_dist_buckets(at, c, r, dist, sizeof dist, err);
	if (!rc && c->scaled && c->layout.n)
		rc = write_scaled_target(at, c, err);
	if (!rc)
		rc = write_access_csv(at, r, acc, sizeof acc);
	if (rc == -1)
		err_fail_errno(err, -1, errno, "cannot write plot data in %s", dir);
	if (rc)
		return -1;
	return c->o.plot ? render_plots(c, dir, at, lat, dist, acc, err) : 0;
}

int results_write_reports(const struct bench_config *c, const struct run_result *r, struct dd_err *err)
{
	struct safefile sf;
	if (c->o.dist_report && r->have_live) {
		FILE *f;
		if (safefile_open(&sf, config_output_at(c, OUT_DIST_REPORT)) || !(f = safefile_stream(&sf))) {
			int e = errno;
			safefile_abort(&sf);
			return err_fail(err, -1, "cannot write --dist-report %s: %s", c->o.dist_report, strerror(e));
		}
		char l1[64], l2[4200], l3[64], l4[64];
		snprintf(l1, sizeof l1, "dedisbench %s: the content the target holds after the run", PACKAGE_VERSION);
		snprintf(l2, sizeof l2, "source: %s (dist %s, content %s, seed %llu)", c->o.target, c->o.dist,
			 content_names[c->o.content], (unsigned long long)c->seed);
		snprintf(l3, sizeof l3, "block-size: %llu", (unsigned long long)c->o.block_size);
		snprintf(l4, sizeof l4, "zero-blocks: %llu", (unsigned long long)r->live.zero_blocks);
		const char *const header[] = {l1, l2, l3, l4};
		int rc = dist_write(f, &r->live, header, 4);
		if (rc) {
			int e = errno;
			fclose(f);
			safefile_abort(&sf);
			return err_fail(err, -1, "cannot write --dist-report %s: %s", c->o.dist_report, strerror(e));
		}
		if (close_in(f, &sf))
			return err_fail(err, -1, "cannot write --dist-report %s: %s", c->o.dist_report,
					  strerror(errno));
	}
	if (c->o.access_report) {
		FILE *f;
		if (safefile_open(&sf, config_output_at(c, OUT_ACCESS_REPORT)) || !(f = safefile_stream(&sf))) {
			int e = errno;
			safefile_abort(&sf);
			return err_fail(err, -1, "cannot write --access-report %s: %s", c->o.access_report,
					  strerror(e));
		}
		fprintf(f, "# dedisbench %s: accesses per block (%s access, %llu blocks, %llu accessed)\n", PACKAGE_VERSION,
			access_names[c->o.access], (unsigned long long)r->region_blocks,
			(unsigned long long)r->accessed_blocks);
		fprintf(f, "# hottest-10pct-share: %.6f\n# accesses blocks\n", r->hottest10);
		for (size_t i = 0; i < r->access.n; i++)
			fprintf(f, "%llu %llu\n", (unsigned long long)r->access.count[i], (unsigned long long)r->access.blocks[i]);
		if (close_in(f, &sf))
			return err_fail(err, -1, "cannot write --access-report %s: %s", c->o.access_report,
					  strerror(errno));
	}
	return 0;
}

void results_fail_late(struct run_result *r, const char *why)
{
	if (r->failed)
		return;
	r->failed = true;
	snprintf(r->failure, sizeof r->failure, "%s", why);
}

void results_free(struct run_result *r)
{
	free(r->w);
	dist_free(&r->written);
	dist_free(&r->live);
	afreq_free(&r->access);
	r->w = NULL;
}

int ts_init(struct timeseries *ts, uint64_t t0)
{
	memset(ts, 0, sizeof *ts);
	ts->prev = calloc(2, sizeof *ts->prev);
	if (!ts->prev)
		return -1;
	zero_dir(&ts->prev[0]);
	zero_dir(&ts->prev[1]);
	ts->t0 = t0;
	hostload_begin(&ts->host, "/proc");
	ts->cpu_prev = ts->host.cpu_start;
	return 0;
}

int ts_open(struct timeseries *ts, const char *dir, uint64_t t0)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/timeseries.csv", dir);
	if (ts_init(ts, t0))
		return -1;
	int fd = safefile_fresh(path); /* rows appear as they are sampled: under the final name */
	ts->f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!ts->f) {
		if (fd >= 0)
			close(fd);
		free(ts->prev);
		ts->prev = NULL;
		return -1;
	}
	fputs("time_s,read_ops,read_mib_s,read_lat_mean_us,read_lat_p99_us,"
	      "write_ops,write_mib_s,write_lat_mean_us,write_lat_p99_us,"
	      "host_cpu_busy_pct,host_cpu_iowait_pct,host_mem_used_mib\n", ts->f);
	return 0;
}

int ts_sample(struct timeseries *ts, const struct run_shared *sh, unsigned procs, uint64_t now, struct ts_interval *out)
{
	struct dir_stats *cur = calloc(2, sizeof *cur);
	if (!cur)
		return -1;
	for (int d = 0; d < 2; d++) {
		zero_dir(&cur[d]);
		for (unsigned i = 0; i < procs; i++)
			snapshot_dir(&cur[d], &sh->w[i].dir[d]);
	}
	double t = (double)(now - ts->t0) / 1e9;
	double span = t - ts->prev_t;
	if (span <= 0)
		span = 1e-9;
	if (ts->f)
		fprintf(ts->f, "%.3f", t);
	struct histogram both;
	hist_init(&both);
	uint64_t ops_all = 0, bytes_all = 0, ops_total = 0;
	for (int d = 0; d < 2; d++) {
		struct histogram h;
		hist_diff(&h, &cur[d].lat, &ts->prev[d].lat);
		hist_merge(&both, &h);
		uint64_t ops = cur[d].ops - ts->prev[d].ops;
		ops_all += ops;
		ops_total += cur[d].ops;
		bytes_all += cur[d].bytes - ts->prev[d].bytes;
		if (ts->f)
			fprintf(ts->f, ",%llu,%.3f,%.1f,%.1f", (unsigned long long)ops,
				mib_s(cur[d].bytes - ts->prev[d].bytes, span), hist_mean(&h) / 1e3,
				(double)hist_percentile(&h, 99) / 1e3);
	}
	struct host_cpu cpu;
	struct host_mem mem;
	hostload_sample(&ts->host, "/proc", &ts->cpu_prev, &cpu, &mem);
	if (ts->f)
		fprintf(ts->f, ",%.1f,%.1f,%.1f", hostload_busy_pct(&ts->cpu_prev, &cpu),
			hostload_iowait_pct(&ts->cpu_prev, &cpu), (double)mem.used / 1048576.0);
	ts->cpu_prev = cpu;
	if (ts->f) {
		fputc('\n', ts->f);
		/* each row visible as it is sampled (tail -f, tests polling for progress) */
		if ((fflush(ts->f) || ferror(ts->f)) && !ts->write_errno)
			ts->write_errno = errno ? errno : EIO;
	}
	if (out)
		*out = (struct ts_interval){t, ops_total, mib_s(bytes_all, span), per_s(ops_all, span),
					    (double)hist_percentile(&both, 99) / 1e3};
	memcpy(ts->prev, cur, 2 * sizeof *cur);
	free(cur);
	ts->prev_t = t;
	ts->rows++;
	return 0;
}

uint64_t ts_unsampled_ops(const struct timeseries *ts, const struct run_shared *sh, unsigned procs)
{
	uint64_t now = 0, before = 0;
	for (int d = 0; d < 2; d++) {
		for (unsigned i = 0; i < procs; i++)
			now += __atomic_load_n(&sh->w[i].dir[d].ops, __ATOMIC_RELAXED);
		before += ts->prev ? ts->prev[d].ops : 0;
	}
	return now > before ? now - before : 0;
}

int ts_close(struct timeseries *ts)
{
	int err = ts->write_errno;
	errno = 0;
	if (ts->f && fclose(ts->f) && !err)
		err = errno ? errno : EIO;
	free(ts->prev);
	memset(ts, 0, sizeof *ts);
	errno = err;
	return err ? -1 : 0;
}
