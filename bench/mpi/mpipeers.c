/* mpipeers.c - the launcher's peers over MPI: a start barrier, stop messages to every rank, live
 * snapshots to rank 0 (its time series, and what it reports of a rank lost), the final reduction. */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "bench/mpi/mpipeers.h"
#include "bench/worker.h"

enum { TAG_STOP = 1, TAG_SNAP, TAG_FINAL, TAG_BEAT, TAG_TICK };
#define SNAP_EVERY_NS 250000000ULL /* a rank's live stats reach rank 0 this often */
/* The time series' rows are cut at whole seconds from t0 on every rank: at each tick a rank sends
 * its workers' stats as they are then (TAG_TICK), and rank 0 builds the row from those once they
 * are in, up to TICK_WAIT_NS after its own tick (37 KiB a worker: a rendezvous send, which
 * completes at the sender's next MPI call, within 0.1 s). A row
 * built from the ranks' last snapshots instead, up to 250 ms old, read 342, 399, 371 at a steady
 * 400 ops/s. A rank whose workers are done sends TICK_FINAL once: its stats for every later row. */
#define TICK_NS 1000000000ULL
#define TICK_WAIT_NS 400000000ULL
#define TICK_FINAL UINT64_MAX
struct tick_head {
	uint64_t tick;
};
#define INTERRUPTED_WAIT_NS 300000000ULL
/* Liveness rides on its own small messages (sent at once, whatever a snapshot's progress), from a
 * thread of their own: a rank beats while its launcher collects its tallies or rank 0 merges a
 * rank's (seconds for a big run), so silence means a dead rank in every phase, and --peer-timeout
 * holds throughout. Rank 0 beats too, to every rank it still waits for: a rank whose rank 0 was
 * killed stops within --peer-timeout and ends the job, rather than send its results to no one (its
 * blocking send would last until mpirun's SIGKILL, 2 s after the kill). */
#define BEAT_EVERY_NS 100000000ULL

/* What a rank sends rank 0 at the end, ahead of its workers' stats and its tallies. */
struct final_head {
	double seconds;
	uint64_t live_zero;
	uint64_t tally_len;
	int32_t interrupted, failed;
	char failure[512];
};

static void nap(void)
{
	struct timespec ts = {0, 1000000}; /* polling MPI while nothing else is due */
	nanosleep(&ts, NULL);
}

