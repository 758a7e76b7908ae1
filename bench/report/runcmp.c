/* runcmp.c - load dedisbench results (files, suite directories), line their phases up by name
 * and print them side by side, the first input as the baseline; write the CSV and the plots. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "lib/plot.h"
#include "lib/report.h"
#include "bench/report/runcmp.h"
#include "lib/safefile.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

static int load_one(const char *path, const char *name, struct runcmp_input *in, struct dd_err *err)
{
	if (in->nphases >= RUNCMP_MAX_PHASES)
		return err_fail(err, -1, "%s: more than %d phases", path, RUNCMP_MAX_PHASES);
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je);
	if (!doc)
		return err_fail(err, -1, "%s:%d: not JSON: %s", path, je.line, je.text);
	const char *tool = json_string_value(json_object_get(doc, "tool"));
	if (!tool || strncmp(tool, "dedisbench", 10) || !json_is_object(json_object_get(doc, "totals"))) {
		json_decref(doc);
		return err_fail(err, -1, "%s: not a dedisbench --json result (no tool/totals)", path);
	}
	/* a report before schema_version 2 wrote config's keys as the options ("read-rate"): read
	 * every report with today's spelling ("read_rate") */
	if (report_keys_snake_case(json_object_get(doc, "config"))) {
		json_decref(doc);
		return err_fail(err, -1, "%s: out of memory", path);
	}
	snprintf(in->name[in->nphases], sizeof in->name[0], "%s", name);
	in->doc[in->nphases++] = doc;
	return 0;
}

/* The input's own name, for the plots' key: PATH's last component, without ".json". */
static void short_label_of(const char *path, char *out, size_t len)
{
	size_t end = strlen(path);
	while (end > 1 && path[end - 1] == '/')
		end--;
	size_t start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	size_t n = end - start;
	if (n > 5 && !strncmp(path + end - 5, ".json", 5))
		n -= 5;
	snprintf(out, len, "%.*s", (int)(n < len - 1 ? n : len - 1), path + start);
	for (char *c = out; *c; c++)
		if (*c == '|')
			*c = '/'; /* the separator of the plot script's key titles */
}

