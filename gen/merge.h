/* merge.h - dedisgen merge: the counts of several Berkeley DB analyses (same block size and
 * hash) added into one counter, their samples and locality combined, their metadata summed. */
#ifndef DEDIS_GEN_MERGE_H
#define DEDIS_GEN_MERGE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "gen/compsample.h"
#include "gen/counter.h"
#include "gen/index/gindex.h"
#include "lib/errmsg.h"

/* The block sizes analysed in every one of dirs (sorted). Returns how many, or -1 with err
 * filled: a dir without analyses, or whose sizes differ from the others'. */
int merge_sizes(char *const *dirs, int ndirs, uint64_t *sizes, int max, struct dd_err *err);
/* Opens each dir's analysis at block_size (complete, one hash for all), adds its counts to c and
 * its figures to *sum (sources appended; sum->hash set from the first). The inputs' streams are
 * concatenated after `offset` positions, in the order given (first positions shifted, so the
 * merged index holds first positions of one stream). comp (may be NULL) receives every input's
 * compressibility samples; sum->sample_rate is the smallest input rate (0: an input has none);
 * sum->locality says whether every input has a locality, sum->base their sum (own + merged), as
 * measured within each input; sum->stream_blocks the inputs' total. Stops once *stop is set.
 * Returns 0; MERGE_REFUSED when an input cannot be opened as a complete analysis (bad input,
 * nothing added yet from it); MERGE_FAILED when reading an input or counting its records failed
 * (a spill to a full disk) or it was stopped (err: "interrupted"). */
enum { MERGE_REFUSED = -1, MERGE_FAILED = -2 };
int merge_into(char *const *dirs, int ndirs, uint64_t block_size, uint64_t cache, uint64_t offset,
	       struct counter *c, struct comp_sampler *comp, struct index_meta *sum, const volatile sig_atomic_t *stop,
	       struct dd_err *err);

#endif
