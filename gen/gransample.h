/* gransample.h - the granularity curve (dedis-dist(5) [granularity 1]): which 128 KiB windows are
 * sampled, their pieces of 4 to 128 KiB compressed, each thread's byte sums added up at the end. */
#ifndef DEDIS_GEN_GRANSAMPLE_H
#define DEDIS_GEN_GRANSAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/compmodel.h"
#include "lib/distfile.h"
#include "lib/errmsg.h"

/* Whether the window starting at stream byte `spos` is measured at period P (rate 1/P, P a power
 * of two): one window in each run of P, chosen by a hash of the run's number. Stratified rather
 * than independent choices, so that a file's regions (text, then binaries...) are each sampled in
 * proportion. Deterministic whatever the thread timing. About 256 windows put the curve within
 * 3 % of the whole file's on an SQLite file and a tar of /usr/share but 7 % below it at 128 KiB on
 * an ext4 image pair (its growth 4 % low); about 1024 put all three within 1.5 % (2 CPU-s more per
 * scan at most); 32 to 64 missed by up to 17 %. */
static inline bool gran_selected(uint64_t period, uint64_t spos)
{
	uint64_t w = spos / DIST_GRAN_WINDOW, x = (w / period) * UINT64_C(0x9e3779b97f4a7c15) ^ UINT64_C(0x6a09e667f3bcc909);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return ((x ^ (x >> 31)) & (period - 1)) == (w & (period - 1));
}

/* The automatic rate for `bytes` of data (0: unknown): about 1024 windows (see gran_selected), at
 * least 1/1024 of them. */
double gran_auto_rate(uint64_t bytes);

/* The scan's sampler, shared by the hashing threads: its rate and the sums they hand in. */
struct gran_sampler;
/* p in (0, 1], rounded to 1 / a power of two. NULL out of memory. */
struct gran_sampler *gran_sampler_new(double p);
uint64_t gran_sampler_period(const struct gran_sampler *s);
/* A thread's sums (a struct dist_gran without present or rate) added in, under the lock. */
void gran_sampler_add(struct gran_sampler *s, const struct dist_gran *part);
/* The section (present when a window was measured). */
void gran_sampler_result(const struct gran_sampler *s, struct dist_gran *out);
void gran_sampler_free(struct gran_sampler *s);

/* One window is measured by compmodel_measure_window (lib/compmodel.h), which dedisbench's
 * vocabulary fit (bench/content/grancal.c) shares. */

#endif