int runcmp_load(const char *path, struct runcmp_input *in, struct dd_err *err)
{
	memset(in, 0, sizeof *in);
	short_label_of(path, in->short_label, sizeof in->short_label);
	struct stat st;
	if (stat(path, &st))
		return err_fail_errno(err, -1, errno, "%s", path);
	if (!S_ISDIR(st.st_mode)) {
		if (load_one(path, "run", in, err))
			return -1;
		json_t *cfg = json_object_get(in->doc[0], "config");
		const char *target = json_string_value(json_object_get(cfg, "target"));
		snprintf(in->label, sizeof in->label, "%.78s", target ? target : base_name(path));
		/* a single run is named by its workload, so runs of the same workload line up */
		const char *mode = json_string_value(json_object_get(cfg, "mode")),
			   *access = json_string_value(json_object_get(cfg, "access"));
		/* a nominal run is not the peak of the same workload: its rate is part of its name */
		double rate = json_number_value(json_object_get(cfg, "rate")),
		       rr = json_number_value(json_object_get(cfg, "read_rate")),
		       wr = json_number_value(json_object_get(cfg, "write_rate"));
		if (mode && access && rate > 0)
			snprintf(in->name[0], sizeof in->name[0], "%.16s %.12s @%.0f/s", access, mode, rate);
		else if (mode && access && rr > 0)
			snprintf(in->name[0], sizeof in->name[0], "%.16s %.6s @%.0fr+%.0fw/s", access, mode, rr, wr);
		else if (mode && access)
			snprintf(in->name[0], sizeof in->name[0], "%.20s %.20s", access, mode);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d)
		return err_fail_errno(err, -1, errno, "%s", path);
	char *names[RUNCMP_MAX_PHASES + 1];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n <= RUNCMP_MAX_PHASES) {
		size_t len = strlen(e->d_name);
		if (len > 8 && e->d_name[0] >= '0' && e->d_name[0] <= '9' && e->d_name[2] == '-' &&
		    !strcmp(e->d_name + len - 5, ".json"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof names[0], cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char file[4096], name[48];
		snprintf(file, sizeof file, "%s/%s", path, names[i]);
		snprintf(name, sizeof name, "%.*s", (int)(strlen(names[i]) - 8), names[i] + 3);
		rc = names[i] ? load_one(file, name, in, err) : err_fail(err, -1, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	if (!rc && !in->nphases)
		rc = err_fail(err, -1, "%s: no NN-phase.json result in the directory (a dedisbench suite's)", path);
	if (!rc) {
		json_t *cfg = json_object_get(in->doc[0], "config");
		const char *target = json_string_value(json_object_get(cfg, "target"));
		snprintf(in->label, sizeof in->label, "%.78s", target ? target : base_name(path));
	}
	return rc;
}

void runcmp_free(struct runcmp_input *in)
{
	for (unsigned i = 0; i < in->nphases; i++)
		json_decref(in->doc[i]);
	in->nphases = 0;
}

static double num(const json_t *doc, const char *a, const char *b, const char *c)
{
	const json_t *v = json_object_get(doc, a);
	if (b)
		v = json_object_get(v, b);
	if (c)
		v = json_object_get(v, c);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* The figures of one phase of one input. */
struct figures {
	double iops, mib_s, p50, p99, p999, saved, efficiency, cpu, mem_mib;
	bool noise; /* efficiency above RUNCMP_EFFICIENCY_NOISE: saved and efficiency are not figures */
};

static struct figures figures_of(const json_t *doc)
{
	struct figures f = {num(doc, "totals", "iops", NULL), num(doc, "totals", "mib_per_s", NULL),
			    num(doc, "totals", "latency_us", "p50"), num(doc, "totals", "latency_us", "p99"),
			    num(doc, "totals", "latency_us", "p99_9"), -1, num(doc, "space", "efficiency", NULL),
			    num(doc, "host", "cpu_busy_pct", NULL), -1, false};
	double logical = num(doc, "space", "logical_bytes", NULL), observed = num(doc, "space", "observed_bytes", NULL);
	if (logical > 0 && observed > 0)
		f.saved = logical / observed;
	f.noise = f.efficiency > RUNCMP_EFFICIENCY_NOISE;
	double mx = num(doc, "host", "mem_used_bytes_max", NULL), st = num(doc, "host", "mem_used_bytes_start", NULL);
	if (mx >= 0 && st >= 0)
		f.mem_mib = (mx - st) / 1048576.0;
	return f;
}

static int find_phase(const struct runcmp_input *in, const char *name)
{
	for (unsigned i = 0; i < in->nphases; i++)
		if (!strcmp(in->name[i], name))
			return (int)i;
	return -1;
}

/* Every phase name, the first input's order first. */
static unsigned all_phases(const struct runcmp_input *in, unsigned n, const char **out)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned p = 0; p < in[i].nphases; p++) {
			bool seen = false;
			for (unsigned q = 0; q < k && !seen; q++)
				seen = !strcmp(out[q], in[i].name[p]);
			if (!seen && k < RUNCMP_MAX_PHASES * RUNCMP_MAX_INPUTS)
				out[k++] = in[i].name[p];
		}
	return k;
}

static void cell(FILE *f, double v, const char *fmt, int width)
{
	if (v < 0)
		fprintf(f, "%*s", width, "-");
	else
		fprintf(f, fmt, width, v);
}

void runcmp_unique_labels(struct runcmp_input *in, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		bool dup = false, short_dup = false;
		for (unsigned k = 0; k < i; k++) {
			dup = dup || !strcmp(in[i].label, in[k].label);
			short_dup = short_dup || !strcmp(in[i].short_label, in[k].short_label);
		}
		if (dup) {
			char l[sizeof in[i].label + 16];
			snprintf(l, sizeof l, "%.64s (#%u)", in[i].label, i + 1);
			snprintf(in[i].label, sizeof in[i].label, "%.79s", l);
		}
		if (short_dup) {
			char l[sizeof in[i].short_label + 16];
			snprintf(l, sizeof l, "%.30s (#%u)", in[i].short_label, i + 1);
			snprintf(in[i].short_label, sizeof in[i].short_label, "%.39s", l);
		}
	}
}

/* Why a noisy phase shows no saved figure: its efficiency, beyond what any store can do. */
static void print_noise(FILE *f, const struct runcmp_input *in, unsigned n, const char **phases, unsigned np)
{
	for (unsigned p = 0; p < np; p++)
		for (unsigned i = 0; i < n; i++) {
			int k = find_phase(&in[i], phases[p]);
			struct figures x = k < 0 ? (struct figures){.noise = false} : figures_of(in[i].doc[k]);
			if (!x.noise)
				continue;
			fprintf(f, "noise: %s on %s: efficiency %.2f (%.2f:1 saved) is more than a store can do (above "
				   "%.2f): the used space moved for another reason (other writers on the file system?); "
				   "not a result\n",
				phases[p], in[i].label, x.efficiency, x.saved, RUNCMP_EFFICIENCY_NOISE);
		}
}

void runcmp_print(FILE *f, const struct runcmp_input *in, unsigned n)
{
	const char *phases[RUNCMP_MAX_PHASES * RUNCMP_MAX_INPUTS];
	unsigned np = all_phases(in, n, phases);
	int w = 6, pw = 20;
	for (unsigned i = 0; i < n; i++)
		w = (int)strlen(in[i].label) > w ? (int)strlen(in[i].label) : w;
	for (unsigned p = 0; p < np; p++)
		pw = (int)strlen(phases[p]) > pw ? (int)strlen(phases[p]) : pw;
	fprintf(f, "%-*s %-*s %10s %9s %9s %9s %10s %7s %6s %6s %8s %8s\n", pw, "phase", w, "system", "IOPS", "MiB/s",
		"p50 us", "p99 us", "p99.9 us", "saved", "effic.", "CPU %", "mem MiB", "vs first");
	for (unsigned p = 0; p < np; p++) {
		double base = -1;
		bool named = false;
		for (unsigned i = 0; i < n; i++) {
			int k = find_phase(&in[i], phases[p]);
			if (k < 0)
				continue;
			struct figures x = figures_of(in[i].doc[k]);
			if (base < 0)
				base = x.iops;
			fprintf(f, "%-*s %-*s ", pw, named ? "" : phases[p], w, in[i].label);
			named = true;
			cell(f, x.iops, "%*.1f", 10);
			cell(f, x.mib_s, " %*.2f", 9);
			cell(f, x.p50, " %*.1f", 9);
			cell(f, x.p99, " %*.1f", 9);
			cell(f, x.p999, " %*.1f", 10);
			char saved[32] = "-";
			if (x.noise)
				snprintf(saved, sizeof saved, "noise");
			else if (x.saved >= 0)
				snprintf(saved, sizeof saved, "%.2f:1", x.saved);
			fprintf(f, " %7s", saved);
			if (x.noise)
				fprintf(f, " %6s", "noise");
			else
				cell(f, x.efficiency, " %*.2f", 6);
			cell(f, x.cpu, " %*.1f", 6);
			cell(f, x.mem_mib, " %*.1f", 8);
			if (base > 0 && x.iops >= 0)
				fprintf(f, " %7.2fx", x.iops / base);
			fputc('\n', f);
		}
	}
	print_noise(f, in, n, phases, np);
}

int runcmp_write(const char *dir, const struct runcmp_input *in, unsigned n, bool plot, struct dd_err *err)
{
	char csv[4200];
	snprintf(csv, sizeof csv, "%s/compare.csv", dir);
	/* created as the run's reports are (safefile.h): a link or a file planted under the name is
	 * replaced, never written through */
	struct safefile sf;
	FILE *f = NULL;
	if (safefile_open(&sf, csv) || !(f = safefile_stream(&sf))) {
		int e = errno;
		safefile_abort(&sf);
		return err_fail_errno(err, -1, e, "cannot write %s", csv);
	}
	const char *phases[RUNCMP_MAX_PHASES * RUNCMP_MAX_INPUTS];
	unsigned np = all_phases(in, n, phases);
	/* one row per phase; per input: iops, p99_us, saved (the plots' columns 2+3i, 3+3i, 4+3i) */
	fputs("phase", f);
	for (unsigned i = 0; i < n; i++) {
		char label[80];
		snprintf(label, sizeof label, "%s", in[i].label);
		for (char *c = label; *c; c++)
			if (*c == ',' || *c == '"')
				*c = ';'; /* engine:DIR,index=... : not a column separator */
		fprintf(f, ",%s iops,%s p99_us,%s saved", label, label, label);
	}
	fputc('\n', f);
	for (unsigned p = 0; p < np; p++) {
		fprintf(f, "%s", phases[p]);
		for (unsigned i = 0; i < n; i++) {
			int k = find_phase(&in[i], phases[p]);
			struct figures x = k < 0 ? (struct figures){-1, -1, -1, -1, -1, -1, -1, -1, -1, false} : figures_of(in[i].doc[k]);
			fprintf(f, ",%.3f,%.3f,%.4f", x.iops < 0 ? 0 : x.iops, x.p99 < 0 ? 0 : x.p99,
				x.saved < 0 || x.noise ? 0 : x.saved);
		}
		fputc('\n', f);
	}
	if (fclose(f)) {
		int e = errno;
		safefile_abort(&sf);
		return err_fail_errno(err, -1, e, "cannot write %s", csv);
	}
	if (safefile_commit(&sf, false))
		return err_fail_errno(err, -1, errno, "cannot write %s", csv);
	if (!plot)
		return 0;
	char png[4200], ninputs[16], titles[RUNCMP_MAX_INPUTS * 41] = "";
	snprintf(ninputs, sizeof ninputs, "%u", n);
	for (unsigned i = 0; i < n; i++) /* the key's titles, '|'-separated (short_label has none) */
		snprintf(titles + strlen(titles), sizeof titles - strlen(titles), "%s%s", i ? "|" : "", in[i].short_label);
	static const char *const what[] = {"iops", "latency", "saved"};
	for (int w = 0; w < 3; w++) {
		snprintf(png, sizeof png, "%s/compare-%s.png", dir, what[w]);
		/* gnuplot writes a temp file created here (never a planted one), renamed after */
		if (safefile_open(&sf, png) || !sf.tmp) {
			int e = errno;
			bool in_place = sf.path && !sf.tmp;
			safefile_abort(&sf);
			return in_place ? err_fail(err, -1, "cannot write %s: not a regular file", png)
					: err_fail_errno(err, -1, e, "cannot write %s", png);
		}
		close(sf.fd);
		sf.fd = -1;
		const char *args[] = {csv, sf.tmp, ninputs, what[w], titles};
		if (plot_render("dedisbench-compare.gp", args, 5, sf.tmp, png, err)) {
			safefile_abort(&sf);
			return -1;
		}
		if (safefile_commit(&sf, false))
			return err_fail_errno(err, -1, errno, "cannot write %s", png);
	}
	return 0;
}
