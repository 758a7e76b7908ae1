/* engine-int.h - the engine handle's layout and the helpers its modules share (paths, slots and
 * quiescing, recovery, fsck); not part of libdedisengine's interface. */
#ifndef DEDIS_ENGINE_INT_H
#define DEDIS_ENGINE_INT_H

#include <stdbool.h>
#include "reference-engine/engine.h"
#include "lib/fingerprint.h"
#include "reference-engine/fpindex.h"
#include "reference-engine/meta.h"
#include "reference-engine/packer.h"
#include "reference-engine/refalloc.h"
#include "reference-engine/store.h"
#include "reference-engine/stripe.h"
#include "reference-engine/txn.h"

struct engine {
	char dir[4096];
	struct superblock sb;
	int lock_fd;                  /* flock on the superblock: shared by openers, exclusive alone */
	struct vol_state *st;
	struct vol_slot *me;          /* this handle's process slot */
	uint64_t *lbnmap;             /* the working map: an address per LBN, 0 = unmapped */
	size_t lbnmap_len, refs_len;
	struct space space;
	struct store store;
	struct stripes stripes;
	struct txn txn;
	struct packer pack;
	const struct index_ops *iops;
	struct index *ix;
	struct fp_ctx *fp;
	struct engine_open_params p;
	void *scratch;                /* one aligned block: reads of packed blocks, --verify-hits, fsck */
	void *scratch2;
	uint64_t since_commit;        /* writes by this handle since its last commit */
	bool reuse_first;             /* the file system said ENOSPC: PBNs with room before new ones */
	uint64_t reuse_pos;           /* where the search for those goes on */
	bool read_only;               /* on read-only storage: nothing reaches a file (engine_open) */
	bool unchecked_state;         /* the state was closed by a build before the cache checks */
	bool checked_clean;           /* this open checked the caches of a clean close, and they held */
	bool fsck_caches_only;        /* the last engine_fsck's problems were all in the caches */
	bool mutated;                 /* this handle wrote, discarded or collected (close reseals) */
	char cache_note[128];         /* which cache failed its check at open (rebuilt), or "" */
};

#define ENGINE_REPAIR 1000 /* internal: a process died inside an operation; repair and retry */
#define ENGINE_FULL 1001   /* internal: no free PBN (the allocator's ENOSPC, not the file system's) */

static inline void count(struct engine *e, enum vol_counter c, int64_t d) { e->me->c[c] += d; }

/* The engine's modules call downwards only: engine.c and fsck.c -> quiesce.c -> recovery.c ->
 * slots.c, fetch.c (and the storage modules below them). */

/* fetch.c: a stored content by its address (whole or packed) into buf. 0 or -errno. */
int engine_read_addr(struct engine *e, uint64_t addr, void *buf);

/* slots.c: process slots. */
int slot_claim(struct engine *e);             /* with the world lock */
void slot_release(struct engine *e);          /* with the world lock */
bool slot_is_bin(const struct engine *e, uint64_t pbn);
int64_t vol_counter(const struct engine *e, enum vol_counter c);
/* How many slots from 0 a walk of them must visit (slots_used, bounded by VOL_SLOTS). */
unsigned slots_in_use(const struct vol_state *st);
bool slot_pid_alive(int32_t pid);
/* The slot's owner still runs (its pid alive and, where recorded, started when the owner was). */
bool slot_owner_alive(const struct vol_slot *s);

/* quiesce.c: the world lock and quiescing. */
int op_enter(struct engine *e);
void op_exit(struct engine *e);
/* The world lock, with every operation of every process drained; a dead holder's or a dead
 * operation's leftovers are repaired first. */
int world_enter(struct engine *e);
void world_leave(struct engine *e);

/* recovery.c */
/* Reference words, gauges and the index's shared state from the working map and the index (a
 * process died inside an operation, or an unclean open). With the world entered. */
int recovery_rebuild(struct engine *e);
/* After a power loss: the working map from the durable files, the index from the live data. */
int recovery_from_durable(struct engine *e);
/* GC with the world entered: adds what it reclaimed to *reclaimed and says how many PBNs are
 * free once it is done (with the world entered, nobody can take them meanwhile). */
int recovery_gc(struct engine *e, uint64_t *reclaimed, uint64_t *free_pbns);

#endif