int mpi_peers_init(struct mpi_peers *p, unsigned procs, const char *target, uint64_t peer_timeout_ns)
{
	memset(p, 0, sizeof *p);
	MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p->size);
	p->peer_timeout_ns = peer_timeout_ns;
	p->rows = calloc((size_t)p->size, sizeof *p->rows);
	p->snap_req = malloc(sizeof(MPI_Request));
	p->stop_req = malloc(sizeof(MPI_Request));
	if (!p->rows || !p->snap_req || !p->stop_req)
		return -1;
	struct rank_row mine = {0};
	int len = 0;
	char name[MPI_MAX_PROCESSOR_NAME];
	MPI_Get_processor_name(name, &len);
	snprintf(mine.host, sizeof mine.host, "%.*s", len, name);
	snprintf(mine.target, sizeof mine.target, "%s", target);
	mine.workers = procs;
	MPI_Allgather(&mine, sizeof mine, MPI_BYTE, p->rows, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
	for (int k = 0; k < p->size; k++) {
		p->rows[k].first_worker = p->total_procs;
		p->total_procs += p->rows[k].workers;
	}
	if (p->rank == 0) {
		p->whole_len = sizeof *p->whole + p->total_procs * sizeof p->whole->w[0];
		p->whole = mmap(NULL, p->whole_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p->heard_ns = calloc((size_t)p->size, sizeof *p->heard_ns);
		p->finished = calloc((size_t)p->size, sizeof *p->finished);
		p->inbox = calloc(p->total_procs, sizeof *p->inbox);
		p->snap_in = calloc((size_t)p->size, sizeof(MPI_Request));
		p->tick_in = calloc((size_t)p->size, sizeof(MPI_Request));
		p->tick_rx = calloc((size_t)p->size, sizeof *p->tick_rx);
		p->tick_of = calloc((size_t)p->size, sizeof *p->tick_of);
		p->tick_box = calloc(p->total_procs, sizeof *p->tick_box);
		p->at_tick = malloc(p->whole_len);
		bool rx = p->tick_rx != NULL;
		for (int k = 1; rx && k < p->size; k++)
			rx = (p->tick_rx[k] = malloc(sizeof(struct tick_head) + p->rows[k].workers * sizeof *p->tick_box)) != NULL;
		if (p->whole == MAP_FAILED || !p->heard_ns || !p->finished || !p->inbox || !p->snap_in || !p->tick_in ||
		    !rx || !p->tick_of || !p->tick_box || !p->at_tick) {
			if (p->whole == MAP_FAILED)
				p->whole = NULL;
			return -1;
		}
		for (int k = 0; k < p->size; k++)
			((MPI_Request *)p->snap_in)[k] = ((MPI_Request *)p->tick_in)[k] = MPI_REQUEST_NULL;
		for (unsigned i = 0; i < p->total_procs; i++) {
			hist_init(&p->whole->w[i].dir[0].lat);
			hist_init(&p->whole->w[i].dir[1].lat);
		}
	} else {
		p->snap_buf = malloc(procs * sizeof p->whole->w[0]);
		p->tick_buf = malloc(sizeof(struct tick_head) + procs * sizeof p->whole->w[0]);
		p->tick_req = malloc(sizeof(MPI_Request));
		if (!p->snap_buf || !p->tick_buf || !p->tick_req)
			return -1;
	}
	return 0;
}

static void beats_stop(struct mpi_peers *p);

void mpi_peers_free(struct mpi_peers *p)
{
	beats_stop(p);
	if (p->whole)
		munmap(p->whole, p->whole_len);
	free(p->rows);
	free(p->heard_ns);
	free(p->inbox);
	free(p->snap_in);
	free(p->finished);
	free(p->snap_buf);
	free(p->tick_in);
	for (int k = 1; p->tick_rx && k < p->size; k++)
		free(p->tick_rx[k]);
	free(p->tick_rx);
	free(p->tick_of);
	free(p->tick_box);
	free(p->at_tick);
	free(p->tick_buf);
	free(p->tick_req);
	free(p->snap_req);
	free(p->stop_req);
	memset(p, 0, sizeof *p);
}

/* rank 0: the receive of rank k's next snapshot, always posted while k runs (a rank killed in
 * the middle of sending leaves it pending; nothing blocks on it). */
static void post_snapshot(struct mpi_peers *p, int k)
{
	const struct rank_row *row = &p->rows[k];
	MPI_Irecv(&p->inbox[row->first_worker], (int)(row->workers * sizeof *p->inbox), MPI_BYTE, k, TAG_SNAP,
		  MPI_COMM_WORLD, &((MPI_Request *)p->snap_in)[k]);
}

/* rank 0: the receive of rank k's next tick (its header, then its workers' stats). */
static void post_tick(struct mpi_peers *p, int k)
{
	int len = (int)(sizeof(struct tick_head) + p->rows[k].workers * sizeof *p->tick_box);
	MPI_Irecv(p->tick_rx[k], len, MPI_BYTE, k, TAG_TICK, MPI_COMM_WORLD, &((MPI_Request *)p->tick_in)[k]);
}

static void lose(struct mpi_peers *p, int k, const char *why)
{
	__atomic_store_n(&p->finished[k], true, __ATOMIC_RELAXED); /* the beat thread reads it */
	p->rows[k].lost = true;
	if (!p->lost++)
		snprintf(p->lost_why, sizeof p->lost_why, "rank %d on %s lost: %s", k, p->rows[k].host, why);
}

static void beats_start(struct mpi_peers *p);

static bool peers_start(void *ctx, bool ready)
{
	struct mpi_peers *p = ctx;
	int mine = ready, all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Irecv(p->stop_buf, sizeof p->stop_buf, MPI_CHAR, MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD,
		  (MPI_Request *)p->stop_req);
	p->stop_posted = true;
	uint64_t now = now_ns();
	p->next_snap_ns = p->root_heard_ns = now;
	if (p->rank == 0)
		for (int k = 0; k < p->size; k++) {
			p->heard_ns[k] = now;
			if (k) {
				post_snapshot(p, k);
				post_tick(p, k);
			}
		}
	beats_start(p);
	return all != 0;
}

static void send_beat(int to)
{
	static const int32_t beat = 0;
	MPI_Request req; /* small: it goes eagerly, even to a dead rank */
	MPI_Isend(&beat, 1, MPI_INT32_T, to, TAG_BEAT, MPI_COMM_WORLD, &req);
	MPI_Request_free(&req);
}

/* The beat thread: rank 0 to every rank whose results it still waits for, the others to rank 0,
 * every BEAT_EVERY_NS until beats_stop. */
static void *beat_loop(void *arg)
{
	struct mpi_peers *p = arg;
	pthread_mutex_lock(&p->beat_lock);
	while (!p->beat_quit) {
		pthread_mutex_unlock(&p->beat_lock);
		for (int k = p->rank ? 0 : 1; k < (p->rank ? 1 : p->size); k++)
			if (p->rank || !__atomic_load_n(&p->finished[k], __ATOMIC_RELAXED))
				send_beat(k);
		uint64_t next = now_ns() + BEAT_EVERY_NS;
		struct timespec at = {(time_t)(next / 1000000000ULL), (long)(next % 1000000000ULL)};
		pthread_mutex_lock(&p->beat_lock);
		while (!p->beat_quit && pthread_cond_timedwait(&p->beat_wake, &p->beat_lock, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&p->beat_lock);
	return NULL;
}

/* Started once the run starts; without it (no thread) the peers fall silent and the run ends as
 * if this rank were lost, so a failure to start is only reported by that. Every signal stays
 * blocked in it: the launcher's signalfd takes them. */
static void beats_start(struct mpi_peers *p)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&p->beat_wake, &ca)) {
		pthread_condattr_destroy(&ca);
		return;
	}
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&p->beat_lock, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->beating = pthread_create(&p->beat_thread, NULL, beat_loop, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->beating) {
		pthread_cond_destroy(&p->beat_wake);
		pthread_mutex_destroy(&p->beat_lock);
	}
}

