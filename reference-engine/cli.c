/* cli.c - dedisengine's single option table and its parser: one row per option, each saying
 * which commands accept it; --help and the man page's OPTIONS are printed from the same rows. */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "reference-engine/cli.h"
#include "reference-engine/fpindex.h"
#include "lib/optdoc.h"
#include "lib/units.h"

const struct engine_opt engine_options[] = {
	{"size", 's', "SIZE", "format", NULL, "logical size of the volume (required): a whole number of blocks, as dm and VDO want it (a size between blocks is refused, not rounded)"},
	{"data-size", 'D', "SIZE", "format", "--size + 1/16", "size of the chunk store, a whole number of blocks; smaller than --size is thin provisioning (a full volume needs headroom to be overwritten with new data)"},
	{"block-size", 'b', "SIZE", "format", "4096", "block size, a power of two from 512 B to 64 KiB"},
	{"index", 'i', "KIND", "format", "mem", "fingerprint index: mem, bdb (Berkeley DB) or bloom (Bloom filter + bdb)"},
	{"hash", 'H', "NAME", "format", "sha1", "fingerprint: sha1 or sha256"},
	{"compress", 'c', "KIND", "format", "none", "lz4: unique blocks are LZ4-compressed and packed several to a physical block; none: stored whole"},
	{"preallocate", 0, "MODE", "format", "auto", "full: the whole chunk store allocated at format, as a thick device (refused when it does not fit); sparse: room taken as blocks are written; auto: full on a tmpfs where it takes at most half the free room and half the memory available (a write that first touches a tmpfs page costs twice as much), else sparse"},
	{"json", 'j', NULL, "stat fsck gc", NULL, "print the result as JSON"},
	{"plot", 'p', "FILE.png", "stat", NULL, "render space (logical, physical, index) and the write-path case mix with gnuplot"},
	{"verify-hits", 0, NULL, "import", NULL, "compare bytes on every index hit and count collisions"},
	{"direct", 0, NULL, "import export", NULL, "O_DIRECT on the chunk store"},
	{"force", 0, NULL, "export", NULL, "write over a block device that holds a filesystem, RAID or partition-table signature (never a mounted or busy one)"},
	{"commit-every", 0, "N", "import", "0", "commit the LBN map (journal, data synced first) and force bdb's log every N writes (0: only at the end)"},
	{"quiet", 'q', NULL, "all", NULL, "print only errors"},
	{"help", 'h', NULL, "all", NULL, "show this help"},
	{"version", 'V', NULL, "all", NULL, "show the version"},
};
const size_t engine_option_count = sizeof engine_options / sizeof engine_options[0];

static const char *const commands[] = {"format", "stat", "fsck", "gc", "import", "export", "discard", NULL};
static const int command_args[] = {1, 1, 1, 1, 2, 2, 3};

#define fail(err, len, ...) errmsg_set(err, len, -1, __VA_ARGS__)

