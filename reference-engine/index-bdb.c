/* index-bdb.c - the Berkeley DB index: fingerprint -> pbn in a transactional DB_HASH database
 * in <volume>/bdb/, shared by every process that has the volume open (one env, DB_REGISTER).
 *
 * Layout: <dir>/bdb/ is the environment (region files __db.*, logs log.*), index.db the hash
 * database. A key is a fingerprint (exactly fp_len bytes), its datum the pbn as 8 bytes
 * little-endian. Two metadata records live in the same database under keys whose length is not
 * fp_len, so iteration can never mistake them for entries: "dedis.entries" (the exact entry
 * count, updated in the same transaction as every insert/remove, so it is shared by all
 * processes and survives recovery) and "dedis.params" (fp_len, capacity: checked on open).
 * <dir>/bdb/counters is a small MAP_SHARED page of non-durable statistics (lookups) and the
 * shared group-commit counter. DB_REGISTER allows one environment handle per process, so the
 * handles are shared (refcounted) by every open of the same directory within a process.
 *
 * Transactions and durability: every insert / remove is one transaction, committed before the
 * call returns (no transaction stays open across calls: another process could otherwise block
 * on our page locks while it holds the engine's volume lock). The environment runs with
 * DB_TXN_WRITE_NOSYNC: a commit writes its log records to the OS, so it survives the process
 * being killed, but not a machine crash. `commit_every` N is a group commit: every N inserts or
 * removes (counted across all processes sharing the volume) the log is forced to disk, so at
 * most N-1 acknowledged index updates can be lost by a power failure; with 0 the log is forced
 * only by flush. flush forces the log and takes a checkpoint (dirty pages to the database
 * file, fsync), after which everything so far is durable and old log files can go
 * (DB_LOG_AUTO_REMOVE). A checkpoint is also taken opportunistically once 1 MiB of log has
 * accumulated since the last one, so the log stays bounded even if nobody flushes.
 *
 * Recovery: every opener passes DB_REGISTER | DB_RECOVER, so Berkeley DB runs normal recovery
 * exactly when a process that had the environment open died without closing it. When the
 * engine says the volume was not closed cleanly (`recover`), the entry count is also recounted
 * by iteration (belt and braces: it is transactional, so it should already be exact).
 *
 * Statistics: meta_reads / meta_writes are the memory pool's page-ins / page-outs (st_page_in,
 * st_page_out: environment-wide, so shared by all processes, reset when the environment
 * region is recreated); bytes is the size of index.db. */
#include <db.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "index.h"
#include "meta.h"

#define BDB_SUBDIR "bdb"
#define BDB_FILE "index.db"
#define BDB_COUNTERS BDB_SUBDIR "/counters"
#define BDB_COUNTERS_MAGIC 0x544e434244424444ULL /* "DDBDBCNT" */
#define BDB_PAGE 4096
#define BDB_LOG_MAX (1u << 20)          /* 1 MiB log files */
#define BDB_CKP_KBYTES 1024             /* opportunistic checkpoint after this much log */
#define BDB_CKP_EVERY 256               /* ... checked every this many writes */
#define BDB_CACHE_MIN (2u << 20)
#define BDB_CACHE_MAX (32u << 20)
#define BDB_NELEM_MAX (1u << 20)        /* cap on the hash table's pre-sizing */

static const char KEY_ENTRIES[] = "dedis.entries";
static const char KEY_PARAMS[] = "dedis.params";

/* Shared, non-durable: statistics and the group-commit counter. */
struct bdb_counters {
	uint64_t magic;
	uint64_t lookups;
	uint64_t writes;        /* inserts + removes, ever (this region's life) */
	uint64_t uncommitted;   /* writes since the log was last forced */
	uint8_t pad[4096 - 32];
};

/* DB_REGISTER allows one DB_ENV handle per process and environment, and a volume may be open
 * more than once in a process (several engines, tests): the environment and database handles
 * are shared by every `struct index` of this process on the same directory, refcounted.
 * Entries are keyed by the directory's device and inode, and by pid, so a forked child never
 * uses (or closes) handles it inherited: it opens its own. */
struct shared_env {
	struct shared_env *next;
	dev_t dev;
	ino_t ino;
	pid_t pid;
	unsigned refs;
	DB_ENV *env;
	DB *db;
};

