/* rankpath.c - %r / %h / %% in a rank's path: the same command line names each rank's own
 * target, database or output directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "lib/errmsg.h"
#include "lib/rankpath.h"

int rank_path_substitute(char **path, int rank, struct dd_err *err)
{
	if (!*path || !strchr(*path, '%'))
		return 0;
	struct utsname u;
	uname(&u);
	char out[4096];
	size_t n = 0;
	for (const char *s = *path; *s; s++) {
		char num[16];
		const char *add = NULL;
		if (*s != '%') {
			num[0] = *s;
			num[1] = 0;
			add = num;
		} else if (s[1] == 'r') {
			snprintf(num, sizeof num, "%d", rank);
			add = num;
			s++;
		} else if (s[1] == 'h') {
			add = u.nodename;
			s++;
		} else if (s[1] == '%') {
			add = "%";
			s++;
		} else {
			return err_fail(err, -1, "%s: '%%%c' is not a substitution (%%r: the rank, %%h: the host, %%%%: %%)",
					*path, s[1] ? s[1] : ' ');
		}
		size_t k = strlen(add);
		if (n + k >= sizeof out)
			return err_fail(err, -1, "%s: too long once substituted", *path);
		memcpy(out + n, add, k);
		n += k;
	}
	out[n] = 0;
	char *dup = strdup(out);
	if (!dup)
		return err_fail(err, -1, "out of memory");
	free(*path);
	*path = dup;
	return 0;
}
