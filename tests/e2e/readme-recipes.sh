#!/bin/bash
# readme-recipes.sh - every recipe of README.md, of the man pages' EXAMPLES and of examples/ runs
# as written (scaled down by tests/e2e/recipes.py's documented convention: temporary paths, small
# sizes, short times; a scratch loop device for /dev/sdX). First the harness proves it catches a
# broken recipe: an option renamed in a copy of README.md, a promised output that is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is missing (apt-get install python3)"
mktmp /var/tmp
RECIPES=$top_srcdir/tests/e2e/recipes.py
[ -f "$top_builddir/dedisgen" ] && [ -f "$top_builddir/dedisengine" ] || fail "no dedisgen/dedisengine in $top_builddir"

# A scratch device for the recipes that name one (/dev/sdX): an empty 96 MiB loop device.
LOOP=""
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null 2>&1; then
	truncate -s 96M "$E2E_TMP/disk"
	if LOOP=$(losetup -f --show "$E2E_TMP/disk" 2>/dev/null); then
		on_exit "losetup -d '$LOOP'"
	else
		LOOP=""
		note "no loop device: the recipes that need one are skipped"
	fi
fi

# recipes WORKDIR ARGS...: the harness on its own temporary directory; output in $E2E_TMP/WORKDIR.out.
recipes() {
	local w=$1
	shift
	RC=0
	python3 "$RECIPES" --srcdir "$top_srcdir" --builddir "$top_builddir" --work "$E2E_TMP/$w" --loop "$LOOP" "$@" \
		>"$E2E_TMP/$w.out" 2>&1 || RC=$?
}

# 1. The harness itself. A Markdown file with four recipes: one that passes, one whose need is
#    absent (skipped, the reason printed), one whose promised output is missing (fails, named);
#    the fourth must not run (the first failure stops the run).
cat >"$E2E_TMP/self.md" <<'EOF'
## passes
<!-- expect: ^hello recipes$ -->
<!-- expect-file: made.txt -->
```sh
echo hello recipes && touch made.txt
```
## needs something absent
<!-- needs: cmd:no-such-program-dedis -->
```sh
exit 3
```
## promises what it does not print
<!-- expect: ^goodbye$ -->
```sh
echo hello
```
## never reached
```sh
touch reached
```
EOF
recipes self --doc "$E2E_TMP/self.md"
[ "$RC" -eq 1 ] || fail "self-test: a recipe missing its promised output exited $RC: $(cat "$E2E_TMP/self.out")"
grep -q '^ok   recipe .*"passes"' "$E2E_TMP/self.out" || fail "self-test: the passing recipe: $(cat "$E2E_TMP/self.out")"
grep -q '^SKIP recipe .*"needs something absent": needs the command no-such-program-dedis' "$E2E_TMP/self.out" ||
	fail "self-test: no skip reason printed: $(cat "$E2E_TMP/self.out")"
grep -q '^FAIL recipe .*self.md:[0-9]* "promises what it does not print": .*expect: \^goodbye\$' "$E2E_TMP/self.out" ||
	fail "self-test: the missing output is not named: $(cat "$E2E_TMP/self.out")"
[ ! -e "$E2E_TMP/self/reached" ] || fail "self-test: a recipe ran after the first failure"

# 2. Acceptance: rename an option in a copy of README.md (recipe 1's --json becomes --jsn); the
#    run fails naming that recipe. The README itself passes in 3.
broken=$E2E_TMP/README.md
sed '0,/ --json home.json/s// --jsn home.json/' "$top_srcdir/README.md" >"$broken"
cmp -s "$broken" "$top_srcdir/README.md" && fail "self-test: recipe 1's '--json home.json' is gone from README.md; update this test"
recipes broken --doc "$broken"
[ "$RC" -eq 1 ] || fail "a README with a renamed option exited $RC: $(tail -20 "$E2E_TMP/broken.out")"
grep -q '^FAIL recipe README.md:[0-9]* "1\. Extract a distribution from your own data, then replay it": exited 2' \
	"$E2E_TMP/broken.out" || fail "the broken recipe is not named: $(tail -20 "$E2E_TMP/broken.out")"
grep -q 'jsn' "$E2E_TMP/broken.out" || fail "the failure does not show the bad option: $(tail -20 "$E2E_TMP/broken.out")"
note "a renamed option fails: $(grep -m1 '^FAIL' "$E2E_TMP/broken.out")"

# 3. The real recipes, in order: README.md, the man pages' EXAMPLES, then every file of examples/.
docs=(--doc "$top_srcdir/README.md")
for m in "$top_srcdir"/man/*.[0-9].in; do docs+=(--doc "$m"); done
recipes real "${docs[@]}" --examples
cat "$E2E_TMP/real.out"
[ "$RC" -eq 0 ] || fail "a documented recipe fails (above); DEDIS_RECIPES_* in tests/e2e/recipes.py say how it was scaled"
grep -q '^recipes: [1-9][0-9]* ran' "$E2E_TMP/real.out" || fail "no recipe ran"
exit 0
