#!/bin/bash
# The Debian package: build it with dpkg-buildpackage from a copy of the source tree (the tree
# itself stays clean), check what it installs, unpack it into a temporary root (dpkg -x) and run
# every installed tool from there: --version, then a short run that finds the bundled files in
# the unpacked /usr/share/dedis. Runs lintian on the .deb when it is installed: no errors.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (builds the Debian package)"
command -v dpkg-buildpackage >/dev/null 2>&1 || skip "dpkg-buildpackage is missing (apt-get install dpkg-dev)"
command -v dh >/dev/null 2>&1 || skip "debhelper is missing (apt-get install debhelper)"
[ -f "$top_srcdir/debian/control" ] || fail "no debian/control in $top_srcdir"
mktmp /var/tmp

# 1. A copy of the source: the files git knows (tracked or not ignored) in a checkout, the whole
#    tree otherwise (a release tarball), without any in-tree build's products.
src=$E2E_TMP/dedis
mkdir -p "$src"
if git -C "$top_srcdir" rev-parse --show-toplevel >/dev/null 2>&1 &&
	[ "$(git -C "$top_srcdir" rev-parse --show-toplevel)" = "$(cd "$top_srcdir" && pwd -P)" ]; then
	(cd "$top_srcdir" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
		tar --null --no-recursion -T - -cf -) | tar -xf - -C "$src"
else
	(cd "$top_srcdir" && tar --exclude=./build --exclude='./build-*' --exclude=./autom4te.cache -cf - .) |
		tar -xf - -C "$src"
	chmod -R u+w "$src"
	if [ -f "$src/Makefile" ]; then make -C "$src" -s distclean >/dev/null 2>&1 || true; fi
fi
note "source copied to $src ($(find "$src" -type f | wc -l) files)"

# 2. Build the binary package (no tests at build time: make check runs them).
(cd "$src" && dpkg-checkbuilddeps) 2>"$E2E_TMP/deps" || fail "missing build dependencies: $(cat "$E2E_TMP/deps")"
start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=${DEDIS_PACKAGE_JOBS:-2}" dpkg-buildpackage -us -uc -b) \
	>"$E2E_TMP/build.log" 2>&1 || fail "dpkg-buildpackage failed: $(tail -30 "$E2E_TMP/build.log")"
debs=("$E2E_TMP"/dedis_*.deb)
[ -f "${debs[0]}" ] || fail "dpkg-buildpackage left no dedis_*.deb in $E2E_TMP"
deb=${debs[0]}
note "built $(basename "$deb") in $(($(date +%s) - start)) s"

# 3. What it installs.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$E2E_TMP/contents"
for f in /usr/bin/dedisbench /usr/bin/dedisgen /usr/bin/dedisengine \
	/usr/share/dedis/distributions/{archival,personalfiles,highperf,kernels,ubuntuamd,kernel-trees}.dist \
	/usr/share/dedis/distributions/README.md \
	/usr/share/dedis/plots/{dedisbench-timeseries,dedisbench-latency,dedisbench-distribution,dedisbench-access,dedisgen-histogram,dedisgen-compare,dedisengine-stat}.gp \
	/usr/share/man/man1/{dedisbench,dedisgen,dedisengine}.1.gz /usr/share/man/man5/dedis-dist.5.gz \
	/usr/share/bash-completion/completions/{dedisbench,dedisgen,dedisengine} \
	/usr/share/doc/dedis/copyright /usr/share/doc/dedis/README.md.gz /usr/share/doc/dedis/examples/dedisbench.ini; do
	grep -qxF "$f" "$E2E_TMP/contents" || fail "the package does not install $f"
