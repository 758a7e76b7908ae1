/* merge.c - merging Berkeley DB analyses: each input is opened read-only, checked (complete,
 * same block size and hash) and walked in fingerprint order into the output counter. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "gen/locstats.h"
#include "gen/merge.h"
#include "gen/sidedata.h"

int merge_sizes(char *const *dirs, int ndirs, uint64_t *sizes, int max, struct dd_err *err)
{
	int n = -1;
	for (int i = 0; i < ndirs; i++) {
		uint64_t these[64];
		int k = index_bdb_list(dirs[i], these, 64);
		if (k <= 0) {
			err_fail(err, -1, "%s: %s", dirs[i], k < 0 ? "cannot read the directory" : "no dedisgen analysis in it");
			return -1;
		}
		if (n < 0) {
			n = k < max ? k : max;
			memcpy(sizes, these, (size_t)n * sizeof *sizes);
		} else if (k != n || memcmp(sizes, these, (size_t)n * sizeof *sizes)) {
			err_fail(err, -1, "%s: its block sizes differ from %s's (merge needs the same analyses)", dirs[i],
				 dirs[0]);
			return -1;
		}
	}
	return n;
}

struct feed {
	struct counter *c;
	uint64_t offset;
	const volatile sig_atomic_t *stop;
	struct dd_err *err;
};

static int feed_one(const uint8_t *fp, uint64_t count, uint64_t first, void *arg)
{
	struct feed *f = arg;
	if (f->stop && *f->stop) {
		err_fail(f->err, -1, "interrupted");
		return -1;
	}
	return counter_add(f->c, fp, count, first + f->offset, f->err) ? -1 : 0;
}

int merge_into(char *const *dirs, int ndirs, uint64_t block_size, uint64_t cache, uint64_t offset,
	       struct counter *c, struct comp_sampler *comp, struct index_meta *sum, const volatile sig_atomic_t *stop,
	       struct dd_err *err)
{
	sum->sample_rate = 1;
	sum->locality = true;
	for (int i = 0; i < ndirs; i++) {
		struct index_meta m = {0};
		/* The hash is checked against the first input's; sha1 is only a guess to open it. */
		const char *hash = i ? sum->hash : "sha1";
		struct gindex *ix = index_bdb_open(dirs[i], block_size, hash, false, false, cache, &m, err);
		if (!ix && i == 0 && strstr(err->msg, "incompatible")) /* the first one sets the hash */
			ix = index_bdb_open(dirs[i], block_size, "sha256", false, false, cache, &m, err);
		if (!ix)
			return MERGE_REFUSED;
		if (i == 0)
			snprintf(sum->hash, sizeof sum->hash, "%s", m.hash);
		sum->block_size = block_size;
		sum->bytes += m.bytes;
		sum->files += m.files;
		sum->errors += m.errors;
		for (size_t k = 0; k < m.nsources; k++)
			index_meta_add_source(sum, m.sources[k]);
		struct feed f = {c, offset + sum->stream_blocks, stop, err};
		int rc = ix->ops->iterate(ix, true, false, feed_one, &f);
		if (rc && !err->msg[0])
			err_fail(err, -1, "%s: %s", dirs[i], ix->err.msg);
		if (!rc && m.sample_rate < sum->sample_rate)
			sum->sample_rate = m.sample_rate;
		if (!rc && comp && sum->sample_rate > 0) {
			if ((rc = side_load_samples(ix, comp, block_size, err)) != 0)
				err_forward(err, -1, "%s", dirs[i]);
		}
		sum->stream_blocks += m.stream_blocks;
		sum->locality &= m.locality;
		if (m.locality) {
			loc_add(&sum->base, &m.own);
			loc_add(&sum->base, &m.base);
		}
		index_meta_free(&m);
		ix->ops->close(ix);
		if (rc)
			return MERGE_FAILED;
	}
	return 0;
}
