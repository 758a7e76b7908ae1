/* index-bdb.c - the Berkeley DB index: fingerprint -> pbn in transactional DB_HASH databases
 * in <volume>/bdb/, one environment per partition, shared by every process that has the volume
 * open (DB_REGISTER).
 *
 * Layout: BDB_PARTS hash databases index.<k>.db; fingerprint stripe s lives in partition s mod
 * BDB_PARTS, and partition k in environment <dir>/bdb/env.<k mod BDB_ENVS>/ (its region files
 * __db.*, its log log.*). One environment per partition because an environment has one
 * transaction region, one log and one lock region, each behind one mutex that every transaction
 * takes: with all partitions in one environment, a second writing process spent its time
 * waiting on those (1.1-1.2x the 1-process rate). Writers of different fingerprints now rarely
 * meet on any mutex, a page lock or a hash meta page, and Berkeley DB's own page locking lets
 * any number of processes insert at once (a deadlock is retried). Volumes formatted before keep
 * their one environment in <dir>/bdb/ itself (index.0.db there says so) and open as they were.
 * A key is a
 * fingerprint (exactly fp_len bytes), its datum the address as 8 bytes little-endian. One
 * metadata record, "dedis.params" (fp_len, capacity: checked on open), lives in partition 0 under
 * a key whose length is not fp_len, so iteration can never mistake it for an entry.
 * <dir>/bdb/counters is a small MAP_SHARED page of the entry count (atomic; recounted on
 * recovery and repair) and the shared group-commit counter. DB_REGISTER allows one environment
 * handle per process, so the handles are shared (refcounted) by every open of the same directory
 * within a process.
 *
 * Transactions and durability: every insert / remove is one transaction, committed before the
 * call returns (no transaction stays open across calls: another process could otherwise block
 * on our page locks while it holds one of the engine's stripe locks). The environment runs with
 * DB_TXN_WRITE_NOSYNC: a commit writes its log records to the OS, so it survives the process
 * being killed, but not a machine crash. `commit_every` N is a group commit: every N inserts or
 * removes (counted across all processes sharing the volume) every log is forced to disk, so at
 * most N-1 acknowledged index updates can be lost by a power failure; with 0 the log is forced
 * only by flush. The engine's own durability does not rest on this: after a power loss it
 * rebuilds the index from the durable map (the index is advice). flush forces the log and takes a checkpoint (dirty pages to the database
 * file, fsync), after which everything so far is durable and old log files can go
 * (DB_LOG_AUTO_REMOVE). A checkpoint of an environment is also taken opportunistically once
 * twice its cache's size in log has accumulated since the last one (256 KiB at least), so the
 * logs stay bounded even if nobody flushes; not more often, because a checkpoint writes back
 * every dirty page of the cache while other writers wait on those pages.
 *
 * Recovery: every opener passes DB_REGISTER | DB_RECOVER, so Berkeley DB runs normal recovery
 * exactly when a process that had the environment open died without closing it. When the
 * engine says the volume was not closed cleanly (`recover`), and on repair, the entry count is
 * recounted by iteration (a writer may have died between its commit and the count).
 *
 * Statistics: meta_reads / meta_writes are the memory pool's page-ins / page-outs (st_page_in,
 * st_page_out: environment-wide, so shared by all processes, reset when the environment
 * region is recreated); bytes is the size of index.db. */
#include <db.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reference-engine/fpindex.h"
#include "reference-engine/meta.h"

#define BDB_SUBDIR "bdb"
#define BDB_PARTS 16
/* partition k in environment k mod BDB_ENVS: 8 scaled as 16 did at 2 processes, and every first
 * open creates each environment's regions and log (an open of a 64 MiB volume: 40 ms with one
 * environment, 81 ms with 16) */
#define BDB_ENVS 8
#define BDB_ENV_CACHE_MIN (64u << 10)
#define BDB_ENV_LOG_MIN (256u << 10)     /* a log file: at least 4 log buffers (32 KiB each) */
/* Lock table sizes, shared out among the environments (an environment's regions are sized, and
 * zeroed, when it is created: at every first open); partitions of one environment's lock table */
