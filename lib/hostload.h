/* hostload.h - the host's CPU and memory use, read from /proc/stat and /proc/meminfo: the cost of
 * a run on the system under test (sampled each second, summed for the run), the memory free now. */
#ifndef DEDIS_LIB_HOSTLOAD_H
#define DEDIS_LIB_HOSTLOAD_H

#include <stdbool.h>
#include <stdint.h>

/* The aggregate "cpu" line of /proc/stat, in clock ticks since boot. */
struct host_cpu {
	uint64_t total;  /* every state */
	uint64_t idle;   /* idle */
	uint64_t iowait; /* idle with I/O outstanding */
};

/* Memory in bytes: used is MemTotal - MemAvailable (what the kernel could not hand out at once). */
struct host_mem {
	uint64_t total, used;
};

/* 0, or -1 with errno when the file cannot be read or parsed. proc: the /proc to read ("/proc",
 * or a directory holding stat and meminfo, for tests). */
int hostload_cpu(const char *proc, struct host_cpu *out);
int hostload_mem(const char *proc, struct host_mem *out);

/* Between two readings: busy share (neither idle nor iowait) and iowait share of all CPUs' time,
 * in percent; 0 when no tick passed. */
double hostload_busy_pct(const struct host_cpu *a, const struct host_cpu *b);
double hostload_iowait_pct(const struct host_cpu *a, const struct host_cpu *b);

/* A run's host figures: from the first reading to the last, and the extremes of the samples. */
struct host_usage {
	bool have;
	struct host_cpu cpu_start, cpu_end;
	double busy_pct_max;      /* the busiest sampled interval */
	struct host_mem mem_start;
	uint64_t mem_used_max;    /* the most used at any sample */
	unsigned samples;
};

/* Start the summary at t0 (have = false when /proc cannot be read); fold one sample in; close it. */
void hostload_begin(struct host_usage *u, const char *proc);
void hostload_sample(struct host_usage *u, const char *proc, const struct host_cpu *prev, struct host_cpu *now,
		     struct host_mem *mem);
void hostload_end(struct host_usage *u, const char *proc);

#endif
