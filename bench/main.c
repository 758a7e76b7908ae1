/* main.c - dedisbench's entry point: parse and validate (bad input: one line, exit 2, nothing
 * written), prepare the target, run, report; the only place that decides the exit status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench/workload/backup.h"
#include "bench/config.h"
#include "lib/errmsg.h"
#include "bench/jobfile.h"
#include "bench/jobrun.h"
#include "bench/launcher.h"
#include "lib/report.h"
#include "bench/workload/replay.h"
#include "bench/report/results.h"
#include "lib/safefile.h"
#include "bench/report/runcmp.h"
#include "bench/report/spacecheck.h"
#include "lib/stopsignals.h"
#include "bench/workload/suite.h"

#define EXIT_BAD_INPUT 2
#define EXIT_RUN_FAILED 1

/* A run that failed before its workers started still leaves its JSON: status "failed", the
 * reason, and nothing done. (A report that cannot be written adds nothing to the one line
 * already printed.) */
static void failure_json(const struct bench_config *c, const char *why)
{
	if (!c->o.json)
		return;
	struct run_result r;
	memset(&r, 0, sizeof r);
	r.failed = true;
	snprintf(r.failure, sizeof r.failure, "%s", why);
	hist_init(&r.all);
	hist_init(&r.total[0].lat);
	hist_init(&r.total[1].lat);
	json_t *doc = results_json(c, &r);
	(void)report_write_atomic(doc, config_output_at(c, OUT_JSON));
	json_decref(doc);
}

/* The --output-dir this run created, removed again when the run leaves nothing in it. */
static void drop_output_dir(const struct bench_config *c, bool created)
{
	if (created)
		rmdir(c->o.output_dir);
}

/* SIGINT / SIGTERM during replay, backup and suite (issue 14) */
static volatile sig_atomic_t stop_requested;

/* ---- dedisbench replay TRACE (issue 14) ---- */

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static struct safedir job_json_dir = {-1}; /* a replay's or backup's --json directory, held */
static char job_json_at[PATH_MAX];           /* its name through it */

/* A replay or backup run's start: the target prepared (one line and cleanup when it cannot be),
 * SIGINT/SIGTERM asking the run to stop. A stop that comes while the target is prepared (a volume
 * formatted) is held until it is ready, then stops the run before its first request, so the run
 * still ends "interrupted" with its JSON and without what it created; its --json's directory is
 * held from here (finish_job writes beneath it). 0, or -1 after saying why. */
static int prepare_job_target(struct target *t, uint32_t block_size, const char *json)
{
	/* what the run writes at its end goes beneath the directory its --json has now */
	if (json && safedir_hold_parent(&job_json_dir, json, job_json_at, sizeof job_json_at)) {
		fprintf(stderr, "dedisbench: --json %s: cannot hold its directory: %s\n", json, strerror(errno));
		return -1;
	}
	sigset_t stop_signals, old;
	sigemptyset(&stop_signals);
	stop_signals_set(&stop_signals);
	sigprocmask(SIG_BLOCK, &stop_signals, &old);
	stop_signals_catch(on_stop_signal);
	struct dd_err err;
	int rc = target_prepare(t, block_size, &err);
	if (rc) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		target_cleanup(t, false);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc ? -1 : 0;
}

/* A replay or backup run's end: its failure said, its JSON written (and freed). The exit status. */
static int finish_job(bool failed, const char *failure, json_t *doc, const char *json_path)
{
	int status = failed ? EXIT_RUN_FAILED : 0;
	if (failed)
		fprintf(stderr, "dedisbench: %s\n", failure);
	if (doc) {
		if (report_write_atomic(doc, job_json_dir.fd >= 0 ? job_json_at : json_path)) {
			fprintf(stderr, "dedisbench: cannot write %s: %s\n", json_path, strerror(errno));
			status = EXIT_RUN_FAILED;
		}
		json_decref(doc);
	}
	safedir_release(&job_json_dir);
	return status;
}

