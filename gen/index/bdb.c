/* bdb.c - the Berkeley DB fingerprint index (the DEDISgen way): a B-tree fingerprint -> (count,
 * first position) file per block size, a metadata record (checks, -k) and tagged side records. */
#include <db.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen/index/gindex.h"

/* The metadata lives under a key no fingerprint can have (fingerprints are 20 or 32 bytes).
 * Format 2 (dedis 0.2): count records are 16 bytes (count, first position), the metadata has
 * the stream length, sample rate and locality figures, and side records exist. Format 1 DBs
 * (8-byte counts) are recognised, replaced by a new scan, and refused by -k and merge. */
static const char META_KEY[] = "dedisgen:meta";
#define META_FORMAT 2
#define VAL_LEN 16

struct bdb_index {
	struct gindex base;
	DB_ENV *env;
	DB *db;
	uint64_t n;        /* distinct fingerprints (counted on open, kept by add) */
	bool readonly;
	/* A writable DB is changed only from its first write on (begin): a run refused before it
	 * writes leaves an earlier analysis as it was, and a DB file it created is removed. */
	bool begun;
	bool replace;      /* begin drops the earlier analysis (a scan without -k) */
	bool created_file, created_dir;
	bool discard;      /* the run failed: a file (and directory) it created goes, begun or not */
	bool completed;    /* its analysis was saved whole (an output failing after it keeps it) */
	char *running;     /* the metadata begin writes: this analysis, marked incomplete */
	char dir[4096], file[64];
	/* Berkeley DB's own diagnostics: kept (the first) for the one line that names the file,
	 * never printed by the library (a text file under a DB's name gave 101 lines of them). */
	char bdb_msg[256];
};

