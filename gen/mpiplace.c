/* mpiplace.c - dedisgen-mpi's ranks agreeing where each rank's part sits (a stripe of one file or
 * device, or PATHs of its own) and what rank 0 reports of them. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/devnum.h"
#include "gen/mpigen.h"
#include "lib/reserve.h"
#include "gen/inodeset.h"
#include "lib/strhash.h"
#include "lib/units.h"

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


static uint64_t entry_blocks(const struct gen_options *o, uint64_t bytes, uint64_t *per_size)
{
	for (int i = 0; i < o->nsizes; i++)
		per_size[i] += blocks_of(bytes, o->sizes[i], o->skip_tails);
	return bytes;
}

/* The files of this rank's part that have other hard links, as the counting walk met them: one
 * of them may be linked into another rank's part too. */
struct linked {
	struct linked_file {
		uint64_t host, dev, ino, size;
	} *v;
	size_t n, cap;
};

static int linked_add(struct linked *l, uint64_t dev, uint64_t ino, uint64_t size)
{
	if (array_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, 64))
		return -1;
	l->v[l->n++] = (struct linked_file){0, dev, ino, size};
	return 0;
}

/* One scan reads a file hard-linked into several PATHs once, where the walk meets it first: in
 * the part of the lowest rank that holds it (parts follow each other in rank order). So a rank
 * leaves out, and does not count in its positions, every linked file of its own that a rank
 * before it on its host holds too (counted by both, its blocks came out as duplicates). Every
 * rank takes part (an allgather). 0, or an exit status (said). */
