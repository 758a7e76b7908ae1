/* cli.c - dedisengine's option rows (lib/opttable), each with the commands that accept it, and
 * the command line's checks; --help and the man page's OPTIONS are printed from the same rows. */
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "reference-engine/cli.h"
#include "lib/opttable.h"
#include "reference-engine/fpindex.h"
#include "lib/units.h"

static const char *const commands[] = {"format", "stat", "fsck", "gc", "import", "export", "discard", NULL};
static const int command_args[] = {1, 1, 1, 1, 2, 2, 3};
/* The commands as a row's mask: bit k is commands[k]. */
#define FORMAT 1u
#define STAT 2u
#define FSCK 4u
#define GC 8u
#define IMPORT 16u
#define EXPORT 32u

static const char *const hash_names[] = {"sha1", "sha256", NULL};
static const char *const compress_names[] = {"none", "lz4", NULL};
static const char *const preallocate_names[] = {"auto", "full", "sparse", NULL};

#define fail(err, ...) err_fail(err, -1, __VA_ARGS__)
#define OFF(f) offsetof(struct engine_cli, f)

/* A choice kept as its text (the engine takes names): "--index: unknown value 'x' (mem, bdb, bloom)". */
static int parse_choice(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
			struct dd_err *err)
{
	char list[128] = "";
	for (int i = 0; r->choices[i]; i++) {
		if (!strcmp(r->choices[i], v))
			return *(const char **)((char *)base + r->offset) = r->choices[i], 0;
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", r->choices[i]);
	}
	return fail(err, "%s: unknown value '%s' (%s)", label, shown, list);
}

/* A value kept as the argument itself (--plot FILE), or "-" for a flag (--json: standard output). */
static int parse_text(void *base, const struct opt_row *r, const char *v, const char *label, const char *shown,
		      struct dd_err *err)
{
	*(const char **)((char *)base + r->offset) = v ? v : "-";
	return 0;
}

/* The engine counts commits in 32 bits. */
static int parse_commit_every(void *base, const struct opt_row *r, const char *v, const char *label,
			      const char *shown, struct dd_err *err)
{
	uint64_t *n = (uint64_t *)((char *)base + r->offset);
	struct dd_err why;
	if (units_parse_count(v, n, &why))
		return fail(err, "%s: '%s' is not a valid count: %s", label, shown, why.msg);
	if (*n > UINT32_MAX)
		return fail(err, "%s: '%s' is too large (at most %u)", label, shown, UINT32_MAX);
	return 0;
}

/* The defaults are the engine's (engine_format): here they are only shown. */
/* --index's choices and help come from the index registry (registry_rows fills them before the
 * table is used), so a new index needs no line here. */
static const char *index_choices[32 + 1];
static char index_help[256];