static void keep_bdb_msg(const DB_ENV *env, const char *pfx, const char *msg)
{
	(void)pfx;
	struct bdb_index *b = env->app_private;
	if (b && !b->bdb_msg[0])
		snprintf(b->bdb_msg, sizeof b->bdb_msg, "%s", msg);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void index_meta_free(struct index_meta *m)
{
	for (size_t i = 0; i < m->nsources; i++)
		free(m->sources[i]);
	free(m->sources);
	m->sources = NULL;
	m->nsources = 0;
}

int index_meta_add_source(struct index_meta *m, const char *path)
{
	char **s = realloc(m->sources, (m->nsources + 1) * sizeof *s);
	if (!s)
		return -1;
	m->sources = s;
	if (!(s[m->nsources] = strdup(path)))
		return -1;
	m->nsources++;
	return 0;
}

static const char *const loc_kinds[4] = {"new", "dup", "copy", "zero"};

static struct dist_len_hist *loc_hist(struct dist_locality *l, int k)
{
	return k == 0 ? &l->new_runs : k == 1 ? &l->dup_runs : k == 2 ? &l->copy_runs : &l->zero_runs;
}

/* A locality's figures as JSON: scalars and, per kind, [[K, COUNT, BLOCKS], ...]. */
static json_t *loc_to_json(const struct dist_locality *l)
{
	if (!l->present)
		return json_null();
	json_t *o = json_pack("{s:I,s:I,s:I,s:I}", "analysed", (json_int_t)l->analysed, "window", (json_int_t)l->window,
			      "duplicates", (json_int_t)l->duplicates, "sequential", (json_int_t)l->sequential);
	for (int k = 0; k < 4; k++) {
		json_t *a = json_array();
		const struct dist_len_hist *h = loc_hist((struct dist_locality *)l, k);
		for (int b = 0; b < DIST_LEN_BINS; b++)
			if (h->count[b])
				json_array_append_new(a, json_pack("[i,I,I]", b, (json_int_t)h->count[b],
								   (json_int_t)h->blocks[b]));
		json_object_set_new(o, loc_kinds[k], a);
	}
	return o;
}

static int loc_from_json(json_t *o, struct dist_locality *l)
{
	memset(l, 0, sizeof *l);
	if (!o || json_is_null(o))
		return 0;
	if (json_unpack(o, "{s:I,s:I,s:I,s:I}", "analysed", &(json_int_t){0}, "window", &(json_int_t){0}, "duplicates",
			&(json_int_t){0}, "sequential", &(json_int_t){0}))
		return -1;
	l->analysed = (uint64_t)json_integer_value(json_object_get(o, "analysed"));
	l->window = (uint64_t)json_integer_value(json_object_get(o, "window"));
	l->duplicates = (uint64_t)json_integer_value(json_object_get(o, "duplicates"));
	l->sequential = (uint64_t)json_integer_value(json_object_get(o, "sequential"));
	for (int k = 0; k < 4; k++) {
		json_t *a = json_object_get(o, loc_kinds[k]), *e;
		size_t i;
		if (!json_is_array(a))
			return -1;
		json_array_foreach(a, i, e) {
			json_int_t b, c, n;
			if (json_unpack(e, "[I,I,I]", &b, &c, &n) || b < 0 || b >= DIST_LEN_BINS)
				return -1;
			loc_hist(l, k)->count[b] = (uint64_t)c;
			loc_hist(l, k)->blocks[b] = (uint64_t)n;
		}
	}
	l->present = true;
	return 0;
}

static char *meta_to_json(const struct index_meta *m)
{
	json_t *o = json_object(), *src = json_array();
	for (size_t i = 0; i < m->nsources; i++)
		json_array_append_new(src, json_string(m->sources[i]));
	json_object_set_new(o, "format", json_integer(META_FORMAT));
	json_object_set_new(o, "block_size", json_integer((json_int_t)m->block_size));
	json_object_set_new(o, "hash", json_string(m->hash));
	json_object_set_new(o, "complete", json_boolean(m->complete));
	json_object_set_new(o, "bytes", json_integer((json_int_t)m->bytes));
	json_object_set_new(o, "files", json_integer((json_int_t)m->files));
	json_object_set_new(o, "errors", json_integer((json_int_t)m->errors));
	json_object_set_new(o, "sources", src);
	json_object_set_new(o, "stream_blocks", json_integer((json_int_t)m->stream_blocks));
	json_object_set_new(o, "sample_rate", json_real(m->sample_rate));
	json_object_set_new(o, "locality", json_boolean(m->locality));
	json_object_set_new(o, "locality_own", loc_to_json(&m->own));
	json_object_set_new(o, "locality_base", loc_to_json(&m->base));
	char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(o);
	return text;
}

static int meta_from_json(const char *text, size_t len, struct index_meta *m)
{
	json_error_t e;
	json_t *o = json_loadb(text, len, 0, &e);
	memset(m, 0, sizeof *m);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	const char *hash = json_string_value(json_object_get(o, "hash"));
	json_t *src = json_object_get(o, "sources");
	int rc = -1;
	json_int_t format = json_integer_value(json_object_get(o, "format"));
	if ((format != 1 && format != META_FORMAT) || !hash || strlen(hash) >= sizeof m->hash || !json_is_array(src))
		goto out;
	m->format = (int)format;
	if (format == META_FORMAT) {
		json_t *p = json_object_get(o, "sample_rate");
		if (!json_is_number(p) || loc_from_json(json_object_get(o, "locality_own"), &m->own) ||
		    loc_from_json(json_object_get(o, "locality_base"), &m->base))
			goto out;
		m->sample_rate = json_number_value(p);
		m->stream_blocks = (uint64_t)json_integer_value(json_object_get(o, "stream_blocks"));
		m->locality = json_is_true(json_object_get(o, "locality"));
	}
	m->block_size = (uint64_t)json_integer_value(json_object_get(o, "block_size"));
	snprintf(m->hash, sizeof m->hash, "%s", hash);
	m->complete = json_is_true(json_object_get(o, "complete"));
	m->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
	m->files = (uint64_t)json_integer_value(json_object_get(o, "files"));
	m->errors = (uint64_t)json_integer_value(json_object_get(o, "errors"));
	for (size_t i = 0; i < json_array_size(src); i++) {
		const char *s = json_string_value(json_array_get(src, i));
		if (!s || index_meta_add_source(m, s))
			goto out;
	}
	rc = 0;
out:
	if (rc)
		index_meta_free(m);
	json_decref(o);
	return rc;
}

static int bdb_fail(struct bdb_index *b, const char *what, int ret)
{
	err_fail(&b->base.err, -1, "%s/%s: Berkeley DB %s: %s", b->dir, b->file, what, db_strerror(ret));
	return -1;
}

static int put_meta_text(struct bdb_index *b, const char *text);

/* The first write: the earlier analysis (without -k) dropped, and this one marked incomplete, so
 * a crash from here on leaves a DB that -k and merge refuse. Reads before it see nothing of an
 * analysis about to be replaced. */
static int begin(struct bdb_index *b)
{
	if (b->readonly || b->begun)
		return 0;
	b->begun = true;
	u_int32_t dropped;
	int ret;
	if (b->replace && (ret = b->db->truncate(b->db, NULL, &dropped, 0)) != 0)
		return bdb_fail(b, "truncate (the earlier analysis)", ret);
	b->n = b->replace ? 0 : b->n;
	return put_meta_text(b, b->running);
}

static int bdb_add(struct gindex *ix, const uint8_t *fp, uint64_t n, uint64_t first)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	if (begin(b))
		return -1;
	uint8_t buf[VAL_LEN];
	DBT key = {.data = (void *)fp, .size = (u_int32_t)ix->fp_len};
	DBT val = {.data = buf, .ulen = sizeof buf, .flags = DB_DBT_USERMEM};
	uint64_t count = 0, old_first = UINT64_MAX;
	int ret = b->db->get(b->db, NULL, &key, &val, 0);
	if (ret == 0 && val.size == VAL_LEN) {
		count = get_le64(buf);
		old_first = get_le64(buf + 8);
	} else if (ret != DB_NOTFOUND) {
		return bdb_fail(b, "get", ret == 0 ? EINVAL : ret);
	} else {
		b->n++;
	}
	if (count + n < count) {
		err_fail(&ix->err, -1, "Berkeley DB index: a count overflows 64 bits");
		return -1;
	}
	put_le64(buf, count + n);
	put_le64(buf + 8, first < old_first ? first : old_first);
	val = (DBT){.data = buf, .size = VAL_LEN};
	if ((ret = b->db->put(b->db, NULL, &key, &val, 0)) != 0)
		return bdb_fail(b, "put", ret);
	return 0;
}