#define BDB_LOCKS 16000
#define BDB_LOCK_PARTITIONS 4
#define BDB_ENV_CKP_MIN_KBYTES 256
#define BDB_COUNTERS BDB_SUBDIR "/counters"
#define BDB_COUNTERS_MAGIC 0x544e434244424444ULL /* "DDBDBCNT" */
#define BDB_PAGE 4096
#define BDB_LOG_MAX (1u << 20)          /* 1 MiB log files */
#define BDB_CKP_EVERY 256               /* ... checked every this many writes per environment */
#define BDB_CACHE_MIN (2u << 20)
#define BDB_CACHE_MAX (32u << 20)
#define BDB_NELEM_MAX (1u << 20)        /* cap on the hash table's pre-sizing */

static const char KEY_PARAMS[] = "dedis.params";

/* Shared, non-durable: statistics and the group-commit counter. The entry count is kept per
 * partition, each in its own cache line, so writers of different partitions never write one
 * line; the total is `entries` (what volumes formatted before held, 0 after a recount) plus them. */
struct bdb_counters {
	uint64_t magic;
	uint64_t entries;
	uint64_t writes;        /* unused (was: inserts + removes, shared by every process) */
	uint64_t uncommitted;   /* writes since the log was last forced */
	uint8_t pad[1024 - 32];
	struct {
		uint64_t n;
		uint8_t pad[56];
	} part[BDB_PARTS];
	uint8_t tail[4096 - 1024 - BDB_PARTS * 64];
};
_Static_assert(sizeof(struct bdb_counters) == 4096, "the counters file is one page");

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
	unsigned nenv;          /* BDB_ENVS, or 1 for a volume formatted before per-partition ones */
	DB_ENV *env[BDB_ENVS];
	DB *db[BDB_PARTS];
};

static struct shared_env *shared_envs;
static pthread_mutex_t shared_envs_lock = PTHREAD_MUTEX_INITIALIZER;

struct index {
	struct shared_env *se;
	DB_ENV **env;
	DB **db;
	unsigned nenv;
	struct bdb_counters *c;
	unsigned fp_len;
	unsigned commit_every;
	uint32_t ckp_kbytes;           /* an environment's opportunistic checkpoint after this much log */
	uint64_t writes;               /* this handle's inserts + removes: when to look at checkpoints */
	char dir[4096];
};

static unsigned part_of(const uint8_t *fp)
{
	return index_stripe(fp) % BDB_PARTS;
}

static DB_ENV *env_of(struct index *ix, unsigned k)
{
	return ix->env[k % ix->nenv];
}

/* Environment j's home: <dir>/bdb/env.<j>, or <dir>/bdb for a one-environment volume. */
static int env_home(char *buf, size_t len, const char *dir, unsigned nenv, unsigned j)
{
	char sub[64];
	if (nenv == 1)
		snprintf(sub, sizeof sub, "%s", BDB_SUBDIR);
	else
		snprintf(sub, sizeof sub, "%s/env.%u", BDB_SUBDIR, j);
	return meta_path(buf, len, dir, sub) ? -ENAMETOOLONG : 0;
}

/* One environment (a volume formatted before per-partition environments) or BDB_ENVS. */
static unsigned envs_of_volume(const char *dir)
{
	char path[4096];
	struct stat st;
	if (meta_path(path, sizeof path, dir, BDB_SUBDIR "/index.0.db"))
		return BDB_ENVS;
	return stat(path, &st) == 0 ? 1 : BDB_ENVS;
}

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

/* An environment's share of the cache, and twice that in log (KiB) between its checkpoints: a
 * checkpoint's cost (the dirty pages it writes back) is then spread over as many log bytes as
 * the cache could dirty twice over. */
