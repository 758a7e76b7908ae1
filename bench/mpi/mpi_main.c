/* mpi_main.c - dedisbench-mpi's entry point: one part of the run per MPI rank (its own target, its
 * share of the workers, sizes, rate and content space), the results reduced and reported at rank 0. */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <unistd.h>
#include "bench/workload/access.h"
#include "bench/config.h"
#include "bench/jobfile.h"
#include "bench/launcher.h"
#include "bench/mpi/mpipeers.h"
#include "lib/pathwithin.h"
#include "lib/rankpath.h"
#include "lib/report.h"
#include "bench/report/results.h"
#include "lib/rng.h"
#include "lib/stopsignals.h"
#include "lib/strhash.h"

#define EXIT_BAD_INPUT 2
#define EXIT_RUN_FAILED 1
#define PROG "dedisbench-mpi"
#define PEER_TIMEOUT_MIN_NS 200000000ULL

/* The lowest rank with a problem says it (one line, not one per rank); every rank learns the
 * verdict. Returns true when some rank had one. */
static bool any_rank(int rank, const char *problem)
{
	int mine = problem ? rank : INT32_MAX, first = INT32_MAX;
	MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (first != INT32_MAX && first == rank)
		fprintf(stderr, PROG ": %s\n", problem);
	return first != INT32_MAX;
}

/* Where this rank's part sits in the whole run: global (one content space, every rank's blocks
 * numbered after the ranks before it) or replica (the distribution over this rank's blocks). */
static void place_rank(const struct bench_config *c, const struct mpi_peers *p, const uint64_t *capacity,
		       struct bench_part *part)
{
	const struct rank_row *me = &p->rows[p->rank];
	uint64_t all = 0, before = 0;
	for (int k = 0; k < p->size; k++) {
		all += capacity[k];
		before += k < p->rank ? capacity[k] : 0;
	}
	memset(part, 0, sizeof *part);
	part->worker_base = me->first_worker;
	part->workers = p->total_procs;
	/* --size is the whole run's; neither bound: one pass over every rank's target. */
	part->run_ops = c->o.size ? c->o.size / c->o.block_size : c->o.time_ns ? 0 : all;
	uint64_t mine = config_share_ops(part->run_ops, p->total_procs, me->first_worker, me->workers);
	if (c->o.rank_content == RANK_CONTENT_REPLICA) {
		part->blocks = capacity[p->rank];
		part->space_ops = mine;
	} else {
		part->block_base = before;
		part->blocks = all;
		part->ops_base = config_share_ops(part->run_ops, p->total_procs, 0, me->first_worker);
		part->space_ops = part->run_ops;
	}
}

static json_t *rank_json(const struct mpi_peers *p, int k, const struct run_result *r)
{
	const struct rank_row *row = &p->rows[k];
	struct dir_stats d[2] = {0};
	struct histogram all;
	hist_init(&all);
	for (int x = 0; x < 2; x++)
		hist_init(&d[x].lat);
	for (unsigned i = row->first_worker; i < row->first_worker + row->workers; i++)
		for (int x = 0; x < 2; x++) {
			d[x].ops += r->w[i].dir[x].ops;
			d[x].bytes += r->w[i].dir[x].bytes;
			hist_merge(&d[x].lat, &r->w[i].dir[x].lat);
		}
	hist_merge(&all, &d[0].lat);
	hist_merge(&all, &d[1].lat);
	double s = row->seconds;
	return json_pack("{s:i, s:s, s:s, s:i, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o}", "rank", k, "host",
			 row->host, "target", row->target,
			 "first_worker", (int)row->first_worker, "workers", (int)row->workers, "status",
			 row->lost ? "lost" : row->failed ? "failed" : row->interrupted ? "interrupted" : "ok", "ops",
			 (json_int_t)(d[0].ops + d[1].ops), "bytes", (json_int_t)(d[0].bytes + d[1].bytes), "read_ops",
			 (json_int_t)d[0].ops, "read_bytes", (json_int_t)d[0].bytes, "write_ops", (json_int_t)d[1].ops,
			 "write_bytes", (json_int_t)d[1].bytes, "seconds", s, "latency_us", report_latency(&all));
}

