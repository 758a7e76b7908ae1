/* mpi_main.c - dedisgen-mpi's entry point: each MPI rank scans its part (its own PATHs, or a stripe
 * of one file or device), fingerprints go to their owner rank, rank 0 writes the distribution. */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "compsample.h"
#include "counts.h"
#include "mpiroute.h"
#include "rankpath.h"
#include "run.h"
#include "units.h"
#include "walk.h"

#define PROG "dedisgen-mpi"
/* A status for a phase that failed on another rank (that rank says why). */
#define FAILED_ELSEWHERE (-1)

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* A rank's messages: warnings are said at once (naming the rank); while `keep`, the first failure
 * is kept for the phase's verdict, so that one rank says it, once. */
struct voice {
	int rank;
	bool keep;
	char first[1024];
};

static void voice_say(void *arg, const char *line)
{
	struct voice *v = arg;
	if (v->keep && strncmp(line, "warning", 7)) {
		if (!v->first[0])
			snprintf(v->first, sizeof v->first, "%s", line);
		return;
	}
	if (v->rank)
		fprintf(stderr, PROG ": rank %d: %s\n", v->rank, line);
	else
		fprintf(stderr, PROG ": %s\n", line);
}

/* The end of a phase on every rank: rank 0 says the failure of the lowest rank that had one
 * (status not 0; FAILED_ELSEWHERE: it failed because another did); every rank returns the
 * highest status (2 bad input over 1 failure). */
static int verdict(struct voice *v, int status)
{
	int own = status == FAILED_ELSEWHERE ? 0 : status;
	int mine = own ? v->rank : INT32_MAX, lowest, worst;
	MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&own, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (lowest != INT32_MAX) {
		char msg[sizeof v->first];
		snprintf(msg, sizeof msg, "%s", v->first[0] ? v->first : "failed");
		MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, lowest, MPI_COMM_WORLD);
		if (v->rank == 0) {
			if (lowest)
				fprintf(stderr, PROG ": rank %d: %s\n", lowest, msg);
			else
				fprintf(stderr, PROG ": %s\n", msg);
		}
	}
	v->first[0] = 0;
	return worst;
}

/* What this rank owns of one block size: the fingerprints whose owner it is, counted over every
 * rank's part, and the samples of those contents. */
struct owned {
	struct gindex *db;        /* --mem-limit: the owner's spill DB */
	struct counter *counter;
	struct comp_sampler *comp;
	uint64_t received;
	struct dist part;         /* the owned contents' rows */
	uint64_t zero_blocks, zero_first;
};

/* Where this rank's part sits: a stripe [start, start + len) of the one file or device every rank
 * was given, or its own PATHs; its blocks' first stream positions (the ranks before it come first). */
struct place {
	bool stripe;
	bool empty;               /* a stripe with no block (more ranks than blocks) */
	uint64_t start, len;
	uint64_t total;           /* bytes of the whole run, when known */
	bool complete;
	uint64_t first_pos[GEN_MAX_SIZES];
};

struct gen {
	struct gen_options *o;
	int rank, size;
	struct voice v;
	struct run r;
	struct place pl;
	struct owned own[GEN_MAX_SIZES];
	char own_dir[PATH_MAX];
	uint64_t stream_end[GEN_MAX_SIZES]; /* of the whole stream */
	struct scan_stats st;
	bool scanned;
};

static int owner_of(const struct gen *g, const uint8_t *fp)
{
	uint64_t h;
	/* the digest's last bytes: the memory index homes entries by bytes 1..8, which must stay
	 * uniform within one owner's share */
	memcpy(&h, fp + g->r.fl - 8, 8);
	return (int)(h % (uint64_t)g->size);
}

static uint64_t blocks_of(uint64_t bytes, uint64_t bs, bool skip_tails)
{
	return skip_tails ? bytes / bs : (bytes + bs - 1) / bs;
}

