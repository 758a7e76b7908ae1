#!/bin/bash
# cli-defaults.sh - no surprises from defaults: a bare dedisbench prints its usage and writes
# nothing (the current directory only with --target .); the block size comes from the
# distribution file unless -b says otherwise, and a -b that differs from it is refused;
# dedisgen show/compare take bundled distribution names as dedisbench --dist does; an unknown
# option names the nearest one in all three tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
SRC=$(cd "$top_srcdir" && pwd)
W=$E2E_TMP/cwd
mkdir "$W"
cd "$W"

# one_line_2 WHAT WANT CMD...: CMD exits 2 with one stderr line holding WANT, writing nothing here.
one_line_2() {
	local what=$1 want=$2 rc=0
	shift 2
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -qF -- "$want" "$E2E_TMP/err" ||
		fail "$what: exit $rc, want 2 and one line with '$want': $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$W")" ] || fail "$what wrote $(ls -A "$W")"
}

# 1. No target, no run.
rc=0
"$DEDISBENCH" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "a bare dedisbench exited $rc, want 2"
grep -q '^Usage: dedisbench --target PATH' "$E2E_TMP/err" && grep -q -- '--target \.\|(\. for the current one)' "$E2E_TMP/err" ||
	fail "a bare dedisbench printed no usage: $(cat "$E2E_TMP/err")"
[ "$(wc -l <"$E2E_TMP/err")" -le 10 ] || fail "a bare dedisbench's usage is not short: $(cat "$E2E_TMP/err")"
[ -z "$(ls -A "$W")" ] || fail "a bare dedisbench wrote $(ls -A "$W")"
one_line_2 "options without --target" "no target: give --target PATH" "$DEDISBENCH" --procs 1 --file-size 1MiB
one_line_2 "suite without --target" "no target" "$DEDISBENCH" suite --output-dir "$E2E_TMP/s"
printf '[run]\nprocs = 1\nfile-size = 1MiB\n' >"$E2E_TMP/notarget.ini"
one_line_2 "a job file naming no target" "no target" "$DEDISBENCH" -f "$E2E_TMP/notarget.ini"
# asked for: the current directory, and a job file's target
"$DEDISBENCH" --target . --procs 1 --file-size 1MiB --keep -q || fail "--target . exited $?"
[ -f "$W/dedisbench.0" ] || fail "--target . wrote no dedisbench.0 here: $(ls -A "$W")"
rm -f "$W/dedisbench.0"
printf '[run]\ntarget = %s\nprocs = 1\nfile-size = 1MiB\n' "$E2E_TMP" >"$E2E_TMP/job.ini"
"$DEDISBENCH" -f "$E2E_TMP/job.ini" --json "$E2E_TMP/job.json" -q || fail "a job file's target: exit $?"
jcheck "$E2E_TMP/job.json" ".config.target == \"$E2E_TMP\""

# 2. The block size the distribution was extracted at.
printf '# block-size: 8192\n# hash: sha1\n0 100\n1 20\n' >"$E2E_TMP/b8.dist"
printf '0 100\n1 20\n' >"$E2E_TMP/plain.dist" # the original DEDISbench format: no block size
common=(--target null --procs 1 --file-size 1MiB -q)
"$DEDISBENCH" "${common[@]}" --dist "$E2E_TMP/b8.dist" --json "$E2E_TMP/b8.json" || fail "a run of b8.dist exited $?"
jcheck "$E2E_TMP/b8.json" '.config.block_size == 8192' "no -b: the file's block size" '.config.block_size'
"$DEDISBENCH" "${common[@]}" --dist "$E2E_TMP/b8.dist" -b 8KiB || fail "-b equal to the file's exited $?"
one_line_2 "-b 4096 on a distribution of 8 KiB blocks" \
	"--block-size 4096: --dist $E2E_TMP/b8.dist was extracted at 8192-byte blocks" \
	"$DEDISBENCH" "${common[@]}" --dist "$E2E_TMP/b8.dist" -b 4096
printf '[run]\ndist = %s\nblock-size = 512\n' "$E2E_TMP/b8.dist" >"$E2E_TMP/b.ini"
one_line_2 "a job file's block-size against the distribution's" "extracted at 8192-byte blocks" \
	"$DEDISBENCH" "${common[@]}" -f "$E2E_TMP/b.ini"
one_line_2 "-b 512 on a bundled distribution (4 KiB)" "--dist personalfiles was extracted at 4096-byte blocks" \
	"$DEDISBENCH" "${common[@]}" -b 512
"$DEDISBENCH" "${common[@]}" --dist "$E2E_TMP/plain.dist" -b 512 --json "$E2E_TMP/p.json" ||
	fail "-b 512 on a file without a block size exited $?"
jcheck "$E2E_TMP/p.json" '.config.block_size == 512'
"$DEDISBENCH" "${common[@]}" --dist "$E2E_TMP/plain.dist" --json "$E2E_TMP/p.json" || fail "plain.dist exited $?"
jcheck "$E2E_TMP/p.json" '.config.block_size == 4096' "no -b, no block size in the file: 4096"

# 3. dedisgen resolves bundled names as dedisbench does (here: no such file in the directory).
"$DEDISGEN" show kernel-trees >"$E2E_TMP/show.txt" || fail "dedisgen show kernel-trees exited $?"
head -1 "$E2E_TMP/show.txt" | grep -qx kernel-trees || fail "show names it as given: $(head -2 "$E2E_TMP/show.txt")"
grep -q 'block size 4096' "$E2E_TMP/show.txt" || fail "show kernel-trees: $(head -3 "$E2E_TMP/show.txt")"
"$DEDISGEN" compare kernels "$SRC/distributions/kernels.dist" --max-diff 0 >/dev/null ||
	fail "compare of kernels with its own file exited $?"
one_line_2 "show of no file nor bundled name" "kernelz: no such file, and not a bundled distribution" \
	"$DEDISGEN" show kernelz

# 4. An unknown option: the nearest one, in every tool; nothing when none is close.
one_line_2 "dedisbench --porcs" "unknown option '--porcs' (did you mean --procs?)" "$DEDISBENCH" --porcs 2 -T null
one_line_2 "dedisbench --blocksize" "(did you mean --block-size?)" "$DEDISBENCH" --blocksize=4096 -T null
one_line_2 "dedisgen --therads" "(did you mean --threads?)" "$DEDISGEN" --therads 2 "$E2E_TMP"
one_line_2 "dedisengine --quite" "(did you mean --quiet?)" "$DEDISENGINE" stat --quite "$E2E_TMP/vol"
one_line_2 "dedisbench --xyzzy" "unknown option '--xyzzy' (see --help)" "$DEDISBENCH" --xyzzy -T null
printf '[run]\ntarget = null\nprocz = 2\n' >"$E2E_TMP/typo.ini"
one_line_2 "a job file's procz" "unknown key 'procz' in [run] (did you mean procs?)" "$DEDISBENCH" -f "$E2E_TMP/typo.ini"
note "no target no run; block size from the distribution; bundled names in dedisgen; nearest options"