static struct shared_env *shared_envs;
static pthread_mutex_t shared_envs_lock = PTHREAD_MUTEX_INITIALIZER;

struct index {
	struct shared_env *se;
	DB_ENV *env;
	DB *db;
	struct bdb_counters *c;
	unsigned fp_len;
	unsigned commit_every;
	char dbpath[4096];
};

/* Berkeley DB's return codes as -errno: its own codes are negative, system errors positive. */
static int dberr(int ret)
{
	if (ret == 0)
		return 0;
	if (ret > 0)
		return -ret;
	switch (ret) {
	case DB_NOTFOUND:
	case DB_KEYEMPTY:
		return -ENOENT;
	case DB_LOCK_DEADLOCK:
	case DB_LOCK_NOTGRANTED:
		return -EDEADLK;
	case DB_RUNRECOVERY:
	default:
		return -EIO;
	}
}

static void put_le64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static DBT dbt(const void *data, size_t len)
{
	DBT d;
	memset(&d, 0, sizeof d);
	d.data = (void *)data;
	d.size = (u_int32_t)len;
	return d;
}

static DBT dbt_out(void *buf, size_t len)
{
	DBT d;
	memset(&d, 0, sizeof d);
	d.data = buf;
	d.ulen = (u_int32_t)len;
	d.flags = DB_DBT_USERMEM;
	return d;
}

static uint32_t cache_bytes(uint64_t capacity)
{
	/* roughly twice the index (an entry costs ~40-50 bytes on a page), within bounds */
	uint64_t want = capacity * 96;
	return want < BDB_CACHE_MIN ? BDB_CACHE_MIN : want > BDB_CACHE_MAX ? BDB_CACHE_MAX : (uint32_t)want;
}

static int env_open(const struct index_params *p, DB_ENV **out)
{
	char home[4096];
	int ret;
	if (meta_path(home, sizeof home, p->dir, BDB_SUBDIR))
		return -ENAMETOOLONG;
	DB_ENV *env;
	if ((ret = db_env_create(&env, 0)) != 0)
		return dberr(ret);
	env->set_errpfx(env, "dedis index-bdb");
	/* These size the environment only when this opener creates its regions. */
	if ((ret = env->set_cachesize(env, 0, cache_bytes(p->capacity), 1)) != 0 ||
	    (ret = env->set_lg_max(env, BDB_LOG_MAX)) != 0 ||
	    (ret = env->set_lk_max_locks(env, 10000)) != 0 ||
	    (ret = env->set_lk_max_objects(env, 10000)) != 0 ||
	    (ret = env->set_lk_max_lockers(env, 10000)) != 0 ||
	    (ret = env->set_lk_detect(env, DB_LOCK_DEFAULT)) != 0 ||
	    /* A process killed inside a transaction keeps its page locks: time out (the caller
	     * gets an error) rather than hang every other writer of the volume forever. */
	    (ret = env->set_timeout(env, 10 * 1000000, DB_SET_LOCK_TIMEOUT)) != 0 ||
	    (ret = env->set_flags(env, DB_TXN_WRITE_NOSYNC, 1)) != 0 ||
	    (ret = env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1)) != 0)
		goto fail;
	ret = env->open(env, home,
			DB_CREATE | DB_INIT_MPOOL | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_TXN | DB_REGISTER | DB_RECOVER | DB_THREAD,
			0);
	if (ret)
		goto fail;
	*out = env;
	return 0;
fail:
	env->close(env, 0);
	return dberr(ret);
}

static int db_open(DB_ENV *env, const struct index_params *p, int create, DB **out)
{
	DB *db;
	int ret;
	if ((ret = db_create(&db, env, 0)) != 0)
		return dberr(ret);
	if (create) {
		/* entries per bucket page: a key + 8-byte datum + two 2-byte slots + two type bytes */
		u_int32_t ffactor = (BDB_PAGE - 64) / (p->fp_len + 8 + 6);
		uint64_t nelem = p->capacity < BDB_NELEM_MAX ? p->capacity : BDB_NELEM_MAX;
		if ((ret = db->set_pagesize(db, BDB_PAGE)) != 0 || (ret = db->set_h_ffactor(db, ffactor)) != 0 ||
		    (ret = db->set_h_nelem(db, (u_int32_t)nelem)) != 0)
			goto fail;
	}
	ret = db->open(db, NULL, BDB_FILE, NULL, DB_HASH, DB_AUTO_COMMIT | DB_THREAD | (create ? DB_CREATE | DB_EXCL : 0), 0);
	if (ret)
		goto fail;
	*out = db;
	return 0;
fail:
	db->close(db, 0);
	return dberr(ret);
}

