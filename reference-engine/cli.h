/* cli.h - dedisengine's option table (one row per option: getopt_long, --help and the man page
 * derive from it) and the parsed command line. */
#ifndef DEDIS_ENGINE_CLI_H
#define DEDIS_ENGINE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct engine_cli {
	const char *command;   /* format, stat, fsck, gc, import, export, discard */
	char **args;           /* positional arguments after the command */
	int nargs;
	uint64_t size, data_size, block_size, commit_every;
	const char *index, *hash, *compress, *preallocate, *json, *plot;
	bool verify_hits, direct, force, quiet, help, version;
};

struct engine_opt {
	const char *name;
	int short_opt;
	const char *arg;      /* NULL: a flag */
	const char *commands; /* which commands take it ("format stat ...") */
	const char *def;
	const char *help;
};

extern const struct engine_opt engine_options[];
extern const size_t engine_option_count;

/* 0, or -1 with err set ("what: why"). */
int cli_parse(int argc, char **argv, struct engine_cli *cli, char *err, size_t errlen);
void cli_print_help(FILE *f);
void cli_print_man(FILE *f);

#endif
