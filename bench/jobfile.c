/* jobfile.c - a job file of several jobs read whole: its sections found line by line, each job's
 * options its [global] lines, its own lines and the command line's, then the checks across jobs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bench/config.h"
#include "bench/jobfile.h"
#include "bench/target/target.h"

#define fail(err, ...) err_fail(err, -1, __VA_ARGS__)

/* The job file's sections as libinih reads them: a line whose first character after spaces and
 * tabs is '[' opens one; lines before the first belong to none (-1, applied to every job). */
struct section {
	char name[JOBFILE_NAME_MAX];
	int line;
	bool global;
	bool name_fits;   /* shorter than JOBFILE_NAME_MAX */
	bool stonewall;
	int stonewall_line;
};

struct line {
	const char *at;   /* its first character after spaces and tabs */
	size_t len;       /* to its end (without the newline) */
	int section;
	bool stonewall;   /* a stonewall line: not an option, left out of the options' texts */
};

struct layout {
	const char *name;
	struct line *lines;
	int nlines;
	struct section sections[JOBFILE_MAX_JOBS + 8];
	int nsections;
	bool global_header, global_stonewall, any_stonewall;
	int njobs;
};

bool jobfile_global_section(const char *name)
{
	static const char *const globals[] = {"", "global", "execution", "results", "structural", NULL};
	for (int i = 0; globals[i]; i++)
		if (!strcmp(name, globals[i]))
			return true;
	return false;
}

/* The key of an option line ("key = value", "key: value", "key" alone) into key, and where its
 * value starts (NULL: no value). Comment and blank lines have an empty key. */
static const char *line_key(const struct line *l, char *key, size_t len)
{
	size_t n = 0;
	key[0] = 0;
	if (!l->len || l->at[0] == ';' || l->at[0] == '#' || l->at[0] == '[')
		return NULL;
	while (n < l->len && !strchr("=:;#", l->at[n]))
		n++;
	size_t k = n;
	while (k && (l->at[k - 1] == ' ' || l->at[k - 1] == '\t' || l->at[k - 1] == '\r'))
		k--;
	snprintf(key, len, "%.*s", (int)k, l->at);
	return n < l->len && (l->at[n] == '=' || l->at[n] == ':') ? l->at + n + 1 : NULL;
}

/* "stonewall", "stonewall = yes|no|1|0|true|false|on|off": the line's switch into *on. 0, or -1
 * with err. */
static int stonewall_value(const struct layout *lo, int i, const char *value, bool *on, struct dd_err *err)
{
	const struct line *l = &lo->lines[i];
	char v[32];
	size_t n = 0;
	*on = true;
	if (!value)
		return 0;
	while (*value == ' ' || *value == '\t')
		value++;
	while (value + n < l->at + l->len && !strchr(";#\r", value[n]))
		n++;
	while (n && (value[n - 1] == ' ' || value[n - 1] == '\t'))
		n--;
	if (n >= sizeof v)
		n = sizeof v - 1;
	snprintf(v, sizeof v, "%.*s", (int)n, value);
	if (n && opt_parse_bool(v, on))
		return fail(err, "config file %s:%d: stonewall = '%s': give yes or no (or stonewall alone)", lo->name,
			    i + 1, v);
	return 0;
}

/* A section header line: its section added. 0, or -1 with err. */
static int open_section(struct layout *lo, int i, struct dd_err *err)
{
	const struct line *l = &lo->lines[i];
	if (lo->nsections == (int)(sizeof lo->sections / sizeof lo->sections[0]))
		return fail(err, "config file %s:%d: more than %d jobs", lo->name, i + 1, JOBFILE_MAX_JOBS);
	struct section *s = &lo->sections[lo->nsections++];
	const char *end = memchr(l->at, ']', l->len);
	size_t n = end ? (size_t)(end - l->at - 1) : l->len - 1;
	s->name_fits = n < sizeof s->name;
	snprintf(s->name, sizeof s->name, "%.*s", (int)(s->name_fits ? n : sizeof s->name - 1), l->at + 1);
	s->line = i + 1;
	s->global = jobfile_global_section(s->name);
	lo->global_header |= !strcmp(s->name, "global");
	lo->njobs += !s->global;
	if (lo->njobs > JOBFILE_MAX_JOBS)
		return fail(err, "config file %s:%d: more than %d jobs", lo->name, i + 1, JOBFILE_MAX_JOBS);
	return 0;
}

