/* mpiexchange.c - dedisgen-mpi's exchange, per block size: counts, samples and first positions
 * sent to the fingerprint's owner (mpiroute.c's rounds), then reduced into rank 0's distribution. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen/compsample.h"
#include "gen/counts.h"
#include "gen/mpigen.h"
#include "gen/mpiroute.h"

static int owner_of(const struct gen *g, const uint8_t *fp)
{
	uint64_t h;
	/* the digest's last bytes: the memory index homes entries by bytes 1..8, which must stay
	 * uniform within one owner's share */
	memcpy(&h, fp + g->r.fl - 8, 8);
	return (int)(h % (uint64_t)g->size);
}

int mpigen_prepare_owned(struct gen *g)
{
	const struct gen_options *o = g->o;
	struct dd_err why = {0};
	if (o->mem_limit && run_make_spill_dir(g->own_dir, "dedisgen-owner")) {
		run_say(&g->r, "--mem-limit: cannot create a spill directory %s: %s", g->own_dir, strerror(errno));
		g->own_dir[0] = 0;
		return EXIT_BAD_INPUT;
	}
	for (int i = 0; i < g->r.n; i++) {
		struct owned *w = &g->own[i];
		struct index_meta meta = {0};
		if (g->own_dir[0]) {
			w->db = index_bdb_open(g->own_dir, g->r.s[i].block_size, g->r.hash, true, false, o->db_cache, &meta,
					       &why);
			index_meta_free(&meta);
			if (!w->db) {
				run_say(&g->r, "%s", why.msg);
				return EXIT_FAILED;
			}
		}
		if (!(w->counter = counter_new(g->r.fl, o->mem_limit, w->db))) {
			run_say(&g->r, "out of memory");
			return EXIT_FAILED;
		}
	}
	return 0;
}

/* One size's exchange: the state the visits and deliveries share. */
struct xchg {
	struct gen *g;
	struct size_out *s;
	struct owned *w;
	struct route rt;
	uint64_t delivered;        /* records the last phase delivered here */
	uint64_t *starts;          /* each rank's first stream position at this size */
	uint8_t rec[FP_MAX_LEN + 16];
};

static int deliver_count(const uint8_t *rec, void *arg, struct dd_err *err)
{
	struct xchg *x = arg;
	uint64_t count, first;
	memcpy(&count, rec + x->g->r.fl, 8);
	memcpy(&first, rec + x->g->r.fl + 8, 8);
	return counter_add(x->w->counter, rec, count, first, err);
}

/* Every local entry: to its owner; and, for the locality, its first position in this part. */
static int visit_local(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct xchg *x = arg;
	size_t fl = x->g->r.fl;
	if (x->s->loc)
		loc_resolve_visit(x->s->loc, fp, first);
	memcpy(x->rec, fp, fl);
	memcpy(x->rec + fl, &count, 8);
	memcpy(x->rec + fl + 8, &first, 8);
	return route_put(&x->rt, owner_of(x->g, fp), x->rec);
}

static int deliver_sample(const uint8_t *rec, void *arg, struct dd_err *err)
{
	struct xchg *x = arg;
	struct comp_sample v;
	size_t fl = x->g->r.fl;
	memcpy(&v.zstd, rec + fl, 4);
	memcpy(&v.lz4, rec + fl + 4, 4);
	memcpy(&v.hmin, rec + fl + 8, 8);
	if (comp_sampler_load(x->w->comp, rec, &v)) {
		err_fail(err, -1, "out of memory for the compressibility samples");
		return -1;
	}
	return 0;
}

static int visit_sample(const uint8_t *fp, const struct comp_sample *v, void *arg)
{
	struct xchg *x = arg;
	size_t fl = x->g->r.fl;
	memcpy(x->rec, fp, fl);
	memcpy(x->rec + fl, &v->zstd, 4);
	memcpy(x->rec + fl + 4, &v->lz4, 4);
	memcpy(x->rec + fl + 8, &v->hmin, 8);
	return route_put(&x->rt, owner_of(x->g, fp), x->rec);
}

/* A content's first position over the whole stream, to every rank's locality records (which
 * key contents by the first 8 bytes of their fingerprint). */
static int deliver_first(const uint8_t *rec, void *arg, struct dd_err *err)
{
	struct xchg *x = arg;
	uint64_t first;
	(void)err;
	memcpy(&first, rec + 8, 8);
	loc_resolve_visit(x->s->loc, rec, first);
	return 0;
}

