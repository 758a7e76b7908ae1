/* physical.c - rebuild a hashed sample of the live distinct contents, compress each alone with
 * zstd -1 and LZ4, and scale to all of them: the size an ideal dedup + compression store needs. */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include "lib/compmodel.h"
#include "lib/content.h"
#include "bench/content/physical.h"
#include "lib/rng.h"

/* Every live distinct content, rebuilt as the workers wrote it, handed to a visitor. */
struct walk {
	const struct bench_config *c;
	struct content_gen gen;
	struct dupgen g;
	void *buf;
	bool (*wants)(struct walk *w, uint64_t id);
	int (*visit)(struct walk *w, uint64_t id);
	void *arg;
};

static int walk_live(struct walk *w, const uint64_t *words, uint64_t n, const struct id_counts *dups)
{
	const struct bench_config *c = w->c;
	int rc = -1;
	if (c->scaled)
		dupgen_init_scaled(&w->g, &c->layout, 0);
	else
		dupgen_init(&w->g, &c->dup, 0);
	w->buf = aligned_alloc(64, c->o.block_size);
	if (!w->buf || config_content_init(c, &w->gen, c->seed))
		goto out;
	size_t slot = 0;
	uint64_t id, count;
	while (idc_next(dups, &slot, &id, &count)) {
		if (!w->wants(w, id))
			continue;
		config_fill_content(c, &w->gen, &w->g, id, w->buf);
		if (w->visit(w, id))
			goto out;
	}
	for (uint64_t b = 0; b < n; b++) { /* unique ids live on one block each */
		if (!words[b] || !((words[b] - 1) & CONTENT_UNIQUE_BIT) || !w->wants(w, words[b] - 1))
			continue;
		config_fill_content(c, &w->gen, &w->g, words[b] - 1, w->buf);
		if (w->visit(w, words[b] - 1))
			goto out;
	}
	rc = 0;
out:
	free(w->buf);
	return rc;
}

/* ---- the estimate: a hashed sample, each content compressed alone with both codecs ---- */

struct sample {
	struct compmodel_codecs *codecs;
	uint64_t threshold;   /* an id is measured when its hash is below this */
	struct physical_estimate *out;
};

static bool sample_wants(struct walk *w, uint64_t id)
{
	const struct sample *s = w->arg;
	return id != CONTENT_ZERO && rng_mix64(id ^ 0x706879736963ULL /* "physic" */) < s->threshold;
}

static int sample_visit(struct walk *w, uint64_t id)
{
	struct sample *s = w->arg;
	struct compmodel_sizes z;
	if (compmodel_measure(s->codecs, w->buf, w->gen.block_size, &z, NULL))
		return -1;
	s->out->sampled++;
	s->out->zstd_bytes += z.zstd;
	s->out->lz4_bytes += z.lz4;
	return 0;
}

int physical_estimate(const struct bench_config *c, const uint64_t *words, uint64_t n, const struct id_counts *dups,
		      struct physical_estimate *out)
{
	memset(out, 0, sizeof *out);
	size_t slot = 0;
	uint64_t id, count, zero = 0;
	while (idc_next(dups, &slot, &id, &count))
		zero += id == CONTENT_ZERO;
	out->distinct = dups->map.used - zero + dups->unique;
	if (!out->distinct)
		return 0;
	struct sample s = {.out = out, .codecs = compmodel_codecs_new(0)};
	s.threshold = out->distinct <= PHYSICAL_SAMPLE
			      ? UINT64_MAX
			      : (uint64_t)((double)PHYSICAL_SAMPLE / (double)out->distinct * 18446744073709551615.0);
	struct walk w = {.c = c, .wants = sample_wants, .visit = sample_visit, .arg = &s};
	int rc = s.codecs ? walk_live(&w, words, n, dups) : -1;
	compmodel_codecs_free(s.codecs);
	if (!rc && out->sampled) {
		double scale = (double)out->distinct / (double)out->sampled;
		out->zstd_bytes *= scale;
		out->lz4_bytes *= scale;
	}
	return rc;
}

/* ---- the engine's exact expectation ---- */

struct engine_sum {
	char *out;
	int cap;
	uint64_t bytes;
};

static bool every(struct walk *w, uint64_t id)
{
	return true;
}

uint64_t physical_engine_block_bytes(const void *block, uint32_t bs, char *scratch, int cap)
{
	int z = LZ4_compress_default(block, scratch, (int)bs, cap);
	return z > 0 && (uint32_t)z + 4 <= bs - bs / 8 ? (uint64_t)z + 4 : bs;
}

static int engine_visit(struct walk *w, uint64_t id)
{
	struct engine_sum *e = w->arg;
	e->bytes += physical_engine_block_bytes(w->buf, w->gen.block_size, e->out, e->cap);
	return 0;
}

int physical_engine_bytes(const struct bench_config *c, const uint64_t *words, uint64_t n,
			  const struct id_counts *dups, bool lz4, uint64_t *bytes)
{
	if (!lz4) {
		*bytes = (dups->map.used + dups->unique) * c->o.block_size;
		return 0;
	}
	struct engine_sum e = {.cap = LZ4_compressBound((int)c->o.block_size)};
	if (!(e.out = malloc((size_t)e.cap)))
		return -1;
	struct walk w = {.c = c, .wants = every, .visit = engine_visit, .arg = &e};
	int rc = walk_live(&w, words, n, dups);
	free(e.out);
	*bytes = e.bytes;
	return rc;
}
