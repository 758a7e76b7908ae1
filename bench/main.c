/* main.c - dedisbench's entry point: parse and validate (bad input: one line, exit 2, nothing
 * written), prepare the target, run, report; the only place that decides the exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "launcher.h"
#include "report.h"
#include "results.h"
#include "space.h"

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
	(void)report_write_atomic(doc, c->o.json);
	json_decref(doc);
}

/* The --output-dir this run created, removed again when the run leaves nothing in it. */
static void drop_output_dir(const struct bench_config *c, bool created)
{
	if (created)
		rmdir(c->o.output_dir);
}

int main(int argc, char **argv)
{
	struct bench_cli cli;
	struct opt_error err;
	if (options_parse(argc, argv, &cli, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		options_free(&cli.o);
		return EXIT_BAD_INPUT;
	}
	if (cli.want_help || cli.want_version) {
		if (cli.want_help)
			options_print_help(stdout, "dedisbench");
		else
			printf("dedisbench %s\n", PACKAGE_VERSION);
		options_free(&cli.o);
		return 0;
	}
	if (getenv("DEDIS_PRINT_MAN_OPTIONS")) { /* used by the build to generate the man page */
		options_print_man(stdout);
		options_free(&cli.o);
		return 0;
	}
	struct bench_config cfg;
	if (config_build(&cli, &cfg, &err)) {
		fprintf(stderr, "dedisbench: %s\n", err.msg);
		config_free(&cfg);
		return EXIT_BAD_INPUT;
	}
	if (cfg.dist.merged_rows && !cfg.o.quiet)
		fprintf(stderr, "dedisbench: warning: %s repeats %zu records (original DEDISbench format); "
				"they were added together, as DEDISbench did\n", cfg.dist_path, cfg.dist.merged_rows);
	char msg[1024];
	/* The target's used space before anything is written (issue 14: observed savings). */
	struct space_probe space;
	if (space_begin(&cfg, &space, msg, sizeof msg)) {
		fprintf(stderr, "dedisbench: %s\n", msg);
		config_free(&cfg);
		return EXIT_BAD_INPUT;
	}
	bool made_output_dir = cfg.o.output_dir && mkdir(cfg.o.output_dir, 0755) == 0;
	if (cfg.o.output_dir && !made_output_dir && errno != EEXIST) {
		fprintf(stderr, "dedisbench: --output-dir %s: %s\n", cfg.o.output_dir, strerror(errno));
		config_free(&cfg);
		return EXIT_BAD_INPUT;
	}
	if (config_open_ledger(&cfg, msg, sizeof msg)) {
		fprintf(stderr, "dedisbench: %s\n", msg);
		drop_output_dir(&cfg, made_output_dir);
		config_free(&cfg);
		return EXIT_BAD_INPUT;
	}
	/* A ledger kept by an earlier run describes data the target must keep. */
	cfg.target.keep_data = cfg.ledger_map.existed;
	if (target_prepare(&cfg.target, (uint32_t)cfg.o.block_size, msg, sizeof msg)) {
		fprintf(stderr, "dedisbench: %s\n", msg);
		target_cleanup(&cfg.target, false);
		failure_json(&cfg, msg);
		drop_output_dir(&cfg, made_output_dir);
		config_free(&cfg);
		return EXIT_RUN_FAILED;
	}
	/* Blocks nobody wrote read as zeros only on a target this run created or cleared. */
	bool zeros_known = cfg.target.kind == TARGET_ENGINE || cfg.populate != POPULATE_NONE ||
			   (cfg.target.kind == TARGET_DIR && !cfg.ledger_map.existed && target_all_created(&cfg.target));
	if (cfg.ledger_map.existed)
		zeros_known = cfg.target.kind == TARGET_ENGINE;
	/* Elsewhere they hold what an earlier run left: with its ledger, only what the ledger records
	 * is checked; without one, every block is identified from its bytes (against the layout when
	 * that run's seed is given). */
	cfg.unknown = zeros_known		  ? UNKNOWN_ZEROS
		      : cfg.ledger_map.existed || cfg.o.verify == VERIFY_NONE ? UNKNOWN_SKIP
		      : cfg.have_verify_layout	  ? UNKNOWN_LAYOUT
						  : UNKNOWN_IDENTIFY;
	struct run_result res;
	int status = 0;
	if (launcher_run(&cfg, &res, msg, sizeof msg)) {
		fprintf(stderr, "dedisbench: %s\n", msg);
		failure_json(&cfg, msg);
		status = EXIT_RUN_FAILED;
	} else {
		if (space_end(&cfg, &space, &res, msg, sizeof msg)) {
			fprintf(stderr, "dedisbench: space after the run: %s\n", msg);
			status = EXIT_RUN_FAILED;
		}
		if (!cfg.o.quiet)
			results_print(stdout, &cfg, &res);
		if (res.failed) {
			fprintf(stderr, "dedisbench: %s\n", res.failure);
			status = EXIT_RUN_FAILED;
		} else if (res.read_mismatches + res.final_mismatches) {
			fprintf(stderr, "dedisbench: verification failed: %llu mismatched block%s; first: %s\n",
				(unsigned long long)(res.read_mismatches + res.final_mismatches),
				res.read_mismatches + res.final_mismatches == 1 ? "" : "s", res.mismatch[0]);
			status = EXIT_RUN_FAILED;
		} else if (cfg.o.verify != VERIFY_NONE && !res.interrupted && res.read_checks + res.final_checks == 0) {
			fprintf(stderr, "dedisbench: --verify %s checked no block%s\n", verify_names[cfg.o.verify],
				cfg.unknown == UNKNOWN_SKIP ? ": the ledger records no write to what the run read, and "
							      "nothing else is known about those blocks"
							    : "");
			status = EXIT_RUN_FAILED;
		} else if (res.have_engine && res.engine_unchecked) {
			fprintf(stderr, "dedisbench: the engine volume could not be validated: %s\n", res.mismatch[res.nmismatch - 1]);
			status = EXIT_RUN_FAILED;
		} else if (res.have_engine && !res.engine_match) {
			fprintf(stderr, "dedisbench: the engine does not hold what the run wrote%s%s\n",
				res.nmismatch ? ": " : "", res.nmismatch ? res.mismatch[0] : "");
			status = EXIT_RUN_FAILED;
		}
		if (results_write_reports(&cfg, &res)) {
			fprintf(stderr, "dedisbench: cannot write a report: %s\n", strerror(errno));
			status = EXIT_RUN_FAILED;
		}
		if (results_write_plots(&cfg, &res, msg, sizeof msg)) {
			fprintf(stderr, "dedisbench: %s\n", msg);
			status = EXIT_RUN_FAILED;
		}
		if (cfg.o.json) {
			json_t *doc = results_json(&cfg, &res);
			if (report_write_atomic(doc, cfg.o.json)) {
				fprintf(stderr, "dedisbench: cannot write %s: %s\n", cfg.o.json, strerror(errno));
				status = EXIT_RUN_FAILED;
			}
			json_decref(doc);
		}
		results_free(&res);
	}
	target_cleanup(&cfg.target, cfg.o.keep);
	config_free(&cfg);
	return status;
}