static int visit_owned(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct xchg *x = arg;
	if (x->w->comp && comp_join_visit(x->w->comp, fp, count))
		return -1;
	/* a content stored once has its first position where it is: only copies can differ, and only
	 * on the ranks from the one that holds the first position on (the ranks before it cannot
	 * hold the content; it is sent there too, in case a file that changed size moved positions) */
	if (!x->s->loc || count < 2)
		return 0;
	int lo = 0, hi = x->g->size; /* the last rank whose part starts at or before first */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (x->starts[mid] <= first)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(x->rec, fp, 8);
	memcpy(x->rec + 8, &first, 8);
	for (int k = lo; k < x->g->size; k++)
		if (route_put(&x->rt, k, x->rec))
			return -1;
	return 0;
}

/* Runs one exchange phase: init, this rank's puts (walk), finish. 0, EXIT_FAILED (this rank
 * failed: kept for the verdict) or FAILED_ELSEWHERE. */
static int phase(struct xchg *x, size_t rec, route_deliver_fn deliver, int (*walk)(struct xchg *x, struct dd_err *err))
{
	struct dd_err why = {0};
	if (route_init(&x->rt, rec, deliver, x)) {
		/* every rank must take part in the rounds: one that cannot is out of memory */
		run_say(&x->g->r, "out of memory for the exchange buffers");
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	}
	if (walk && walk(x, &why) && !x->rt.failed && !x->rt.any_failed)
		route_fail(&x->rt, &why);
	int rc = route_finish(&x->rt) ? FAILED_ELSEWHERE : 0;
	if (rc && x->rt.failed) {
		run_say(&x->g->r, "%s", x->rt.err.msg);
		rc = EXIT_FAILED;
	}
	x->delivered = x->rt.delivered;
	route_free(&x->rt);
	return rc;
}

static int walk_local(struct xchg *x, struct dd_err *err)
{
	struct dist tmp;
	if (x->s->loc && loc_resolve_begin(x->s->loc, UINT64_MAX)) {
		err_fail(err, -1, "out of memory resolving the locality records");
		return -1;
	}
	if (!x->s->blocks_read)
		return 0;
	int rc = counter_settle(x->s->counter, err) ||
		 counter_distribution(x->s->counter, NULL, visit_local, x, &tmp, NULL, NULL, err);
	if (!rc)
		dist_free(&tmp);
	return rc ? -1 : 0;
}

static int walk_samples(struct xchg *x, struct dd_err *err)
{
	if (comp_sampler_each(x->s->comp, visit_sample, x)) {
		err_fail(err, -1, "out of memory sending the compressibility samples");
		return -1;
	}
	return 0;
}

static int walk_owned(struct xchg *x, struct dd_err *err)
{
	struct owned *w = x->w;
	w->zero_first = UINT64_MAX;
	if (counter_settle(w->counter, err))
		return -1;
	if (!w->received)
		return 0;
	return counter_distribution(w->counter, x->s->zero_fp, visit_owned, x, &w->part, &w->zero_blocks,
				    &w->zero_first, err) ? -1 : 0;
}

/* The resolved locality windows of every rank, one after another: (number, LOC_WINDOW firsts). */
struct winbuf {
	uint64_t *v;
	size_t n, cap; /* in uint64_t */
};

static int put_window(uint64_t number, const uint64_t *firsts, void *arg)
{
	struct winbuf *b = arg;
	if (b->n + 1 + LOC_WINDOW > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8 * (1 + LOC_WINDOW);
		uint64_t *v = realloc(b->v, cap * sizeof *v);
		if (!v)
			return -1;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = number;
	memcpy(b->v + b->n, firsts, LOC_WINDOW * sizeof *firsts);
	b->n += LOC_WINDOW;
	return 0;
}

/* Rank 0: the locality of the whole stream from every rank's resolved windows (a window cut by a
 * rank boundary is put together again): runs go on across ranks, as in one scan. At most about
 * LOC_BUDGET positions are kept (8 B each), whatever the number of ranks. 0 or an exit status. */
static int gather_locality(struct gen *g, struct size_out *s, uint64_t stream_end, uint64_t zero_first)
{
	struct winbuf b = {0};
	int status = 0, total;
	if (loc_each_window(s->loc, put_window, &b) || b.n > INT32_MAX)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED); /* a few MiB: the ranks cannot go on without it */
	uint64_t *all = mpigen_gather(g, b.v, (int)b.n, MPI_UINT64_T, sizeof *all, &total);
	if (g->rank == 0) {
		struct loc_recorder *whole = loc_recorder_new(g->r.fl);
		for (int at = 0; whole && at < total && !status; at += 1 + (int)LOC_WINDOW)
			if (loc_load_window(whole, all[at], all + at + 1))
				status = EXIT_FAILED;
		if (!whole || status || loc_compute(whole, stream_end, zero_first, (size_t)g->r.threads, &s->loc_own)) {
			run_say(&g->r, "out of memory computing the locality");
			status = EXIT_FAILED;
		}
		loc_recorder_free(whole);
	}
	free(b.v);
	free(all);
	return status;
}

