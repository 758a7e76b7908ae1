/* locstats.h - duplicate locality (dedis-dist(5) [locality 1]): fingerprint prefixes of the blocks
 * in stream order (all, or hash-chosen windows), resolved against the index into run histograms. */
#ifndef DEDIS_GEN_LOCALITY_H
#define DEDIS_GEN_LOCALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/distfile.h"

/* Up to LOC_BUDGET blocks per block size are analysed exactly (the whole stream in one piece);
 * a longer stream is cut into windows of LOC_WINDOW blocks, and those whose hashed number falls
 * below 2^64 / 2^level are analysed, the level the smallest with stream <= LOC_BUDGET * 2^level:
 * about LOC_BUDGET / 2 .. LOC_BUDGET blocks whatever the size. Selection at a level includes the
 * selection at every higher level, so records made while the stream (and the level) grew are
 * only ever filtered, never missing. */
#define LOC_BUDGET (UINT64_C(1) << 22)
#define LOC_WINDOW_SHIFT 16
#define LOC_WINDOW (UINT64_C(1) << LOC_WINDOW_SHIFT)

unsigned loc_level_for(uint64_t stream_blocks);
bool loc_window_selected(uint64_t window, unsigned level);

/* One block size's recorder, shared by the reader (which raises the level as it hands out
 * positions) and the hashing threads (which hand in their records when they end). */
struct loc_recorder;
struct loc_recorder *loc_recorder_new(size_t fp_len);
void loc_recorder_free(struct loc_recorder *r);
/* Positions [0, end) have been handed out (the reader). */
void loc_recorder_advance(struct loc_recorder *r, uint64_t end);

/* A hashing thread's records for one block size: no lock per block, compacted as the level rises. */
struct loc_local;
struct loc_local *loc_local_new(struct loc_recorder *r);
/* Records the n fingerprints (fp_len apart) of stream positions pos .. pos + n - 1. 0 or -1
 * (out of memory). */
int loc_local_record(struct loc_local *l, const uint8_t *fps, size_t n, uint64_t pos);
/* Hands the records to the recorder (under its lock, once per thread) and frees l. */
int loc_local_flush(struct loc_local *l);
void loc_local_free(struct loc_local *l);

/* After the scan, the records are resolved to their contents' first positions, one of two ways.
 *
 * By the records: begin builds a table of the recorded prefixes, each from its first record;
 * every index entry is then offered (visit: its first position is the first position of the
 * content its prefix names); end turns the records into resolved positions. keys_bound: no more
 * distinct prefixes than this are expected among the records (the contents counted; UINT64_MAX:
 * unknown), which sizes the table (more are taken, at the cost of a rehash). Any stream: windows,
 * -k onto an analysis, ranks' shares.
 *
 * By copies, where every position was recorded (loc_records_complete) and the index holds nothing
 * from before this stream: the walk offers every entry with its count, the resolvers keep those
 * counted more than once, and end builds the table from them alone: a record whose prefix is not
 * there is its content's only block, its own first position. The table is a fraction of the
 * records' one, most of all on data of few copies. */
int loc_resolve_begin(struct loc_recorder *r, uint64_t keys_bound);
int loc_resolve_begin_copies(struct loc_recorder *r);
/* Every position was recorded: the stream fits the budget. */
bool loc_records_complete(const struct loc_recorder *r);
/* By the records, the offers from one thread; not by copies. */
void loc_resolve_visit(struct loc_recorder *r, const uint8_t *fp, uint64_t first);
/* 0 or -1 (out of memory). */
int loc_resolve_end(struct loc_recorder *r);
/* The offers split over threads, between begin (either way) and end: each thread its own
 * resolver, offering entries of fingerprint ranges no other thread offers (whole first bytes);
 * finish resolves what its pipeline still holds, or hands its copies over, and frees it (before
 * end): 0 or -1 (out of memory). */
struct loc_resolver;
struct loc_resolver *loc_resolver_new(struct loc_recorder *r);
void loc_resolver_visit(struct loc_resolver *v, const uint8_t *fp, uint64_t count, uint64_t first);
int loc_resolver_finish(struct loc_resolver *v);
/* Resolved records kept by an earlier analysis (-k): window number and LOC_WINDOW first
 * positions (UINT64_MAX where nothing was recorded). */
int loc_load_window(struct loc_recorder *r, uint64_t window, const uint64_t *firsts);
/* The figures of the stream [0, stream_blocks); zero_first is the zero block's first position
 * (UINT64_MAX: none). Windows not selected at the final level are dropped. Computed in up to
 * `pieces` pieces of windows, one thread each (callers pass their threads); the figures do not
 * depend on the cut. 0 or -1 (oom). */
int loc_compute(struct loc_recorder *r, uint64_t stream_blocks, uint64_t zero_first, size_t pieces,
		struct dist_locality *out);
/* The copied runs loc_compute saw, by (copy - source) mod DIST_ALIGN_MOD: out's shift_runs and
 * shift_blocks ([alignment 1]; a continued run counts once, where it started). */
void loc_copy_shifts(const struct loc_recorder *r, struct dist_align *out);
/* The resolved windows kept (after loc_compute), for saving. */
typedef int (*loc_window_fn)(uint64_t window, const uint64_t *firsts, void *arg);
int loc_each_window(const struct loc_recorder *r, loc_window_fn fn, void *arg);

/* Histograms from a sequence of first positions (the definitions of dedis-dist(5)), for callers
 * and tests that have the whole stream: firsts[i] is first(i) of position start + i, UINT64_MAX
 * for a block not analysed (a gap: runs end there); piece_len > 0 ends runs every piece_len
 * positions (windows). Adds into out (analysed, duplicates, ...). */
void loc_runs(const uint64_t *firsts, size_t n, uint64_t start, uint64_t piece_len, uint64_t zero_first,
	      struct dist_locality *out);
/* out += add (every count and bin; present if either is; window the larger). */
void loc_add(struct dist_locality *out, const struct dist_locality *add);

#endif