static void beats_stop(struct mpi_peers *p)
{
	if (!p->beating)
		return;
	pthread_mutex_lock(&p->beat_lock);
	p->beat_quit = true;
	pthread_cond_signal(&p->beat_wake);
	pthread_mutex_unlock(&p->beat_lock);
	pthread_join(p->beat_thread, NULL);
	pthread_cond_destroy(&p->beat_wake);
	pthread_mutex_destroy(&p->beat_lock);
	p->beating = false;
}

/* other ranks: take rank 0's beats; true when it has been silent past the timeout, then root_lost
 * is set. */
static bool root_silent(struct mpi_peers *p, uint64_t timeout)
{
	int flag = 1;
	MPI_Status st;
	while (MPI_Iprobe(0, TAG_BEAT, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
		int32_t beat = 0;
		MPI_Recv(&beat, 1, MPI_INT32_T, 0, TAG_BEAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		p->root_heard_ns = now_ns();
	}
	if (now_ns() >= p->root_heard_ns + timeout)
		p->root_lost = true;
	return p->root_lost;
}

/* Tell every other rank to stop (once). */
/* The stop message: its kind ('F' a failure or a lost rank, 'I' an interruption), then why. */
static void send_stop(struct mpi_peers *p, char kind, const char *why)
{
	if (p->stop_sent)
		return;
	p->stop_sent = true;
	char msg[512];
	snprintf(msg, sizeof msg, "%c%s", kind, why);
	for (int k = 0; k < p->size; k++) {
		if (k == p->rank)
			continue;
		/* Small enough to go eagerly: it completes without the receiver, even a dead one. */
		MPI_Request req;
		MPI_Isend(msg, (int)strlen(msg) + 1, MPI_CHAR, k, TAG_STOP, MPI_COMM_WORLD, &req);
		MPI_Request_free(&req);
	}
}

/* rank 0: take every snapshot that arrived (a final result is left for the reduction). */
static void take_snapshots(struct mpi_peers *p)
{
	MPI_Request *req = p->snap_in;
	for (int k = 1; k < p->size; k++) {
		if (p->finished[k] || req[k] == MPI_REQUEST_NULL)
			continue;
		int flag = 0;
		if (MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			lose(p, k, "its snapshot could not be received");
			continue;
		}
		if (!flag)
			continue;
		const struct rank_row *row = &p->rows[k];
		memcpy(&p->whole->w[row->first_worker], &p->inbox[row->first_worker], row->workers * sizeof *p->inbox);
		p->heard_ns[k] = now_ns();
		post_snapshot(p, k);
	}
	MPI_Request *tick = p->tick_in;
	for (int k = 1; k < p->size; k++) {
		int flag = 0;
		if (p->finished[k] || tick[k] == MPI_REQUEST_NULL || MPI_Test(&tick[k], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
		    !flag)
			continue; /* (a failed receive: its rank is found lost by its silence) */
		const struct rank_row *row = &p->rows[k];
		struct tick_head h;
		memcpy(&h, p->tick_rx[k], sizeof h);
		memcpy(&p->tick_box[row->first_worker], (char *)p->tick_rx[k] + sizeof h, row->workers * sizeof *p->tick_box);
		p->tick_of[k] = h.tick;
		p->heard_ns[k] = now_ns();
		if (h.tick != TICK_FINAL)
			post_tick(p, k);
	}
	int flag = 1;
	MPI_Status st;
	while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_BEAT, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
		int32_t beat = 0; /* small: it has arrived whole */
		MPI_Recv(&beat, 1, MPI_INT32_T, st.MPI_SOURCE, TAG_BEAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		p->heard_ns[st.MPI_SOURCE] = now_ns();
	}
	if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_FINAL, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag)
		p->heard_ns[st.MPI_SOURCE] = now_ns();
}

/* rank 0: a rank silent for the timeout (killed, its host gone) is lost. */
static bool find_lost(struct mpi_peers *p, uint64_t now, uint64_t timeout)
{
	unsigned before = p->lost;
	for (int k = 1; k < p->size; k++) {
		if (p->finished[k] || now < p->heard_ns[k] + timeout)
			continue;
		char why[64];
		snprintf(why, sizeof why, "not heard from for %.1f s", (double)timeout / 1e9);
		lose(p, k, why);
	}
	return p->lost > before;
}

/* other ranks: the workers' stats at a tick (the launcher's loop wakes at each whole second from
 * t0, and checks its peers first), or once, when they are done, as final. Skipped while the last
 * one is still on its way: rank 0 then takes this rank's last snapshot for the row. */
static void send_tick(struct mpi_peers *p, const struct run_shared *sh, uint64_t now, bool done)
{
	if (!p->next_tick_ns) { /* the first check after t0 */
		p->next_tick_ns = sh->t0_ns + TICK_NS;
		if (!done && now < p->next_tick_ns)
			return;
	}
	int flag = 1;
	if (p->tick_pending)
		MPI_Test((MPI_Request *)p->tick_req, &flag, MPI_STATUS_IGNORE);
	uint64_t tick = (now - sh->t0_ns) / TICK_NS;
	p->next_tick_ns = sh->t0_ns + (tick + 1) * TICK_NS;
	if (!flag)
		return;
	struct tick_head h = {done ? TICK_FINAL : tick};
	size_t len = p->rows[p->rank].workers * sizeof sh->w[0];
	memcpy(p->tick_buf, &h, sizeof h);
	memcpy((char *)p->tick_buf + sizeof h, sh->w, len);
	MPI_Isend(p->tick_buf, (int)(sizeof h + len), MPI_BYTE, 0, TAG_TICK, MPI_COMM_WORLD, (MPI_Request *)p->tick_req);
	p->tick_pending = true;
	p->tick_final_sent = done;
}

static enum peers_stop peers_check(void *ctx, const struct run_shared *sh, bool done, const char *failure,
				   bool interrupted, struct dd_err *err)
{
	struct mpi_peers *p = ctx;
	enum peers_stop stopped = PEERS_GO;
	if (failure || interrupted) {
		char msg[512];
		snprintf(msg, sizeof msg, "rank %d on %s: %s", p->rank, p->rows[p->rank].host,
			 failure ? failure : "interrupted");
		send_stop(p, failure ? 'F' : 'I', msg);
	}
	if (p->stop_posted) {
		int flag = 0;
		MPI_Test((MPI_Request *)p->stop_req, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			p->stop_posted = false;
			err_fail(err, 0, "%s", p->stop_buf + 1);
			stopped = p->stop_buf[0] == 'I' ? PEERS_INTERRUPTED : PEERS_FAILED;
		}
	}
	uint64_t now = now_ns();
	if (p->rank == 0) {
		p->t0_ns = sh->t0_ns;
		memcpy(p->whole->w, sh->w, p->rows[0].workers * sizeof sh->w[0]);
		take_snapshots(p);
		if (find_lost(p, now, p->peer_timeout_ns)) {
			send_stop(p, 'F', p->lost_why);
			err_fail(err, 0, "%s", p->lost_why);
			stopped = PEERS_FAILED;
		}
	} else {
		if (!p->root_lost && root_silent(p, p->peer_timeout_ns) && stopped == PEERS_GO) {
			err_fail(err, 0, "rank 0 on %s lost: not heard from for %.1f s", p->rows[0].host,
				 (double)p->peer_timeout_ns / 1e9);
			stopped = PEERS_FAILED;
		}
	}
	if (p->rank != 0 && sh->t0_ns && !p->tick_final_sent && (done || now >= p->next_tick_ns))
		send_tick(p, sh, now, done);
	if (p->rank != 0 && !done && now >= p->next_snap_ns) {
		int flag = 1;
		if (p->snap_pending)
			MPI_Test((MPI_Request *)p->snap_req, &flag, MPI_STATUS_IGNORE);
		if (flag) { /* the previous snapshot left: send a fresh one */
			size_t len = p->rows[p->rank].workers * sizeof sh->w[0];
			memcpy(p->snap_buf, sh->w, len);
			MPI_Isend(p->snap_buf, (int)len, MPI_BYTE, 0, TAG_SNAP, MPI_COMM_WORLD, (MPI_Request *)p->snap_req);
			p->snap_pending = true;
		}
		p->next_snap_ns = now + SNAP_EVERY_NS;
	}
	return stopped;
}

/* rank 0: the row due at tick_ns, or the end. A row takes this rank's workers' stats when first
 * asked (its check has just run: cut at the tick, as the others cut theirs), then each running
 * rank's tick as it arrives; a rank not heard from within TICK_WAIT_NS is taken as last heard. */
static const struct run_shared *peers_view(void *ctx, uint64_t tick_ns, unsigned *procs, uint64_t *at)
{
	struct mpi_peers *p = ctx;
	*procs = p->total_procs;
	if (p->reduced || !p->t0_ns || tick_ns < p->t0_ns)
		return p->whole; /* the end: every rank's final stats */
	uint64_t tick = (tick_ns - p->t0_ns + TICK_NS / 2) / TICK_NS;
	if (p->row_tick != tick) {
		memcpy(p->at_tick, p->whole, p->whole_len); /* the others as last heard, until their tick is in */
		p->row_tick = tick;
		p->row_deadline_ns = now_ns() + TICK_WAIT_NS;
	}
	take_snapshots(p);
	int waiting = 0;
	for (int k = 1; k < p->size; k++)
		waiting += !p->finished[k] && p->tick_of[k] < tick;
	if (waiting && now_ns() < p->row_deadline_ns)
		return NULL;
	for (int k = 1; k < p->size; k++) {
		const struct rank_row *row = &p->rows[k];
		if (!p->finished[k] && p->tick_of[k] >= tick)
			memcpy(&p->at_tick->w[row->first_worker], &p->tick_box[row->first_worker],
			       row->workers * sizeof *p->tick_box);
	}
	*at = tick_ns;
	return p->at_tick;
}

/* This rank's tallies as bytes: what it wrote (and its accesses), then what it holds. */
static void *pack_tallies(const struct id_counts *written, const struct id_counts *live,
			  const struct access_freq *af, uint64_t *len)
{
	int fd = memfd_create("dedisbench-rank-tally", MFD_CLOEXEC);
	struct access_freq none = {0};
	struct stat st;
	void *buf = NULL;
	if (fd >= 0 && !tally_write(fd, written, af) && !tally_write(fd, live, &none) && !fstat(fd, &st) &&
	    (buf = malloc((size_t)st.st_size + 1)) && pread(fd, buf, (size_t)st.st_size, 0) == st.st_size) {
		*len = (uint64_t)st.st_size;
	} else {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

static int unpack_tallies(const void *buf, uint64_t len, struct id_counts *written, struct id_counts *live,
			  struct access_freq *af)
{
	int fd = memfd_create("dedisbench-rank-tally", MFD_CLOEXEC);
	struct access_freq none = {0};
	int rc = fd >= 0 && pwrite(fd, buf, len, 0) == (ssize_t)len && !tally_read_merge(fd, written, af) &&
			 !tally_read_merge(fd, live, &none)
		     ? 0
		     : -1;
	afreq_free(&none);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* other ranks: wait for a send to rank 0 to complete, as long as rank 0 is heard from. */
static bool sent_while_root_lives(struct mpi_peers *p, MPI_Request *req)
{
	for (;;) {
		int flag = 0;
		if (MPI_Test(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return false;
		if (flag)
			return true;
		if (root_silent(p, p->peer_timeout_ns))
			return false;
		nap();
	}
}

static int reduce_send(struct mpi_peers *p, struct run_result *r, struct id_counts *written, struct id_counts *live,
		       uint64_t live_zero, struct access_freq *af)
{
	uint64_t tlen = 0;
	void *tallies = pack_tallies(written, live, af, &tlen);
	size_t wlen = r->procs * sizeof r->w[0];
	struct final_head h = {.seconds = r->seconds, .live_zero = live_zero, .tally_len = tallies ? tlen : 0,
			       .interrupted = r->interrupted, .failed = r->failed || !tallies};
	snprintf(h.failure, sizeof h.failure, "%s", r->failed ? r->failure : !tallies ? "out of memory for the tallies" : "");
	size_t len = sizeof h + wlen + h.tally_len;
	char *msg = malloc(len);
	if (!msg) {
		free(tallies);
		return -1;
	}
	memcpy(msg, &h, sizeof h);
	memcpy(msg + sizeof h, r->w, wlen);
	if (tallies)
		memcpy(msg + sizeof h + wlen, tallies, h.tally_len);
	free(tallies);
	/* Sent while rank 0 is heard from: a dead one would hold a blocking send until mpirun's SIGKILL
	 * (the buffers of a send given up stay with it: the job ends). */
	if (p->root_lost || (p->snap_pending && !sent_while_root_lives(p, (MPI_Request *)p->snap_req)) ||
	    (p->tick_pending && !sent_while_root_lives(p, (MPI_Request *)p->tick_req)))
		return -1;
	p->snap_pending = p->tick_pending = false;
	MPI_Request fin;
	MPI_Isend(msg, (int)len, MPI_BYTE, 0, TAG_FINAL, MPI_COMM_WORLD, &fin);
	if (!sent_while_root_lives(p, &fin))
		return -1;
	free(msg);
	beats_stop(p); /* rank 0 waits for nothing more from this one */
	return 0;
}

/* rank 0: one rank's final results into the whole. */
static void merge_final(struct mpi_peers *p, int k, const char *msg, size_t len, struct run_result *r,
			struct id_counts *written, struct id_counts *live, uint64_t *live_zero, struct access_freq *af)
{
	struct rank_row *row = &p->rows[k];
	struct final_head h;
	size_t wlen = row->workers * sizeof r->w[0];
	if (len < sizeof h + wlen) {
		row->lost = true;
		return;
	}
	memcpy(&h, msg, sizeof h);
	memcpy(&r->w[row->first_worker], msg + sizeof h, wlen);
	row->seconds = h.seconds;
	row->failed = h.failed;
	row->interrupted = h.interrupted;
	if (h.seconds > r->seconds)
		r->seconds = h.seconds;
	if (h.interrupted && !r->interrupted && !r->failed)
		r->interrupted = true;
	/* The first rank that failed on its own says why (the others stopped because it told them). */
	if (h.failed && !strstr(h.failure, "rank ") && (!r->failed || strstr(r->failure, "rank "))) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "rank %d on %s: %.400s", k, row->host, h.failure);
	} else if (h.failed && !r->failed) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "%s", h.failure);
	}
	if (sizeof h + wlen + h.tally_len > len ||
	    unpack_tallies(msg + sizeof h + wlen, h.tally_len, written, live, af)) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "rank %d's tallies could not be merged", k);
	}
	*live_zero += h.live_zero;
}

/* Rank 0's results widened to every rank's workers, its own row filled, its failure said as rank 0's. */
static int root_takes_all(struct mpi_peers *p, struct run_result *r)
{
	struct worker_shared *w = calloc(p->total_procs, sizeof *w);
	if (!w) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "out of memory for every rank's results");
		return -1;
	}
	memcpy(w, r->w, r->procs * sizeof *w);
	free(r->w);
	r->w = w;
	r->procs = p->total_procs;
	p->rows[0].seconds = r->seconds;
	p->rows[0].failed = r->failed;
	p->rows[0].interrupted = r->interrupted;
	p->finished[0] = true;
	if (r->failed && !strstr(r->failure, "rank ")) {
		char mine[512];
		snprintf(mine, sizeof mine, "rank 0 on %s: %.400s", p->rows[0].host, r->failure);
		snprintf(r->failure, sizeof r->failure, "%s", mine);
	}
	return 0;
}

