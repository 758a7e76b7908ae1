/* hostload.c - read the host's CPU ticks (/proc/stat) and memory (/proc/meminfo), and keep a run's
 * summary of them: mean busy share over the run, busiest second, memory at start and at most. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "lib/hostload.h"

static FILE *open_proc(const char *proc, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", proc, name);
	return fopen(path, "re");
}

int hostload_cpu(const char *proc, struct host_cpu *out)
{
	FILE *f = open_proc(proc, "stat");
	if (!f)
		return -1;
	/* cpu user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice] */
	uint64_t v[8] = {0};
	int n = fscanf(f, "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			  " %" SCNu64, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return errno = EINVAL, -1;
	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++)
		out->total += v[i];
	out->idle = v[3];
	out->iowait = n > 4 ? v[4] : 0;
	return 0;
}

int hostload_mem(const char *proc, struct host_mem *out)
{
	FILE *f = open_proc(proc, "meminfo");
	if (!f)
		return -1;
	char line[256];
	uint64_t total = 0, avail = 0, kb;
	bool have_total = false, have_avail = false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "MemTotal: %" SCNu64, &kb) == 1)
			total = kb * 1024, have_total = true;
		else if (sscanf(line, "MemAvailable: %" SCNu64, &kb) == 1)
			avail = kb * 1024, have_avail = true;
	}
	fclose(f);
	if (!have_total || !have_avail || avail > total)
		return errno = EINVAL, -1;
	out->total = total;
	out->used = total - avail;
	return 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

double hostload_busy_pct(const struct host_cpu *a, const struct host_cpu *b)
{
	if (b->total <= a->total)
		return 0;
	uint64_t all = b->total - a->total, idle = (b->idle - a->idle) + (b->iowait - a->iowait);
	return idle >= all ? 0 : share(all - idle, all);
}

double hostload_iowait_pct(const struct host_cpu *a, const struct host_cpu *b)
{
	return b->total <= a->total ? 0 : share(b->iowait - a->iowait, b->total - a->total);
}

void hostload_begin(struct host_usage *u, const char *proc)
{
	memset(u, 0, sizeof *u);
	u->have = hostload_cpu(proc, &u->cpu_start) == 0 && hostload_mem(proc, &u->mem_start) == 0;
	u->cpu_end = u->cpu_start;
	u->mem_used_max = u->mem_start.used;
}

void hostload_sample(struct host_usage *u, const char *proc, const struct host_cpu *prev, struct host_cpu *now,
		     struct host_mem *mem)
{
	if (!u->have || hostload_cpu(proc, now) || hostload_mem(proc, mem)) {
		*now = *prev;
		*mem = u->have ? u->mem_start : (struct host_mem){0};
		return;
	}
	double busy = hostload_busy_pct(prev, now);
	if (busy > u->busy_pct_max)
		u->busy_pct_max = busy;
	if (mem->used > u->mem_used_max)
		u->mem_used_max = mem->used;
	u->cpu_end = *now;
	u->samples++;
}

void hostload_end(struct host_usage *u, const char *proc)
{
	struct host_cpu now;
	struct host_mem mem;
	if (!u->have || hostload_cpu(proc, &now) || hostload_mem(proc, &mem))
		return;
	u->cpu_end = now;
	if (mem.used > u->mem_used_max)
		u->mem_used_max = mem.used;
	/* A run shorter than a sample interval has no sample: its busiest second is the whole run
	 * (and no run's busiest second is below its mean, which the last partial second can lift). */
	double whole = hostload_busy_pct(&u->cpu_start, &now);
	if (whole > u->busy_pct_max)
		u->busy_pct_max = whole;
}
