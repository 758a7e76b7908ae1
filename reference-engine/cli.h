/* cli.h - dedisengine's option table (lib/opttable rows: getopt_long, --help and the man page
 * derive from them) and the parsed command line. */
#ifndef DEDIS_ENGINE_CLI_H
#define DEDIS_ENGINE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/opttable.h"

struct engine_cli {
	const char *command;   /* format, stat, fsck, gc, import, export, discard */
	char **args;           /* positional arguments after the command */
	int nargs;
	uint64_t size, data_size, block_size, commit_every;
	const char *index, *hash, *compress, *preallocate, *json, *plot;
	bool verify_hits, direct, force, quiet, help, version;
};

/* The rows (lib/opttable), each with the mask of the commands that take it (bit k: the k-th of
 * format, stat, fsck, gc, import, export, discard; 0: all). */
/* The option table, its --index rows filled from the index registry. */
const struct opt_table *cli_options(void);

/* 0, or -1 with err set ("what: why"). */
int cli_parse(int argc, char **argv, struct engine_cli *cli, struct dd_err *err);
void cli_print_help(FILE *f);
void cli_print_man(FILE *f);

#endif
