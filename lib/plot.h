/* plot.h - running the suite's gnuplot scripts: plots/NAME.gp is found through DEDIS_PLOTS_DIR,
 * the source tree or the installed data directory, and run as `gnuplot -c SCRIPT ARGS...`. */
#ifndef DEDIS_PLOT_H
#define DEDIS_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/errmsg.h"

/* 0 and the script's path, or -1 when no directory has plots/NAME (e.g. "dedisbench-latency.gp"). */
int plot_script(const char *name, char *path, size_t len);
/* gnuplot is on PATH. */
bool plot_gnuplot_available(void);
/* Run one script with its arguments (data files, output PNG, title...), gnuplot's stdout
 * silenced; png (one of the arguments: the temp file renamed to `shown` after) must then hold a
 * whole PNG: gnuplot exits 0 when its write failed (a full file system leaves it empty or cut
 * short). 0, or -1 with err filled. */
int plot_render(const char *name, const char *const *args, size_t nargs, const char *png, const char *shown,
		struct dd_err *err);

#endif