static int bdb_add_batch(struct gindex *ix, const uint8_t *fps, size_t n, uint64_t first, size_t *done)
{
	for (size_t i = 0; i < n; i++) {
		if (bdb_add(ix, fps + i * ix->fp_len, 1, first + i)) {
			*done = i;
			return -1;
		}
	}
	*done = n;
	return 0;
}

static int bdb_lookup(struct gindex *ix, const uint8_t *fp, uint64_t *count, uint64_t *first)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	if (b->replace && begin(b))
		return -1;
	uint8_t buf[VAL_LEN];
	DBT key = {.data = (void *)fp, .size = (u_int32_t)ix->fp_len};
	DBT val = {.data = buf, .ulen = sizeof buf, .flags = DB_DBT_USERMEM};
	int ret = b->db->get(b->db, NULL, &key, &val, 0);
	if (ret == DB_NOTFOUND)
		return 0;
	if (ret != 0 || val.size != VAL_LEN)
		return bdb_fail(b, "get", ret ? ret : EINVAL);
	*count = get_le64(buf);
	if (first)
		*first = get_le64(buf + 8);
	return 1;
}

/* B-tree order is fingerprint order, so `sorted` costs nothing; a DB is never drained. */
static int bdb_iterate(struct gindex *ix, bool sorted, bool drain, index_visit_fn fn, void *arg)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	DBC *c;
	if (b->replace && begin(b))
		return -1;
	int ret = b->db->cursor(b->db, NULL, &c, 0), rc = 0;
	if (ret)
		return bdb_fail(b, "cursor", ret);
	DBT key = {0}, val = {0};
	while ((ret = c->get(c, &key, &val, DB_NEXT)) == 0) {
		if (key.size != ix->fp_len)
			continue; /* the metadata record, side records */
		if (val.size != VAL_LEN) {
			err_fail(&ix->err, -1, "Berkeley DB index: a count record of %u bytes (corrupt DB?)",
			     val.size);
			rc = -1;
			break;
		}
		if ((rc = fn(key.data, get_le64(val.data), get_le64((const uint8_t *)val.data + 8), arg)) != 0)
			break;
	}
	if (!rc && ret != DB_NOTFOUND)
		rc = bdb_fail(b, "cursor get", ret);
	c->close(c);
	return rc;
}

static uint64_t bdb_distinct(const struct gindex *ix)
{
	return ((const struct bdb_index *)ix)->n;
}

static uint64_t bdb_bytes(const struct gindex *ix)
{
	return 0;
}

static int bdb_flush(struct gindex *ix)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	int ret;
	if (!b->readonly && (ret = b->db->sync(b->db, 0)) != 0)
		return bdb_fail(b, "sync", ret);
	return 0;
}