/* --target as given, before each rank substituted its %r and %h: what the header names. */
static char target_pattern[512];

/* Is rank k the first rank on its host? */
static bool first_on_host(const struct mpi_peers *p, int k)
{
	for (int j = 0; j < k; j++)
		if (!strcmp(p->rows[j].host, p->rows[k].host))
			return false;
	return true;
}

/* The distinct hosts of the ranks, in rank order, ", "-separated into list (cut short with
 * "..." when it does not fit). Their number. */
static unsigned host_list(const struct mpi_peers *p, char *list, size_t len)
{
	unsigned n = 0;
	size_t used = 0;
	list[0] = 0;
	for (int k = 0; k < p->size; k++) {
		if (!first_on_host(p, k))
			continue;
		n++;
		int w = snprintf(list + used, len - used, "%s%s", used ? ", " : "", p->rows[k].host);
		if (w < 0 || (size_t)w >= len - used) {
			snprintf(list + (len > 4 ? len - 4 : 0), len > 4 ? 4 : len, "...");
			used = len - 1;
		} else {
			used += (size_t)w;
		}
	}
	return n;
}

static json_t *hosts_json(const struct mpi_peers *p)
{
	json_t *a = json_array();
	for (int k = 0; k < p->size; k++)
		if (first_on_host(p, k))
			json_array_append_new(a, json_string(p->rows[k].host));
	return a;
}

/* The ranks' line (how many, on which hosts, the target pattern) and a row per rank, with its
 * own target: the header names only the pattern. */
static void print_ranks(FILE *f, const struct mpi_peers *p, const struct run_result *r)
{
	char hosts[1024];
	unsigned nhosts = host_list(p, hosts, sizeof hosts);
	fprintf(f, "ranks: %d on %u host%s (%s), %u workers in all; targets %s\n", p->size, nhosts, nhosts == 1 ? "" : "s",
		hosts, p->total_procs, target_pattern);
	for (int k = 0; k < p->size; k++) {
		const struct rank_row *row = &p->rows[k];
		uint64_t ops = 0, bytes = 0;
		struct histogram h;
		hist_init(&h);
		for (unsigned i = row->first_worker; i < row->first_worker + row->workers; i++)
			for (int x = 0; x < 2; x++) {
				ops += r->w[i].dir[x].ops;
				bytes += r->w[i].dir[x].bytes;
				hist_merge(&h, &r->w[i].dir[x].lat);
			}
		double s = row->seconds > 0 ? row->seconds : 1e-9;
		fprintf(f, "  rank %-4d %-20s %3u workers %12llu ops %10.1f IOPS %9.2f MiB/s  p99 %.1f us  on %s%s\n", k,
			row->host, row->workers, (unsigned long long)ops, (double)ops / s, (double)bytes / 1048576.0 / s,
			(double)hist_percentile(&h, 99) / 1e3, row->target, row->lost ? "  (lost: as last heard)" : "");
	}
}