static bool takes(const struct engine_opt *o, const char *command)
{
	if (!strcmp(o->commands, "all"))
		return true;
	size_t n = strlen(command);
	for (const char *p = o->commands; (p = strstr(p, command)); p += n)
		if ((p == o->commands || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
			return true;
	return false;
}

static int set_value(struct engine_cli *c, const struct engine_opt *o, const char *v, char *err, size_t errlen)
{
	const char *why = NULL;
	const char *n = o->name;
	char shown[72]; /* a long value is quoted shortened, so the reason after it is not cut off */
	const char *sv = v ? errmsg_quote(v, shown, sizeof shown) : NULL;
	/* an empty value is a mistake (an unset shell variable), not a file name: "--plot ''" got
	 * through to stat, which failed on it with exit 1 (a failure) instead of 2 (bad input) */
	if (o->arg && !*v)
		return fail(err, errlen, "--%s: empty value", n);
	if (!strcmp(n, "size") || !strcmp(n, "data-size") || !strcmp(n, "block-size")) {
		uint64_t x;
		if (units_parse_size(v, 1, &x, &why))
			return fail(err, errlen, "--%s: '%s' is not a valid size: %s", n, sv, why);
		*(!strcmp(n, "size") ? &c->size : !strcmp(n, "data-size") ? &c->data_size : &c->block_size) = x;
	} else if (!strcmp(n, "commit-every")) {
		if (units_parse_count(v, &c->commit_every, &why))
			return fail(err, errlen, "--%s: '%s' is not a valid count: %s", n, sv, why);
		if (c->commit_every > UINT32_MAX) /* the engine counts to it in 32 bits */
			return fail(err, errlen, "--%s: '%s' is too large (at most %u)", n, sv, UINT32_MAX);
	} else if (!strcmp(n, "index")) {
		char names[128];
		if (!index_find(v))
			return fail(err, errlen, "--index: unknown value '%s' (%s)", sv, fpindex_names(names, sizeof names, ", ", 0));
		c->index = v;
	} else if (!strcmp(n, "compress")) {
		if (strcmp(v, "none") && strcmp(v, "lz4"))
			return fail(err, errlen, "--compress: unknown value '%s' (none, lz4)", sv);
		c->compress = v;
	} else if (!strcmp(n, "preallocate")) {
		if (strcmp(v, "auto") && strcmp(v, "full") && strcmp(v, "sparse"))
			return fail(err, errlen, "--preallocate: unknown value '%s' (auto, full, sparse)", sv);
		c->preallocate = v;
	} else if (!strcmp(n, "hash")) {
		if (strcmp(v, "sha1") && strcmp(v, "sha256"))
			return fail(err, errlen, "--hash: unknown value '%s' (sha1, sha256)", sv);
		c->hash = v;
	} else if (!strcmp(n, "json")) {
		c->json = "-";
	} else if (!strcmp(n, "plot")) {
		c->plot = v;
	} else if (!strcmp(n, "verify-hits")) {
		c->verify_hits = true;
	} else if (!strcmp(n, "direct")) {
		c->direct = true;
	} else if (!strcmp(n, "force")) {
		c->force = true;
	} else if (!strcmp(n, "quiet")) {
		c->quiet = true;
	} else if (!strcmp(n, "help")) {
		c->help = true;
	} else if (!strcmp(n, "version")) {
		c->version = true;
	}
	return 0;
}

/* A --size or --data-size past the largest volume (2^40 - 1 blocks) is said as that, before the
 * engine's whole-number-of-blocks check offers a rounding that wraps ("18446744073709547520 or 0
 * would be"). The block size itself is checked by the engine. */
static int check_volume_sizes(const struct engine_cli *c, char *err, size_t errlen)
{
	uint64_t bs = c->block_size ? c->block_size : 4096;
	if (bs < 512 || bs > 65536)
		return 0;
	uint64_t max = ((1ULL << 40) - 1) * bs;
	const char *name = c->size > max ? "size" : c->data_size > max ? "data-size" : NULL;
	if (!name)
		return 0;
	return fail(err, errlen, "--%s: %llu bytes is more than a volume holds (at most 2^40 - 1 blocks of %llu bytes: "
		    "%llu bytes)", name, (unsigned long long)(c->size > max ? c->size : c->data_size),
		    (unsigned long long)bs, (unsigned long long)max);
}

int cli_parse(int argc, char **argv, struct engine_cli *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	struct option longs[32];
	char shorts[64];
	bool given[32] = {false};
	size_t nl = 0, ns = 0;
	shorts[ns++] = ':';
	for (size_t i = 0; i < engine_option_count; i++) {
		const struct engine_opt *o = &engine_options[i];
		longs[nl++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, 256 + (int)i};
		if (o->short_opt) {
			shorts[ns++] = (char)o->short_opt;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	longs[nl] = (struct option){0};
	shorts[ns] = 0;
	/* GNU getopt permutes: options may stand before or after the command and its arguments. */
	optind = 0;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		/* A short option getopt stopped at is named by optopt: optind moves past its argument
		 * only after the argument's last letter, so argv[optind - 1] is the argument before
		 * ("-Xq stat DIR" said "unknown option 'dedisengine'"). A long option (optopt 0, or
		 * its row's value from 256) is the whole argument, which optind has passed. */
		if (ch == '?' || ch == ':') {
			char shown[72] = {'-', (char)optopt, 0};
			const char *what = optopt && optopt < 256 ? shown /* a byte >= 0x80: < 0 */
								  : errmsg_quote(argv[optind - 1], shown, sizeof shown);
			if (ch == '?')
				return fail(err, errlen, "unknown option '%s' (see --help)", what);
			return fail(err, errlen, "option '%s' needs a value", what);
		}
		size_t row = 0;
		if (ch >= 256)
			row = (size_t)(ch - 256);
		else
			while (row < engine_option_count && engine_options[row].short_opt != ch)
				row++;
		if (set_value(c, &engine_options[row], optarg, err, errlen))
			return -1;
		given[row] = true;
	}
	if (c->help || c->version)
		return 0;
	if (optind >= argc)
		return fail(err, errlen, "no command given (format, stat, fsck, gc, import, export, discard)");
	c->command = argv[optind];
	int k = 0;
	while (commands[k] && strcmp(commands[k], c->command))
		k++;
	if (!commands[k]) {
		char shown[72];
		return fail(err, errlen, "unknown command '%s' (format, stat, fsck, gc, import, export, discard)",
			    errmsg_quote(c->command, shown, sizeof shown));
	}
	c->args = argv + optind + 1;
	c->nargs = argc - optind - 1;
	if (c->nargs != command_args[k])
		return fail(err, errlen, "'%s' takes %d argument%s, got %d (see --help)", c->command, command_args[k],
			    command_args[k] > 1 ? "s" : "", c->nargs);
	for (size_t i = 0; i < engine_option_count; i++)
		if (given[i] && !takes(&engine_options[i], c->command))
			return fail(err, errlen, "option --%s does not apply to '%s'", engine_options[i].name, c->command);
	for (size_t i = 0; i < engine_option_count; i++)
		if (given[i] && (!strcmp(engine_options[i].name, "size") || !strcmp(engine_options[i].name, "data-size")) &&
		    !*(!strcmp(engine_options[i].name, "size") ? &c->size : &c->data_size))
			return fail(err, errlen, "--%s 0: zero is not a size (a volume holds at least one block)",
				    engine_options[i].name);
	if (!strcmp(c->command, "format") && !c->size)
		return fail(err, errlen, "format needs --size");
	return check_volume_sizes(c, err, errlen);
}

void cli_print_help(FILE *f)
{
	fputs("Usage: dedisengine COMMAND [OPTION]... ARGS\n"
	      "The reference fixed-block deduplication engine: a volume is a directory.\n\n"
	      "Commands:\n"
	      "  format DIR --size SIZE     create a volume\n"
	      "  stat DIR                   counters: mapped and physical blocks, dedup ratio, index\n"
	      "  fsck DIR                   check every invariant (exit 0 consistent, 1 not)\n"
	      "  gc DIR                     reclaim blocks no logical block references\n"
	      "  import DIR FILE            write FILE (or a device) into the volume from block 0\n"
	      "  export DIR FILE            read the whole volume out into FILE\n"
	      "  discard DIR START LEN      unmap LEN blocks from block START\n\nOptions:\n", f);
	for (size_t i = 0; i < engine_option_count; i++) {
		const struct engine_opt *o = &engine_options[i];
		char left[48];
		if (o->short_opt)
			snprintf(left, sizeof left, "  -%c, --%s%s%s", o->short_opt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "%-26s %s", left, o->help);
		if (o->def)
			fprintf(f, " [%s]", o->def);
		if (strcmp(o->commands, "all"))
			fprintf(f, " (%s)", o->commands);
		fputc('\n', f);
	}
	fputs("\nExit status: 0 success, 1 failure (fsck: inconsistent), 2 bad input.\n", f);
}

void cli_print_man(FILE *f)
{
	for (size_t i = 0; i < engine_option_count; i++) {
		const struct engine_opt *o = &engine_options[i];
		optdoc_man_item(f, o->short_opt, o->name, o->arg, o->help, o->def, NULL);
	}
}