static int skip_earlier_ranks_links(struct gen *g, const struct linked *l, struct walk *w, uint64_t *mine_blocks)
{
	const struct gen_options *o = g->o;
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	uint64_t h = str_hash64(host);
	for (size_t i = 0; i < l->n; i++)
		l->v[i].host = h;
	long long bytes = (long long)(l->n * sizeof *l->v);
	int *counts = calloc((size_t)g->size, sizeof *counts), *displs = calloc((size_t)g->size, sizeof *displs);
	int mine = bytes > INT_MAX ? -1 : (int)bytes, bad = 0;
	if (!counts || !displs)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
	long long total = 0;
	for (int k = 0; k < g->size; k++) {
		bad |= counts[k] < 0;
		displs[k] = total > INT_MAX ? 0 : (int)total;
		total += counts[k] < 0 ? 0 : counts[k];
	}
	if (bad || total > INT_MAX) { /* every rank sees it: they stop together */
		free(counts);
		free(displs);
		run_say(&g->r, "too many hard-linked files to compare between the ranks (%lld B)", total);
		return EXIT_FAILED;
	}
	struct linked_file *all = malloc((size_t)total + 1);
	if (!all)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Allgatherv(l->v, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
	/* the earlier ranks' files of this host in a set, then each of this rank's looked up */
	struct inode_set earlier = {0};
	for (size_t i = 0; i < (size_t)displs[g->rank] / sizeof *all; i++)
		if (all[i].host == h && inode_set_insert(&earlier, all[i].dev, all[i].ino) < 0)
			MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (size_t i = 0; i < l->n; i++) {
		if (!inode_set_has(&earlier, l->v[i].dev, l->v[i].ino))
			continue;
		for (int s = 0; s < o->nsizes; s++)
			mine_blocks[s] -= blocks_of(l->v[i].size, o->sizes[s], o->skip_tails);
		if (walk_skip_inode(w, l->v[i].dev, l->v[i].ino))
			MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	}
	inode_set_free(&earlier);
	free(all);
	free(counts);
	free(displs);
	return 0;
}

/* The same one file or device everywhere, of `size` bytes: this rank's stripe of it. */
static int place_stripe(struct gen *g, struct walk *w, uint64_t size)
{
	struct gen_options *o = g->o;
	struct place *pl = &g->pl;
	/* Stripes of whole blocks of the largest size: every size's blocks stay whole. */
	uint64_t unit = o->sizes[o->nsizes - 1], units = (size + unit - 1) / unit;
	uint64_t u0 = units * (uint64_t)g->rank / (uint64_t)g->size;
	uint64_t u1 = units * (uint64_t)(g->rank + 1) / (uint64_t)g->size;
	pl->start = u0 * unit;
	uint64_t end = u1 * unit < size ? u1 * unit : size;
	pl->len = end > pl->start ? end - pl->start : 0;
	pl->empty = pl->len == 0;
	pl->total = size;
	pl->complete = true;
	for (int i = 0; i < o->nsizes; i++)
		pl->first_pos[i] = pl->start / o->sizes[i];
	if (!pl->empty && walk_set_range(w, pl->start, pl->len)) {
		run_say(&g->r, "internal error: a stripe of %s", o->paths[0]);
		return EXIT_FAILED;
	}
	return 0;
}

/* This rank's own PATHs: its first positions follow the blocks of the ranks before it. */
static int place_own(struct gen *g, struct walk *w)
{
	struct gen_options *o = g->o;
	struct place *pl = &g->pl;
	uint64_t mine_blocks[GEN_MAX_SIZES] = {0}, before[GEN_MAX_SIZES] = {0};
	struct dd_err why = {0};
	/* The blocks of each rank's entries, known before reading them (a file that changes size
	 * meanwhile leaves a gap or an overlap in the positions). */
	struct walk *count = walk_open(o->paths, o->npaths, o->one_fs, &why);
	struct walk_entry e;
	struct linked links = {0};
	int got = 0;
	while (count && (got = walk_next(count, &e)) == 1)
		if (e.kind != WALK_ERROR) {
			entry_blocks(o, e.size, mine_blocks);
			if (e.ino && linked_add(&links, e.dev, e.ino, e.size))
				got = -1;
		}
	bool known;
	pl->total = walk_known_total(w, &known);
	walk_close(count);
	if (!count || got < 0) {
		free(links.v);
		run_say(&g->r, "walking the paths failed: %s", count ? strerror(errno ? errno : ENOMEM) : why.msg);
		return EXIT_FAILED;
	}
	int rc = skip_earlier_ranks_links(g, &links, w, mine_blocks);
	free(links.v);
	if (rc)
		return rc;
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

/* Places this rank's part; 0 or an exit status (said). */
int mpigen_place(struct gen *g, struct walk **w)
{
	struct gen_options *o = g->o;
	struct place *pl = &g->pl;
	struct path_note mine = {.npaths = o->npaths, .kind = 'o'}, *all = calloc((size_t)g->size, sizeof *all);
	struct dd_err why = {0};
	if (!all) {
		run_say(&g->r, "out of memory");
		return EXIT_FAILED;
	}
	struct stat st;
	gethostname(mine.host, sizeof mine.host - 1);
	if (o->npaths == 1 && !stat(o->paths[0], &st) && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
		struct walk *probe = walk_open(o->paths, 1, false, &why);
		struct walk_entry e;
		mine.kind = S_ISREG(st.st_mode) ? 'f' : 'b';
		mine.size = probe && walk_next(probe, &e) == 1 && e.kind != WALK_ERROR ? e.size : 0;
		mine.name_hash = str_hash64(o->paths[0]);
		walk_close(probe);
	}
	MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
	/* The same one file or device everywhere: stripes. One path on several hosts may name each
	 * host's own disk (every node's /dev/nvme0n1), so there it takes --stripe to say it is one
	 * shared file or device (a SAN LUN, a cluster file system). */
	bool same = mine.kind != 'o', one_host = true;
	int odd = -1;
	for (int k = 0; k < g->size; k++) {
		bool here = all[k].npaths == 1 && all[k].kind == mine.kind && all[k].size == mine.size &&
			    all[k].name_hash == mine.name_hash;
		if (!here && odd < 0)
			odd = k;
		same &= here;
		one_host &= !strcmp(all[k].host, mine.host);
	}
	free(all);
	if (o->stripe && !same) {
		run_say(&g->r, "--stripe: every rank must be given the same one file or device, of one size (rank %d's "
			"differs)", odd < 0 ? g->rank : odd);
		return EXIT_BAD_INPUT;
	}
	pl->stripe = same && (one_host || o->stripe);

	if (!(*w = walk_open(o->paths, o->npaths, o->one_fs, &why))) {
		run_say(&g->r, "%s", why.msg);
		return EXIT_BAD_INPUT;
	}
	return pl->stripe ? place_stripe(g, *w, mine.size) : place_own(g, *w);
}

/* What a rank's PATH is, gathered from every rank: a device by its number (ino ~0, and its disk's
 * number if a partition), else (dev, ino) and whether a directory; on which host. */
struct path_key {
	uint64_t dev, ino, host, dir, disk;
};

/* Every rank's keys as gathered: rank k's counts[k] bytes at byte displs[k] of all. */
struct rank_keys {
	struct path_key *all;
	int *counts, *displs;
};

static const struct path_key *rank_key(const struct rank_keys *rk, int k, int j)
{
	return &rk->all[rk->displs[k] / (int)sizeof(struct path_key) + j];
}

/* One PATH (or device) read by two ranks, or a disk and its partition: 0 or EXIT_BAD_INPUT (said). */
static int check_same_paths(struct gen *g, const struct path_key *mine, const struct rank_keys *rk)
{
	for (int i = 0; i < g->o->npaths; i++) {
		for (int k = 0; k < g->size; k++) {
			int n = k == g->rank ? 0 : rk->counts[k] / (int)sizeof *mine;
			for (int j = 0; j < n; j++) {
				const struct path_key *x = rank_key(rk, k, j);
				if (x->dev == mine[i].dev && x->ino == mine[i].ino && x->host == mine[i].host) {
					run_say(&g->r, "%s: rank %d reads it too: give each rank its own PATHs (%%r: the rank) "
						"or every rank the same one file or device (read in stripes)", g->o->paths[i], k);
					return EXIT_BAD_INPUT;
				}
				if (mine[i].ino == ~0ULL && x->ino == ~0ULL && x->host == mine[i].host &&
				    ((mine[i].disk && mine[i].disk == x->dev) || (x->disk && x->disk == mine[i].dev))) {
					run_say(&g->r, "%s: rank %d reads %s: its blocks would be counted twice", g->o->paths[i], k,
						mine[i].disk ? "the disk it is a partition of" : "a partition of it");
					return EXIT_BAD_INPUT;
				}
			}
		}
	}
	return 0;
}

/* Nor may a PATH lie inside a directory another rank walks (its files would be read by both):
 * dedisgen's test of one PATH inside another, by inode up this PATH's real path. */
static int check_inside_dirs(struct gen *g, const struct path_key *mine, const struct rank_keys *rk)
{
	for (int i = 0; i < g->o->npaths; i++) {
		char real[PATH_MAX];
		if (!realpath(g->o->paths[i], real))
			continue;
		for (char *slash; (slash = strrchr(real, '/')) && strcmp(real, "/");) {
			slash[slash == real] = 0; /* "/a" goes up to "/" */
			struct stat st;
			if (stat(real, &st))
				continue;
			for (int k = 0; k < g->size; k++) {
				int n = k == g->rank ? 0 : rk->counts[k] / (int)sizeof *mine;
				for (int j = 0; j < n; j++) {
					const struct path_key *x = rank_key(rk, k, j);
					if (x->dir && x->dev == (uint64_t)st.st_dev && x->ino == (uint64_t)st.st_ino &&
					    x->host == mine[i].host) {
						run_say(&g->r, "%s is inside %s, a directory rank %d reads: its files would be "
							"counted twice", g->o->paths[i], real, k);
						return EXIT_BAD_INPUT;
					}
				}
			}
		}
	}
	return 0;
}

/* Two ranks reading the same tree or file (not as stripes) would count it twice: refused. */
int mpigen_check_disjoint(struct gen *g)
{
	struct gen_options *o = g->o;
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	int n = o->npaths;
	struct rank_keys rk = {NULL, calloc((size_t)g->size, sizeof *rk.counts), calloc((size_t)g->size, sizeof *rk.displs)};
	struct path_key *mine = calloc((size_t)n, sizeof *mine);
	if (!rk.counts || !rk.displs || !mine) {
		free(rk.counts);
		free(rk.displs);
		free(mine);
		run_say(&g->r, "out of memory");
		return EXIT_FAILED;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(o->paths[i], &st))
			continue;
		/* a device by its number: two nodes of one device (mknod, a chroot's /dev) are one */
		if (S_ISBLK(st.st_mode))
			mine[i] = (struct path_key){(uint64_t)st.st_rdev, ~0ULL, str_hash64(host), 0,
						    (uint64_t)devnum_disk_of(st.st_rdev)};
		else
			mine[i] = (struct path_key){(uint64_t)st.st_dev, (uint64_t)st.st_ino, str_hash64(host),
						    S_ISDIR(st.st_mode), 0};
	}
	int bytes = n * (int)sizeof *mine, total = 0;
	MPI_Allgather(&bytes, 1, MPI_INT, rk.counts, 1, MPI_INT, MPI_COMM_WORLD);
	for (int k = 0; k < g->size; k++) {
		rk.displs[k] = total;
		total += rk.counts[k];
	}
	if (!(rk.all = malloc((size_t)total + 1)))
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	MPI_Allgatherv(mine, bytes, MPI_BYTE, rk.all, rk.counts, rk.displs, MPI_BYTE, MPI_COMM_WORLD);
	int status = check_same_paths(g, mine, &rk);
	if (!status)
		status = check_inside_dirs(g, mine, &rk);
	free(rk.all);
	free(rk.counts);
	free(rk.displs);
	free(mine);
	return status;
}

/* Rank 0: every rank's sources, in rank order (a striped file once). */
int mpigen_gather_sources(struct gen *g)
{
	size_t len = 0;
	for (int k = 0; k < g->r.nsources; k++)
		len += strlen(g->r.sources[k]) + 1;
	char *mine = malloc(len + 1), *p = mine;
	int n = (int)len, total;
	if (!mine)
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILED);
	for (int k = 0; k < g->r.nsources; k++)
		p += sprintf(p, "%s", g->r.sources[k]) + 1;
	if (g->pl.stripe && g->rank)
		n = 0;
	char *all = mpigen_gather(g, mine, n, MPI_CHAR, 1, &total);
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
	return status;
}