static void bdb_close(struct gindex *ix)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	if (!b)
		return;
	if (b->db)
		b->db->close(b->db, 0);
	if (b->env && b->created_file && !b->begun)
		b->env->dbremove(b->env, NULL, b->file, NULL, 0);
	if (b->env)
		b->env->close(b->env, 0);
	if (b->completed)
		b->discard = false;
	if (b->created_file && b->begun && b->discard) { /* by name: its pages may not even parse */
		char path[sizeof b->dir + sizeof b->file + 1];
		snprintf(path, sizeof path, "%s/%s", b->dir, b->file);
		unlink(path);
	}
	if (b->created_dir && (!b->begun || b->discard))
		rmdir(b->dir);
	free(b->running);
	free(b);
}

bool index_bdb_altered(const struct gindex *ix)
{
	const struct bdb_index *b = (const struct bdb_index *)ix;
	return b->begun && !b->created_file && !b->completed;
}

void index_bdb_discard(struct gindex *ix)
{
	((struct bdb_index *)ix)->discard = true;
}

static const struct gindex_ops bdb_ops = {
	.name = "bdb",
	.add = bdb_add,
	.add_batch = bdb_add_batch,
	.lookup = bdb_lookup,
	.iterate = bdb_iterate,
	.distinct = bdb_distinct,
	.bytes = bdb_bytes,
	.flush = bdb_flush,
	.close = bdb_close,
};

static int read_meta(struct bdb_index *b, struct index_meta *m)
{
	DBT key = {.data = (void *)META_KEY, .size = sizeof META_KEY - 1};
	DBT val = {.flags = DB_DBT_MALLOC};
	int ret = b->db->get(b->db, NULL, &key, &val, 0);
	if (ret)
		return -1;
	ret = meta_from_json(val.data, val.size, m);
	free(val.data);
	return ret;
}

static int put_meta_text(struct bdb_index *b, const char *text)
{
	DBT key = {.data = (void *)META_KEY, .size = sizeof META_KEY - 1};
	DBT val = {.data = (void *)text, .size = (u_int32_t)strlen(text)};
	int ret = b->db->put(b->db, NULL, &key, &val, 0);
	if (ret)
		return bdb_fail(b, "put (metadata)", ret);
	return bdb_flush(&b->base);
}

int index_bdb_set_meta(struct gindex *ix, const struct index_meta *meta)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	char *text = meta_to_json(meta);
	if (!text) {
		err_fail(&ix->err, -1, "out of memory");
		return -1;
	}
	int rc = begin(b) ? -1 : put_meta_text(b, text);
	free(text);
	if (!rc && meta->complete)
		b->completed = true;
	return rc;
}

/* The fingerprints held (the metadata and side records left out): a walk of the keys alone. */
static int count_entries(struct bdb_index *b)
{
	DBC *c;
	int ret = b->db->cursor(b->db, NULL, &c, 0);
	if (ret)
		return bdb_fail(b, "cursor", ret);
	DBT key = {0}, val = {.flags = DB_DBT_PARTIAL, .dlen = 0};
	b->n = 0;
	while ((ret = c->get(c, &key, &val, DB_NEXT)) == 0)
		b->n += key.size == b->base.fp_len;
	c->close(c);
	return ret == DB_NOTFOUND ? 0 : bdb_fail(b, "cursor get", ret);
}

static int side_key(struct bdb_index *b, char tag, const void *key, size_t klen, uint8_t *buf)
{
	if (klen + 1 == b->base.fp_len || klen + 1 == sizeof META_KEY - 1 || klen + 1 > 64) {
		err_fail(&b->base.err, -1, "side record key of %zu bytes (a programming error)", klen);
		return -1;
	}
	buf[0] = (uint8_t)tag;
	memcpy(buf + 1, key, klen);
	return 0;
}

int index_bdb_put_side(struct gindex *ix, char tag, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct bdb_index *b = (struct bdb_index *)ix;
	uint8_t kb[64];
	if (side_key(b, tag, key, klen, kb) || begin(b))
		return -1;
	DBT k = {.data = kb, .size = (u_int32_t)(klen + 1)}, v = {.data = (void *)val, .size = (u_int32_t)vlen};
	int ret = b->db->put(b->db, NULL, &k, &v, 0);
	return ret ? bdb_fail(b, "put (side record)", ret) : 0;
}