static uint32_t env_cache_bytes(uint64_t capacity, unsigned nenv)
{
	uint32_t b = cache_bytes(capacity) / nenv;
	return b < BDB_ENV_CACHE_MIN ? BDB_ENV_CACHE_MIN : b;
}

static uint32_t checkpoint_kbytes(uint64_t capacity, unsigned nenv)
{
	uint32_t kb = 2 * (env_cache_bytes(capacity, nenv) >> 10);
	return kb < BDB_ENV_CKP_MIN_KBYTES ? BDB_ENV_CKP_MIN_KBYTES : kb;
}

/* Berkeley DB's own messages go to stderr, except those that only follow from one already
 * printed: after a damaged page (checksum error) every later call repeats "fatal region error"
 * and the close lists each file still open - tens of lines that hide the one that says what. */
static void errcall(const DB_ENV *env, const char *pfx, const char *msg)
{
	(void)env;
	static const char *const echoes[] = {"BDB0060 ", "BDB0061 ", "BDB1581 ", "BDB1582 "};
	for (size_t i = 0; i < sizeof echoes / sizeof echoes[0]; i++)
		if (!strncmp(msg, echoes[i], strlen(echoes[i])))
			return;
	/* nor one message again and again (a damaged meta page: one line per page read) */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char last[256];
	pthread_mutex_lock(&lock);
	bool again = !strncmp(last, msg, sizeof last - 1);
	snprintf(last, sizeof last, "%s", msg);
	pthread_mutex_unlock(&lock);
	if (!again)
		fprintf(stderr, "%s: %s\n", pfx ? pfx : "dedis index-bdb", msg);
}

/* The environment's sizes and behaviour (they apply when an opener creates its regions). */
static int env_configure(DB_ENV *env, const struct index_params *p, unsigned nenv)
{
	int ret;
	env->set_errpfx(env, "dedis index-bdb");
	env->set_errcall(env, errcall);
	if ((ret = env->set_cachesize(env, 0, env_cache_bytes(p->capacity, nenv), 1)) != 0 ||
	    (ret = env->set_lg_max(env, BDB_LOG_MAX / nenv > BDB_ENV_LOG_MIN ? BDB_LOG_MAX / nenv : BDB_ENV_LOG_MIN)) != 0 ||
	    (ret = env->set_lk_max_locks(env, BDB_LOCKS / nenv)) != 0 ||
	    (ret = env->set_lk_max_objects(env, BDB_LOCKS / nenv)) != 0 ||
	    (ret = env->set_lk_max_lockers(env, BDB_LOCKS / nenv)) != 0 ||
	    (ret = env->set_lk_partitions(env, BDB_LOCK_PARTITIONS)) != 0 ||
	    (ret = env->set_lk_detect(env, DB_LOCK_DEFAULT)) != 0 ||
	    /* A process killed inside a transaction keeps its page locks: time out (the caller
	     * gets an error) rather than hang every other writer of the volume forever. */
	    (ret = env->set_timeout(env, 10 * 1000000, DB_SET_LOCK_TIMEOUT)) != 0 ||
	    (ret = env->set_flags(env, DB_TXN_WRITE_NOSYNC, 1)) != 0 ||
	    (ret = env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1)) != 0)
		return ret;
	return 0;
}

/* The region files (__db.NNN: the environment's shared memory) and __db.register (who has it
 * open) are not the index's data, and Berkeley DB trusts them when it attaches: damaged, they
 * crash it. When no other process has the volume open they are removed, to be created afresh;
 * after an unclean close, normal recovery (from the log into index.db, as after a crash) runs
 * first - after a clean one the last closer's checkpoint left everything in index.db. */
static int env_rebuild(const struct index_params *p, unsigned nenv, const char *home, int recover)
{
	DIR *d = opendir(home);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "__db.", 5))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (!recover)
		return 0;
	DB_ENV *env;
	int ret = db_env_create(&env, 0);
	if (ret)
		return dberr(ret);
	if (!(ret = env_configure(env, p, nenv)))
		ret = env->open(env, home, DB_CREATE | DB_INIT_MPOOL | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_TXN | DB_RECOVER, 0);
	int ret2 = env->close(env, 0);
	return dberr(ret ? ret : ret2);
}

