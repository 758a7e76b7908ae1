/* merge.h - dedisgen merge: the counts of several Berkeley DB analyses (same block size and
 * hash) added into one counter, and their metadata summed (the DEDISgen-utils -m). */
#ifndef DEDIS_GEN_MERGE_H
#define DEDIS_GEN_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include "counter.h"
#include "index/index.h"

/* The block sizes analysed in every one of dirs (sorted). Returns how many, or -1 with why
 * filled: a dir without analyses, or whose sizes differ from the others'. */
int merge_sizes(char *const *dirs, int ndirs, uint64_t *sizes, int max, char *why, size_t whylen);
/* Opens each dir's analysis at block_size (complete, one hash for all), adds its counts to c and
 * its figures to *sum (sources appended; sum->hash set from the first). Returns 0 or -1. */
int merge_into(char *const *dirs, int ndirs, uint64_t block_size, uint64_t cache, struct counter *c,
	       struct index_meta *sum, char *why, size_t whylen);

#endif