static struct opt_row rows[] = {
	{"size", 's', "SIZE", OT_SIZE, OFF(size), NULL, NULL, 1, 0, 0, 0, NULL, "logical size of the volume (required): a whole number of blocks, as dm and VDO want it (a size between blocks is refused, not rounded)", FORMAT, NULL},
	{"data-size", 'D', "SIZE", OT_SIZE, OFF(data_size), "--size + 1/16", NULL, 1, 0, 0, 0, NULL, "size of the chunk store, a whole number of blocks; smaller than --size is thin provisioning (a full volume needs headroom to be overwritten with new data)", FORMAT, NULL},
	{"block-size", 'b', "SIZE", OT_SIZE, OFF(block_size), "4096", NULL, 1, 0, 0, 0, NULL, "block size, a power of two from 512 B to 64 KiB", FORMAT, NULL},
	{"index", 'i', "KIND", OT_CUSTOM, OFF(index), "mem", index_choices, 0, 0, 0, 0, NULL, index_help, FORMAT, parse_choice},
	{"hash", 'H', "NAME", OT_CUSTOM, OFF(hash), "sha1", hash_names, 0, 0, 0, 0, NULL, "fingerprint: sha1 or sha256", FORMAT, parse_choice},
	{"compress", 'c', "KIND", OT_CUSTOM, OFF(compress), "none", compress_names, 0, 0, 0, 0, NULL, "lz4: unique blocks are LZ4-compressed and packed several to a physical block; none: stored whole", FORMAT, parse_choice},
	{"preallocate", 0, "MODE", OT_CUSTOM, OFF(preallocate), "auto", preallocate_names, 0, 0, 0, 0, NULL, "full: the whole chunk store allocated at format, as a thick device (refused when it does not fit); sparse: room taken as blocks are written; auto: full on a tmpfs where it takes at most half the free room and half the memory available (a write that first touches a tmpfs page costs twice as much), else sparse", FORMAT, parse_choice},
	{"json", 'j', NULL, OT_CUSTOM, OFF(json), NULL, NULL, 0, 0, 0, 0, NULL, "print the result as JSON", STAT | FSCK | GC, parse_text},
	{"plot", 'p', "FILE.png", OT_CUSTOM, OFF(plot), NULL, NULL, 0, 0, 0, 0, NULL, "render space (logical, physical, index) and the write-path case mix with gnuplot", STAT, parse_text},
	{"verify-hits", 0, NULL, OT_FLAG, OFF(verify_hits), NULL, NULL, 0, 0, 0, 0, NULL, "compare bytes on every index hit and count collisions", IMPORT, NULL},
	{"direct", 0, NULL, OT_FLAG, OFF(direct), NULL, NULL, 0, 0, 0, 0, NULL, "O_DIRECT on the chunk store", IMPORT | EXPORT, NULL},
	{"force", 0, NULL, OT_FLAG, OFF(force), NULL, NULL, 0, 0, 0, 0, NULL, "write over a block device that holds a filesystem, RAID or partition-table signature (never a mounted or busy one)", EXPORT, NULL},
	{"commit-every", 0, "N", OT_CUSTOM, OFF(commit_every), "0", NULL, 0, 0, 0, 0, NULL, "commit the LBN map (journal, data synced first) and force bdb's log every N writes (0: only at the end)", IMPORT, parse_commit_every},
	{"quiet", 'q', NULL, OT_FLAG, OFF(quiet), NULL, NULL, 0, 0, 0, 0, NULL, "print only errors", 0, NULL},
	{"help", 'h', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'h', NULL, "show this help", 0, NULL},
	{"version", 'V', NULL, OT_ACTION, 0, NULL, NULL, 0, 0, 0, 'V', NULL, "show the version", 0, NULL},
};
static const struct opt_table table = {rows, sizeof rows / sizeof rows[0], OPT_STYLE_ALL_DEFAULTS, 26};

static void registry_rows(void)
{
	if (index_choices[0])
		return;
	for (size_t i = 0; fpindex_registry[i] && i < sizeof index_choices / sizeof index_choices[0] - 1; i++)
		index_choices[i] = fpindex_registry[i]->name;
	char list[200];
	snprintf(index_help, sizeof index_help, "fingerprint index: %s", fpindex_help(list, sizeof list));
}

const struct opt_table *cli_options(void)
{
	registry_rows();
	return &table;
}

struct parse_state {
	struct engine_cli *c;
	bool given[sizeof rows / sizeof rows[0]];
};

static int on_row(void *ctx, size_t row, const char *v, struct dd_err *err)
{
	struct parse_state *st = ctx;
	/* an empty value is a mistake (an unset shell variable), not a file name: "--plot ''" got
	 * through to stat, which failed on it with exit 1 (a failure) instead of 2 (bad input) */
	if (rows[row].arg && !*v)
		return fail(err, "--%s: empty value", rows[row].name);
	int rc = opt_apply(&table, &rows[row], st->c, v, err);
	if (rc == OPT_ACTION && rows[row].set_value == 'h')
		st->c->help = true;
	else if (rc == OPT_ACTION)
		st->c->version = true;
	st->given[row] = true;
	return rc < 0 ? -1 : 0;
}

/* A --size or --data-size past the largest volume (2^40 - 1 blocks) is said as that, before the
 * engine's whole-number-of-blocks check offers a rounding that wraps ("18446744073709547520 or 0
 * would be"). The block size itself is checked by the engine. */
static int check_volume_sizes(const struct engine_cli *c, struct dd_err *err)
{
	uint64_t bs = c->block_size ? c->block_size : 4096;
	if (bs < 512 || bs > 65536)
		return 0;
	uint64_t max = ((1ULL << 40) - 1) * bs;
	const char *name = c->size > max ? "size" : c->data_size > max ? "data-size" : NULL;
	if (!name)
		return 0;
	return fail(err, "--%s: %llu bytes is more than a volume holds (at most 2^40 - 1 blocks of %llu bytes: "
		    "%llu bytes)", name, (unsigned long long)(c->size > max ? c->size : c->data_size),
		    (unsigned long long)bs, (unsigned long long)max);
}

