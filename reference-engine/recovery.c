/* recovery.c - putting a volume right: the rebuild after a process died inside an operation
 * (reference words and gauges from the working map and the index), the rebuild after a power
 * loss (the working map from the durable files, the index from the live data), and GC. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reference-engine/engine-int.h"

struct addrs {
	uint64_t *v;
	uint64_t n, cap;
};

static int push(struct addrs *a, uint64_t x)
{
	if (a->n == a->cap) {
		uint64_t cap = a->cap ? a->cap * 2 : 1024;
		uint64_t *p = realloc(a->v, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

static int collect_addr(void *arg, const uint8_t *fp, uint64_t addr)
{
	(void)fp;
	return push(arg, addr);
}

static void set_gauges(struct engine *e, const struct space_gauges *g)
{
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++)
		for (int c = VC_GAUGES; c < VC_COUNT; c++)
			e->st->slots[i].c[c] = 0;
	e->st->base[VC_MAPPED] = g->mapped;
	e->st->base[VC_REFERENCED] = g->referenced;
	e->st->base[VC_PHYSICAL_BYTES] = g->physical_bytes;
	e->st->base[VC_LIVE_FRAGMENTS] = g->fragments;
}

static void rebuild_refs(struct engine *e, const struct addrs *indexed)
{
	uint64_t keep[VOL_SLOTS];
	unsigned nkeep = 0;
	for (unsigned i = 0, n = slots_in_use(e->st); i < n; i++)
		if (e->st->slots[i].bin_pbn && slot_is_bin(e, e->st->slots[i].bin_pbn - 1))
			keep[nkeep++] = e->st->slots[i].bin_pbn - 1;
	struct space_gauges g;
	space_rebuild(&e->space, e->lbnmap, e->sb.logical_blocks, indexed ? indexed->v : NULL, indexed ? indexed->n : 0,
		      keep, nkeep, &g);
	set_gauges(e, &g);
}

int recovery_rebuild(struct engine *e)
{
	int rc = e->iops->repair(e->ix);
	struct addrs a = {0};
	if (!rc)
		rc = e->iops->iterate(e->ix, collect_addr, &a);
	if (!rc)
		rebuild_refs(e, &a);
	free(a.v);
	e->st->generation++;
	return rc;
}

int recovery_from_durable(struct engine *e)
{
	uint64_t next;
	int rc = txn_load(&e->txn, e->lbnmap, &next);
	if (rc)
		return rc;
	e->st->next_seq = next;
	e->st->journal_tail = 0;
	rebuild_refs(e, NULL);
	/* The index is advice: rebuilt from what the map names, one entry per distinct content. */
	uint64_t words = e->sb.data_blocks * e->sb.frags;
	uint8_t *seen = calloc((words + 7) / 8, 1);
	if (!seen)
		return -ENOMEM;
	for (uint64_t l = 0; !rc && l < e->sb.logical_blocks; l++) {
		uint64_t a = e->lbnmap[l];
		if (!a || !space_valid(&e->space, a))
			continue;
		uint64_t idx = space_index(&e->space, a);
		if (seen[idx / 8] & (1u << (idx % 8)))
			continue;
		seen[idx / 8] |= (uint8_t)(1u << (idx % 8));
		uint8_t fp[FP_MAX_LEN];
		uint64_t other;
		if (engine_read_addr(e, a, e->scratch) || fp_hash(e->fp, e->scratch, e->sb.block_size, fp))
			continue; /* unreadable: fsck says so; nothing to index */
		int hit = e->iops->lookup(e->ix, fp, &other);
		if (hit == 0 || hit == INDEX_ABSENT_FILTERED) {
			rc = e->iops->insert(e->ix, fp, a);
			if (!rc)
				space_set(&e->space, idx, REF_INDEXED);
			else if (rc == -ENOSPC)
				rc = 0;
		} else if (hit < 0) {
			rc = hit;
		}
	}
	free(seen);
	if (rc)
		return rc;
	/* A fresh base: the whole recovered map in one checkpoint, the journal starts over. */
	txn_mark_all(&e->txn);
	rc = txn_commit(&e->txn, true);
	e->st->generation++;
	return rc;
}

struct gc_walk {
	struct engine *e;
	uint8_t *fps;
	uint64_t n, cap;
};

static int gc_pick(void *arg, const uint8_t *fp, uint64_t addr)
{
	struct gc_walk *g = arg;
	struct space *s = &g->e->space;
	if (space_valid(s, addr) && REF_LBNS(s->refs[space_index(s, addr)]))
		return 0;
	if (g->n == g->cap) {
		uint64_t cap = g->cap ? g->cap * 2 : 1024;
		uint8_t *f = realloc(g->fps, cap * (FP_MAX_LEN + 8));
		if (!f)
			return -ENOMEM;
		g->fps = f;
		g->cap = cap;
	}
	memcpy(g->fps + g->n * (FP_MAX_LEN + 8), &addr, 8);
	memcpy(g->fps + g->n * (FP_MAX_LEN + 8) + 8, fp, g->e->sb.fp_len);
	g->n++;
	return 0;
}

int recovery_gc(struct engine *e, uint64_t *reclaimed, uint64_t *free_pbns)
{
	/* Everything that made these contents unreferenced is made durable before any is reused. */
	int rc = txn_commit(&e->txn, false);
	if (rc)
		return rc;
	struct gc_walk g = {e, NULL, 0, 0};
	rc = e->iops->iterate(e->ix, gc_pick, &g);
	__atomic_fetch_add(&e->st->gc_epoch, 1, __ATOMIC_SEQ_CST);
	uint64_t n = 0;
	for (uint64_t i = 0; !rc && i < g.n; i++) {
		uint64_t addr;
		memcpy(&addr, g.fps + i * (FP_MAX_LEN + 8), 8);
		rc = e->iops->remove(e->ix, g.fps + i * (FP_MAX_LEN + 8) + 8);
		if (!rc && space_valid(&e->space, addr))
			space_clear(&e->space, space_index(&e->space, addr), REF_INDEXED);
	}
	free(g.fps);
	if (!rc && g.n && e->iops->settle)
		rc = e->iops->settle(e->ix);
	struct space *s = &e->space;
	/* What is reclaimed is physical blocks: a PBN this pass returns to the free pool. On a
	 * compressed volume a collected fragment frees nothing while its block holds a live one
	 * (or is a live process's open bin), and one block frees with all of its fragments, so
	 * counting collected contents said "reclaimed 1000 blocks" where 63 came free. */
	for (uint64_t p = 0; !rc && p < s->blocks; p++) {
		bool cleared = false;
		for (uint64_t i = p * s->frags; i < (p + 1) * s->frags; i++) {
			uint32_t w = s->refs[i];
			if ((w & REF_HELD) && !(w & REF_INDEXED) && !REF_LBNS(w)) {
				space_clear(s, i, REF_HELD);
				cleared = true;
			}
			if ((w & REF_RESERVED) && !slot_is_bin(e, p)) {
				space_clear(s, i, REF_RESERVED); /* a dead process's bin or allocation */
				cleared = true;
			}
		}
		n += cleared && space_pbn_free(s, p);
	}
	e->st->base[VC_GC_RECLAIMED] += (int64_t)n;
	*reclaimed += n;
	*free_pbns = rc ? 0 : s->blocks - space_used_blocks(s);
	return rc;
}
