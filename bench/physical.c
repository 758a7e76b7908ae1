/* physical.c - rebuild a hashed sample of the live distinct contents, compress each alone with
 * zstd -1 and LZ4, and scale to all of them: the size an ideal dedup + compression store needs. */
#include <stdlib.h>
#include <string.h>
#include "compmodel.h"
#include "content.h"
#include "physical.h"
#include "rng.h"

struct sampler {
	const struct bench_config *c;
	struct content_gen gen;
	struct dupgen g;
	struct compmodel_codecs *codecs;
	void *buf;
	uint64_t threshold;   /* an id is measured when its hash is below this */
	struct physical_estimate *out;
	int failed;
};

static void measure(struct sampler *s, uint64_t id)
{
	if (id == CONTENT_ZERO || rng_mix64(id ^ 0x706879736963ULL /* "physic" */) >= s->threshold)
		return;
	struct compmodel_sizes z;
	config_fill_content(s->c, &s->gen, &s->g, id, s->buf);
	if (compmodel_measure(s->codecs, s->buf, s->gen.block_size, &z)) {
		s->failed = 1;
		return;
	}
	s->out->sampled++;
	s->out->zstd_bytes += z.zstd;
	s->out->lz4_bytes += z.lz4;
}

int physical_estimate(const struct bench_config *c, const uint64_t *words, uint64_t n, const struct id_counts *dups,
		      struct physical_estimate *out)
{
	memset(out, 0, sizeof *out);
	size_t slot = 0;
	uint64_t id, count, zero = 0;
	while (idc_next(dups, &slot, &id, &count))
		zero += id == CONTENT_ZERO;
	out->distinct = dups->used - zero + dups->unique;
	if (!out->distinct)
		return 0;
	struct sampler s = {.c = c, .out = out};
	s.threshold = out->distinct <= PHYSICAL_SAMPLE
			      ? UINT64_MAX
			      : (uint64_t)((double)PHYSICAL_SAMPLE / (double)out->distinct * 18446744073709551615.0);
	if (c->scaled)
		dupgen_init_scaled(&s.g, &c->layout, 0);
	else
		dupgen_init(&s.g, &c->dup, 0);
	s.codecs = compmodel_codecs_new();
	s.buf = aligned_alloc(64, c->o.block_size);
	if (!s.codecs || !s.buf || content_init(&s.gen, c->seed, (uint32_t)c->o.block_size, c->content_compress)) {
		s.failed = 1;
		goto out;
	}
	slot = 0;
	while (!s.failed && idc_next(dups, &slot, &id, &count))
		measure(&s, id);
	for (uint64_t b = 0; b < n && !s.failed; b++) /* unique ids live on one block each */
		if (words[b] && (words[b] - 1) & CONTENT_UNIQUE_BIT)
			measure(&s, words[b] - 1);
out:
	if (!s.failed && out->sampled) {
		double scale = (double)out->distinct / (double)out->sampled;
		out->zstd_bytes *= scale;
		out->lz4_bytes *= scale;
	}
	compmodel_codecs_free(s.codecs);
	free(s.buf);
	return s.failed ? -1 : 0;
}
