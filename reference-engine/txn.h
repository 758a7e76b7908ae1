/* txn.h - transactional LBN map: a redo journal of map chunks committed every N writes and on
 * flush (data synced first), folded into the durable map file by checkpoints. */
#ifndef DEDIS_ENGINE_TXN_H
#define DEDIS_ENGINE_TXN_H

#include <stdbool.h>
#include <stdint.h>
#include "reference-engine/engine.h"
#include "reference-engine/meta.h"
#include "reference-engine/store.h"

#define TXN_CHUNK 64 /* LBNs per map chunk: 512 bytes, one sector */

struct txn {
	int map_fd, journal_fd;
	uint64_t logical_blocks, chunks, words, journal_bytes;
	uint64_t *dirty;          /* shared: [0, words) changed since the last commit, [words, 2 words) since
	                           * the last checkpoint */
	size_t dirty_len;
	uint64_t *lbnmap;         /* the working map */
	struct vol_state *st;
	struct store *store;
	const struct engine_recorder *rec;
	uint8_t *buf;             /* a commit's record */
	size_t buf_cap;
	bool checked;             /* the map file keeps a check per chunk (format version 4) */
	struct dd_err why;        /* what -EBADMSG from txn_load or a checkpoint found damaged */
};

/* Format: the map file (empty, checkpoint 0, with its chunk checks: version 4) and a zeroed
 * journal, all synced. */
int txn_create(const char *dir, uint64_t logical_blocks, uint64_t journal_bytes);
/* The map file's size: headers, words and (checked, version 4) both check areas. */
uint64_t txn_map_bytes(uint64_t logical_blocks, bool checked);
/* The journal record of a commit that dirtied every chunk of the map (the largest one). */
uint64_t txn_record_bytes(uint64_t logical_blocks);
int txn_open(struct txn *t, const char *dir, uint64_t logical_blocks, uint64_t journal_bytes, bool checked,
	     uint64_t *lbnmap, struct vol_state *st, struct store *store, const struct engine_recorder *rec);
void txn_close(struct txn *t);

/* After a store to lbnmap[lbn] (the order matters: value first, then the mark). */
static inline void txn_mark(struct txn *t, uint64_t lbn)
{
	uint64_t c = lbn / TXN_CHUNK, bit = 1ULL << (c & 63);
	for (int k = 0; k < 2; k++) {
		uint64_t *w = &t->dirty[(uint64_t)k * t->words + c / 64];
		if (!(__atomic_load_n(w, __ATOMIC_SEQ_CST) & bit))
			__atomic_fetch_or(w, bit, __ATOMIC_SEQ_CST);
	}
}
/* Everything must go into the next checkpoint (after a recovery, or a committer that died). */
void txn_mark_all(struct txn *t);

/* Make every map entry published so far durable: snapshot the dirty chunks, sync the chunk
 * store, then append a journal record (or checkpoint when asked, or when the journal is full).
 * Serialised by st->commit. 0 or -errno. */
int txn_commit(struct txn *t, bool checkpoint);

/* Power-loss recovery: the durable map (checkpoint + every complete journal record after it)
 * into `map` (logical_blocks words); *next_seq is the sequence number to continue with. A checked
 * map whose chunk differs from its checkpoint's check is -EBADMSG, t->why naming the chunk. */
int txn_load(struct txn *t, uint64_t *map, uint64_t *next_seq);
/* Whether `map`, the working map a clean close left, is the durable map's current checkpoint (a
 * clean close checkpoints it): checked against its chunk checks, or (format version 3) its words.
 * 0, -EBADMSG when it differs, or -errno. Opens the map file itself: for an open that has not
 * called txn_open yet. */
int txn_check_working(const char *dir, uint64_t logical_blocks, bool checked, const uint64_t *map);
/* Whether the durable map loads (txn_load's checks) before the caches are rebuilt from it: 0,
 * -EBADMSG with err naming the damage, or -errno (err's message is t->why's either way: "" when
 * nothing was found damaged). */
int txn_check_durable(const char *dir, uint64_t logical_blocks, uint64_t journal_bytes, bool checked,
		      struct dd_err *err);
/* Whether the durable map is still format's: checkpoint 0 (every LBN unmapped) with no journal
 * record after it. 1, 0, or -errno. */
int txn_durable_empty(struct txn *t);

#endif