/* Rank 0: the owners' rows added into one distribution. 0 or an exit status (said). */
static int gather_rows(struct gen *g, struct size_out *s, struct owned *w)
{
	int n = (int)(w->part.nrows * 2), total;
	uint64_t *mine = malloc((size_t)n * sizeof *mine + 8);
	int status = 0;
	if (!mine)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (size_t i = 0; i < w->part.nrows; i++) {
		mine[2 * i] = w->part.rows[i].dups;
		mine[2 * i + 1] = w->part.rows[i].blocks;
	}
	uint64_t *all = mpigen_gather(g, mine, n, MPI_UINT64_T, sizeof *all, &total);
	if (g->rank == 0) {
		struct count_hist h = {0};
		struct dd_err e;
		for (int i = 0; i < total && !status; i += 2)
			if (count_hist_add(&h, all[i] + 1, all[i + 1]))
				status = EXIT_FAILED;
		if (status) {
			run_say(&g->r, "out of memory adding the ranks' counts");
		} else if (!h.map.used) {
			run_say(&g->r, "no data: nothing to analyse");
			status = EXIT_BAD_INPUT;
		} else if (count_hist_to_dist(&h, &s->dist, &e)) {
			run_say(&g->r, "%s", e.msg);
			status = EXIT_FAILED;
		}
		count_hist_free(&h);
	}
	free(mine);
	free(all);
	return status;
}

/* Rank 0: the compressibility join's sums of every owner, added. Most of the COMP_JOIN_SUMS are
 * zero (a dataset fills a few hundred cells of 65536), so each rank sends (index, value) for its
 * non-zero ones only (MPI has no 128-bit integer: they go as bytes, added at rank 0). */
struct sparse_sum {
	uint64_t index;
	comp_sum value;
};

static void reduce_sums(struct gen *g, const comp_sum *mine, comp_sum *sums)
{
	size_t n = 0;
	for (size_t i = 0; i < COMP_JOIN_SUMS; i++)
		n += mine[i] != 0;
	struct sparse_sum *out = malloc((n + 1) * sizeof *out);
	int bytes = (int)(n * sizeof *out), total;
	if (!out || n > INT32_MAX / sizeof *out)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	n = 0;
	for (size_t i = 0; i < COMP_JOIN_SUMS; i++)
		if (mine[i])
			out[n++] = (struct sparse_sum){i, mine[i]};
	/* MPI has no 128-bit integer: the pairs travel as bytes (malloc's alignment holds them) */
	struct sparse_sum *all = mpigen_gather(g, out, bytes, MPI_BYTE, 1, &total);
	if (g->rank == 0) {
		memset(sums, 0, COMP_JOIN_SUMS * sizeof *sums);
		for (size_t k = 0; k < (size_t)total / sizeof *all; k++)
			sums[all[k].index] += all[k].value;
	}
	free(out);
	free(all);
}

/* The three rounds: counts to their owners, samples too, first positions back to every rank's
 * locality records. 0 or the status every rank agreed on. */
static int route_to_owners(struct xchg *x)
{
	struct gen *g = x->g;
	struct size_out *s = x->s;
	size_t fl = g->r.fl;
	int status;
	if ((status = phase(x, fl + 16, deliver_count, walk_local)))
		return verdict(&g->v, status);
	x->w->received = x->delivered;
	/* this part's counts are with their owners now */
	counter_free(s->counter);
	s->counter = NULL;
	if (s->comp) {
		if (!(x->w->comp = comp_sampler_new(fl, s->block_size, comp_sampler_rate(s->comp), s->zero_fp))) {
			run_say(&g->r, "out of memory");
			status = EXIT_FAILED;
		}
		if ((status = verdict(&g->v, status)))
			return status;
		if ((status = phase(x, fl + 16, deliver_sample, walk_samples)))
			return verdict(&g->v, status);
	}
	if ((status = phase(x, 16, s->loc ? deliver_first : NULL, walk_owned)))
		return verdict(&g->v, status);
	return 0;
}

