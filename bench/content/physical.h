/* physical.h - what an ideal deduplicating, compressing store keeps of the data a run leaves: each
 * distinct content once, compressed alone (zstd -1, LZ4), measured on a hashed sample of them. */
#ifndef DEDIS_BENCH_PHYSICAL_H
#define DEDIS_BENCH_PHYSICAL_H

#include <stdint.h>
#include "bench/config.h"
#include "bench/report/tally.h"

/* Contents measured at most: the estimate's relative error is about the spread of per-block
 * sizes (coefficient of variation ~1) over the square root of this, ~1.5 %. */
#define PHYSICAL_SAMPLE 4096

struct physical_estimate {
	uint64_t distinct;     /* live distinct contents, the zero block left out (stores keep none) */
	uint64_t sampled;      /* of them compressed (all when there are at most PHYSICAL_SAMPLE) */
	double zstd_bytes;     /* Σ over distinct contents of the size alone under zstd -1 (estimated) */
	double lz4_bytes;      /* the same under LZ4 */
};

/* words: the shared ledger (id + 1 per block, 0 = never written), n blocks of it; dups: the live
 * duplicated-or-not ids of the layout counted from it (unique ids are found in the ledger). Every
 * content is rebuilt exactly as the workers wrote it (config_fill_content). 0, or -1 (memory or a
 * compressor failing). */
int physical_estimate(const struct bench_config *c, const uint64_t *words, uint64_t n, const struct id_counts *dups,
		      struct physical_estimate *out);

/* What the reference engine must store for the live data (same arguments): every distinct
 * content once (the zero block too: the engine stores it like any block), a whole block on an
 * uncompressed volume; with lz4, its LZ4 size plus the fragment's 4-byte header when that is at
 * most 7/8 of a block, else a whole block (the packer's rule, doc/notes/dedisengine.md). Exact: every
 * content is rebuilt and compressed. 0, or -1 (memory). */
int physical_engine_bytes(const struct bench_config *c, const uint64_t *words, uint64_t n,
			  const struct id_counts *dups, bool lz4, uint64_t *bytes);
/* The same rule for one block of bs bytes on an lz4 volume (scratch: LZ4_compressBound(bs) bytes,
 * cap of them): what replay checks its trace's contents against. */
uint64_t physical_engine_block_bytes(const void *block, uint32_t bs, char *scratch, int cap);

#endif