static int env_open(const struct index_params *p, unsigned nenv, unsigned j, int recover, DB_ENV **out)
{
	char home[4096];
	int ret;
	if ((ret = env_home(home, sizeof home, p->dir, nenv, j)))
		return ret;
	if (p->alone && (ret = env_rebuild(p, nenv, home, recover)))
		return ret;
	DB_ENV *env;
	if ((ret = db_env_create(&env, 0)) != 0)
		return dberr(ret);
	if ((ret = env_configure(env, p, nenv)) != 0)
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

static int db_open(DB_ENV *env, const struct index_params *p, int create, unsigned k, DB **out)
{
	char name[32];
	snprintf(name, sizeof name, "index.%u.db", k);
	DB *db;
	int ret;
	if ((ret = db_create(&db, env, 0)) != 0)
		return dberr(ret);
	if (create) {
		/* entries per bucket page: a key + 8-byte datum + two 2-byte slots + two type bytes */
		u_int32_t ffactor = (BDB_PAGE - 64) / (p->fp_len + 8 + 6);
		uint64_t nelem = p->capacity / BDB_PARTS < BDB_NELEM_MAX ? p->capacity / BDB_PARTS + 1 : BDB_NELEM_MAX;
		/* DB_CHKSUM: a page damaged on disk is refused when it is read into the cache (libdb
		 * trusts a page's offsets and would read past it: SIGBUS, found by fuzz_engine) */
		if ((ret = db->set_pagesize(db, BDB_PAGE)) != 0 || (ret = db->set_h_ffactor(db, ffactor)) != 0 ||
		    (ret = db->set_h_nelem(db, (u_int32_t)nelem)) != 0 || (ret = db->set_flags(db, DB_CHKSUM)) != 0)
			goto fail;
	}
	ret = db->open(db, NULL, name, NULL, DB_HASH, DB_AUTO_COMMIT | DB_THREAD | (create ? DB_CREATE | DB_EXCL : 0), 0);
	if (ret)
		goto fail;
	*out = db;
	return 0;
fail:
	db->close(db, 0);
	return dberr(ret);
}

/* This process's handles on the environment in p->dir (opened, or created when `create`). */
static int acquire(const struct index_params *p, int create, int recover, struct shared_env **out)
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
		se->nenv = create ? BDB_ENVS : envs_of_volume(p->dir);
		for (unsigned j = 0; !rc && j < se->nenv; j++)
			rc = env_open(p, se->nenv, j, recover, &se->env[j]);
		for (unsigned k = 0; !rc && k < BDB_PARTS; k++)
			rc = db_open(se->env[k % se->nenv], p, create, k, &se->db[k]);
		if (rc) {
			for (unsigned k = 0; k < BDB_PARTS; k++)
				if (se->db[k])
					se->db[k]->close(se->db[k], 0);
			for (unsigned j = 0; j < se->nenv; j++)
				if (se->env[j])
					se->env[j]->close(se->env[j], 0);
		}
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
		for (unsigned k = 0; k < BDB_PARTS; k++) {
			int r = dberr(se->db[k]->close(se->db[k], 0));
			if (!rc)
				rc = r;
		}
		for (unsigned j = 0; j < se->nenv; j++) {
			int r2 = dberr(se->env[j]->close(se->env[j], 0));
			if (!rc)
				rc = r2;
		}
		free(se);
	}
	pthread_mutex_unlock(&shared_envs_lock);
	return rc;
}

