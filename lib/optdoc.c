/* optdoc.c - the roff for one option of a man page's OPTIONS section, shared by the three tools'
 * option tables (each table generates its own page at build time). */
#include "lib/optdoc.h"

void optdoc_man_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void optdoc_man_item(FILE *f, int short_opt, const char *name, const char *arg, const char *help, const char *def,
		     const char *tail)
{
	fputs(".TP\n", f);
	if (short_opt) {
		fprintf(f, "\\fB\\-%c\\fR", short_opt);
		if (name)
			fputs(", ", f);
	}
	if (name) {
		fputs("\\fB\\-\\-", f);
		optdoc_man_escape(f, name);
		fputs("\\fR", f);
	}
	if (arg) {
		fputs(" \\fI", f);
		optdoc_man_escape(f, arg);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	optdoc_man_escape(f, help);
	if (def) {
		fputs(" (default: ", f);
		optdoc_man_escape(f, def);
		fputc(')', f);
	}
	if (tail)
		fputs(tail, f);
	fputs(".\n", f);
}