/* `dedisbench replay TRACE [OPTION]...` is `dedisbench --trace TRACE [OPTION]...`: one option
 * table for both, so argv[1] is rewritten in place. -1 when the sub-command lacks its TRACE. */
static int replay_argv(int argc, char **argv)
{
	static char trace_opt[] = "--trace";
	if (argc < 2 || strcmp(argv[1], "replay"))
		return 0;
	if (argc < 3 || argv[2][0] == '-')
		return -1;
	argv[1] = trace_opt;
	return 0;
}

/* An option given that the sub-workload does not use is refused: one line, -1. */
static int refuse_options(const struct bench_cli *cli, bool (*applies)(const char *), const char *what, const char *why)
{
	for (size_t i = 0; i < bench_option_count; i++) {
		const struct opt_row *d = &bench_option_table[i];
		if (!cli->given[i] || (d->name && applies(d->name)))
			continue;
		if (d->name)
			fprintf(stderr, "dedisbench: --%s does not apply to %s (%s)\n", d->name, what, why);
		else
			fprintf(stderr, "dedisbench: -%c does not apply to %s (%s)\n", d->short_opt, what, why);
		return -1;
	}
	return 0;
}

static bool sync_direct(const struct bench_options *o)
{
	return o->sync == SYNC_DIRECT || o->sync == SYNC_DIRECT_FSYNC;
}

static const struct ioengine_ops *chosen_ioengine(const struct bench_options *o)
{
	return ioengine_choice((size_t)o->ioengine);
}

/* A replay's or backup's target probed for the run (its I/O engine and O_DIRECT decided there,
 * as for every run): 0, or -1 after saying why. */
