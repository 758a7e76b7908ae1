/* locality.h - the copied-runs layout: the scaled contents laid out as a stream of extents - new
 * stretches, runs of copies of earlier sequences, zero runs - with a distribution's [locality]. */
#ifndef DEDIS_BENCH_LOCALITY_H
#define DEDIS_BENCH_LOCALITY_H

#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"

struct scaled_layout;

/* Slots [start, start + len) hold ids base, base + 1, ... (or the zero block, base 0 and zero). */
struct locality_extent {
	uint64_t start;
	uint64_t base;
	uint32_t len;
	uint32_t zero;
};

/* What the layout built (the summary and the tests read it). */
struct locality_stats {
	uint64_t groups;          /* copied sequences: runs of contents of one row, copied together */
	uint64_t new_stretches, dup_runs;
	uint64_t first_blocks, dup_blocks, zero_dups;
	uint64_t shifted_runs, shifted_blocks; /* shifted copies (shifted.h) in place of unique blocks */
};

struct locality_layout {
	struct locality_extent *ext; /* sorted by start, covering [0, blocks) */
	size_t n;
	uint64_t blocks;
	struct locality_stats stats;
};

/* Lay out the contents of `rows` (exactly: each content keeps its copy count) as a stream that
 * alternates stretches of first occurrences and runs of duplicates with `loc`'s length
 * histograms. Contents are grouped, per row, into sequences with the lengths of `loc`'s copy
 * runs (calibrated so the copies make as many copied runs as the data's); a group's first
 * instance sits in a new stretch, its other instances are whole copies of that sequence in
 * duplicate runs (so their sources continue one another, as a copied file's do), interleaved
 * with zero runs drawn per block. Deterministic in seed. Returns 0 or -1 (out of memory). */
int locality_build(struct locality_layout *out, const struct scaled_layout *rows, const struct dist_locality *loc,
		   uint64_t seed);
void locality_free(struct locality_layout *l);

/* The content id at slot (< blocks). *cursor is the caller's extent hint: sequential slots cost
 * O(1), a jump a binary search. */
uint64_t locality_content(const struct locality_layout *l, uint64_t slot, size_t *cursor);

#endif