static int bdb_create(const struct index_params *p)
{
	char home[4096];
	if (p->fp_len == strlen(KEY_PARAMS) || p->fp_len > 64)
		return -EINVAL; /* a fingerprint must never look like a metadata key */
	if (meta_path(home, sizeof home, p->dir, BDB_SUBDIR))
		return -ENAMETOOLONG;
	if (mkdir(home, 0755) && errno != EEXIST)
		return -errno;
	for (unsigned j = 0; j < BDB_ENVS; j++) {
		char eh[4096];
		int r = env_home(eh, sizeof eh, p->dir, BDB_ENVS, j);
		if (r)
			return r;
		if (mkdir(eh, 0755) && errno != EEXIST)
			return -errno;
	}
	struct bdb_counters *c = meta_map(p->dir, BDB_COUNTERS, sizeof *c, 1, NULL);
	if (!c)
		return errno ? -errno : -EIO;
	memset(c, 0, sizeof *c);
	c->magic = BDB_COUNTERS_MAGIC;
	munmap(c, sizeof *c);

	struct shared_env *se;
	DB_TXN *txn = NULL;
	int rc = acquire(p, 1, 0, &se);
	if (rc)
		return rc;
	DB_ENV *env = se->env[0];
	DB *db = se->db[0];
	rc = dberr(env->txn_begin(env, NULL, &txn, 0));
	if (!rc) {
		uint8_t params[16];
		put_le64(params, p->fp_len);
		put_le64(params + 8, p->capacity);
		DBT key = dbt(KEY_PARAMS, strlen(KEY_PARAMS)), data = dbt(params, sizeof params);
		rc = dberr(db->put(db, txn, &key, &data, 0));
		int r2 = rc ? txn->abort(txn) : txn->commit(txn, 0);
		if (!rc)
			rc = dberr(r2);
	}
	for (unsigned j = 0; !rc && j < se->nenv; j++) {
		rc = dberr(se->env[j]->log_flush(se->env[j], NULL));
		if (!rc)
			rc = dberr(se->env[j]->txn_checkpoint(se->env[j], 0, 0, 0));
	}
	int r2 = release(se);
	return rc ? rc : r2;
}

static int bdb_recount(struct index *ix);