/* One block size, after every rank's scan: counts to their owners, samples too, first positions
 * back to every rank's locality records, then the reduction at rank 0. 0 or an exit status that
 * every rank returns (the failure said). */
static int exchange_size(struct gen *g, int i, uint64_t *starts)
{
	struct xchg x = {.g = g, .s = &g->r.s[i], .w = &g->own[i], .starts = starts};
	struct size_out *s = x.s;
	struct owned *w = x.w;
	size_t fl = g->r.fl;
	int status = route_to_owners(&x);
	if (status)
		return status;

	/* the zero block's count and first position: its owner's */
	uint64_t zero[2] = {w->zero_blocks, 0}, zero_sum[2];
	uint64_t zero_first = UINT64_MAX;
	MPI_Allreduce(&w->zero_first, &zero_first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	MPI_Reduce(zero, zero_sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (s->loc && (loc_resolve_end(s->loc) ||
		       loc_compute(s->loc, g->stream_end[i], zero_first, (size_t)g->r.threads, &s->loc_own))) {
		run_say(&g->r, "out of memory computing the locality");
		status = EXIT_FAILED;
	}
	if ((status = verdict(&g->v, status)))
		return status;
	if (s->loc && (status = verdict(&g->v, gather_locality(g, s, g->stream_end[i], zero_first))))
		return status;
	comp_sum *sums = NULL;
	if (s->comp) {
		comp_sum *mine = malloc(COMP_JOIN_SUMS * sizeof *mine);
		if (g->rank == 0)
			sums = malloc(COMP_JOIN_SUMS * sizeof *sums);
		if (!mine || (g->rank == 0 && !sums))
			MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
		comp_join_export(w->comp, mine);
		reduce_sums(g, mine, sums);
		free(mine);
	}
	/* the index figures: the owners' bytes per distinct weighted by their entries, every
	 * counter's spills */
	double bpd[2] = {counter_bytes_per_distinct(w->counter) * (double)w->received, (double)w->received}, bpd_sum[2];
	uint64_t spills = counter_spills(w->counter) + s->spills, spills_all = 0;
	MPI_Reduce(bpd, bpd_sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&spills, &spills_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	status = gather_rows(g, s, w);
	if (g->rank == 0 && !status) {
		struct dd_err e;
		s->dist.block_size = s->block_size;
		snprintf(s->dist.hash, sizeof s->dist.hash, "%s", g->r.hash);
		s->zero_blocks = s->dist.zero_blocks = zero_sum[0];
		s->index_bytes_per_distinct = bpd_sum[1] > 0 ? bpd_sum[0] / bpd_sum[1] : 0;
		s->spills = spills_all;
		if (s->comp) {
			comp_sampler_free(s->comp); /* rank 0's own samples went to their owners */
			s->comp = comp_sampler_new(fl, s->block_size, w->comp ? comp_sampler_rate(w->comp) : 1, s->zero_fp);
			if (!s->comp || comp_join_add(s->comp, sums) || comp_join_finish(s->comp, &s->dist.comp)) {
				run_say(&g->r, "out of memory building the compressibility cells");
				status = EXIT_FAILED;
			}
		}
		if (s->locality)
			s->dist.locality = s->loc_own;
		if (!status && dist_sections_check(&s->dist, &e)) {
			run_say(&g->r, "internal error: the measured sections do not add up: %s", e.msg);
			status = EXIT_FAILED;
		}
	}
	free(sums);
	return verdict(&g->v, status);
}

int mpigen_exchange(struct gen *g, int i)
{
	uint64_t *starts = calloc((size_t)g->size, sizeof *starts);
	if (!starts)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED); /* a few bytes: the ranks cannot go on without it */
	MPI_Allgather(&g->pl.first_pos[i], 1, MPI_UINT64_T, starts, 1, MPI_UINT64_T, MPI_COMM_WORLD);
	int status = exchange_size(g, i, starts);
	free(starts);
	return status;
}