/* A rank's final results on their way to rank 0 (from < 0: none). */
struct final_recv {
	MPI_Request req;
	int from, len;
	char *msg;
};

/* A finished rank's results, when one has sent them, received from now on: 1 when one was,
 * 0 when none is waiting, -1 when its buffer could not be had. */
static int post_final(struct mpi_peers *p, struct final_recv *f, struct run_result *r)
{
	int flag = 0;
	MPI_Status st;
	if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_FINAL, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag ||
	    p->finished[st.MPI_SOURCE])
		return 0;
	MPI_Get_count(&st, MPI_BYTE, &f->len);
	f->msg = malloc(f->len > 0 ? (size_t)f->len : 1);
	if (!f->msg) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "out of memory for rank %d's results", st.MPI_SOURCE);
		return -1;
	}
	f->from = st.MPI_SOURCE;
	MPI_Irecv(f->msg, f->len, MPI_BYTE, f->from, TAG_FINAL, MPI_COMM_WORLD, &f->req);
	return 1;
}

/* The results being received, if they have come: merged. True when they were. */
static bool take_final(struct mpi_peers *p, struct final_recv *f, struct run_result *r, struct id_counts *written,
		       struct id_counts *live, uint64_t *live_zero, struct access_freq *af)
{
	int flag = 0;
	if (MPI_Test(&f->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		lose(p, f->from, "its results could not be received");
		f->from = -1; /* its buffer stays with the request: the job ends (MPI_Abort) */
		f->msg = NULL;
		return false;
	}
	if (flag) {
		__atomic_store_n(&p->finished[f->from], true, __ATOMIC_RELAXED);
		merge_final(p, f->from, f->msg, (size_t)f->len, r, written, live, live_zero, af);
		free(f->msg);
		f->msg = NULL;
		f->from = -1;
		return true;
	}
	if (p->finished[f->from]) { /* lost while sending */
		f->from = -1;
		f->msg = NULL;
	}
	return false;
}

/* Every other rank's final results merged as they come, until each has sent them or is lost.
 * 0, or -1 when memory ran out. */
static int await_finals(struct mpi_peers *p, struct run_result *r, struct id_counts *written, struct id_counts *live,
			uint64_t *live_zero, struct access_freq *af)
{
	/* Interrupted (mpirun's SIGTERM after a rank died: its SIGKILL follows), the ranks still alive
	 * answer at once: one not heard from lately is not waited for. */
	uint64_t timeout = p->peer_timeout_ns;
	if (r->interrupted && timeout > INTERRUPTED_WAIT_NS)
		timeout = INTERRUPTED_WAIT_NS;
	struct final_recv f = {.req = MPI_REQUEST_NULL, .from = -1};
	for (;;) {
		int left = 0;
		for (int k = 1; k < p->size; k++)
			left += !p->finished[k];
		if (!left)
			return 0;
		bool busy = false;
		if (f.from < 0) {
			int posted = post_final(p, &f, r);
			if (posted < 0)
				return -1;
			busy = posted;
		}
		if (f.from >= 0 && take_final(p, &f, r, written, live, live_zero, af))
			busy = true;
		take_snapshots(p);
		if (find_lost(p, now_ns(), timeout))
			send_stop(p, 'F', p->lost_why);
		else if (!busy)
			nap();
	}
}

/* Every rank finished or lost: the snapshot and tick receives withdrawn, and a lost rank's
 * workers as last heard of. */
static void close_reduction(struct mpi_peers *p, struct run_result *r)
{
	beats_stop(p); /* every rank finished, or was lost */
	/* No more snapshots nor ticks: withdraw the receives of the ranks that finished. */
	for (int k = 1; k < p->size; k++) {
		MPI_Request *reqs[] = {&((MPI_Request *)p->snap_in)[k], &((MPI_Request *)p->tick_in)[k]};
		for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
			if (p->rows[k].lost || *reqs[i] == MPI_REQUEST_NULL)
				continue;
			MPI_Cancel(reqs[i]);
			MPI_Wait(reqs[i], MPI_STATUS_IGNORE);
		}
	}
	p->reduced = true;
	/* What a lost rank did, as last heard: its workers' stats, none of its tallies; its span is
	 * taken as rank 0's (its clock may be another host's). */
	for (int k = 1; k < p->size; k++)
		if (p->rows[k].lost) {
			memcpy(&r->w[p->rows[k].first_worker], &p->whole->w[p->rows[k].first_worker],
			       p->rows[k].workers * sizeof *r->w);
			p->rows[k].seconds = r->seconds;
		}
	memcpy(p->whole->w, r->w, p->total_procs * sizeof *r->w); /* the time series' last row */
	if (p->lost) {
		r->failed = true;
		snprintf(r->failure, sizeof r->failure, "%s", p->lost_why);
	}
}

