/* mpi_main.c - dedisgen-mpi's entry point: each MPI rank scans its part (its own PATHs, or a stripe
 * of one file or device), fingerprints go to their owner rank, rank 0 writes the distribution. */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/fanout.h"
#include "gen/mpigen.h"
#include "lib/rankpath.h"
#include "lib/stopsignals.h"

#define PROG MPIGEN_PROG

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
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
	int t = (int)fanout_cores() / here;
	return t > 0 ? t : 1;
}

/* Only rank 0 writes, but into what another rank of its host may read: each such rank checks
 * rank 0's outputs against its own PATHs, as dedisgen does against all of them (another host's
 * same path may be that host's own disk: not compared, as in mpigen_check_disjoint). Then the
 * others forget the outputs: they create none. Collective: the status every rank agreed on. */
static int check_rank0_outputs(struct gen *g)
{
	struct gen_options *o = g->o;
	int status = 0;
	char host[64] = "", host0[64];
	gethostname(host, sizeof host - 1);
	memcpy(host0, host, sizeof host0);
	MPI_Bcast(host0, (int)sizeof host0, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (g->rank && !strcmp(host, host0))
		status = run_check_outputs(&g->r, o->sizes, o->nsizes);
	if ((status = verdict(&g->v, status)))
		return status;
	if (g->rank) {
		free(o->output);
		free(o->json);
		free(o->plot);
		o->output = o->json = o->plot = NULL;
	}
	return 0;
}

/* This rank's run: its sources, outputs (rank 0's), owned counters, measuring. 0 or a status. */
static int prepare_rank(struct gen *g, int threads)
{
	struct gen_options *o = g->o;
	struct run *r = &g->r;
	int status = 0;
	for (int i = 0; i < o->npaths && !status; i++)
		if (run_add_source(r, o->paths[i])) {
			run_say(r, "out of memory");
			status = EXIT_FAILED;
		}
	if (!status)
		status = run_prepare(r, o->sizes, o->nsizes);
	if (!status)
		status = mpigen_prepare_owned(g);
	r->no_gran = true; /* the ranks' windows are not gathered (yet) */
	r->no_align_cdc = true; /* nor their records of 2..32 blocks and chunks */
	if (!status && run_setup_measuring(r, g->pl.total, g->pl.complete, threads)) {
		run_say(r, "out of memory");
		status = EXIT_FAILED;
	}
	for (int i = 0; i < r->n && !status; i++)
		r->s[i].first_pos = g->pl.first_pos[i];
	return status;
}

static int run_rank(struct gen *g)
{
	struct gen_options *o = g->o;
	struct run *r = &g->r;
	struct walk *w = NULL;
	struct dd_err why;
	int status = 0;

	for (int i = 0; i < o->npaths && !status; i++)
		if (rank_path_substitute(&o->paths[i], g->rank, &why)) {
			run_say(r, "%s", why.msg);
			status = EXIT_BAD_INPUT;
		}
	if (!status && run_check_kind(r))
		status = EXIT_BAD_INPUT;
	if ((status = verdict(&g->v, status)))
		return status;
	status = mpigen_place(g, &w);
	if ((status = verdict(&g->v, status)))
		goto out;
	if (!g->pl.stripe)
		status = mpigen_check_disjoint(g);
	if ((status = verdict(&g->v, status)))
		goto out;
	if ((status = check_rank0_outputs(g)))
		goto out;
	int threads = o->threads ? (int)o->threads : default_threads();
	if ((status = verdict(&g->v, prepare_rank(g, threads))))
		goto out;

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
	double x0 = MPI_Wtime();
	for (int i = 0; i < r->n && !status; i++)
		status = mpigen_exchange(g, i);
	if (status)
		goto out;
	double exchange = MPI_Wtime() - x0;
	/* a striped file or device is one file, read by every rank */
	uint64_t files = g->pl.stripe ? g->rank == 0 : g->st.files;
	uint64_t mine[3] = {g->st.bytes, files, g->st.errors}, sum[3] = {0};
	MPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if ((status = verdict(&g->v, mpigen_gather_sources(g))))
		goto out;
	mpigen_report_ranks(g, g->st.seconds, exchange);
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
	struct dd_err err;
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
	/* mpirun's SIGTERM (Ctrl-C of mpirun), and a SIGHUP, stop the scans; caught from here on, so
	 * that a rank signalled once any other has begun its scan is one that stops, not one that dies */
	stop_signals_catch(on_signal);
	stop_signals_catch_pipe();
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
