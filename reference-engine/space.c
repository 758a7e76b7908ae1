/* space.c - reference words and allocation. A PBN is in use while anything references it; an
 * overwrite only drops a reference, so stale blocks linger (indexed, unmapped) until GC. */
#include <errno.h>
#include <string.h>
#include "space.h"

static void changed(struct space *s, uint32_t before, uint32_t after)
{
	if (!before != !after)
		s->c->used_blocks += after ? 1 : (uint64_t)-1;
	if (!REF_LBNS(before) != !REF_LBNS(after))
		s->c->referenced_blocks += REF_LBNS(after) ? 1 : (uint64_t)-1;
}

int space_alloc(struct space *s, uint64_t *pbn)
{
	if (s->c->used_blocks >= s->blocks)
		return -ENOSPC;
	uint64_t p = *s->cursor % s->blocks;
	for (uint64_t tried = 0; tried < s->blocks; tried++) {
		if (s->refs[p] == 0) {
			*pbn = p;
			*s->cursor = p + 1;
			return 0;
		}
		if (++p == s->blocks)
			p = 0;
	}
	return -ENOSPC;
}

void space_ref_lbn(struct space *s, uint64_t pbn)
{
	uint32_t before = s->refs[pbn];
	s->refs[pbn] = before + 1;
	changed(s, before, s->refs[pbn]);
}

void space_unref_lbn(struct space *s, uint64_t pbn)
{
	uint32_t before = s->refs[pbn];
	if (!REF_LBNS(before))
		return; /* never below zero, even on an inconsistent volume */
	s->refs[pbn] = before - 1;
	changed(s, before, s->refs[pbn]);
}

void space_reserve(struct space *s, uint64_t pbn, bool on)
{
	uint32_t before = s->refs[pbn];
	s->refs[pbn] = on ? before | REF_RESERVED : before & ~REF_RESERVED;
	changed(s, before, s->refs[pbn]);
}

void space_set_indexed(struct space *s, uint64_t pbn, bool on)
{
	uint32_t before = s->refs[pbn];
	s->refs[pbn] = on ? before | REF_INDEXED : before & ~REF_INDEXED;
	changed(s, before, s->refs[pbn]);
}

void space_rebuild(struct space *s, const uint64_t *lbnmap, uint64_t nlbns, const uint64_t *indexed, uint64_t nindexed)
{
	memset(s->refs, 0, s->blocks * sizeof *s->refs);
	s->c->used_blocks = s->c->referenced_blocks = s->c->mapped_blocks = 0;
	for (uint64_t l = 0; l < nlbns; l++) {
		if (!lbnmap[l])
			continue;
		uint64_t pbn = lbnmap[l] - 1;
		if (pbn >= s->blocks)
			continue; /* fsck reports it; recovery must not crash on it */
		s->c->mapped_blocks++;
		space_ref_lbn(s, pbn);
	}
	for (uint64_t i = 0; i < nindexed; i++)
		if (indexed[i] < s->blocks)
			space_set_indexed(s, indexed[i], true);
}