/* Split text into lines and sections, and find the stonewalls. 0, or -1 with err. */
static int scan_layout(const char *text, struct layout *lo, struct dd_err *err)
{
	int cap = 1;
	for (const char *p = text; *p; p++)
		cap += *p == '\n';
	lo->lines = calloc((size_t)cap, sizeof *lo->lines);
	if (!lo->lines) {
		fail(err, "config file %s: out of memory", lo->name);
		err->resource = true;
		return -1;
	}
	const char *p = text;
	for (int i = 0; *p || i == 0; i++) {
		struct line *l = &lo->lines[lo->nlines++];
		while (*p == ' ' || *p == '\t')
			p++;
		const char *nl = strchr(p, '\n');
		l->at = p;
		l->len = nl ? (size_t)(nl - p) : strlen(p);
		p = nl ? nl + 1 : p + l->len;
		if (l->len && l->at[0] == '[' && open_section(lo, i, err))
			return -1;
		l->section = lo->nsections - 1;
		char key[32];
		const char *value = line_key(l, key, sizeof key);
		if (strcmp(key, "stonewall"))
			continue;
		bool on;
		if (stonewall_value(lo, i, value, &on, err))
			return -1;
		l->stonewall = true;
		lo->any_stonewall = true;
		struct section *s = l->section >= 0 ? &lo->sections[l->section] : NULL;
		if (!s || s->global)
			lo->global_stonewall = on;
		else if (s) {
			s->stonewall = on;
			s->stonewall_line = i + 1;
		}
	}
	return 0;
}

static bool line_global(const struct layout *lo, const struct line *l)
{
	return l->section < 0 || lo->sections[l->section].global;
}

/* The text of the lines of section `which` (-1: of every global section), the others left blank
 * so that messages keep the file's line numbers. Returns a new string, or NULL (out of memory). */
static char *section_text(const struct layout *lo, int which)
{
	size_t size = 1;
	for (int i = 0; i < lo->nlines; i++)
		size += lo->lines[i].len + 1;
	char *out = malloc(size), *o = out;
	if (!out)
		return NULL;
	for (int i = 0; i < lo->nlines; i++) {
		const struct line *l = &lo->lines[i];
		bool mine = which < 0 ? line_global(lo, l) : l->section == which;
		if (mine && !l->stonewall) {
			memcpy(o, l->at, l->len);
			o += l->len;
		}
		*o++ = '\n';
	}
	*o = 0;
	return out;
}

/* The line that sets key in section `which` (-1: the global ones), or 0. */
static int key_line(const struct layout *lo, int which, const char *key)
{
	for (int i = 0; i < lo->nlines; i++) {
		const struct line *l = &lo->lines[i];
		char k[64];
		line_key(l, k, sizeof k);
		if ((which < 0 ? line_global(lo, l) : l->section == which) && !strcmp(k, key))
			return i + 1;
	}
	return 0;
}

struct job_texts {
	const char *global, *own;
};

/* Was a rate (rate, read-rate, write-rate) given? */
static bool rate_given(const bool *given)
{
	return options_given(given, "rate") || options_given(given, "read-rate") || options_given(given, "write-rate");
}

/* The file's options of one job: its global lines, then its own (the texts, read once: path only
 * names the file in messages). The load is one choice made by two kinds of key, as between the
 * file and the command line: the job's peak replaces [global]'s rates, its rate [global]'s peak. */
static int load_job(struct bench_cli *cli, const char *path, void *ctx, struct dd_err *err)
{
	const struct job_texts *t = ctx;
	struct bench_cli own;
	options_defaults(&own);
	int rc = options_parse_ini_text(&own, t->own, path, err) || options_parse_ini_text(cli, t->global, path, err) ||
		 options_parse_ini_text(cli, t->own, path, err);
	bool peak = options_given(own.given, "peak"), rate = rate_given(own.given);
	options_free(&own.o);
	if (rc)
		return -1;
	if (peak && !rate)
		cli->o.rate = cli->o.read_rate = cli->o.write_rate = 0;
	if (rate && !peak)
		cli->o.peak = false;
	return 0;
}