/* Visits (or with drop, deletes) the records TAG + klen bytes, in key order. */
static int side_walk(struct bdb_index *b, char tag, size_t klen, index_side_fn fn, void *arg, bool drop)
{
	DBC *c;
	uint8_t start = (uint8_t)tag;
	int ret = b->db->cursor(b->db, NULL, &c, 0), rc = 0;
	if (ret)
		return bdb_fail(b, "cursor", ret);
	DBT key = {.data = &start, .size = 1}, val = {0};
	u_int32_t op = DB_SET_RANGE;
	while ((ret = c->get(c, &key, &val, op)) == 0) {
		op = DB_NEXT;
		const uint8_t *k = key.data;
		if (k[0] != (uint8_t)tag)
			break;
		if (key.size != klen + 1)
			continue; /* a fingerprint that starts with the tag byte */
		if (drop) {
			if ((ret = c->del(c, 0)) != 0)
				break;
		} else if ((rc = fn(k + 1, val.data, val.size, arg)) != 0) {
			break;
		}
	}
	c->close(c);
	if (rc)
		return rc;
	return ret == 0 || ret == DB_NOTFOUND ? 0 : bdb_fail(b, drop ? "delete (side record)" : "cursor get", ret);
}

int index_bdb_each_side(struct gindex *ix, char tag, size_t klen, index_side_fn fn, void *arg)
{
	if (((struct bdb_index *)ix)->replace && begin((struct bdb_index *)ix))
		return -1;
	return side_walk((struct bdb_index *)ix, tag, klen, fn, arg, false);
}

int index_bdb_drop_side(struct gindex *ix, char tag, size_t klen)
{
	if (begin((struct bdb_index *)ix))
		return -1;
	return side_walk((struct bdb_index *)ix, tag, klen, NULL, NULL, true);
}

/* --db's directory (made when creating), and whether it holds what -k or a reader needs. */
static int open_dir(struct bdb_index *b, const char *dir, uint64_t block_size, bool create, bool keep, bool exists,
		    struct dd_err *err)
{
	struct stat st;
	if (keep && !exists)
		return err_fail(err, -1, "--db %s holds no dedisgen analysis at block size %" PRIu64 " (-k adds to one)",
			    dir, block_size);
	if (create) {
		if (mkdir(dir, 0755) == 0)
			b->created_dir = true;
		else if (errno != EEXIST)
			return err_fail(err, -1, "--db %s: %s", dir, strerror(errno));
	}
	int dir_gone = stat(dir, &st);
	if (dir_gone || !S_ISDIR(st.st_mode))
		return err_fail(err, -1, "--db %s: %s", dir, dir_gone ? strerror(errno) : "not a directory");
	if (!create && !exists)
		return err_fail(err, -1, "%s: no dedisgen analysis at block size %" PRIu64, dir, block_size);
	return 0;
}

/* The Berkeley DB environment in dir (its cache at least 1 MiB) and the DB handle. */
static int open_env(struct bdb_index *b, const char *dir, uint64_t cache_bytes, struct dd_err *err)
{
	int ret;
	if ((ret = db_env_create(&b->env, 0)) != 0)
		return err_fail(err, -1, "Berkeley DB env: %s", db_strerror(ret));
	b->env->app_private = b;
	b->env->set_errcall(b->env, keep_bdb_msg);
	if (cache_bytes < 1 << 20)
		cache_bytes = 1 << 20;
	b->env->set_cachesize(b->env, (u_int32_t)(cache_bytes >> 30), (u_int32_t)(cache_bytes & ((1u << 30) - 1)), 1);
	if ((ret = b->env->open(b->env, dir, DB_CREATE | DB_INIT_MPOOL | DB_PRIVATE, 0)) != 0)
		return err_fail(err, -1, "--db %s: cannot open a Berkeley DB environment: %s", dir, db_strerror(ret));
	if ((ret = db_create(&b->db, b->env, 0)) != 0)
		return err_fail(err, -1, "Berkeley DB: %s", db_strerror(ret));
	return 0;
}

/* An analysis already in the file: another block size or hash is refused; -k and readers also
 * refuse the old format and an interrupted one (`whole`: its counts must be complete). */
static int old_refused(const char *path, const struct index_meta *old, uint64_t block_size, const char *hash,
		       bool whole, struct dd_err *err)
{
	if (old->block_size != block_size || strcmp(old->hash, hash))
		return err_fail(err, -1, "%s: incompatible analysis (block size %" PRIu64 ", hash %s; this run: %" PRIu64
			    ", %s)", path, old->block_size, old->hash, block_size, hash);
	if (whole && old->format != META_FORMAT)
		return err_fail(err, -1, "%s: an analysis in dedisgen's old format %d (counts only); this dedisgen also "
			    "keeps first positions and compressibility samples: analyse again without -k", path,
			    old->format);
	if (whole && !old->complete)
		return err_fail(err, -1, "%s: the analysis it holds was interrupted; its counts are partial "
			    "(start again without -k)", path);
	return 0;
}

