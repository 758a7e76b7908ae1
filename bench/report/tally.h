/* tally.h - what a run wrote and touched: copies per duplicated content id and accesses per
 * block, compact enough to ship from each worker to the launcher and merge into dist rows. */
#ifndef DEDIS_BENCH_TALLY_H
#define DEDIS_BENCH_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"
#include "lib/u64map.h"

/* Open-addressing map content id -> times written (ids < 2^63; unique ids are only counted). */
struct id_counts {
	struct u64map map; /* id -> times written */
	uint64_t unique;   /* writes of fresh unique ids: each is its own content, written once */
};

int idc_init(struct id_counts *m, size_t cap_hint);
int idc_add(struct id_counts *m, uint64_t id, uint64_t n);
void idc_free(struct id_counts *m);
/* Walk the map: start with *slot = 0; returns false at the end. */
bool idc_next(const struct id_counts *m, size_t *slot, uint64_t *id, uint64_t *count);
/* The distribution of what was written: one row per copies-count (dups = copies - 1). */
int idc_to_dist(const struct id_counts *m, struct dist *out);

/* Frequency of access counts: how many blocks were accessed `count` times. */
struct access_freq {
	uint64_t *count;
	uint64_t *blocks;
	size_t n, cap;
};
/* Build from a per-block counter array. */
int afreq_from_counts(struct access_freq *f, const uint32_t *per_block, uint64_t nblocks);
int afreq_add(struct access_freq *f, uint64_t count, uint64_t blocks);
/* Share of all accesses that went to the most-accessed `fraction` of blocks (0.10 = hottest 10 %). */
double afreq_hottest_share(const struct access_freq *f, double fraction);
/* Fold equal counts together and sort by count (ascending). */
int afreq_sort(struct access_freq *f);
void afreq_free(struct access_freq *f);

/* Wire format between a worker and the launcher (a memfd): the id counts and the access
 * frequencies. */
int tally_write(int fd, const struct id_counts *ids, const struct access_freq *af);
int tally_read_merge(int fd, struct id_counts *ids, struct access_freq *af);

#endif