/* This process's handles on the environment in p->dir (opened, or created when `create`). */
static int acquire(const struct index_params *p, int create, struct shared_env **out)
{
	char home[4096];
	struct stat st;
	if (meta_path(home, sizeof home, p->dir, BDB_SUBDIR))
		return -ENAMETOOLONG;
	if (stat(home, &st))
		return -errno;
	pid_t pid = getpid();
	int rc = 0;
	pthread_mutex_lock(&shared_envs_lock);
	struct shared_env *se;
	for (se = shared_envs; se; se = se->next)
		if (se->dev == st.st_dev && se->ino == st.st_ino && se->pid == pid)
			break;
	if (se) {
		if (create)
			rc = -EEXIST;
		else
			se->refs++;
	} else if (!(se = calloc(1, sizeof *se))) {
		rc = -ENOMEM;
	} else {
		rc = env_open(p, &se->env);
		if (!rc && (rc = db_open(se->env, p, create, &se->db)))
			se->env->close(se->env, 0);
		if (rc) {
			free(se);
		} else {
			se->dev = st.st_dev;
			se->ino = st.st_ino;
			se->pid = pid;
			se->refs = 1;
			se->next = shared_envs;
			shared_envs = se;
		}
	}
	pthread_mutex_unlock(&shared_envs_lock);
	if (!rc)
		*out = se;
	return rc;
}

static int release(struct shared_env *se)
{
	int rc = 0;
	pthread_mutex_lock(&shared_envs_lock);
	if (--se->refs == 0) {
		for (struct shared_env **pp = &shared_envs; *pp; pp = &(*pp)->next)
			if (*pp == se) {
				*pp = se->next;
				break;
			}
		rc = dberr(se->db->close(se->db, 0));
		int r2 = dberr(se->env->close(se->env, 0));
		if (!rc)
			rc = r2;
		free(se);
	}
	pthread_mutex_unlock(&shared_envs_lock);
	return rc;
}

/* Reads a metadata counter inside txn (write-locked when rmw). */
static int get_u64(DB *db, DB_TXN *txn, const char *k, uint64_t *v, bool rmw)
{
	uint8_t b[8];
	DBT key = dbt(k, strlen(k)), data = dbt_out(b, sizeof b);
	int ret = db->get(db, txn, &key, &data, rmw ? DB_RMW : 0);
	if (ret)
		return dberr(ret);
	if (data.size != 8)
		return -EIO;
	*v = get_le64(b);
	return 0;
}

static int put_u64(DB *db, DB_TXN *txn, const char *k, uint64_t v)
{
	uint8_t b[8];
	put_le64(b, v);
	DBT key = dbt(k, strlen(k)), data = dbt(b, sizeof b);
	return dberr(db->put(db, txn, &key, &data, 0));
}

static int bdb_create(const struct index_params *p)
{
	char home[4096];
	if (p->fp_len == strlen(KEY_ENTRIES) || p->fp_len == strlen(KEY_PARAMS) || p->fp_len > 64)
		return -EINVAL; /* a fingerprint must never look like a metadata key */
	if (meta_path(home, sizeof home, p->dir, BDB_SUBDIR))
		return -ENAMETOOLONG;
	if (mkdir(home, 0755) && errno != EEXIST)
		return -errno;
	struct bdb_counters *c = meta_map(p->dir, BDB_COUNTERS, sizeof *c, 1, NULL);
	if (!c)
		return errno ? -errno : -EIO;
	memset(c, 0, sizeof *c);
	c->magic = BDB_COUNTERS_MAGIC;
	munmap(c, sizeof *c);

	struct shared_env *se;
	DB_TXN *txn = NULL;
	int rc = acquire(p, 1, &se);
	if (rc)
		return rc;
	DB_ENV *env = se->env;
	DB *db = se->db;
	rc = dberr(env->txn_begin(env, NULL, &txn, 0));
	if (!rc) {
		uint8_t params[16];
		put_le64(params, p->fp_len);
		put_le64(params + 8, p->capacity);
		DBT key = dbt(KEY_PARAMS, strlen(KEY_PARAMS)), data = dbt(params, sizeof params);
		rc = dberr(db->put(db, txn, &key, &data, 0));
		if (!rc)
			rc = put_u64(db, txn, KEY_ENTRIES, 0);
		int r2 = rc ? txn->abort(txn) : txn->commit(txn, 0);
		if (!rc)
			rc = dberr(r2);
	}
	if (!rc)
		rc = dberr(env->log_flush(env, NULL));
	if (!rc)
		rc = dberr(env->txn_checkpoint(env, 0, 0, 0));
	int r2 = release(se);
	return rc ? rc : r2;
}