/* What rank 0 reports of each rank. */
struct rank_row {
	char host[64];
	uint64_t bytes, files, errors, blocks, first_pos; /* blocks, first_pos: the smallest size's */
	double seconds, exchange;                         /* its scan, its exchange */
};

/* Rank 0: one row per rank in the JSON ("mpi") and, unless quiet, after the summary. */
void mpigen_report_ranks(struct gen *g, double scan_seconds, double exchange_seconds)
{
	struct rank_row mine = {.bytes = g->st.bytes, .files = g->st.files, .errors = g->st.errors,
				.blocks = g->r.s[0].blocks_read, .first_pos = g->pl.first_pos[0], .seconds = scan_seconds,
				.exchange = exchange_seconds};
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
		json_array_append_new(rows, json_pack("{s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "rank", k, "host", x->host,
						      "bytes", (json_int_t)x->bytes, "files", (json_int_t)x->files,
						      "errors", (json_int_t)x->errors, "blocks", (json_int_t)x->blocks,
						      "first_position", (json_int_t)x->first_pos, "seconds", x->seconds,
						      "exchange_seconds", x->exchange));
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
			fprintf(f, "  rank %-4d %-20s %10s %12" PRIu64 " blocks from %-12" PRIu64 " scan %.2f s (%.1f MiB/s), "
				"exchange %.2f s\n", k, x->host, sz, x->blocks, x->first_pos, x->seconds,
				x->seconds > 0 ? (double)x->bytes / x->seconds / 1048576 : 0.0, x->exchange);
		}
	}
	free(all);
}