static int load_nothing(struct bench_cli *cli, const char *path, void *ctx, struct dd_err *err)
{
	(void)cli, (void)err;
	if (ctx)
		snprintf(ctx, PATH_MAX, "%s", path);
	return 0;
}

/* Does a job name fit a file name (its --output-dir subdirectory)? */
static bool name_fits_file(const char *name)
{
	if (!name[0] || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
		    !strchr("._-", *p))
			return false;
	return true;
}

/* The object a --target names, to compare two jobs' (path: a file or directory path or the
 * spelling's path part), or false for a kind that stores nothing (jobs may share it). */
static bool target_object(const char *t, char *path, size_t len)
{
	for (size_t k = 0; k < target_kind_count; k++) {
		const struct target_ops *ops = target_kinds[k];
		if (!ops->match || !ops->match(t, NULL))
			continue;
		if (ops->flags & TARGET_STORES_NOTHING)
			return false;
		size_t sp = ops->spelling && !strncmp(t, ops->spelling, strlen(ops->spelling)) ? strlen(ops->spelling) : 0;
		snprintf(path, len, "%.*s", (int)strcspn(t + sp, ","), t + sp);
		break;
	}
	if (!path[0])
		snprintf(path, len, "%s", t);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = 0;
	return true;
}

/* Do two paths name one file (by inode, a device by its number), or, not there yet, one name? */
static bool same_object(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) || stat(b, &sb))
		return !strcmp(a, b);
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool same_target(const char *a, const char *b)
{
	char pa[PATH_MAX] = "", pb[PATH_MAX] = "";
	return target_object(a, pa, sizeof pa) && target_object(b, pb, sizeof pb) && same_object(pa, pb);
}

/* Jobs of one group on one target are refused (the run lock would stop the second one midway). */
static int check_groups(const struct jobfile *jf, struct dd_err *err)
{
	for (unsigned i = 0; i < jf->njobs; i++)
		for (unsigned k = 0; k < i; k++) {
			const struct jobfile_job *a = &jf->jobs[k], *b = &jf->jobs[i];
			if (a->group == b->group && same_target(a->cli.o.target, b->cli.o.target))
				return fail(err, "config file %s:%d: job '%s' would run beside job '%s' (line %d) on the same "
						 "target %s: put stonewall in [%s], or give it a target of its own",
					    jf->path, b->line, b->name, a->name, a->line, b->cli.o.target, b->name);
		}
	return 0;
}

/* The --output-dir of a job that takes it from [global] or the command line: DIR/NAME. */
static int job_output_dir(struct jobfile_job *j, struct dd_err *err)
{
	size_t n = strlen(j->cli.o.output_dir) + strlen(j->name) + 2;
	char *dir = malloc(n);
	if (!dir) {
		fail(err, "out of memory");
		err->resource = true;
		return -1;
	}
	snprintf(dir, n, "%s/%s", j->cli.o.output_dir, j->name);
	j->output_base = j->cli.o.output_dir;
	j->cli.o.output_dir = dir;
	return 0;
}

/* One job's refusals, its options parsed: `own` is what its section alone sets, `argv_given`
 * what the command line does. */
static int check_job(const struct layout *lo, int s, struct jobfile *jf, struct jobfile_job *j,
		     const struct bench_cli *own, const bool *argv_given, struct dd_err *err)
{
	static const char *const per_job[] = {"dist-report", "access-report", NULL};
	if (!options_given(j->cli.given, "target"))
		return fail(err, "config file %s:%d: job '%s' has no target (set target in [%s] or [global], or give "
				 "--target)", lo->name, j->line, j->name, j->name);
	if (s >= 0 && options_given(own->given, "json"))
		return fail(err, "config file %s:%d: json in [%s]: the jobs of a job file share one JSON (set json in "
				 "[global], or give --json)", lo->name, key_line(lo, s, "json"), j->name);
	for (int k = 0; per_job[k] && lo->njobs > 1; k++)
		if (options_given(j->cli.given, per_job[k]) && (s < 0 || !options_given(own->given, per_job[k])))
			return fail(err, "config file %s:%d: %s applies to one job: set it in the job's section, not "
					 "[global] or the command line", lo->name, key_line(lo, -1, per_job[k]), per_job[k]);
	bool dir_shared = options_given(j->cli.given, "output-dir") &&
			  (s < 0 || !options_given(own->given, "output-dir") || options_given(argv_given, "output-dir"));
	if (dir_shared && lo->njobs > 1 && job_output_dir(j, err))
		return -1;
	if (!jf->json && j->cli.o.json && !(jf->json = strdup(j->cli.o.json))) {
		fail(err, "out of memory");
		err->resource = true;
		return -1;
	}
	return 0;
}