done
for f in "$src"/plots/*.gp; do
	grep -qxF "/usr/share/dedis/plots/$(basename "$f")" "$E2E_TMP/contents" || fail "plots/$(basename "$f") is not packaged"
done
# debian/copyright attributes each bundled distribution to whoever made it: the files whose
# '# source:' names DEDISbench come under its 'Files: distributions/*.dist' stanza (GPL-2, Paulo
# et al.); any other (dedis's own, kernel-trees) needs a stanza of its own naming it.
grep -qx 'Files: distributions/\*.dist' "$src/debian/copyright" || fail "debian/copyright has no stanza for the DEDISbench distributions"
for f in "$src"/distributions/*.dist; do
	grep -q '^# source: DEDISbench' "$f" && continue
	grep -qx "Files: distributions/$(basename "$f")" "$src/debian/copyright" ||
		fail "distributions/$(basename "$f") is not DEDISbench's ($(grep -m1 '^# source:' "$f" | cut -c1-60)) but debian/copyright attributes it to DEDISbench's authors"
done
dpkg-deb -f "$deb" Depends | grep -q libjansson || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Recommends | grep -q gnuplot || fail "gnuplot is not recommended"
# the completions are loaded only by bash-completion
dpkg-deb -f "$deb" Recommends | grep -qw bash-completion || fail "bash-completion is not recommended: $(dpkg-deb -f "$deb" Recommends)"
# dedisbench-mpi and dedisgen-mpi ship in dedis-mpi: the base package does not pull in Open MPI
dpkg-deb -f "$deb" Depends | grep -qi mpi && fail "dedis depends on MPI: $(dpkg-deb -f "$deb" Depends)"
grep -q mpi "$E2E_TMP/contents" && fail "dedis installs MPI files: $(grep mpi "$E2E_TMP/contents")"
mpi_debs=("$E2E_TMP"/dedis-mpi_*.deb)
[ -f "${mpi_debs[0]}" ] || fail "dpkg-buildpackage left no dedis-mpi_*.deb"
dpkg-deb -c "${mpi_debs[0]}" >"$E2E_TMP/mpi-contents"
grep -q '/usr/bin/dedisbench-mpi$' "$E2E_TMP/mpi-contents" || fail "dedis-mpi does not install dedisbench-mpi"
grep -q 'man1/dedisbench-mpi.1.gz$' "$E2E_TMP/mpi-contents" || fail "dedis-mpi has no man page"
grep -q '/usr/bin/dedisgen-mpi$' "$E2E_TMP/mpi-contents" || fail "dedis-mpi does not install dedisgen-mpi"
grep -q 'man1/dedisgen-mpi.1.gz$' "$E2E_TMP/mpi-contents" || fail "dedis-mpi has no dedisgen-mpi man page"
dpkg-deb -f "${mpi_debs[0]}" Depends | grep -q libopenmpi || fail "dedis-mpi lacks Open MPI: $(dpkg-deb -f "${mpi_debs[0]}" Depends)"

# README's recipe 6 installs every package the build made: each .deb (but -dbgsym) is matched by one of the
# ../NAME_*.deb its apt install lines name (run in the source tree, ../ is where they are).
grep -E '(^|&& )apt install \.\./' "$src/README.md" | grep -oE '\.\./[^ ]+\.deb' | sed 's|^\.\./||' >"$E2E_TMP/readme-debs"
[ -s "$E2E_TMP/readme-debs" ] || fail "README.md has no 'apt install ../NAME_*.deb' line"
for f in "$E2E_TMP"/*.deb; do
	case $f in *-dbgsym_*) continue ;; esac # debug symbols: for whoever wants them, not the README
	found=
	while IFS= read -r glob; do
		# shellcheck disable=SC2053 # the README's word is a glob on purpose
		[[ $(basename "$f") == $glob ]] && found=$glob
	done <"$E2E_TMP/readme-debs"
	[ -n "$found" ] || fail "README.md never says how to install $(basename "$f") (its apt install lines: $(tr '\n' ' ' <"$E2E_TMP/readme-debs"))"
done
note "README installs $(tr '\n' ' ' <"$E2E_TMP/readme-debs")"

# 4. Unpacked in a temporary root, every tool runs from there.
root=$E2E_TMP/root
dpkg -x "$deb" "$root"
for tool in dedisbench dedisgen dedisengine; do
	bin=$root/usr/bin/$tool
	v=$("$bin" --version) || fail "$tool --version failed"
	[[ $v == "$tool "* ]] || fail "$tool --version printed '$v'"
	# the build directory's path is not compiled in (--disable-source-tree-lookup)
	grep -qF "$src" "$bin" && fail "$tool holds the build path $src"
	note "$v"
done
cd "$E2E_TMP"
export DEDIS_DISTDIR=$root/usr/share/dedis/distributions DEDIS_PLOTS_DIR=$root/usr/share/dedis/plots
"$root/usr/bin/dedisbench" --target null --size 64MiB --dist kernels --procs 2 --json bench.json -q ||
	fail "installed dedisbench --target null --dist kernels failed"
jcheck bench.json '.status == "ok" and .totals.ops > 0' "installed dedisbench: no operations"
"$root/usr/bin/dedisbench" --target "$E2E_TMP" --file-size 4MiB --procs 2 --size 8MiB --dist personalfiles -q ||
	fail "installed dedisbench on a directory failed"
if [ ! -e /usr/share/dedis/distributions/kernels.dist ]; then
	# without DEDIS_DISTDIR the installed binary looks in /usr/share/dedis only, not in a tree
	rc=0
	env -u DEDIS_DISTDIR "$root/usr/bin/dedisbench" --target null --size 1MiB --dist kernels -q 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "installed dedisbench found 'kernels' outside /usr/share/dedis (exit $rc)"
fi

head -c 1M /dev/urandom >data.bin
cat data.bin data.bin >>data2.bin
"$root/usr/bin/dedisgen" data2.bin -q -o data.dist || fail "installed dedisgen failed"
grep -qx '1 256' data.dist || fail "installed dedisgen: expected '1 256' in $(cat data.dist)"
"$root/usr/bin/dedisgen" show data.dist >/dev/null || fail "installed dedisgen show failed"

"$root/usr/bin/dedisengine" format vol --size 16MiB -q || fail "installed dedisengine format failed"
"$root/usr/bin/dedisengine" import vol data2.bin -q || fail "installed dedisengine import failed"
"$root/usr/bin/dedisengine" stat vol --json >stat.json || fail "installed dedisengine stat failed"
jcheck stat.json '.mapped_blocks == 512 and .referenced_blocks == 256' "installed dedisengine: wrong counts"

if command -v gnuplot >/dev/null 2>&1; then
	"$root/usr/bin/dedisgen" show data.dist --plot hist.png >/dev/null || fail "installed dedisgen --plot failed"
	[ -s hist.png ] || fail "installed dedisgen --plot wrote no PNG"
fi
if command -v man >/dev/null 2>&1; then
	for page in man1/dedisbench.1 man1/dedisgen.1 man1/dedisengine.1 man5/dedis-dist.5; do
		MANWIDTH=80 man -l "$root/usr/share/man/$page.gz" 2>&1 >/dev/null | grep . &&
			fail "installed man page $page renders with warnings"
	done
fi
note "installed tools run from $root"

# 5. lintian: no errors (warnings are explained in debian/README.source).
if command -v lintian >/dev/null 2>&1; then
	# lintian's ELF caches (mldbm-elf-*) are left in TMPDIR: its own, removed with E2E_TMP
	mkdir -p "$E2E_TMP/lintian-tmp"
	TMPDIR=$E2E_TMP/lintian-tmp lintian --fail-on error "$deb" "${mpi_debs[0]}" >"$E2E_TMP/lintian" 2>&1 || fail "lintian: $(grep '^E:' "$E2E_TMP/lintian" | head -10)"
	note "lintian: $(grep -c '^[EW]:' "$E2E_TMP/lintian" || true) errors and warnings"
	sed 's/^/# /' "$E2E_TMP/lintian"
fi