/* Rank 0's report: the summary, the rank rows, the reports and plots, one JSON. */
static int report(struct bench_config *cfg, const struct mpi_peers *p, struct run_result *res)
{
	int status = 0;
	/* The whole run's workers, for the summary and the JSON; its target, the pattern every rank
	 * was given (rank 0's own path named only rank 0's part: the rank rows name each one's). */
	cfg->o.procs = p->total_procs;
	char *own_target = cfg->o.target;
	cfg->o.target = target_pattern;
	if (!cfg->o.quiet) {
		results_print(stdout, cfg, res);
		print_ranks(stdout, p, res);
	}
	struct dd_err err;
	if (results_status(cfg, res, &err) >= RUN_FAILED) { /* as the JSON's "status" says */
		fprintf(stderr, PROG ": %s\n", err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (results_write_reports(cfg, res, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		results_fail_late(res, err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (results_write_plots(cfg, res, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		results_fail_late(res, err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (cfg->o.json) {
		json_t *doc = results_json(cfg, res);
		json_t *ranks = json_array();
		for (int k = 0; k < p->size; k++)
			json_array_append_new(ranks, rank_json(p, k, res));
		json_object_set_new(doc, "mpi", json_pack("{s:i, s:s, s:o, s:s, s:i, s:o}", "ranks", p->size, "target_pattern",
							  target_pattern, "hosts", hosts_json(p), "rank_content",
							  rank_content_names[cfg->o.rank_content], "lost_ranks",
							  (int)p->lost, "per_rank", ranks));
		if (report_write_atomic(doc, config_output_at(cfg, OUT_JSON))) {
			fprintf(stderr, PROG ": cannot write %s: %s\n", cfg->o.json, strerror(errno));
			status = EXIT_RUN_FAILED;
		}
		json_decref(doc);
	}
	cfg->o.target = own_target;
	return status;
}

/* Only rank 0 reports: the others keep their target and workers, and --output-dir only for
 * their workers' latency logs (latency.N.csv, N the worker's number in the whole run). */
static void quiet_rank(struct bench_options *o)
{
	char **outputs[] = {&o->json, &o->dist_report, &o->access_report, &o->output_dir};
	for (size_t i = 0; i < sizeof outputs / sizeof outputs[0] - o->latency_log; i++) {
		free(*outputs[i]);
		*outputs[i] = NULL;
	}
	o->plot = false;
	o->quiet = true;
}

/* The ledger as the directory entry it is (led, ./led and a link to its directory agree), as a
 * number; by its name where its directory cannot be looked at (opening it says why). Never 0. */
static uint64_t ledger_key(const char *ledger)
{
	struct path_entry e;
	if (!path_entry_of(ledger, &e))
		return str_hash64(ledger) | 1;
	return (str_hash64(e.base) ^ ((uint64_t)e.dev * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)e.ino) | 1;
}

/* What this rank's files must not share with the other ranks' (cfg probed; reports: rank 0's
 * --json, --dist-report, --access-report, which only it writes). A ledger is one rank's (its
 * workers' offsets): two ranks of one host on the same --ledger would each take the other's
 * entries for their own. Rank 0's reports, renamed into place at the end, would replace another
 * rank's worker file or target as they would its own, which dedisbench refuses. Another host's
 * same path may be that host's own disk: not compared. Collective: a rank with a problem of its
 * own takes part with cfg NULL. 0, or -1 with the problem in err. */
static int check_shared(int rank, int size, const struct bench_config *cfg, char *const *reports, size_t nreports,
			struct dd_err *err)
{
	static const char *const what[] = {"--json", "--dist-report", "--access-report"};
	char host[MPI_MAX_PROCESSOR_NAME] = "";
	int len = 0;
	MPI_Get_processor_name(host, &len);
	uint64_t mine[2] = {str_hash64(host), cfg && cfg->o.ledger ? ledger_key(cfg->o.ledger) : 0};
	uint64_t *all = calloc((size_t)size * 2, sizeof *all);
	if (!all)
		MPI_Abort(MPI_COMM_WORLD, EXIT_RUN_FAILED); /* a few bytes: the ranks cannot go on without them */
	MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
	int rc = 0;
	for (int k = 0; k < size && !rc; k++)
		if (k != rank && mine[1] && all[2 * k] == mine[0] && all[2 * k + 1] == mine[1])
			rc = err_fail(err, -1, "--ledger %s: rank %d keeps its ledger there too; give each rank its own "
					       "(%%r: the rank)", cfg->o.ledger, k);
	if (cfg && rank && all[0] == mine[0])
		for (size_t i = 0; i < nreports && !rc; i++) {
			struct dd_err why;
			if (reports[i] && config_check_output(&cfg->target, what[i], reports[i], false, &why))
				rc = err_fail(err, -1, "%s (rank 0 writes it)", why.msg);
		}
	free(all);
	return rc;
}

/* One seed for every rank: rank 0's draw unless given. */
static void agree_on_seed(int rank, struct bench_cli *cli)
{
	struct dd_err err = {.resource = false};
	uint64_t seed = cli->o.seed;
	if (options_given(cli->given, "seed"))
		return;
	if (rank == 0 && getrandom(&seed, sizeof seed, 0) != sizeof seed)
		seed = (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	seed &= (1ULL << 53) - 1;
	MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	char text[32];
	snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
	options_apply_ini(cli, NULL, "seed", text, &err);
}

/* A rank's problem as every rank says it: "rank N: " before another rank's (where: its buffer). */
static const char *of_rank(int rank, const char *problem, char *where, size_t len)
{
	if (!problem || !rank)
		return problem;
	snprintf(where, len, "rank %d: %s", rank, problem);
	return where;
}

/* Each rank's options checked and its target probed (cfg); then, collectively, what the ranks
 * must not share. 0, or the exit status when some rank has a problem (cli or cfg freed). */
static int probe_ranks(int rank, struct bench_cli *cli, struct bench_config *cfg)
{
	struct dd_err err = {.resource = false}, shared;
	char where[1200];
	agree_on_seed(rank, cli);
	const char *problem = NULL;
	snprintf(target_pattern, sizeof target_pattern, "%s", cli->o.target ? cli->o.target : "");
	if (rank_path_substitute(&cli->o.target, rank, &err) ||
	    rank_path_substitute(&cli->o.ledger, rank, &err) ||
	    rank_path_substitute(&cli->o.output_dir, rank, &err))
		problem = err.msg;
	/* rank 0's reports, for the others to check against their targets once they drop them */
	char *reports[] = {cli->o.json, cli->o.dist_report, cli->o.access_report};
	const size_t nreports = sizeof reports / sizeof reports[0];
	for (size_t i = 0; i < nreports; i++)
		if (reports[i] && !(reports[i] = strdup(reports[i])) && !problem)
			problem = "out of memory";
	if (rank != 0)
		quiet_rank(&cli->o);
	bool probed = false;
	if (!problem) {
		probed = true;
		if (config_probe(cli, cfg, &err))
			problem = err.msg;
		else if (cfg->target.ops->mpi_refusal)
			problem = cfg->target.ops->mpi_refusal;
		else if (cfg->o.peer_timeout_ns < PEER_TIMEOUT_MIN_NS)
			problem = "--peer-timeout: below 0.2 s a live rank would be taken for lost (ranks beat every 0.1 s)";
	}
	/* collective: every rank takes part, with or without a problem of its own */
	int size = 1;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (check_shared(rank, size, probed && !problem ? cfg : NULL, reports, nreports, &shared) && !problem)
		problem = shared.msg;
	problem = of_rank(rank, problem, where, sizeof where);
	for (size_t i = 0; i < nreports; i++)
		free(reports[i]);
	if (!any_rank(rank, problem))
		return 0;
	if (probed)
		config_free(cfg);
	else
		options_free(&cli->o);
	return EXIT_BAD_INPUT;
}

/* This rank's part of the whole run placed, its --output-dir made (made_dir: by it), rank 0's
 * outputs held and the ledger opened. 0, or the exit status when some rank has a problem (what
 * this rank created for the run removed again). */
static int place_part(int rank, struct bench_config *cfg, struct mpi_peers *peers, bool *made_dir)
{
	char where[1200];
	if (cfg->o.rank_content == RANK_CONTENT_REPLICA) {
		/* A replica's contents are its own: the same distribution, other bytes. */
		cfg->seed = rng_mix64(cfg->seed ^ ((uint64_t)rank + 1) * 0x9e3779b97f4a7c15ULL) & ((1ULL << 53) - 1);
		cfg->nurand_c = access_draw_c(cfg->seed, cfg->nurand_a);
	}
	uint64_t mine = cfg->region_blocks * cfg->o.procs;
	uint64_t *capacity = calloc((size_t)peers->size, sizeof *capacity);
	if (capacity)
		MPI_Allgather(&mine, 1, MPI_UINT64_T, capacity, 1, MPI_UINT64_T, MPI_COMM_WORLD);
	else
		MPI_Abort(MPI_COMM_WORLD, EXIT_RUN_FAILED);
	struct bench_part part;
	place_rank(cfg, peers, capacity, &part);
	free(capacity);
	const char *problem = NULL;
	struct dd_err err = {.resource = false};
	*made_dir = false;
	if (config_place(cfg, &part, &err))
		problem = err.msg;
	else if (cfg->o.output_dir && !(*made_dir = !mkdir(cfg->o.output_dir, 0755)) && errno != EEXIST)
		problem = (err_fail_errno(&err, -1, errno, "--output-dir %s", cfg->o.output_dir), err.msg);
	else if (!rank && config_hold_outputs(cfg, &err)) /* rank 0 reports: beneath them */
		problem = err.msg;
	else if (config_open_ledger(cfg, &err))
		problem = err.msg;
	if (!any_rank(rank, of_rank(rank, problem, where, sizeof where)))
		return 0;
	/* bad input on some rank: what this one created for the run goes again (nothing written) */
	if (cfg->ledger_map.persistent && cfg->ledger_map.map && !cfg->ledger_map.existed)
		unlink(cfg->o.ledger);
	if (*made_dir)
		rmdir(cfg->o.output_dir);
	return EXIT_BAD_INPUT;
}

/* Every rank's target prepared: 0, or the exit status when some rank's could not be. */
static int prepare_targets(int rank, struct bench_config *cfg)
{
	char where[1200];
	cfg->target.keep_data = cfg->ledger_map.existed;
	struct dd_err terr;
	const char *problem = target_prepare(&cfg->target, (uint32_t)cfg->o.block_size, &terr) ? terr.msg : NULL;
	if (!any_rank(rank, of_rank(rank, problem, where, sizeof where)))
		return 0;
	target_cleanup(&cfg->target, false);
	return EXIT_RUN_FAILED;
}

/* The run of this rank's part, and rank 0's report. The exit status; the rank leaves at once
 * (*leave) when a rank was lost. */
static int run_part(int rank, struct bench_config *cfg, struct mpi_peers *peers, bool *leave)
{
	cfg->unknown = target_zeros_known(&cfg->target, cfg->populate != POPULATE_NONE, cfg->ledger_map.existed)
			       ? UNKNOWN_ZEROS
		       : cfg->ledger_map.existed || cfg->o.verify == VERIFY_NONE ? UNKNOWN_SKIP
		       : cfg->have_verify_layout ? UNKNOWN_LAYOUT
						 : UNKNOWN_IDENTIFY;
	struct launcher_peers hooks;
	mpi_peers_hooks(peers, &hooks);
	struct run_result res;
	int status = 0;
	struct dd_err err;
	if (launcher_run_part(cfg, &hooks, &res, &err)) {
		fprintf(stderr, PROG ": rank %d: %s\n", rank, err.msg);
		MPI_Abort(MPI_COMM_WORLD, EXIT_RUN_FAILED); /* the other ranks wait for this one */
	}
	if (rank == 0)
		status = report(cfg, peers, &res);
	else if (res.failed || res.read_mismatches + res.final_mismatches) /* as rank 0 (and dedisbench) */
		status = EXIT_RUN_FAILED;
	/* A rank lost (rank 0 found one silent, or this rank found rank 0 silent) never reaches
	 * MPI_Finalize: this rank leaves, what it can report written, and its exit ends the job. Not
	 * MPI_Abort: it waits to be ended by mpirun, whose SIGTERM (1 s after the rank died) the
	 * launcher may already have taken as an interruption while it still reported on a loaded
	 * machine, or has blocked; then only the SIGKILL 1 s later ended it (2.03 s after the kill,
	 * 3 runs in 28 beside mpi-bench.sh). */
	*leave = peers->lost > 0 || peers->root_lost;
	/* Rank 0 can no longer report, so every rank that finds it lost says so before it leaves:
	 * the first rank to leave has mpirun kill the others at once (its SIGCHLD cuts short mpirun's
	 * wait before SIGTERM and SIGKILL), so one chosen rank, found later, may never say it. */
	if (peers->root_lost)
		fprintf(stderr, PROG ": rank %d: rank 0 on %s was lost (not heard from for %.1f s): no report is written\n",
			rank, peers->rows[0].host, (double)peers->peer_timeout_ns / 1e9);
	results_free(&res);
	return status;
}

static int run(int rank, struct bench_cli *cli)
{
	struct bench_config cfg;
	int status = probe_ranks(rank, cli, &cfg);
	if (status)
		return status;
	struct mpi_peers peers;
	if (any_rank(rank, mpi_peers_init(&peers, (unsigned)cfg.o.procs, cfg.target.path, cfg.o.peer_timeout_ns) ? "out of memory" : NULL)) {
		mpi_peers_free(&peers);
		config_free(&cfg);
		return EXIT_RUN_FAILED;
	}
	bool made_dir, leave = false;
	status = place_part(rank, &cfg, &peers, &made_dir);
	if (!status)
		status = prepare_targets(rank, &cfg);
	if (!status) {
		status = run_part(rank, &cfg, &peers, &leave);
		target_cleanup(&cfg.target, cfg.o.keep);
	}
	mpi_peers_free(&peers);
	config_free(&cfg);
	if (leave) {
		fflush(NULL);
		_exit(EXIT_RUN_FAILED);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct bench_cli cli;
	struct dd_err err;
	/* What needs no other rank is answered before MPI starts (the build generates the man page). */
	struct dd_err jobs_err;
	bool several_jobs = jobfile_refuse_several(argc, argv, PROG, &jobs_err);
	int parsed = options_parse(argc, argv, &cli, &err);
	if (several_jobs && !cli.want_help && !cli.want_version) /* (its own words, not a key set twice) */
		parsed = -1, err = jobs_err;
	if (!parsed && (cli.want_help || cli.want_version || getenv("DEDIS_PRINT_MAN_OPTIONS"))) {
		if (getenv("DEDIS_PRINT_MAN_OPTIONS"))
			options_print_man(stdout);
		else if (cli.want_help)
			options_print_help(stdout, PROG);
		else
			printf(PROG " %s\n", PACKAGE_VERSION);
		options_free(&cli.o);
		return 0;
	}
	/* Shared memory between ranks of one host without single-copy reads of the sender's memory:
	 * such a read from a rank killed in the middle of a message aborts the reader, and rank 0
	 * must live to report what completed (the user's own setting wins). */
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
	/* mpirun may be gone (it ends a job whose rank died) while rank 0 still reports: a message
	 * to the closed stderr must not end rank 0 before its JSON is written. */
	signal(SIGPIPE, SIG_IGN);
	/* The launcher takes SIGINT, SIGTERM (mpirun's, when it ends a job), SIGHUP (unless nohup
	 * ignores it) and SIGCHLD from a signalfd: blocked before MPI_Init, so that the threads Open
	 * MPI starts block them too (one of those would otherwise take SIGTERM's or SIGHUP's default
	 * action and end the rank at once, unreported). */
	sigset_t mask;
	sigemptyset(&mask);
	stop_signals_set(&mask);
	sigaddset(&mask, SIGCHLD);
	sigset_t unblocked;
	sigprocmask(SIG_BLOCK, &mask, &unblocked);
	/* Each rank's heartbeat has a thread of its own (mpipeers.c), beside the launcher's MPI calls. */
	int threads = MPI_THREAD_SINGLE;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &threads);
	/* A rank lost is this program's to handle (rank 0 reports it), not a reason to abort. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int status;
	if (parsed) {
		if (rank == 0) /* every rank parsed the same command line */
			fprintf(stderr, PROG ": %s\n", err.msg);
		options_free(&cli.o);
		status = EXIT_BAD_INPUT;
	} else if (threads < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, PROG ": this MPI library does not allow MPI calls from several threads "
					"(MPI_THREAD_MULTIPLE), which the ranks' heartbeats need (Open MPI does)\n");
		options_free(&cli.o);
		status = EXIT_RUN_FAILED;
	} else {
		status = run(rank, &cli);
	}
	/* Reported: a SIGTERM from mpirun ending the job now ends this rank (in MPI_Finalize, waiting
	 * for a rank that died, it would wait for mpirun's SIGKILL). */
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	MPI_Finalize();
	return status;
}
