/* shifted.h - shifted copies in the copied-runs layout: unique stretches turned into copies of
 * earlier sequences shifted by part of a block, so a content-defined chunker finds what [cdc 1] did. */
#ifndef DEDIS_BENCH_SHIFTED_H
#define DEDIS_BENCH_SHIFTED_H

#include <stdint.h>
#include "bench/content/locality.h"
#include "lib/distfile.h"

/* Turn unique blocks of l into shifted copies (content.h's shifted ids: consecutive B over an
 * earlier extent's contents, so a run is one sequence shifted by one amount) until they make the
 * share of the data cdc measured in shifted duplicates, with its run lengths and shifts. Every
 * shifted block is unique to a fixed-block dedup, so the distribution stays exact. Nothing when
 * cdc is absent, measured none, or at another block size. Deterministic in seed. 0, or -1 out of
 * memory. */
int shifted_place(struct locality_layout *l, const struct dist_cdc *cdc, uint32_t block_size, uint64_t seed);

#endif