static int bdb_count(struct index *ix, uint64_t *n);

static int bdb_open(const struct index_params *p, int recover, struct index **out)
{
	struct index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return -ENOMEM;
	ix->fp_len = p->fp_len;
	ix->commit_every = p->commit_every;
	int rc = meta_path(ix->dbpath, sizeof ix->dbpath, p->dir, BDB_SUBDIR "/" BDB_FILE);
	if (!rc && !(ix->c = meta_map(p->dir, BDB_COUNTERS, sizeof *ix->c, 0, NULL)))
		rc = errno ? -errno : -EIO;
	if (!rc && ix->c->magic != BDB_COUNTERS_MAGIC)
		rc = -EINVAL;
	if (!rc && !(rc = acquire(p, 0, &ix->se))) {
		ix->env = ix->se->env;
		ix->db = ix->se->db;
	}
	if (!rc) {
		uint8_t params[16];
		DBT key = dbt(KEY_PARAMS, strlen(KEY_PARAMS)), data = dbt_out(params, sizeof params);
		rc = dberr(ix->db->get(ix->db, NULL, &key, &data, 0));
		if (rc == -ENOENT || (!rc && (data.size != 16 || get_le64(params) != p->fp_len)))
			rc = -EINVAL;
	}
	if (!rc && recover) {
		/* The count is transactional, so recovery has made it exact; recount anyway. */
		uint64_t have = 0, n = 0;
		rc = get_u64(ix->db, NULL, KEY_ENTRIES, &have, false);
		if (!rc)
			rc = bdb_count(ix, &n);
		if (!rc && n != have)
			rc = put_u64(ix->db, NULL, KEY_ENTRIES, n); /* auto-commit */
	}
	if (rc) {
		if (ix->se)
			release(ix->se);
		if (ix->c)
			munmap(ix->c, sizeof *ix->c);
		free(ix);
		return rc;
	}
	*out = ix;
	return 0;
}

static int bdb_lookup(struct index *ix, const uint8_t *fp, uint64_t *pbn)
{
	uint8_t b[8];
	DBT key = dbt(fp, ix->fp_len), data = dbt_out(b, sizeof b);
	ix->c->lookups++;
	int ret = ix->db->get(ix->db, NULL, &key, &data, 0);
	if (ret == DB_NOTFOUND)
		return 0;
	if (ret)
		return dberr(ret);
	if (data.size != 8)
		return -EIO;
	*pbn = get_le64(b);
	return 1;
}

/* After a committed write: the group commit and the opportunistic checkpoint. */
static int after_write(struct index *ix)
{
	int rc = 0;
	ix->c->writes++;
	ix->c->uncommitted++;
	if (ix->commit_every && ix->c->uncommitted >= ix->commit_every) {
		rc = dberr(ix->env->log_flush(ix->env, NULL));
		if (!rc)
			ix->c->uncommitted = 0;
	}
	if (!rc && ix->c->writes % BDB_CKP_EVERY == 0)
		rc = dberr(ix->env->txn_checkpoint(ix->env, BDB_CKP_KBYTES, 0, 0));
	return rc;
}