/* What each rank says of its PATHs, to decide between stripes and parts of their own. */
struct path_note {
	int32_t npaths, kind;     /* kind: 'f' regular file, 'b' block device, 'o' other */
	uint64_t size, name_hash, dev, ino;
	char host[64];
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static uint64_t entry_blocks(const struct gen_options *o, uint64_t bytes, uint64_t *per_size)
{
	for (int i = 0; i < o->nsizes; i++)
		per_size[i] += blocks_of(bytes, o->sizes[i], o->skip_tails);
	return bytes;
}

/* Places this rank's part; 0 or an exit status (said). */
static int place_rank(struct gen *g, struct walk **w)
{
	struct gen_options *o = g->o;
	struct place *pl = &g->pl;
	struct path_note mine = {.npaths = o->npaths, .kind = 'o'}, *all = calloc((size_t)g->size, sizeof *all);
	char why[1024];
	if (!all) {
		run_say(&g->r, "out of memory");
		return EXIT_FAILED;
	}
	struct stat st;
	gethostname(mine.host, sizeof mine.host - 1);
	if (o->npaths == 1 && !stat(o->paths[0], &st) && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
		struct walk *probe = walk_open(o->paths, 1, false, why, sizeof why);
		struct walk_entry e;
		mine.kind = S_ISREG(st.st_mode) ? 'f' : 'b';
		mine.size = probe && walk_next(probe, &e) == 1 && e.kind != WALK_ERROR ? e.size : 0;
		mine.name_hash = name_hash(o->paths[0]);
		walk_close(probe);
	}
	MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
	pl->stripe = mine.kind != 'o';
	for (int k = 0; k < g->size; k++)
		pl->stripe &= all[k].npaths == 1 && all[k].kind == mine.kind && all[k].size == mine.size &&
			      all[k].name_hash == mine.name_hash;
	free(all);

	if (!(*w = walk_open(o->paths, o->npaths, o->one_fs, why, sizeof why))) {
		run_say(&g->r, "%s", why);
		return EXIT_BAD_INPUT;
	}
	uint64_t mine_blocks[GEN_MAX_SIZES] = {0}, before[GEN_MAX_SIZES] = {0};
	if (pl->stripe) {
		/* Stripes of whole blocks of the largest size: every size's blocks stay whole. */
		uint64_t unit = o->sizes[o->nsizes - 1], units = (mine.size + unit - 1) / unit;
		uint64_t u0 = units * (uint64_t)g->rank / (uint64_t)g->size;
		uint64_t u1 = units * (uint64_t)(g->rank + 1) / (uint64_t)g->size;
		pl->start = u0 * unit;
		uint64_t end = u1 * unit < mine.size ? u1 * unit : mine.size;
		pl->len = end > pl->start ? end - pl->start : 0;
		pl->empty = pl->len == 0;
		pl->total = mine.size;
		pl->complete = true;
		for (int i = 0; i < o->nsizes; i++)
			pl->first_pos[i] = pl->start / o->sizes[i];
		if (!pl->empty && walk_set_range(*w, pl->start, pl->len)) {
			run_say(&g->r, "internal error: a stripe of %s", o->paths[0]);
			return EXIT_FAILED;
		}
		return 0;
	}
	/* Parts of their own: the blocks of each rank's entries, known before reading them (a file
	 * that changes size meanwhile leaves a gap or an overlap in the positions), the ranks before
	 * this one first. */
	struct walk *count = walk_open(o->paths, o->npaths, o->one_fs, why, sizeof why);
	struct walk_entry e;
	int got = 0;
	while (count && (got = walk_next(count, &e)) == 1)
		if (e.kind != WALK_ERROR)
			entry_blocks(o, e.size, mine_blocks);
	bool known;
	pl->total = walk_known_total(*w, &known);
	walk_close(count);
	if (!count || got < 0) {
		run_say(&g->r, "walking the paths failed: %s", count ? strerror(errno ? errno : ENOMEM) : why);
		return EXIT_FAILED;
	}
	int complete = known, all_complete;
	MPI_Exscan(mine_blocks, before, o->nsizes, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&complete, &all_complete, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	uint64_t total = pl->total;
	MPI_Allreduce(&total, &pl->total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	pl->complete = all_complete;
	for (int i = 0; i < o->nsizes; i++)
		pl->first_pos[i] = g->rank ? before[i] : 0; /* MPI_Exscan leaves rank 0's undefined */
	return 0;
}

/* Two ranks reading the same tree or file (not as stripes) would count it twice: refused. */
static int check_disjoint(struct gen *g)
{
	struct gen_options *o = g->o;
	struct key {
		uint64_t dev, ino, host;
	};
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	int n = o->npaths, *counts = calloc((size_t)g->size, sizeof *counts), *displs = calloc((size_t)g->size, sizeof *displs);
	struct key *mine = calloc((size_t)n, sizeof *mine);
	if (!counts || !displs || !mine) {
		free(counts);
		free(displs);
		free(mine);
		run_say(&g->r, "out of memory");
		return EXIT_FAILED;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (!stat(o->paths[i], &st))
			mine[i] = (struct key){(uint64_t)st.st_dev, (uint64_t)st.st_ino, name_hash(host)};
	}
	int bytes = n * (int)sizeof *mine, total = 0;
	MPI_Allgather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
	for (int k = 0; k < g->size; k++) {
		displs[k] = total;
		total += counts[k];
	}
	struct key *all = malloc((size_t)total + 1);
	int status = 0;
	if (all)
		MPI_Allgatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
	else
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (int i = 0; i < n && !status; i++) {
		for (int k = 0; k < g->size && !status; k++) {
			if (k == g->rank)
				continue;
			for (int j = 0; j < counts[k] / (int)sizeof *mine; j++) {
				const struct key *x = &all[displs[k] / (int)sizeof *mine + j];
				if (x->dev == mine[i].dev && x->ino == mine[i].ino && x->host == mine[i].host) {
					run_say(&g->r, "%s: rank %d reads it too: give each rank its own PATHs (%%r: the rank) "
						"or every rank the same one file or device (read in stripes)", o->paths[i], k);
					status = EXIT_BAD_INPUT;
					break;
				}
			}
		}
	}
	free(all);
	free(counts);
	free(displs);
	free(mine);
	return status;
}

static int prepare_owned(struct gen *g)
{
	const struct gen_options *o = g->o;
	char why[1024];
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
					       why, sizeof why);
			index_meta_free(&meta);
			if (!w->db) {
				run_say(&g->r, "%s", why);
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
	uint8_t rec[FP_MAX_LEN + 16];
};

static int deliver_count(const uint8_t *rec, void *arg, char *why, size_t whylen)
{
	struct xchg *x = arg;
	uint64_t count, first;
	memcpy(&count, rec + x->g->r.fl, 8);
	memcpy(&first, rec + x->g->r.fl + 8, 8);
	return counter_add(x->w->counter, rec, count, first, why, whylen);
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

static int deliver_sample(const uint8_t *rec, void *arg, char *why, size_t whylen)
{
	struct xchg *x = arg;
	struct comp_sample v;
	size_t fl = x->g->r.fl;
	memcpy(&v.zstd, rec + fl, 4);
	memcpy(&v.lz4, rec + fl + 4, 4);
	memcpy(&v.hmin, rec + fl + 8, 8);
	if (comp_sampler_load(x->w->comp, rec, &v)) {
		snprintf(why, whylen, "out of memory for the compressibility samples");
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
static int deliver_first(const uint8_t *rec, void *arg, char *why, size_t whylen)
{
	struct xchg *x = arg;
	uint64_t first;
	(void)why;
	(void)whylen;
	memcpy(&first, rec + 8, 8);
	loc_resolve_visit(x->s->loc, rec, first);
	return 0;
}

static int visit_owned(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct xchg *x = arg;
	if (x->w->comp && comp_join_visit(x->w->comp, fp, count))
		return -1;
	/* a content stored once has its first position where it is: only copies can differ */
	if (!x->s->loc || count < 2)
		return 0;
	memcpy(x->rec, fp, 8);
	memcpy(x->rec + 8, &first, 8);
	for (int k = 0; k < x->g->size; k++)
		if (route_put(&x->rt, k, x->rec))
			return -1;
	return 0;
}

/* Runs one exchange phase: init, this rank's puts (walk), finish. 0, EXIT_FAILED (this rank
 * failed: kept for the verdict) or FAILED_ELSEWHERE. */
static int phase(struct xchg *x, size_t rec, route_deliver_fn deliver, int (*walk)(struct xchg *x, char *why, size_t whylen))
{
	char why[1024] = "";
	if (route_init(&x->rt, rec, deliver, x)) {
		/* every rank must take part in the rounds: one that cannot is out of memory */
		run_say(&x->g->r, "out of memory for the exchange buffers");
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	}
	if (walk && walk(x, why, sizeof why) && !x->rt.failed && !x->rt.any_failed)
		route_fail(&x->rt, why);
	int rc = route_finish(&x->rt) ? FAILED_ELSEWHERE : 0;
	if (rc && x->rt.failed) {
		run_say(&x->g->r, "%s", x->rt.why);
		rc = EXIT_FAILED;
	}
	x->delivered = x->rt.delivered;
	route_free(&x->rt);
	return rc;
}

static int walk_local(struct xchg *x, char *why, size_t whylen)
{
	struct dist tmp;
	if (x->s->loc && loc_resolve_begin(x->s->loc)) {
		snprintf(why, whylen, "out of memory resolving the locality records");
		return -1;
	}
	if (!x->s->blocks_read)
		return 0;
	int rc = counter_settle(x->s->counter, why, whylen) ||
		 counter_distribution(x->s->counter, NULL, visit_local, x, &tmp, NULL, NULL, why, whylen);
	if (!rc)
		dist_free(&tmp);
	return rc ? -1 : 0;
}

static int walk_samples(struct xchg *x, char *why, size_t whylen)
{
	if (comp_sampler_each(x->s->comp, visit_sample, x)) {
		snprintf(why, whylen, "out of memory sending the compressibility samples");
		return -1;
	}
	return 0;
}

static int walk_owned(struct xchg *x, char *why, size_t whylen)
{
	struct owned *w = x->w;
	w->zero_first = UINT64_MAX;
	if (counter_settle(w->counter, why, whylen))
		return -1;
	if (!w->received)
		return 0;
	return counter_distribution(w->counter, x->s->zero_fp, visit_owned, x, &w->part, &w->zero_blocks,
				    &w->zero_first, why, whylen) ? -1 : 0;
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
	int status = 0, *counts = NULL, *displs = NULL, total = 0;
	if (loc_each_window(s->loc, put_window, &b) || b.n > INT32_MAX)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED); /* a few MiB: the ranks cannot go on without it */
	int n = (int)b.n;
	uint64_t *all = NULL;
	if (g->rank == 0 && (!(counts = calloc((size_t)g->size, sizeof *counts)) ||
			     !(displs = calloc((size_t)g->size, sizeof *displs))))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int k = 0; g->rank == 0 && k < g->size; k++) {
		displs[k] = total;
		if (total > INT32_MAX - counts[k])
			MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
		total += counts[k];
	}
	if (g->rank == 0 && !(all = malloc((size_t)total * sizeof *all + 8)))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gatherv(b.v, n, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (g->rank == 0) {
		struct loc_recorder *whole = loc_recorder_new(g->r.fl);
		for (int at = 0; whole && at < total && !status; at += 1 + (int)LOC_WINDOW)
			if (loc_load_window(whole, all[at], all + at + 1))
				status = EXIT_FAILED;
		if (!whole || status || loc_compute(whole, stream_end, zero_first, &s->loc_own)) {
			run_say(&g->r, "out of memory computing the locality");
			status = EXIT_FAILED;
		}
		loc_recorder_free(whole);
	}
	free(b.v);
	free(all);
	free(counts);
	free(displs);
	return status;
}

/* Rank 0: the owners' rows added into one distribution. 0 or an exit status (said). */
static int gather_rows(struct gen *g, struct size_out *s, struct owned *w)
{
	int n = (int)(w->part.nrows * 2), *counts = NULL, *displs = NULL, total = 0;
	uint64_t *mine = malloc((size_t)n * sizeof *mine + 8), *all = NULL;
	int status = 0;
	if (!mine)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (size_t i = 0; i < w->part.nrows; i++) {
		mine[2 * i] = w->part.rows[i].dups;
		mine[2 * i + 1] = w->part.rows[i].blocks;
	}
	if (g->rank == 0 && (!(counts = calloc((size_t)g->size, sizeof *counts)) ||
			     !(displs = calloc((size_t)g->size, sizeof *displs))))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int k = 0; g->rank == 0 && k < g->size; k++) {
		displs[k] = total;
		total += counts[k];
	}
	if (g->rank == 0 && !(all = malloc((size_t)total * sizeof *all + 8)))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gatherv(mine, n, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (g->rank == 0) {
		struct count_hist h = {0};
		struct dist_error e;
		for (int i = 0; i < total && !status; i += 2)
			if (count_hist_add(&h, all[i] + 1, all[i + 1]))
				status = EXIT_FAILED;
		if (status) {
			run_say(&g->r, "out of memory adding the ranks' counts");
		} else if (!h.n) {
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
	free(counts);
	free(displs);
	return status;
}

/* MPI has no 128-bit integers: a 16-byte type and an operation that adds them. */
static void add_sums(void *in, void *inout, int *len, MPI_Datatype *type)
{
	const comp_sum *a = in;
	comp_sum *b = inout;
	(void)type;
	for (int i = 0; i < *len; i++)
		b[i] += a[i];
}

/* Rank 0: the compressibility join's sums of every owner, added. */
static void reduce_sums(const comp_sum *mine, comp_sum *sums)
{
	MPI_Datatype type;
	MPI_Op add;
	MPI_Type_contiguous((int)sizeof(comp_sum), MPI_BYTE, &type);
	MPI_Type_commit(&type);
	MPI_Op_create(add_sums, 1, &add);
	MPI_Reduce(mine, sums, (int)COMP_JOIN_SUMS, type, add, 0, MPI_COMM_WORLD);
	MPI_Op_free(&add);
	MPI_Type_free(&type);
}

/* One block size, after every rank's scan: counts to their owners, samples too, first positions
 * back to every rank's locality records, then the reduction at rank 0. 0 or an exit status that
 * every rank returns (the failure said). */
static int exchange_size(struct gen *g, int i)
{
	struct xchg x = {.g = g, .s = &g->r.s[i], .w = &g->own[i]};
	struct size_out *s = x.s;
	struct owned *w = x.w;
	size_t fl = g->r.fl;
	int status = 0;

	if ((status = phase(&x, fl + 16, deliver_count, walk_local)))
		return verdict(&g->v, status);
	w->received = x.delivered;
	/* this part's counts are with their owners now */
	counter_free(s->counter);
	s->counter = NULL;
	if (s->comp) {
		if (!(w->comp = comp_sampler_new(fl, s->block_size, comp_sampler_rate(s->comp), s->zero_fp))) {
			run_say(&g->r, "out of memory");
			status = EXIT_FAILED;
		}
		if ((status = verdict(&g->v, status)))
			return status;
		if ((status = phase(&x, fl + 16, deliver_sample, walk_samples)))
			return verdict(&g->v, status);
	}
	if ((status = phase(&x, 16, s->loc ? deliver_first : NULL, walk_owned)))
		return verdict(&g->v, status);

	/* the zero block's count and first position: its owner's */
	uint64_t zero[2] = {w->zero_blocks, 0}, zero_sum[2];
	uint64_t zero_first = UINT64_MAX;
	MPI_Allreduce(&w->zero_first, &zero_first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	MPI_Reduce(zero, zero_sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (s->loc && (loc_resolve_end(s->loc) || loc_compute(s->loc, g->stream_end[i], zero_first, &s->loc_own))) {
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
		reduce_sums(mine, sums);
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
		struct dist_error e;
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

/* Rank 0: every rank's sources, in rank order (a striped file once). */
static int gather_sources(struct gen *g)
{
	size_t len = 0;
	for (int k = 0; k < g->r.nsources; k++)
		len += strlen(g->r.sources[k]) + 1;
	char *mine = malloc(len + 1), *all = NULL, *p = mine;
	int n = (int)len, *counts = NULL, *displs = NULL, total = 0;
	if (!mine)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (int k = 0; k < g->r.nsources; k++)
		p += sprintf(p, "%s", g->r.sources[k]) + 1;
	if (g->pl.stripe && g->rank)
		n = 0;
	if (g->rank == 0 && (!(counts = calloc((size_t)g->size, sizeof *counts)) ||
			     !(displs = calloc((size_t)g->size, sizeof *displs))))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int k = 0; g->rank == 0 && k < g->size; k++) {
		displs[k] = total;
		total += counts[k];
	}
	if (g->rank == 0 && !(all = malloc((size_t)total + 1)))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gatherv(mine, n, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
	int status = 0;
	if (g->rank == 0) {
		for (int k = 0; k < g->r.nsources; k++)
			free(g->r.sources[k]);
		g->r.nsources = 0;
		for (int at = 0; at < total && !status; at += (int)strlen(all + at) + 1)
			if (run_add_source(&g->r, all + at))
				status = EXIT_FAILED;
	}
	free(mine);
	free(all);
	free(counts);
	free(displs);
	return status;
}

/* What rank 0 reports of each rank. */
struct rank_row {
	char host[64];
	uint64_t bytes, files, errors, blocks, first_pos; /* blocks, first_pos: the smallest size's */
	double seconds;                                   /* its scan */
};

/* Rank 0: one row per rank in the JSON ("mpi") and, unless quiet, after the summary. */
static void report_ranks(struct gen *g, double scan_seconds)
{
	struct rank_row mine = {.bytes = g->st.bytes, .files = g->st.files, .errors = g->st.errors,
				.blocks = g->r.s[0].blocks_read, .first_pos = g->pl.first_pos[0], .seconds = scan_seconds};
	struct rank_row *all = g->rank == 0 ? calloc((size_t)g->size, sizeof *all) : NULL;
	gethostname(mine.host, sizeof mine.host - 1);
	if (g->rank == 0 && !all)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (g->rank)
		return;
	json_t *rows = json_array();
	for (int k = 0; k < g->size; k++) {
		const struct rank_row *x = &all[k];
		json_array_append_new(rows, json_pack("{s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:f}", "rank", k, "host", x->host,
						      "bytes", (json_int_t)x->bytes, "files", (json_int_t)x->files,
						      "errors", (json_int_t)x->errors, "blocks", (json_int_t)x->blocks,
						      "first_position", (json_int_t)x->first_pos, "seconds", x->seconds));
	}
	g->r.json_mpi = json_pack("{s:i,s:s,s:o}", "ranks", g->size, "parts", g->pl.stripe ? "stripes" : "paths",
				  "per_rank", rows);
	/* the summary's stream: standard error when the distribution goes to standard output */
	FILE *f = !g->o->output && g->r.n == 1 ? stderr : stdout;
	if (!g->o->quiet) {
		fprintf(f, "ranks: %d (%s)\n", g->size, g->pl.stripe ? "stripes of one file or device" : "PATHs of their own");
		for (int k = 0; k < g->size; k++) {
			const struct rank_row *x = &all[k];
			char sz[32];
			units_format_size(x->bytes, sz, sizeof sz);
			fprintf(f, "  rank %-4d %-20s %10s %12" PRIu64 " blocks from %-12" PRIu64 " scan %.2f s (%.1f MiB/s)\n", k,
				x->host, sz, x->blocks, x->first_pos, x->seconds,
				x->seconds > 0 ? (double)x->bytes / x->seconds / 1048576 : 0.0);
		}
	}
	free(all);
}

/* Hashing threads per rank by default: this host's cores shared by its ranks. */
static int default_threads(void)
{
	MPI_Comm local;
	int here = 1;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
		MPI_Comm_size(local, &here);
		MPI_Comm_free(&local);
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int t = cores > 0 ? (int)(cores / here) : 1;
	return t > 0 ? t : 1;
}

static int run_rank(struct gen *g)
{
	struct gen_options *o = g->o;
	struct run *r = &g->r;
	struct walk *w = NULL;
	char why[1024];
	int status = 0;

	for (int i = 0; i < o->npaths && !status; i++)
		if (rank_path_substitute(&o->paths[i], g->rank, why, sizeof why)) {
			run_say(r, "%s", why);
			status = EXIT_BAD_INPUT;
		}
	if (!status && run_check_kind(r))
		status = EXIT_BAD_INPUT;
	if ((status = verdict(&g->v, status)))
		return status;
	status = place_rank(g, &w);
	if ((status = verdict(&g->v, status)))
		goto out;
	if (!g->pl.stripe)
		status = check_disjoint(g);
	if ((status = verdict(&g->v, status)))
		goto out;
	/* Only rank 0 writes: the others have no outputs to check or create. */
	if (g->rank) {
		free(o->output);
		free(o->json);
		free(o->plot);
		o->output = o->json = o->plot = NULL;
	}
	for (int i = 0; i < o->npaths && !status; i++)
		if (run_add_source(r, o->paths[i])) {
			run_say(r, "out of memory");
			status = EXIT_FAILED;
		}
	if (!status)
		status = run_prepare(r, o->sizes, o->nsizes);
	if (!status)
		status = prepare_owned(g);
	int threads = o->threads ? (int)o->threads : default_threads();
	if (!status && run_setup_measuring(r, g->pl.total, g->pl.complete, threads)) {
		run_say(r, "out of memory");
		status = EXIT_FAILED;
	}
	for (int i = 0; i < r->n && !status; i++)
		r->s[i].first_pos = g->pl.first_pos[i];
	if ((status = verdict(&g->v, status)))
		goto out;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	double t0 = MPI_Wtime();
	g->scanned = true;
	if (g->pl.empty) {
		memset(&g->st, 0, sizeof g->st);
	} else if (run_scan(r, w, threads, &stop_flag, &g->st)) {
		run_say(r, "scan failed: %s; nothing written", g->st.failure);
		status = EXIT_FAILED;
	}
	if ((status = verdict(&g->v, status)))
		goto out;
	for (int i = 0; i < r->n; i++) {
		uint64_t end = r->s[i].stream_end;
		MPI_Allreduce(&end, &g->stream_end[i], 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		r->s[i].stream_end = g->stream_end[i];
		r->s[i].spills = counter_spills(r->s[i].counter);
	}
	for (int i = 0; i < r->n && !status; i++)
		status = exchange_size(g, i);
	if (status)
		goto out;
	/* a striped file or device is one file, read by every rank */
	uint64_t files = g->pl.stripe ? g->rank == 0 : g->st.files;
	uint64_t mine[3] = {g->st.bytes, files, g->st.errors}, sum[3] = {0};
	MPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if ((status = verdict(&g->v, gather_sources(g))))
		goto out;
	report_ranks(g, g->st.seconds);
	if (g->rank == 0) {
		g->v.keep = false; /* rank 0 says what goes wrong while writing itself */
		status = run_write(r, MPI_Wtime() - t0, sum[0], sum[1], sum[2]);
	}
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
	walk_close(w);
	return status;
}

static void gen_free(struct gen *g)
{
	if (g->scanned)
		scan_stats_free(&g->st);
	for (int i = 0; i < GEN_MAX_SIZES; i++) {
		struct owned *w = &g->own[i];
		counter_free(w->counter);
		comp_sampler_free(w->comp);
		if (w->db)
			w->db->ops->close(w->db);
		dist_free(&w->part);
	}
	if (g->own_dir[0])
		run_remove_spill_dir(g->own_dir);
	run_free(&g->r);
}

int main(int argc, char **argv)
{
	struct gen_options o;
	struct gen_opt_error err;
	/* What needs no other rank is answered before MPI starts (the build generates the man page). */
	int parsed = gen_options_parse_mpi(argc, argv, &o, &err);
	if (getenv("DEDIS_PRINT_MAN_OPTIONS")) {
		gen_options_print_man_mpi(stdout);
		gen_options_free(&o);
		return 0;
	}
	if (!parsed && (o.want_help || o.want_version)) {
		if (o.want_help)
			gen_options_print_help_mpi(stdout);
		else
			printf(PROG " %s\n", PACKAGE_VERSION);
		gen_options_free(&o);
		return 0;
	}
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	struct gen g = {.o = &o};
	MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g.size);
	int status;
	if (parsed) {
		if (g.rank == 0) /* every rank parsed the same command line */
			fprintf(stderr, PROG ": %s\n", err.msg);
		status = EXIT_BAD_INPUT;
	} else {
		g.v = (struct voice){.rank = g.rank, .keep = true};
		g.r = (struct run){.o = &o, .prog = PROG, .hash = gen_hash_names[o.hash], .say = voice_say, .say_arg = &g.v};
		status = run_rank(&g);
		gen_free(&g);
	}
	gen_options_free(&o);
	if (fflush(stdout) && !status) {
		fprintf(stderr, PROG ": standard output: %s\n", strerror(errno));
		status = EXIT_FAILED;
	}
	MPI_Finalize();
	return status;
}
