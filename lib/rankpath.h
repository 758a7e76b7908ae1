/* rankpath.h - a path of one MPI rank (dedisbench-mpi, dedisgen-mpi): %r the rank's number,
 * %h its host name, %% a percent sign, substituted in the path every rank was given. */
#ifndef DEDIS_RANKPATH_H
#define DEDIS_RANKPATH_H

#include "lib/errmsg.h"

/* Replaces *path (malloc'd; NULL or without '%': left as it is) by its substitution. 0, or -1
 * with err filled (an unknown '%x', too long, out of memory). */
int rank_path_substitute(char **path, int rank, struct dd_err *err);

#endif