/* --json, the one JSON of every job: a report's path, not the job file nor a job's target. */
static int check_json(const struct jobfile *jf, struct dd_err *err)
{
	static const struct target none = {.ops = &target_null_ops};
	if (!jf->json)
		return 0;
	if (config_check_output(&none, "--json", jf->json, false, err))
		return -1;
	if (same_object(jf->json, jf->path))
		return fail(err, "--json %s is the job file: write it elsewhere", jf->json);
	for (unsigned i = 0; i < jf->njobs; i++) {
		char p[PATH_MAX] = "";
		if (target_object(jf->jobs[i].cli.o.target, p, sizeof p) && same_object(jf->json, p))
			return fail(err, "--json %s is job '%s''s target: write it elsewhere", jf->json, jf->jobs[i].name);
	}
	return 0;
}

/* Job j of section s (-1: the file has no job section, its global keys are the one job): its
 * options parsed and checked. */
static int parse_job(const struct layout *lo, int s, const char *global, int argc, char **argv, struct jobfile *jf,
		     struct jobfile_job *j, const bool *argv_given, struct dd_err *err)
{
	char *own = s >= 0 ? section_text(lo, s) : strdup("");
	if (!own) {
		fail(err, "config file %s: out of memory", lo->name);
		err->resource = true;
		return -1;
	}
	struct job_texts t = {.global = global, .own = own};
	int rc = options_parse_with(argc, argv, load_job, &t, &j->cli, err);
	if (rc == 0) {
		struct bench_cli mine; /* what its own section sets */
		options_defaults(&mine);
		rc = options_parse_ini_text(&mine, own, lo->name, err) ||
		     check_job(lo, s, jf, j, &mine, argv_given, err);
		options_free(&mine.o);
	}
	free(own);
	return rc ? -1 : 0;
}

/* Section s as the next job: its name checked against the others, its group. */
static int name_job(const struct layout *lo, const struct section *s, struct jobfile *jf, struct jobfile_job *j,
		    struct dd_err *err)
{
	if (lo->njobs > 1 && !s->name_fits)
		return fail(err, "config file %s:%d: a job name longer than %d characters", lo->name, s->line,
			    JOBFILE_NAME_MAX - 1);
	if (lo->njobs > 1 && !name_fits_file(s->name))
		return fail(err, "config file %s:%d: job name '%s': give letters, digits, '.', '_' or '-', not first "
				 "'.' or '-' (it names the job's outputs)", lo->name, s->line, s->name);
	for (const struct jobfile_job *o = jf->jobs; o < j; o++)
		if (!strcmp(o->name, s->name))
			return fail(err, "config file %s:%d: a second job named '%s' (the first is at line %d): give "
					 "each job a name of its own", lo->name, s->line, s->name, o->line);
	snprintf(j->name, sizeof j->name, "%s", s->name);
	j->line = s->line;
	j->stonewall = s->stonewall_line ? s->stonewall : lo->global_stonewall;
	j->group = j == jf->jobs ? 1 : j[-1].group + (j->stonewall ? 1 : 0);
	jf->ngroups = j->group;
	return 0;
}

/* Every job of a file that has some: named, parsed, checked. */
static int parse_jobs(const struct layout *lo, int argc, char **argv, struct jobfile *jf, const bool *argv_given,
		      struct dd_err *err)
{
	char *global = section_text(lo, -1);
	int rc = 0;
	if (!global) {
		fail(err, "config file %s: out of memory", lo->name);
		err->resource = true;
		return -1;
	}
	for (int s = 0; s < lo->nsections && !rc; s++) {
		if (lo->sections[s].global)
			continue;
		struct jobfile_job *j = &jf->jobs[jf->njobs++];
		rc = name_job(lo, &lo->sections[s], jf, j, err) ||
		     parse_job(lo, s, global, argc, argv, jf, j, argv_given, err);
	}
	if (!lo->njobs) { /* [global] alone: one run of its keys */
		struct jobfile_job *j = &jf->jobs[jf->njobs++];
		snprintf(j->name, sizeof j->name, "global");
		j->line = 1;
		j->group = jf->ngroups = 1;
		rc = parse_job(lo, -1, global, argc, argv, jf, j, argv_given, err);
	}
	free(global);
	return rc ? -1 : 0;
}

