/* runcmp.h - `dedisbench compare A B ...`: the results of runs (--json files, or directories of
 * a suite's phases) side by side per phase: throughput, latency, observed savings, CPU, memory. */
#ifndef DEDIS_BENCH_RUNCMP_H
#define DEDIS_BENCH_RUNCMP_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "lib/errmsg.h"

#define RUNCMP_MAX_PHASES 32
#define RUNCMP_MAX_INPUTS 16
/* An efficiency (ideal bytes / observed bytes) above this is not a result: no store keeps less
 * than the ideal (the engine's packing stays within 3 % of it), so the used space moved for
 * another reason - other writers on the file system freed space during the phase. */
#define RUNCMP_EFFICIENCY_NOISE 1.05

/* One input: a JSON file (one phase, named by its workload) or a suite directory (its phases,
 * NN-name.json in name order). */
struct runcmp_input {
	char label[80];           /* the table's: the target */
	char short_label[40];     /* the plots' key: the input's own name (a suite directory's, a file's) */
	unsigned nphases;
	char name[RUNCMP_MAX_PHASES][48];
	json_t *doc[RUNCMP_MAX_PHASES];
};

/* 0, or -1 with "PATH: why" (not a dedisbench result, unreadable, no phase). */
int runcmp_load(const char *path, struct runcmp_input *in, struct dd_err *err);
void runcmp_free(struct runcmp_input *in);
/* The table: per phase (the first input's order, then others' own), a row per input. */
/* Two inputs of one target (a system measured twice) get "(#k)" after the later one's label, so
 * the table's rows and the CSV's columns tell them apart; so do two inputs of one short label. */
void runcmp_unique_labels(struct runcmp_input *in, unsigned n);
void runcmp_print(FILE *f, const struct runcmp_input *in, unsigned n);
/* After the table: a line per phase whose efficiency is noise (above RUNCMP_EFFICIENCY_NOISE),
 * whose saved and efficiency cells say "noise" instead of a figure. */
/* DIR/compare.csv (a noisy phase's saved as 0: not measured), and with plot compare-iops.png,
 * compare-latency.png and compare-saved.png. 0, or -1 with why. */
int runcmp_write(const char *dir, const struct runcmp_input *in, unsigned n, bool plot, struct dd_err *err);

#endif
