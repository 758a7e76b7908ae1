/* distname.h - a --dist / show / compare argument to a file: a path as given, else a bundled
 * distribution's name looked up in DEDIS_DISTDIR, the source tree, then the installed copies. */
#ifndef DEDIS_DISTNAME_H
#define DEDIS_DISTNAME_H

#include <stddef.h>
#include "lib/errmsg.h"

/* The distributions bundled in distributions/, as messages and --help list them. */
#define DISTNAME_BUNDLED "archival, personalfiles, highperf, kernels, ubuntuamd, kernel-trees"

/* The file `given` names: itself when it has a '/' or names something that is not a directory
 * (a FIFO or device by a bare name is that file, for the reader to refuse), else NAME.dist in
 * the first directory holding one. 0 and path, or -1 with err ("NAME: no such file, and not a
 * bundled distribution (...)"). */
int distname_resolve(const char *given, char *path, size_t len, struct dd_err *err);

#endif