static int bdb_open(const struct index_params *p, int recover, struct index **out)
{
	struct index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return -ENOMEM;
	ix->fp_len = p->fp_len;
	ix->commit_every = p->commit_every;
	int rc = snprintf(ix->dir, sizeof ix->dir, "%s", p->dir) >= (int)sizeof ix->dir ? -ENAMETOOLONG : 0;
	if (!rc && !(ix->c = meta_map(p->dir, BDB_COUNTERS, sizeof *ix->c, 0, NULL)))
		rc = errno ? -errno : -EIO;
	if (!rc && ix->c->magic != BDB_COUNTERS_MAGIC)
		rc = -EBADMSG; /* the engine rebuilds the index */
	if (!rc && !(rc = acquire(p, 0, recover, &ix->se))) {
		ix->env = ix->se->env;
		ix->db = ix->se->db;
		ix->nenv = ix->se->nenv;
		ix->ckp_kbytes = checkpoint_kbytes(p->capacity, ix->nenv);
	}
	if (!rc) {
		uint8_t params[16];
		DBT key = dbt(KEY_PARAMS, strlen(KEY_PARAMS)), data = dbt_out(params, sizeof params);
		rc = dberr(ix->db[0]->get(ix->db[0], NULL, &key, &data, 0));
		if (rc == -ENOENT || (!rc && (data.size != 16 || get_le64(params) != p->fp_len)))
			rc = -EINVAL;
	}
	if (!rc && recover) /* a writer may have died between a commit and the count */
		rc = bdb_recount(ix);
	/* Alone, a database or log that Berkeley DB cannot open (a page failing its checksum, a log
	 * file damaged, the parameters record gone) is damage to a cache: the engine rebuilds the
	 * index from the durable files. */
	if (p->alone && (rc == -EIO || rc == -EINVAL || rc == -ENOENT))
		rc = -EBADMSG;
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

static int bdb_lookup(struct index *ix, const uint8_t *fp, uint64_t *addr)
{
	uint8_t b[8];
	DBT key = dbt(fp, ix->fp_len), data = dbt_out(b, sizeof b);
	DB *db = ix->db[part_of(fp)];
	int ret;
	while ((ret = db->get(db, NULL, &key, &data, 0)) == DB_LOCK_DEADLOCK)
		;
	if (ret == DB_NOTFOUND)
		return 0;
	if (ret)
		return dberr(ret);
	if (data.size != 8)
		return -EIO;
	*addr = get_le64(b);
	return 1;
}

/* After a committed write: the group commit and the opportunistic checkpoint. */
static int after_write(struct index *ix, unsigned k)
{
	int rc = 0;
	if (ix->commit_every && __atomic_add_fetch(&ix->c->uncommitted, 1, __ATOMIC_RELAXED) >= ix->commit_every) {
		for (unsigned j = 0; !rc && j < ix->nenv; j++)
			rc = dberr(ix->env[j]->log_flush(ix->env[j], NULL));
		if (!rc)
			ix->c->uncommitted = 0;
	}
	/* the environment just written, every BDB_CKP_EVERY writes of each environment on average */
	unsigned every = BDB_CKP_EVERY / ix->nenv ? BDB_CKP_EVERY / ix->nenv : 1;
	if (!rc && ++ix->writes % every == 0)
		rc = dberr(env_of(ix, k)->txn_checkpoint(env_of(ix, k), ix->ckp_kbytes, 0, 0));
	return rc;
}

/* One insert or remove as a transaction, retried when Berkeley DB picks it as a deadlock victim. */
static int bdb_update(struct index *ix, const uint8_t *fp, const uint64_t *addr)
{
	unsigned k = part_of(fp);
	DB *db = ix->db[k];
	DB_ENV *env = env_of(ix, k);
	for (;;) {
		DB_TXN *txn;
		int rc = dberr(env->txn_begin(env, NULL, &txn, 0));
		if (rc)
			return rc;
		DBT key = dbt(fp, ix->fp_len);
		int delta = 0, ret;
		if (addr) {
			uint8_t b[8];
			put_le64(b, *addr);
			DBT data = dbt(b, sizeof b);
			ret = db->put(db, txn, &key, &data, DB_NOOVERWRITE);
			if (ret == DB_KEYEXIST)
				ret = db->put(db, txn, &key, &data, 0); /* replace */
			else if (!ret)
				delta = 1;
		} else {
			ret = db->del(db, txn, &key, 0);
			if (!ret)
				delta = -1;
		}
		if (ret) {
			txn->abort(txn);
			if (ret == DB_LOCK_DEADLOCK)
				continue;
			return dberr(ret);
		}
		if ((ret = txn->commit(txn, 0)))
			return dberr(ret);
		__atomic_fetch_add(&ix->c->part[k].n, (uint64_t)(int64_t)delta, __ATOMIC_RELAXED);
		return after_write(ix, k);
	}
}

static int bdb_insert(struct index *ix, const uint8_t *fp, uint64_t addr)
{
	return bdb_update(ix, fp, &addr);
}

static int bdb_remove(struct index *ix, const uint8_t *fp)
{
	return bdb_update(ix, fp, NULL); /* -ENOENT from DB_NOTFOUND when absent */
}

static int iterate_part(struct index *ix, DB *db, int (*fn)(void *arg, const uint8_t *fp, uint64_t addr), void *arg)
{
	DBC *cur;
	int rc = dberr(db->cursor(db, NULL, &cur, 0));
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

static int bdb_iterate(struct index *ix, int (*fn)(void *arg, const uint8_t *fp, uint64_t addr), void *arg)
{
	int rc = 0;
	for (unsigned k = 0; !rc && k < BDB_PARTS; k++)
		rc = iterate_part(ix, ix->db[k], fn, arg);
	return rc;
}

static int count_one(void *arg, const uint8_t *fp, uint64_t pbn)
{
	(*(uint64_t *)arg)++;
	return 0;
}

/* With the volume quiesced (or alone): every partition's count from its entries. */
static int bdb_recount(struct index *ix)
{
	for (unsigned k = 0; k < BDB_PARTS; k++) {
		uint64_t n = 0;
		int rc = iterate_part(ix, ix->db[k], count_one, &n);
		if (rc)
			return rc;
		ix->c->part[k].n = n;
	}
	ix->c->entries = 0;
	return 0;
}

static int bdb_flush(struct index *ix)
{
	int rc = 0;
	for (unsigned j = 0; !rc && j < ix->nenv; j++) {
		rc = dberr(ix->env[j]->log_flush(ix->env[j], NULL));
		if (!rc)
			rc = dberr(ix->env[j]->txn_checkpoint(ix->env[j], 0, 0, 0));
	}
	if (!rc)
		ix->c->uncommitted = 0;
	return rc;
}

static int bdb_repair(struct index *ix)
{
	return bdb_recount(ix);
}

/* Removes the files of home and of its env.* subdirectories, then home. */
static int remove_tree(const char *home, int depth)
{
	DIR *d = opendir(home);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		char f[4096 + 256];
		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof f, "%s/%s", home, de->d_name);
		int r = 0;
		struct stat st;
		bool dir = de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN && !lstat(f, &st) && S_ISDIR(st.st_mode));
		if (depth == 0 && dir && !strncmp(de->d_name, "env.", 4))
			r = remove_tree(f, 1);
		else if (unlink(f) && errno != ENOENT)
			r = -errno;
		if (!rc)
			rc = r;
	}
	closedir(d);
	if (!rc && rmdir(home) && errno != ENOENT)
		rc = -errno;
	return rc;
}