/* A writer's metadata while it runs (complete false); a new file says at once what it is: a crash
 * leaves it recognisable (interrupted). */
static int start_running(struct bdb_index *b, const struct index_meta *meta, const char *path, struct dd_err *err)
{
	struct index_meta running = *meta;
	running.complete = false;
	if (!(b->running = meta_to_json(&running)))
		return err_fail(err, -1, "out of memory");
	if (b->created_file && put_meta_text(b, b->running))
		return err_fail(err, -1, "%s: %s", path, b->base.err.msg);
	return 0;
}

struct gindex *index_bdb_open(const char *dir, uint64_t block_size, const char *hash, bool create, bool keep,
			      uint64_t cache_bytes, struct index_meta *meta, struct dd_err *err)
{
	struct bdb_index *b = calloc(1, sizeof *b);
	char file[64], path[4096];
	struct stat st;
	int ret, fd;
	size_t fp_len = !strcmp(hash, "sha256") ? 32 : 20;
	struct index_meta old = {0};

	if (!b) {
		err_fail(err, -1, "out of memory");
		return NULL;
	}
	b->base.ops = &bdb_ops;
	b->base.fp_len = fp_len;
	b->readonly = !create;
	snprintf(file, sizeof file, "dedisgen-%" PRIu64 ".db", block_size);
	snprintf(path, sizeof path, "%s/%s", dir, file);

	snprintf(b->dir, sizeof b->dir, "%s", dir);
	snprintf(b->file, sizeof b->file, "%s", file);
	bool exists = stat(path, &st) == 0;
	if (open_dir(b, dir, block_size, create, keep, exists, err) ||
	    open_env(b, dir, cache_bytes, err))
		goto fail;
	/* Without -k an earlier analysis at this size is replaced; it is checked first, so a file
	 * that is not ours is never removed. */
	u_int32_t flags = create ? DB_CREATE : DB_RDONLY;
	if ((ret = b->db->open(b->db, NULL, file, NULL, DB_BTREE, flags, 0644)) != 0) {
		err_fail(err, -1, "%s: not a Berkeley DB dedisgen analysis: %s%s%s%s", path, db_strerror(ret),
		     b->bdb_msg[0] ? " (" : "", b->bdb_msg, b->bdb_msg[0] ? ")" : "");
		goto fail;
	}
	if (b->db->fd(b->db, &fd) == 0 && flock(fd, (create ? LOCK_EX : LOCK_SH) | LOCK_NB)) {
		err_fail(err, -1, "%s: in use by another dedisgen", path);
		goto fail;
	}
	if (exists) {
		if (read_meta(b, &old)) {
			err_fail(err, -1, "%s: not a dedisgen analysis (no valid metadata record)", path);
			goto fail;
		}
		if (old_refused(path, &old, block_size, hash, keep || !create, err))
			goto fail;
	}
	/* Without -k an earlier analysis is replaced, but only at the first write (begin). */
	b->replace = create && exists && !keep;
	b->created_file = create && !exists;
	if (exists && !b->replace) {
		if (count_entries(b)) {
			err_fail(err, -1, "%s: %s", path, b->base.err.msg);
			goto fail;
		}
		index_meta_free(meta);
		*meta = old;
		memset(&old, 0, sizeof old);
	} else {
		index_meta_free(&old); /* the analysis to be replaced */
		index_meta_free(meta);
		memset(meta, 0, sizeof *meta);
		meta->format = META_FORMAT;
		meta->block_size = block_size;
		snprintf(meta->hash, sizeof meta->hash, "%s", hash);
	}
	if (create && start_running(b, meta, path, err))
		goto fail;
	return &b->base;
fail:
	index_meta_free(&old);
	bdb_close(&b->base);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int index_bdb_list(const char *dir, uint64_t *sizes, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		uint64_t bs;
		char tail[8];
		if (sscanf(e->d_name, "dedisgen-%" SCNu64 ".%7s", &bs, tail) == 2 && !strcmp(tail, "db"))
			sizes[n++] = bs;
	}
	closedir(d);
	qsort(sizes, (size_t)n, sizeof *sizes, cmp_u64);
	return n;
}
