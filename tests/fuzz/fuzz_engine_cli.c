/* fuzz_engine_cli.c - dedisengine's command line (reference-engine/cli.c): the input is
 * NUL-separated arguments to cli_parse. Nothing is formatted or opened: parse and check. Each
 * parse ends in a one-line error with a reason (an option it quotes is one that was given), or
 * in a known command with its number of arguments, only options that command takes, and values
 * from their lists; a parse is the same twice in a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "argv_check.h"
#include "reference-engine/cli.h"

int harness_setup(void)
{
	return 0;
}

static bool one_of(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(v, *list))
			return true;
	return false;
}

static void check_values(const struct engine_cli *c, int argc, char *const *argv)
{
	static const char *const commands[] = {"format", "stat", "fsck", "gc", "import", "export", "discard", NULL};
	static const int nargs[] = {1, 1, 1, 1, 2, 2, 3};
	static const char *const indexes[] = {"mem", "bdb", "bloom", NULL}, *const hashes[] = {"sha1", "sha256", NULL},
				 *const compress[] = {"none", "lz4", NULL}, *const prealloc[] = {"auto", "full", "sparse", NULL};
	if ((c->index && !one_of(c->index, indexes)) || (c->hash && !one_of(c->hash, hashes)) ||
	    (c->compress && !one_of(c->compress, compress)) || (c->preallocate && !one_of(c->preallocate, prealloc)))
		harness_fail("a value outside its list: index %s hash %s compress %s preallocate %s", c->index ? c->index : "-",
			     c->hash ? c->hash : "-", c->compress ? c->compress : "-", c->preallocate ? c->preallocate : "-");
	if (c->json && strcmp(c->json, "-"))
		harness_fail("--json holds '%s'", c->json);
	if (c->plot && !*c->plot)
		harness_fail("--plot holds an empty file name");
	if (c->help || c->version)
		return;
	int k = 0;
	while (commands[k] && (!c->command || strcmp(commands[k], c->command)))
		k++;
	if (!commands[k])
		harness_fail("accepted an unknown command '%s'", c->command ? c->command : "(none)");
	if (c->nargs != nargs[k])
		harness_fail("'%s' accepted with %d arguments", c->command, c->nargs);
	for (int i = 0; i < c->nargs; i++) {
		bool given = false;
		for (int j = 1; j < argc; j++)
			given |= c->args[i] == argv[j];
		if (!given)
			harness_fail("argument %d of '%s' is not one of the command line's", i, c->command);
	}
	bool format = !strcmp(c->command, "format"), stat = !strcmp(c->command, "stat"),
	     fsck_gc = !strcmp(c->command, "fsck") || !strcmp(c->command, "gc"), import = !strcmp(c->command, "import"),
	     export = !strcmp(c->command, "export");
	if (!format && (c->size || c->data_size || c->block_size || c->index || c->hash || c->compress || c->preallocate))
		harness_fail("an option of format accepted by '%s'", c->command);
	if (format && !c->size)
		harness_fail("format accepted without --size");
	if (c->json && !stat && !fsck_gc)
		harness_fail("--json accepted by '%s'", c->command);
	if (c->plot && !stat)
		harness_fail("--plot accepted by '%s'", c->command);
	if ((c->verify_hits || c->commit_every) && !import)
		harness_fail("an option of import accepted by '%s'", c->command);
	if (c->direct && !import && !export)
		harness_fail("--direct accepted by '%s'", c->command);
}

void harness_one(const uint8_t *data, size_t len)
{
	char *text = harness_text(data, len);
	char *argv[ARGV_MAX + 2], *copy[ARGV_MAX + 2];
	int argc = argv_split(text, len, "dedisengine", argv);
	struct engine_cli c, again;
	char err[512], err2[512];
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *argv);
	struct dd_err e1, e2;
	int rc = cli_parse(argc, copy, &c, &e1);
	snprintf(err, sizeof err, "%s", e1.msg);
	if (rc)
		argv_check_error(err, sizeof err, argc, argv);
	else
		check_values(&c, argc, argv);
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof *argv);
	int rc2 = cli_parse(argc, copy, &again, &e2);
	snprintf(err2, sizeof err2, "%s", e2.msg);
	if (rc != rc2 || (rc && strcmp(err, err2)))
		harness_fail("parsed twice, answered %d then %d (%s / %s)", rc, rc2, rc ? err : "", rc2 ? err2 : "");
	free(text);
}