/* The job sections by name: a file naming one ([dedisbench] twice) is a run as before. */
static int distinct_jobs(const struct layout *lo)
{
	int n = 0;
	for (int s = 0; s < lo->nsections; s++) {
		bool seen = lo->sections[s].global;
		for (int k = 0; k < s && !seen; k++)
			seen = !strcmp(lo->sections[k].name, lo->sections[s].name);
		n += !seen;
	}
	return n;
}

int jobfile_parse_text(const char *text, const char *name, int argc, char **argv, struct jobfile *jf,
		       struct dd_err *err)
{
	memset(jf, 0, sizeof *jf);
	snprintf(jf->path, sizeof jf->path, "%s", name);
	struct bench_cli first; /* the command line alone */
	if (options_parse_with(argc, argv, load_nothing, NULL, &first, err)) {
		options_free(&first.o);
		return -1;
	}
	bool argv_given[OPT_MAX_ROWS];
	memcpy(argv_given, first.given, sizeof argv_given);
	options_free(&first.o);
	struct layout lo = {.name = jf->path};
	int rc = scan_layout(text, &lo, err);
	if (rc == 0 && !lo.global_header && !lo.any_stonewall && distinct_jobs(&lo) < 2)
		rc = 1; /* a file of one run, as before (a section repeated is that section, as libinih reads it) */
	else if (rc == 0)
		rc = parse_jobs(&lo, argc, argv, jf, argv_given, err) || check_groups(jf, err) || check_json(jf, err) ? -1 : 0;
	free(lo.lines);
	return rc == 1 ? 0 : rc ? -1 : 1;
}

/* The job file's text, or NULL where options_load_ini would refuse it (it says why). */
static char *read_job_file(const char *path)
{
	enum { MAX = 1 << 20 }; /* options_load_ini's bound */
	FILE *f = fopen(path, "r");
	char *text = f ? malloc(MAX + 1) : NULL;
	size_t n = text ? fread(text, 1, MAX + 1, f) : 0;
	bool bad = !text || ferror(f) || n > MAX || memchr(text, 0, n);
	if (f)
		fclose(f);
	if (bad) {
		free(text);
		return NULL;
	}
	text[n] = 0;
	return text;
}

int jobfile_load(int argc, char **argv, struct jobfile *jf, struct dd_err *err)
{
	memset(jf, 0, sizeof *jf);
	char path[PATH_MAX] = "";
	struct bench_cli first;
	struct dd_err ignored; /* a bad command line is options_parse's to say */
	int rc = options_parse_with(argc, argv, load_nothing, path, &first, &ignored);
	bool asked = first.want_help || first.want_version;
	options_free(&first.o);
	if (rc || asked || !path[0] || getenv("DEDIS_PRINT_COMPLETION") || getenv("DEDIS_PRINT_MAN_OPTIONS"))
		return 0;
	char *text = read_job_file(path);
	if (!text)
		return 0;
	rc = jobfile_parse_text(text, path, argc, argv, jf, err);
	free(text);
	return rc;
}

int jobfile_refuse_several(int argc, char **argv, const char *prog, struct dd_err *err)
{
	struct jobfile *jf = malloc(sizeof *jf);
	if (!jf)
		return 0; /* (options_parse reads the file next, and says what it finds) */
	int rc = jobfile_load(argc, argv, jf, err);
	bool several = rc > 0 && jf->njobs > 1;
	if (several)
		fail(err, "config file %s: %u jobs: %s runs one (dedisbench runs a job file of several)", jf->path,
		     jf->njobs, prog);
	jobfile_free(jf);
	free(jf);
	return rc < 0 || several ? -1 : 0;
}

void jobfile_free(struct jobfile *jf)
{
	for (unsigned i = 0; i < jf->njobs; i++) {
		if (!jf->jobs[i].cli_taken)
			options_free(&jf->jobs[i].cli.o);
		free(jf->jobs[i].output_base);
	}
	free(jf->json);
	jf->njobs = 0;
	jf->json = NULL;
}
