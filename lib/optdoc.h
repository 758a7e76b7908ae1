/* optdoc.h - writing one option-table row as a man page item (roff) and as a --help line; every
 * tool's table goes through these, so the manuals and --help read alike. */
#ifndef DEDIS_OPTDOC_H
#define DEDIS_OPTDOC_H

#include <stdio.h>

/* Text with roff's '-' and '\' escaped. */
void optdoc_man_escape(FILE *f, const char *s);
/* ".TP", the option (short letter and/or long name, metavariable), its help, "(default: DEF)"
 * when def is given, then `tail` verbatim (already roff, may be NULL) and the closing period. */
void optdoc_man_item(FILE *f, int short_opt, const char *name, const char *arg, const char *help, const char *def,
		     const char *tail);

#endif
