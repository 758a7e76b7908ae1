/* cdcstats.h - content-defined chunking (dedis-dist(5) [cdc 1]): each thread chunks what it reads,
 * keeps the sampled chunks' identities and positions; the end finds sources, shifts and runs. */
#ifndef DEDIS_GEN_CDCSTATS_H
#define DEDIS_GEN_CDCSTATS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"
#include "lib/fingerprint.h"
#include "gen/cdcchunk.h"

/* Sampled chunks kept per set before the sampling rate is halved (32 bytes each: 32 MiB a thread
 * at most, and as much for the merged set). */
#define CDC_KEEP (UINT64_C(1) << 20)

/* The automatic rate for `bytes` of data (0: unknown, 1/8): every chunk up to CDC_AUTO_SAMPLED
 * expected chunks, then about that many (at least 1/64 of them). The sampled chunks are the ones
 * fingerprinted (the scan's hash again over their bytes); on a 472 MiB tar of /usr/share (51,916
 * chunks) sampling half of them moved the CDC dedup by 0.02 % (1.14130 -> 1.14152). */
#define CDC_AUTO_SAMPLED (1u << 15)
double cdc_auto_rate(uint64_t bytes, uint32_t avg);

/* The sampled chunks of a thread, or of all threads merged. */
struct cdc_set;
/* p in (0, 1], rounded down to 1 / a power of two. NULL out of memory. */
struct cdc_set *cdc_set_new(const struct cdc_params *params, double p);
void cdc_set_free(struct cdc_set *s);
const struct cdc_params *cdc_set_params(const struct cdc_set *s);
double cdc_set_rate(const struct cdc_set *s);

/* Where a thread is in the piece it chunks (a file, a device, a large file's range): the chunk
 * under way, its first bytes kept in carry when the piece comes in several buffers. */
struct cdc_cursor {
	uint64_t h;      /* the gear hash so far */
	size_t done;     /* bytes of the chunk under way */
	uint64_t start;  /* its stream byte position */
	uint8_t *carry;  /* params.max bytes */
};
int cdc_cursor_init(struct cdc_cursor *c, const struct cdc_params *params);
void cdc_cursor_free(struct cdc_cursor *c);

/* The next n bytes of the piece, at stream byte position spos; fc fingerprints sampled chunks.
 * 0, or -1 (out of memory, or the digest failed). */
int cdc_feed(struct cdc_set *s, struct cdc_cursor *c, struct fp_ctx *fc, const uint8_t *data, size_t n,
	     uint64_t spos);
/* The piece ends: the chunk under way (if any) ends with it. 0 or -1. */
int cdc_end(struct cdc_set *s, struct cdc_cursor *c, struct fp_ctx *fc);

/* from's chunks go into into (from is left empty). 0, or -1 out of memory. */
int cdc_set_merge(struct cdc_set *into, struct cdc_set *from);
/* The section: sources, duplicates by shift mod block_size, runs. out->shifts is allocated (the
 * caller's dist_free frees it). 0, or -1 out of memory. */
int cdc_set_result(struct cdc_set *s, uint64_t block_size, uint64_t range, struct dist_cdc *out);

#endif