/* One insert or remove as a transaction: the entry and the count change together. */
static int bdb_update(struct index *ix, const uint8_t *fp, const uint64_t *pbn)
{
	DB_TXN *txn;
	int rc = dberr(ix->env->txn_begin(ix->env, NULL, &txn, 0));
	if (rc)
		return rc;
	DBT key = dbt(fp, ix->fp_len);
	int delta = 0;
	if (pbn) {
		uint8_t b[8];
		put_le64(b, *pbn);
		DBT data = dbt(b, sizeof b);
		int ret = ix->db->put(ix->db, txn, &key, &data, DB_NOOVERWRITE);
		if (ret == DB_KEYEXIST)
			ret = ix->db->put(ix->db, txn, &key, &data, 0); /* replace */
		else if (!ret)
			delta = 1;
		rc = dberr(ret);
	} else {
		int ret = ix->db->del(ix->db, txn, &key, 0);
		if (!ret)
			delta = -1;
		rc = dberr(ret);
	}
	uint64_t n = 0;
	if (!rc && delta)
		rc = get_u64(ix->db, txn, KEY_ENTRIES, &n, true);
	if (!rc && delta)
		rc = put_u64(ix->db, txn, KEY_ENTRIES, n + (uint64_t)(int64_t)delta);
	if (rc) {
		txn->abort(txn);
		return rc;
	}
	rc = dberr(txn->commit(txn, 0));
	return rc ? rc : after_write(ix);
}

static int bdb_insert(struct index *ix, const uint8_t *fp, uint64_t pbn)
{
	return bdb_update(ix, fp, &pbn);
}

static int bdb_remove(struct index *ix, const uint8_t *fp)
{
	return bdb_update(ix, fp, NULL); /* -ENOENT from DB_NOTFOUND when absent */
}

static int bdb_iterate(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t pbn), void *arg)
{
	DBC *cur;
	int rc = dberr(ix->db->cursor(ix->db, NULL, &cur, 0));
	if (rc)
		return rc;
	uint8_t kb[64], db8[64]; /* larger than any record we write */
	for (;;) {
		DBT key = dbt_out(kb, sizeof kb), data = dbt_out(db8, sizeof db8);
		int ret = cur->get(cur, &key, &data, DB_NEXT);
		if (ret == DB_NOTFOUND)
			break;
		if (ret) {
			rc = dberr(ret);
			break;
		}
		if (key.size != ix->fp_len || data.size != 8)
			continue; /* a metadata record */
		rc = fn(arg, kb, get_le64(db8));
		if (rc)
			break;
	}
	int r2 = dberr(cur->close(cur));
	return rc ? rc : r2;
}

static int count_one(void *arg, const uint8_t *fp, uint64_t pbn)
{
	(*(uint64_t *)arg)++;
	return 0;
}

static int bdb_count(struct index *ix, uint64_t *n)
{
	*n = 0;
	return bdb_iterate(ix, count_one, n);
}

static int bdb_flush(struct index *ix)
{
	int rc = dberr(ix->env->log_flush(ix->env, NULL));
	if (!rc)
		rc = dberr(ix->env->txn_checkpoint(ix->env, 0, 0, 0));
	if (!rc)
		ix->c->uncommitted = 0;
	return rc;
}

static void bdb_stats(struct index *ix, struct index_stats *s)
{
	memset(s, 0, sizeof *s);
	uint64_t n = 0;
	if (!get_u64(ix->db, NULL, KEY_ENTRIES, &n, false))
		s->entries = n;
	s->lookups = ix->c->lookups;
	DB_MPOOL_STAT *ms = NULL;
	if (!ix->env->memp_stat(ix->env, &ms, NULL, 0) && ms) {
		s->meta_reads = ms->st_page_in;
		s->meta_writes = ms->st_page_out;
		free(ms);
	}
	struct stat st;
	if (!stat(ix->dbpath, &st))
		s->bytes = (uint64_t)st.st_size;
}

static void bdb_close(struct index *ix)
{
	release(ix->se);
	munmap(ix->c, sizeof *ix->c);
	free(ix);
}

const struct index_ops index_bdb_ops = {
	.name = "bdb",
	.create = bdb_create,
	.open = bdb_open,
	.lookup = bdb_lookup,
	.insert = bdb_insert,
	.remove = bdb_remove,
	.iterate = bdb_iterate,
	.flush = bdb_flush,
	.stats = bdb_stats,
	.close = bdb_close,
};