static int reduce_root(struct mpi_peers *p, struct run_result *r, struct id_counts *written, struct id_counts *live,
		       uint64_t *live_zero, struct access_freq *af)
{
	if (root_takes_all(p, r) || await_finals(p, r, written, live, live_zero, af))
		return -1;
	close_reduction(p, r);
	return 0;
}

static int peers_reduce(void *ctx, struct run_result *r, struct id_counts *written, struct id_counts *live,
			uint64_t *live_zero, struct access_freq *af)
{
	struct mpi_peers *p = ctx;
	if (p->stop_posted) { /* no stop came: withdraw the receive */
		MPI_Cancel((MPI_Request *)p->stop_req);
		MPI_Wait((MPI_Request *)p->stop_req, MPI_STATUS_IGNORE);
		p->stop_posted = false;
	}
	if (p->rank == 0)
		return reduce_root(p, r, written, live, live_zero, af);
	return reduce_send(p, r, written, live, *live_zero, af);
}

void mpi_peers_hooks(struct mpi_peers *p, struct launcher_peers *hooks)
{
	memset(hooks, 0, sizeof *hooks);
	hooks->ctx = p;
	hooks->start = peers_start;
	hooks->check = peers_check;
	hooks->view = p->rank == 0 ? peers_view : NULL;
	hooks->reduce = peers_reduce;
}