static int probe_job_target(const struct bench_options *o, struct target_request *req, struct target *t)
{
	struct dd_err err;
	if (target_probe_for_run(req, sync_direct(o), chosen_ioengine(o), t, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* --ioengine's rules for a replay or backup, as for a run: before the target is probed
 * (t NULL), or after (t: the engine fits its kind, the kernel supports it). 0, or -1 after
 * saying why. */
static int check_job_ioengine(struct bench_options *o, const struct target *t)
{
	struct dd_err err;
	if (t ? config_ioengine_fits(o, t, &err) : config_ioengine_rules(o, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The open(2) flags of a replay's or backup's transfers. */
static int job_open_flags(const struct bench_options *o, const struct target *t)
{
	return (t->direct ? O_DIRECT : 0) | (o->sync == SYNC_DSYNC ? O_DSYNC : 0);
}

static int cmd_replay(struct bench_cli *cli)
{
	struct bench_options *o = &cli->o;
	if (refuse_options(cli, replay_option_applies, "replay", "the trace says what to write where") ||
	    check_job_ioengine(o, NULL))
		return EXIT_BAD_INPUT;
	if (o->block_size != TRACE_BLOCK) {
		fprintf(stderr, "dedisbench: --block-size %llu: a replay writes 4 KiB blocks (the trace has one MD5 per 4 KiB)\n",
			(unsigned long long)o->block_size);
		return EXIT_BAD_INPUT;
	}
	static struct trace trace; /* large: not on the stack */
	struct dd_err trace_err;
	if (trace_load(o->trace, &trace, &trace_err)) {
		fprintf(stderr, "dedisbench: %s\n", trace_err.msg);
		trace_free(&trace);
		return EXIT_BAD_INPUT;
	}
	uint64_t seed = o->seed;
	if (!options_given(cli->given, "seed") && getrandom(&seed, sizeof seed, 0) != sizeof seed)
		seed = (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	o->seed = seed &= (1ULL << 53) - 1;
	static struct target target;
	/* a trace of reads only writes nothing: a read-only device takes it */
	struct target_request req = {.path = o->target, .procs = 1, .file_size = trace.end_bytes, .file_size_given = true,
				     .block_size = TRACE_BLOCK, .force = o->force,
				     .no_writes = trace.writes == 0, .size_from = "the trace's extent"};
	int status = EXIT_BAD_INPUT;
	struct dd_err oerr;
	if (probe_job_target(o, &req, &target))
		goto out;
	/* the JSON must not replace the target, the volume's files or the trace */
	if (config_check_outputs(&target, o, NULL, &oerr)) {
		fprintf(stderr, "dedisbench: %s\n", oerr.msg);
		goto out;
	}
	if (check_job_ioengine(o, &target))
		goto out;
	struct replay_job job = {.trace = &trace, .trace_path = o->trace, .target = &target, .seed = seed, .speed = o->speed,
				 .open_flags = job_open_flags(o, &target), .engine = target.io,
				 .engine_opts = ioengine_options(o, target.io),
				 .fsync_each = o->sync == SYNC_FSYNC || o->sync == SYNC_DIRECT_FSYNC, .stop = &stop_requested};
	status = EXIT_RUN_FAILED;
	if (prepare_job_target(&target, TRACE_BLOCK, o->json))
		goto out;
	struct replay_result res;
	struct dd_err err;
	if (replay_run(&job, &res, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
	} else {
		if (!o->quiet)
			replay_print(stdout, &job, o, &res);
		status = finish_job(res.failed || res.mismatch, res.failure, o->json ? replay_json(&job, o, &res) : NULL, o->json);
	}
	target_cleanup(&target, o->keep);
out:
	target_release(&target);
	trace_free(&trace);
	return status;
}

/* ---- --workload backup (issue 14) ---- */

static int cmd_backup(struct bench_cli *cli)
{
	struct bench_options *o = &cli->o;
	if (refuse_options(cli, backup_option_applies, "--workload backup", "the generations say what to write") ||
	    check_job_ioengine(o, NULL))
		return EXIT_BAD_INPUT;
	struct backup_rates rates;
	if (backup_parse_rates(o->backup_rates, &rates)) {
		fprintf(stderr, "dedisbench: --backup-rates '%s': give ADD:DEL:MOVE, three percentages from 0 to 100\n",
			o->backup_rates);
		return EXIT_BAD_INPUT;
	}
	if (o->procs * o->generations > 1024) {
		fprintf(stderr, "dedisbench: --procs %llu x --generations %llu: at most 1024 files or regions\n",
			(unsigned long long)o->procs, (unsigned long long)o->generations);
		return EXIT_BAD_INPUT;
	}
	if (o->compress == COMPRESS_DIST && !options_given(cli->given, "compress"))
		o->compress = 2; /* Data Domain's example: about 2:1 local compression per generation */
	uint64_t seed = o->seed;
	if (!options_given(cli->given, "seed") && getrandom(&seed, sizeof seed, 0) != sizeof seed)
		seed = (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	o->seed = seed &= (1ULL << 53) - 1;
	static struct target target;
	struct target_request req = {.path = o->target, .procs = (unsigned)(o->procs * o->generations),
				     .file_size = o->file_size, .file_size_given = options_given(cli->given, "file-size"),
				     .block_size = (uint32_t)o->block_size, .force = o->force};
	struct dd_err err;
	int status = EXIT_BAD_INPUT;
	struct dd_err oerr;
	if (probe_job_target(o, &req, &target))
		goto out;
	/* the JSON must not replace a generation's file, the volume's files or the --config file */
	if (config_check_outputs(&target, o, NULL, &oerr)) {
		fprintf(stderr, "dedisbench: %s\n", oerr.msg);
		goto out;
	}
	if (check_job_ioengine(o, &target))
		goto out;
	if (target.ops->flags & TARGET_STORES_NOTHING) {
		fprintf(stderr, "dedisbench: --workload backup writes a directory (a file per generation), or a file, a "
				"device or engine:DIR (a region each), not null\n");
		goto out;
	}
	/* Before anything is written: the space each generation takes is read after it (files sparse) */
	static struct space_probe space;
	if (space_probe_init(&space, &target, o->space_cmd, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		goto out;
	}
	target.sparse = true;
	struct backup_job job = {.target = &target, .streams = (unsigned)o->procs, .generations = (unsigned)o->generations,
				 .blocks = target.region_size / o->block_size, .block_size = (uint32_t)o->block_size,
				 .compress = o->compress == COMPRESS_DIST ? 1 : (uint32_t)o->compress, .rates = rates,
				 .seed = seed, .open_flags = job_open_flags(o, &target), .engine = target.io,
				 .engine_opts = ioengine_options(o, target.io), .space = &space, .stop = &stop_requested};
	status = EXIT_RUN_FAILED;
	if (prepare_job_target(&target, (uint32_t)o->block_size, o->json))
		goto out;
	struct backup_result res;
	if (backup_run(&job, &res, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
	} else {
		if (!o->quiet)
			backup_print(stdout, &job, o, &res);
		status = finish_job(res.failed, res.failure, o->json ? backup_json(&job, o, &res) : NULL, o->json);
	}
	backup_free(&res);
	target_cleanup(&target, o->keep);
out:
	target_release(&target);
	return status;
}

/* ---- dedisbench suite, dedisbench compare A B ... (issue 14) ---- */

static bool compare_option_applies(const char *name)
{
	return !strcmp(name, "output-dir") || !strcmp(name, "plot") || !strcmp(name, "quiet");
}

/* The table (and with --output-dir the CSV, with --plot the pictures, written beneath dir_at: the
 * directory by the name it had when the command began) of inputs already loaded. */
static int show_comparison(struct runcmp_input *in, unsigned n, const struct bench_options *o, const char *dir_at)
{
	int status = 0;
	struct dd_err msg;
	runcmp_unique_labels(in, n);
	if (!o->quiet)
		runcmp_print(stdout, in, n);
	if (o->output_dir && runcmp_write(dir_at, in, n, o->plot, &msg)) {
		fprintf(stderr, "dedisbench: %s\n", msg.msg);
		status = EXIT_RUN_FAILED;
	}
	for (unsigned i = 0; i < n; i++)
		runcmp_free(&in[i]);
	return status;
}

static int cmd_compare(struct bench_cli *cli, char **paths, unsigned n)
{
	struct bench_options *o = &cli->o;
	if (refuse_options(cli, compare_option_applies, "compare", "it reads results"))
		return EXIT_BAD_INPUT;
	if (o->plot && !o->output_dir) {
		fprintf(stderr, "dedisbench: compare: --plot needs --output-dir\n");
		return EXIT_BAD_INPUT;
	}
	static struct runcmp_input in[RUNCMP_MAX_INPUTS];
	struct dd_err msg;
	for (unsigned i = 0; i < n; i++)
		if (runcmp_load(paths[i], &in[i], &msg)) {
			fprintf(stderr, "dedisbench: compare: %s\n", msg.msg);
			for (unsigned k = 0; k <= i; k++)
				runcmp_free(&in[k]);
			return EXIT_BAD_INPUT;
		}
	static const struct target no_target = {.ops = &target_null_ops};
	struct dd_err oerr;
	bool bad_dir = o->output_dir && config_check_output(&no_target, "--output-dir", o->output_dir, true, &oerr);
	if (!bad_dir && o->output_dir && mkdir(o->output_dir, 0755) && errno != EEXIST) {
		snprintf(oerr.msg, sizeof oerr.msg, "--output-dir %s: %s", o->output_dir, strerror(errno));
		bad_dir = true;
	}
	if (bad_dir) {
		fprintf(stderr, "dedisbench: compare: %s\n", oerr.msg);
		for (unsigned k = 0; k < n; k++)
			runcmp_free(&in[k]);
		return EXIT_BAD_INPUT;
	}
	return show_comparison(in, n, o, o->output_dir);
}

static int cmd_suite(struct bench_cli *cli, char **args, int nargs)
{
	struct bench_options *o = &cli->o;
	if (refuse_options(cli, suite_option_applies, "suite", "each phase sets it"))
		return EXIT_BAD_INPUT;
	if (!o->output_dir) {
		fprintf(stderr, "dedisbench: suite: give --output-dir DIR (each phase's results go there)\n");
		return EXIT_BAD_INPUT;
	}
	char probe[4200];
	snprintf(probe, sizeof probe, "%s/01-seq-fill.json", o->output_dir);
	if (access(probe, F_OK) == 0) {
		fprintf(stderr, "dedisbench: suite: --output-dir %s holds an earlier suite's results; give a new directory\n",
			o->output_dir);
		return EXIT_BAD_INPUT;
	}
	/* The target each phase will probe, probed once before anything is made: a path that is not
	 * there or a device holding a filesystem is bad input, not phase 01's failure. */
	static struct target target;
	struct target_request req = {.path = o->target, .procs = (unsigned)o->procs, .file_size = o->file_size,
				     .file_size_given = options_given(cli->given, "file-size"),
				     .block_size = (uint32_t)o->block_size, .force = o->force};
	struct dd_err err;
	int probed = target_probe_for_run(&req, sync_direct(o), chosen_ioengine(o), &target, &err) ||
		     config_check_output(&target, "--output-dir", o->output_dir, true, &err);
	target_release(&target);
	if (probed) {
		fprintf(stderr, "dedisbench: suite: %s\n", err.msg);
		return EXIT_BAD_INPUT;
	}
	if (mkdir(o->output_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "dedisbench: --output-dir %s: %s\n", o->output_dir, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	/* held from here: every phase, and the comparison at the end, written beneath the directory
	 * this name has now (the phases' own names for it lead there through /proc/PID/fd) */
	static struct safedir held;
	static char at[PATH_MAX];
	if (safedir_hold(&held, o->output_dir, at, sizeof at)) {
		fprintf(stderr, "dedisbench: --output-dir %s: %s\n", o->output_dir, strerror(errno));
		return EXIT_RUN_FAILED;
	}
	stop_signals_catch(on_stop_signal);
	struct suite_job job = {.self = "/proc/self/exe", .args = args, .nargs = nargs, .dir = o->output_dir,
				.at = at, .quiet = o->quiet, .stop = &stop_requested};
	static struct runcmp_input in;
	int rc = -1;
	if (suite_run(&job, &err))
		rc = stop_requested ? 0 : EXIT_RUN_FAILED; /* interrupted: exit 0 */
	else if (runcmp_load(at, &in, &err))
		rc = EXIT_RUN_FAILED;
	if (rc >= 0)
		fprintf(stderr, "dedisbench: suite: %s\n", err.msg);
	else
		rc = show_comparison(&in, 1, o, at);
	safedir_release(&held);
	return rc;
}

/* The sub-command word argv[1] may be: suite (its options pass to every phase) or compare (its
 * inputs come before the options), taken out of argv. */
struct subcommand {
	bool suite, compare;
	char **passthrough;
	int npass;
	char *inputs[RUNCMP_MAX_INPUTS];
	unsigned ninputs;
};

/* 0, or -1 after saying why. */
static int split_subcommand(int *argc, char **argv, struct subcommand *sub)
{
	memset(sub, 0, sizeof *sub);
	sub->suite = *argc > 1 && !strcmp(argv[1], "suite");
	sub->compare = *argc > 1 && !strcmp(argv[1], "compare");
	if (sub->suite) {
		sub->npass = *argc - 2;
		memmove(argv + 1, argv + 2, (size_t)(*argc - 1) * sizeof *argv); /* argv[argc] (NULL) too */
		(*argc)--;
		sub->passthrough = argv + 1;
	} else if (sub->compare) {
		int k = 2;
		while (k < *argc && argv[k][0] != '-') {
			if (sub->ninputs == RUNCMP_MAX_INPUTS) {
				fprintf(stderr, "dedisbench: compare: at most %d inputs\n", RUNCMP_MAX_INPUTS);
				return -1;
			}
			sub->inputs[sub->ninputs++] = argv[k++];
		}
		if (sub->ninputs < 1) {
			fprintf(stderr, "dedisbench: compare: give the results: dedisbench compare A.json|SUITE-DIR [B ...] [--output-dir DIR --plot]\n");
			return -1;
		}
		memmove(argv + 1, argv + k, (size_t)(*argc - k + 1) * sizeof *argv);
		*argc -= k - 1;
	}
	return 0;
}

/* The command line parsed; --help, --version and the build's man page answered here. The exit
 * status when that is all (or the line is bad), else -1: go on with cli. */
static int parse_command_line(int argc, char **argv, struct bench_cli *cli)
{
	struct dd_err err = {.resource = false};
	if (options_parse(argc, argv, cli, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		options_free(&cli->o);
		return err.resource ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	if (cli->want_help || cli->want_version) {
		if (cli->want_help)
			options_print_help(stdout, "dedisbench");
		else
			printf("dedisbench %s\n", PACKAGE_VERSION);
		options_free(&cli->o);
		return 0;
	}
	if (getenv("DEDIS_PRINT_COMPLETION")) { /* read by the bash completion (completion/) */
		options_print_completion(stdout);
		options_free(&cli->o);
		return 0;
	}
	if (getenv("DEDIS_PRINT_MAN_OPTIONS")) { /* used by the build to generate the man page */
		options_print_man(stdout);
		options_free(&cli->o);
		return 0;
	}
	return -1;
}

/* An option of replay or of --workload backup given to another run: -1 after saying so. */
static int refuse_misplaced_options(const struct bench_cli *cli)
{
	static const char *const backup_only[] = {"generations", "backup-rates", NULL}, *const replay_only[] = {"speed", NULL};
	for (int i = 0; !cli->o.trace && replay_only[i]; i++)
		if (options_given(cli->given, replay_only[i])) {
			fprintf(stderr, "dedisbench: --%s applies to replay (dedisbench replay TRACE)\n", replay_only[i]);
			return -1;
		}
	for (int i = 0; !cli->o.trace && cli->o.workload != WORKLOAD_BACKUP && backup_only[i]; i++)
		if (options_given(cli->given, backup_only[i])) {
			fprintf(stderr, "dedisbench: --%s applies to --workload backup\n", backup_only[i]);
			return -1;
		}
	return 0;
}

/* A run's start, up to its target prepared: the space before it, --output-dir made, the outputs'
 * directories held, the ledger opened. 0, or the exit status after saying why (cfg freed). */
static int start_run(struct bench_config *cfg, struct space_probe *space, bool *made_output_dir)
{
	/* The target's used space before anything is written (issue 14: observed savings). */
	struct dd_err err;
	if (space_begin(cfg, space, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		config_free(cfg);
		return EXIT_BAD_INPUT;
	}
	if (space->source == SPACE_COMMAND)
		target_measured_by_command(&cfg->target); /* a volume it formats is sparse: the command sees what is written */
	*made_output_dir = cfg->o.output_dir && mkdir(cfg->o.output_dir, 0755) == 0;
	if (cfg->o.output_dir && !*made_output_dir && errno != EEXIST) {
		int e = errno;
		fprintf(stderr, "dedisbench: --output-dir %s: %s\n", cfg->o.output_dir, strerror(e));
		config_free(cfg);
		return errmsg_resource(e) ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	/* From here what the run writes at its end goes beneath the directories its outputs have now */
	if (config_hold_outputs(cfg, &err) || config_open_ledger(cfg, &err)) {
		/* a directory held, the ledger opened: out of memory or descriptors is no bad input */
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		drop_output_dir(cfg, *made_output_dir);
		config_free(cfg);
		return err.resource ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	/* A ledger kept by an earlier run describes data the target must keep. */
	cfg->target.keep_data = cfg->ledger_map.existed;
	/* From here SIGINT / SIGTERM stop the run: held pending while the target is prepared (a volume
	 * formatted, a device checked), then taken by the launcher's signalfd before any worker
	 * starts, so the run ends "interrupted" with its JSON and without what it created. */
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	stop_signals_set(&stop_signals);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	struct dd_err terr;
	if (target_prepare(&cfg->target, (uint32_t)cfg->o.block_size, &terr)) {
		fprintf(stderr, "dedisbench: %s\n", terr.msg);
		target_cleanup(&cfg->target, false);
		failure_json(cfg, terr.msg);
		drop_output_dir(cfg, *made_output_dir);
		config_free(cfg);
		return EXIT_RUN_FAILED;
	}
	return 0;
}

/* How a block nobody wrote is checked: as zeros where the target is known to start as them;
 * elsewhere it holds what an earlier run left: with its ledger, only what the ledger records is
 * checked; without one, every block is identified from its bytes (against the layout when that
 * run's seed is given). */
static enum verify_unknown unknown_blocks(const struct bench_config *cfg)
{
	return target_zeros_known(&cfg->target, cfg->populate != POPULATE_NONE, cfg->ledger_map.existed) ? UNKNOWN_ZEROS
	       : cfg->ledger_map.existed || cfg->o.verify == VERIFY_NONE ? UNKNOWN_SKIP
	       : cfg->have_verify_layout ? UNKNOWN_LAYOUT
					 : UNKNOWN_IDENTIFY;
}

/* A finished run's reports: the space after it, the summary, the status, the files and the JSON.
 * The exit status. */
static int report_run(struct bench_config *cfg, struct space_probe *space, struct run_result *res)
{
	char space_failed[1100] = "";
	int status = 0;
	struct dd_err err;
	if (space_end(cfg, space, res, &err)) {
		snprintf(space_failed, sizeof space_failed, "space after the run: %s", err.msg);
		fprintf(stderr, "dedisbench: %s\n", space_failed);
		status = EXIT_RUN_FAILED;
	}
	if (!cfg->o.quiet)
		results_print(stdout, cfg, res);
	/* the JSON's "status" says the same (results_json asks results_status too) */
	if (results_status(cfg, res, &err) >= RUN_FAILED) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (space_failed[0]) /* (after the run's own failure, if any, was said) */
		results_fail_late(res, space_failed);
	if (results_write_reports(cfg, res, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		results_fail_late(res, err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (results_write_plots(cfg, res, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		results_fail_late(res, err.msg);
		status = EXIT_RUN_FAILED;
	}
	if (cfg->o.json) {
		json_t *doc = results_json(cfg, res);
		if (report_write_atomic(doc, config_output_at(cfg, OUT_JSON))) {
			fprintf(stderr, "dedisbench: cannot write %s: %s\n", cfg->o.json, strerror(errno));
			status = EXIT_RUN_FAILED;
		}
		json_decref(doc);
	}
	return status;
}

/* A run of the option table's workloads (not replay, backup, suite or compare). */
static int cmd_run(struct bench_cli *cli)
{
	struct bench_config cfg;
	struct dd_err err = {.resource = false};
	if (config_build(cli, &cfg, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		config_free(&cfg);
		return err.resource ? EXIT_RUN_FAILED : EXIT_BAD_INPUT; /* memory or descriptors ran out: not the input */
	}
	if (cfg.dist.merged_rows && !cfg.o.quiet)
		fprintf(stderr, "dedisbench: warning: %s repeats %zu records (original DEDISbench format); "
				"they were added together, as DEDISbench did\n", cfg.dist_path, cfg.dist.merged_rows);
	struct space_probe space;
	bool made_output_dir;
	int status = start_run(&cfg, &space, &made_output_dir);
	if (status)
		return status;
	cfg.unknown = unknown_blocks(&cfg);
	struct run_result res;
	struct dd_err failure;
	if (launcher_run(&cfg, &res, &failure)) {
		fprintf(stderr, "dedisbench: %s\n", failure.msg);
		failure_json(&cfg, failure.msg);
		status = EXIT_RUN_FAILED;
	} else {
		status = report_run(&cfg, &space, &res);
		results_free(&res);
	}
	target_cleanup(&cfg.target, cfg.o.keep);
	config_free(&cfg);
	return status;
}

/* A run of options (of the command line, or of a job): a replay, a backup or a run of the option
 * table's workloads. The exit status; takes cli->o. */
static int run_options(struct bench_cli *cli)
{
	int rc;
	if (refuse_misplaced_options(cli))
		rc = EXIT_BAD_INPUT;
	else if (cli->o.trace || cli->o.workload == WORKLOAD_BACKUP)
		rc = cli->o.trace ? cmd_replay(cli) : cmd_backup(cli);
	else
		return cmd_run(cli); /* (config_build took cli->o) */
	options_free(&cli->o);
	return rc;
}

/* --config naming a job file of several jobs ([global], stonewall, two jobs or more): every job
 * checked, then run (one job: here, as the options of a plain run). The exit status, or -1: no
 * such file, the command line is a run of its own. */
static int run_job_file(int argc, char **argv)
{
	static struct jobfile jf; /* large: not on the stack */
	struct dd_err err = {.resource = false};
	int rc = jobfile_load(argc, argv, &jf, &err);
	if (rc < 0) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		rc = err.resource ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	} else if (rc == 0) {
		rc = -1;
	} else if (jf.njobs == 1) {
		jf.jobs[0].cli_taken = true;
		rc = run_options(&jf.jobs[0].cli);
	} else {
		stop_signals_catch(on_stop_signal);
		rc = jobrun_all(&jf, run_options, stdout, stderr, &stop_requested);
	}
	jobfile_free(&jf);
	return rc;
}

static int bench_main(int argc, char **argv)
{
	struct bench_cli cli;
	if (replay_argv(argc, argv)) {
		fprintf(stderr, "dedisbench: replay: give the trace first: dedisbench replay TRACE --target PATH [OPTION]...\n");
		return EXIT_BAD_INPUT;
	}
	static struct subcommand sub;
	if (split_subcommand(&argc, argv, &sub))
		return EXIT_BAD_INPUT;
	int rc = sub.suite || sub.compare ? -1 : run_job_file(argc, argv);
	if (rc >= 0)
		return rc;
	struct dd_err err;
	if (sub.suite && jobfile_refuse_several(argc, argv, "dedisbench suite", &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg); /* (each phase would run every job) */
		return EXIT_BAD_INPUT;
	}
	rc = parse_command_line(argc, argv, &cli);
	if (rc >= 0)
		return rc;
	if (!sub.compare && !cli.o.target) {
		/* nothing is written where the user did not say: a bare dedisbench filled the current
		 * directory with 4 GiB */
		if (argc == 1) {
			options_print_usage(stderr, "dedisbench");
			fputs("PATH: a directory (. for the current one), a file, a device, engine:DIR or null.\n"
			      "Every option: dedisbench --help\n", stderr);
		} else {
			fputs("dedisbench: no target: give --target PATH (a directory, file, device, engine:DIR or "
			      "null; --target . for the current directory)\n", stderr);
		}
		rc = EXIT_BAD_INPUT;
	} else if (!sub.suite && !sub.compare) {
		return run_options(&cli);
	} else if (refuse_misplaced_options(&cli))
		rc = EXIT_BAD_INPUT;
	else
		rc = sub.suite ? cmd_suite(&cli, sub.passthrough, sub.npass) : cmd_compare(&cli, sub.inputs, sub.ninputs);
	options_free(&cli.o);
	return rc;
}

int main(int argc, char **argv)
{
	/* A reader of standard output that went away (| head, a pager quit) must not end a run
	 * midway: killed by SIGPIPE at the summary, it left its workers' files and its run lock, and
	 * wrote no JSON. The write fails instead, and is said at the end. */
	stop_signals_catch_pipe();
	int rc = bench_main(argc, argv);
	errno = 0;
	if ((fflush(stdout) || ferror(stdout)) && rc == 0) {
		fprintf(stderr, "dedisbench: standard output: %s\n", errno ? strerror(errno) : "a write failed");
		rc = EXIT_RUN_FAILED;
	}
	return rc;
}