static int bdb_destroy(const struct index_params *p)
{
	char home[4096];
	if (meta_path(home, sizeof home, p->dir, BDB_SUBDIR))
		return -ENAMETOOLONG;
	return remove_tree(home, 0);
}

static void bdb_stats(struct index *ix, struct index_stats *s)
{
	memset(s, 0, sizeof *s);
	s->entries = __atomic_load_n(&ix->c->entries, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < BDB_PARTS; k++)
		s->entries += __atomic_load_n(&ix->c->part[k].n, __ATOMIC_RELAXED);
	for (unsigned j = 0; j < ix->nenv; j++) {
		DB_MPOOL_STAT *ms = NULL;
		if (!ix->env[j]->memp_stat(ix->env[j], &ms, NULL, 0) && ms) {
			s->meta_reads += ms->st_page_in;
			s->meta_writes += ms->st_page_out;
			free(ms);
		}
	}
	for (unsigned k = 0; k < BDB_PARTS; k++) {
		char home[4096], path[4096 + 32];
		struct stat st;
		if (env_home(home, sizeof home, ix->dir, ix->nenv, k % ix->nenv))
			continue;
		snprintf(path, sizeof path, "%s/index.%u.db", home, k);
		if (!stat(path, &st))
			s->bytes += (uint64_t)st.st_size;
	}
}

/* The shared counters page only: Berkeley DB's own files are its to check (fsck compares every
 * entry with the bytes it names). */
static uint64_t bdb_digest(struct index *ix)
{
	return meta_digest(BDB_COUNTERS_MAGIC, ix->c, sizeof *ix->c);
}

static void bdb_close(struct index *ix)
{
	release(ix->se);
	munmap(ix->c, sizeof *ix->c);
	free(ix);
}

const struct index_ops index_bdb_ops = {
	.name = "bdb",
	.about = "Berkeley DB",
	.create = bdb_create,
	.open = bdb_open,
	.lookup = bdb_lookup,
	.insert = bdb_insert,
	.remove = bdb_remove,
	.iterate = bdb_iterate,
	.flush = bdb_flush,
	.repair = bdb_repair,
	.stats = bdb_stats,
	.digest = bdb_digest,
	.close = bdb_close,
	.destroy = bdb_destroy,
};