/* After the options: the command, its argument count, and the options it takes. */
static int check_command(struct engine_cli *c, const bool *given, int argc, char **argv, int operands,
			 struct dd_err *err)
{
	if (operands >= argc)
		return fail(err, "no command given (format, stat, fsck, gc, import, export, discard)");
	c->command = argv[operands];
	int k = 0;
	while (commands[k] && strcmp(commands[k], c->command))
		k++;
	if (!commands[k]) {
		char shown[72];
		return fail(err, "unknown command '%s' (format, stat, fsck, gc, import, export, discard)",
			    errmsg_quote(c->command, shown, sizeof shown));
	}
	c->args = argv + operands + 1;
	c->nargs = argc - operands - 1;
	if (c->nargs != command_args[k])
		return fail(err, "'%s' takes %d argument%s, got %d (see --help)", c->command, command_args[k],
			    command_args[k] > 1 ? "s" : "", c->nargs);
	for (size_t i = 0; i < table.count; i++)
		if (given[i] && rows[i].cmds && !(rows[i].cmds & (1u << k)))
			return fail(err, "option --%s does not apply to '%s'", rows[i].name, c->command);
	return 0;
}

int cli_parse(int argc, char **argv, struct engine_cli *c, struct dd_err *err)
{
	struct parse_state st = {.c = c};
	int operands;
	memset(c, 0, sizeof *c);
	registry_rows();
	/* GNU getopt permutes: options may stand before or after the command and its arguments. */
	if (opt_parse_argv(&table, 0, argc, argv, NULL, on_row, &st, &operands, err))
		return -1;
	if (c->help || c->version)
		return 0;
	if (check_command(c, st.given, argc, argv, operands, err))
		return -1;
	long size = opt_find_long(&table, "size"), data_size = opt_find_long(&table, "data-size");
	if ((st.given[size] && !c->size) || (st.given[data_size] && !c->data_size))
		return fail(err, "--%s 0: zero is not a size (a volume holds at least one block)",
			    st.given[size] && !c->size ? "size" : "data-size");
	if (!strcmp(c->command, "format") && !c->size)
		return fail(err, "format needs --size");
	return check_volume_sizes(c, err);
}

/* "stat fsck gc": the commands of a row's mask. */
static void commands_text(unsigned mask, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int k = 0; commands[k]; k++)
		if (mask & (1u << k))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", commands[k]);
}

void cli_print_help(FILE *f)
{
	fputs("Usage: dedisengine COMMAND [OPTION]... ARGS\n"
	      "The reference fixed-block deduplication engine: a volume is a directory.\n\n"
	      "Commands:\n"
	      "  format DIR --size SIZE     create a volume\n"
	      "  stat DIR                   counters: mapped and physical blocks, dedup ratio,\n"
	      "                             index\n"
	      "  fsck DIR                   check every invariant (exit 0 consistent, 1 not)\n"
	      "  gc DIR                     reclaim blocks no logical block references\n"
	      "  import DIR FILE            write FILE (or a device) into the volume from\n"
	      "                             block 0\n"
	      "  export DIR FILE            read the whole volume out into FILE (holes:\n"
	      "                             sparse)\n"
	      "  discard DIR START LEN      unmap LEN blocks from block START\n\nOptions:\n", f);
	registry_rows();
	for (size_t i = 0; i < table.count; i++) {
		char cmds[64], suffix[72] = "";
		commands_text(rows[i].cmds, cmds, sizeof cmds);
		if (rows[i].cmds)
			snprintf(suffix, sizeof suffix, " (%s)", cmds);
		opt_print_help_row(f, &table, &rows[i], suffix);
	}
	fputs("\nExit status: 0 success, 1 failure (fsck: inconsistent), 2 bad input.\n", f);
}

void cli_print_man(FILE *f)
{
	registry_rows();
	for (size_t i = 0; i < table.count; i++)
		opt_print_man_row(f, &table, &rows[i], NULL);
}
