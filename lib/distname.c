/* distname.c - a distribution argument to a file: the path given, or a bundled distribution's
 * name found where dedisbench and dedisgen both look (DEDIS_DISTDIR, source tree, installed). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/distname.h"

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int distname_resolve(const char *given, char *path, size_t len, struct dd_err *err)
{
	struct stat st;
	if (strchr(given, '/') || (stat(given, &st) == 0 && !S_ISDIR(st.st_mode))) {
		snprintf(path, len, "%s", given);
		return 0;
	}
	const char *dirs[] = {getenv("DEDIS_DISTDIR"), DEDIS_SRCDIR "/distributions", DEDIS_DATADIR "/distributions"};
	for (size_t i = 0; *given && i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i])
			continue;
		snprintf(path, len, "%s/%s.dist", dirs[i], given);
		if (is_file(path))
			return 0;
	}
	char shown[72];
	return err_fail(err, -1, "%s: no such file, and not a bundled distribution (" DISTNAME_BUNDLED ")",
			errmsg_quote(given, shown, sizeof shown));
}
