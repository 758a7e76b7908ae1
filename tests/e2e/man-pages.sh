#!/bin/bash
# Man pages: each renders without a single groff warning (`groff -wall`, as `man -l` would show
# them), has the sections the project promises, and names every long option its tool's --help
# prints (the OPTIONS sections are generated from the option tables; this catches a page that
# was not regenerated or a template that lost @OPTIONS@).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v groff >/dev/null 2>&1 || skip "groff is not installed (apt-get install groff-base)"
mktmp

pages=(dedisbench.1 dedisgen.1 dedisengine.1 dedis-dist.5)
tools=(dedisbench dedisgen dedisengine)
if [ -x "$top_builddir/dedisbench-mpi" ]; then # built where Open MPI is (configure --with-mpi)
	pages+=(dedisbench-mpi.1)
	tools+=(dedisbench-mpi)
fi
if [ -x "$top_builddir/dedisgen-mpi" ]; then
	pages+=(dedisgen-mpi.1)
	tools+=(dedisgen-mpi)
fi
for page in "${pages[@]}"; do
	src=$top_builddir/man/$page
	[ -f "$src" ] || make -C "$top_builddir" -s "man/$page" >/dev/null ||
		fail "cannot build man/$page"
	[ -s "$src" ] || fail "man/$page is empty"
	grep -q '@[A-Z]*@' "$src" && fail "man/$page has an unsubstituted placeholder: $(grep -o '@[A-Z]*@' "$src" | head -1)"
	LC_ALL=C.UTF-8 MANWIDTH=80 groff -wall -mandoc -Tutf8 -z "$src" 2>"$E2E_TMP/warn" ||
		fail "groff failed on man/$page: $(head -5 "$E2E_TMP/warn")"
	[ -s "$E2E_TMP/warn" ] && fail "groff warns on man/$page: $(head -5 "$E2E_TMP/warn")"
	# the rendered page, also checked for lines wider than the terminal (groff warns on most
	# overflows itself; a long unbreakable word is only visible here)
	LC_ALL=C.UTF-8 MANWIDTH=80 groff -wall -mandoc -Tutf8 -rLL=78n "$src" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' >"$E2E_TMP/$page.txt"
	for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
		[ "$page" = dedis-dist.5 ] && [ "$section" = "EXIT STATUS" ] && continue
		grep -q "^$section\$" "$E2E_TMP/$page.txt" || fail "man/$page has no $section section"
	done
	if command -v man >/dev/null 2>&1; then
		# man(1) itself, with its own warnings on (what lintian runs)
		LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_STDERR=1 man --warnings -E UTF-8 -l "$src" >/dev/null 2>"$E2E_TMP/warn" || true
		grep -v '^$' "$E2E_TMP/warn" >"$E2E_TMP/warn2" || true
		[ -s "$E2E_TMP/warn2" ] && fail "man --warnings -l man/$page: $(head -5 "$E2E_TMP/warn2")"
	fi
	note "man/$page renders cleanly"
done

# Every long option of --help appears in the page, as roff writes it (\-\-name).
for tool in "${tools[@]}"; do
	bin=$top_builddir/$tool
	[ -x "$bin" ] || fail "no $tool binary at $bin"
	"$bin" --help | grep -oE -- '(^|[ ,[])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u >"$E2E_TMP/$tool.opts"
	[ -s "$E2E_TMP/$tool.opts" ] || fail "$tool --help lists no long option"
	n=0
	while read -r opt; do
		roff=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
		grep -q -- "$roff" "$top_builddir/man/$tool.1" || fail "$tool --help has $opt but man/$tool.1 does not"
		n=$((n + 1))
	done <"$E2E_TMP/$tool.opts"
	note "$tool: all $n long options of --help are in its man page"
	# each group of options under one heading: a table row out of its group's place would start
	# the group again (--help and the page both print a heading where the group changes)
	dup=$("$bin" --help | grep -E '^[A-Z][A-Za-z/ -]*:$' | sort | uniq -d | head -1 || true)
	[ -z "$dup" ] || fail "$tool --help has the heading '$dup' twice: its option table's rows of that group are not together"
	dup=$(grep '^\.SS ' "$top_builddir/man/$tool.1" | sort | uniq -d | head -1 || true)
	[ -z "$dup" ] || fail "man/$tool.1 has '$dup' twice"
	# and the version in the page header is the tool's
	v=$("$bin" --version | awk '{print $2}')
	grep -q "^\.TH .*\"dedis $v\"" "$top_builddir/man/$tool.1" || fail "man/$tool.1 does not carry version $v"
done

# Every original DEDISbench key the INI reader translates (legacy_keys in bench/benchopts.c) is
# named in dedisbench(1)'s CONFIGURATION FILE, with its section.
keys=$(grep -oE '^\s*\{"(execution|results|structural)", "[a-z_]+"' "$top_srcdir/bench/benchopts.c" | sed -E 's/.*\{"([a-z]+)", "([a-z_]+)"/\1:\2/')
[ -n "$keys" ] || fail "no original DEDISbench keys found in bench/benchopts.c (legacy_keys): update this test"
page=$(sed -n '/^\.SH CONFIGURATION FILE/,/^\.SH /p' "$top_builddir/man/dedisbench.1" | sed 's/\\-/-/g; s/\\f[BIRP]//g')
for k in $keys; do
	grep -q "\\[${k%%:*}\\]" <<<"$page" || fail "dedisbench(1) CONFIGURATION FILE has no [${k%%:*}] section"
	grep -qw -- "${k#*:}" <<<"$page" || fail "dedisbench(1) CONFIGURATION FILE does not name the original key ${k#*:} ([${k%%:*}])"
done
note "dedisbench(1) names the $(printf '%s\n' $keys | wc -l) original DEDISbench keys"
