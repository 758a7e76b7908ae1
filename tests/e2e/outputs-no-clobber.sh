#!/bin/bash
# Every file the tools write is created, never written through (issue 12): a symbolic link or a
# hard link planted under an output's name - the JSON, --output-dir's CSVs, time series,
# latency logs and plots, --dist-report, --access-report, compare's CSV and plots, dedisgen's
# distribution, JSON and plot, dedisengine export and stat --plot - is replaced by the new file
# and the file it pointed at is left as it was; a --ledger name holding anything but a ledger is refused (exit 2); /dev/null,
# a FIFO and a descriptor's name (/dev/stdout into a file) are still written through, and a block
# device is never a report.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
O=$E2E_TMP/o
mkdir "$O" "$E2E_TMP/t"
printf 'precious\n' >"$E2E_TMP/victim"
cp "$E2E_TMP/victim" "$E2E_TMP/victim.orig"
ln "$E2E_TMP/victim" "$E2E_TMP/hard" # a second name of the victim

plant() { # plant NAME...: each a link to the victim (odd: symbolic, even: hard)
	local i=0 f
	for f in "$@"; do
		rm -f "$f"
		if ((i++ % 2)); then ln "$E2E_TMP/victim" "$f"; else ln -s "$E2E_TMP/victim" "$f"; fi
	done
}
replaced() { # replaced LABEL NAME...: each a regular file of its own now; the victim intact
	local label=$1 f
	shift
	cmp -s "$E2E_TMP/victim" "$E2E_TMP/victim.orig" || fail "$label: the victim was written through a link"
	for f in "$@"; do
		[ -f "$f" ] && [ ! -L "$f" ] || fail "$label: $f is not a regular file"
		[ "$(stat -c %i "$f")" != "$(stat -c %i "$E2E_TMP/victim")" ] || fail "$label: $f is still the victim"
	done
}

# dedisbench: JSON, reports, and everything --output-dir holds (plots when gnuplot is there)
plot=()
command -v gnuplot >/dev/null && plot=(--plot)
files=("$O/r.json" "$O/live.dist" "$O/access.txt" "$O/d/timeseries.csv" "$O/d/latency-percentiles.csv"
	"$O/d/dist-buckets.csv" "$O/d/access-frequency.csv" "$O/d/latency.0.csv" "$O/d/latency.1.csv")
((${#plot[@]})) && files+=("$O/d/timeseries.png" "$O/d/latency.png" "$O/d/distribution.png" "$O/d/access.png")
mkdir "$O/d"
plant "${files[@]}"
expect_ok --target "$E2E_TMP/t" --procs 2 --file-size 1MiB --rate 400 --time 2s -q --json "$O/r.json" \
	--dist-report "$O/live.dist" --access-report "$O/access.txt" --output-dir "$O/d" --latency-log "${plot[@]}"
replaced "dedisbench outputs" "${files[@]}"
[ -s "$O/r.json" ] && jq -e '.status == "ok"' "$O/r.json" >/dev/null || fail "the JSON written over a link is wrong"
grep -q '^time_s,' "$O/d/timeseries.csv" || fail "the time series written over a link is wrong"

# dedisbench compare: compare.csv and its plots (it wrote the CSV through a link with fopen, and
# gnuplot the PNGs under their names)
cfiles=("$O/c/compare.csv")
((${#plot[@]})) && cfiles+=("$O/c/compare-iops.png" "$O/c/compare-latency.png" "$O/c/compare-saved.png")
mkdir "$O/c"
plant "${cfiles[@]}"
expect_ok compare "$O/r.json" "$O/r.json" --output-dir "$O/c" "${plot[@]}"
replaced "dedisbench compare outputs" "${cfiles[@]}"
[ "$(wc -l <"$O/c/compare.csv")" -eq 2 ] || fail "compare.csv written over a link is wrong"

# --ledger: a link or a file that is not a ledger is refused, untouched
plant "$O/ledger"
run_bench --target "$E2E_TMP/t" --procs 2 --file-size 1MiB -q --ledger "$O/ledger"
[ "$RC" -eq 2 ] || fail "--ledger through a symbolic link: exit $RC, want 2"
grep -q "symbolic link" "$E2E_TMP/err" || fail "stderr: $(cat "$E2E_TMP/err")"
printf 'notes\n' >"$O/notes"
run_bench --target "$E2E_TMP/t" --procs 2 --file-size 1MiB -q --ledger "$O/notes"
[ "$RC" -eq 2 ] || fail "--ledger over a text file: exit $RC, want 2"
grep -q "not a dedisbench ledger" "$E2E_TMP/err" || fail "stderr: $(cat "$E2E_TMP/err")"
[ "$(cat "$O/notes")" = notes ] || fail "the refused ledger changed the file"
replaced "--ledger"

# dedisgen: distribution, JSON, plot
mkdir "$E2E_TMP/data"
head -c 200000 /dev/urandom >"$E2E_TMP/data/a"
gfiles=("$O/g.dist" "$O/g.json")
gplot=()
((${#plot[@]})) && gfiles+=("$O/g.png") && gplot=(--plot "$O/g.png")
plant "${gfiles[@]}"
"$DEDISGEN" "$E2E_TMP/data" -o "$O/g.dist" --json "$O/g.json" "${gplot[@]}" -q || fail "dedisgen failed"
replaced "dedisgen outputs" "${gfiles[@]}"

# dedisengine: export, stat --plot
"$DEDISENGINE" format "$E2E_TMP/vol" --size 1MiB -q
"$DEDISENGINE" import "$E2E_TMP/vol" "$E2E_TMP/data/a" -q
efiles=("$O/image")
((${#plot[@]})) && efiles+=("$O/vol.png")
plant "${efiles[@]}"
"$DEDISENGINE" export "$E2E_TMP/vol" "$O/image" -q || fail "export failed"
((${#plot[@]})) && { "$DEDISENGINE" stat "$E2E_TMP/vol" --plot "$O/vol.png" >/dev/null || fail "stat --plot failed"; }
replaced "dedisengine outputs" "${efiles[@]}"
cmp -s -n 200000 "$E2E_TMP/data/a" "$O/image" || fail "the exported image is wrong"

# through to /dev/null and a FIFO, as before; a block device (if any) is never a report
expect_ok --target null --procs 1 --file-size 1MiB -q --json /dev/null
"$DEDISGEN" "$E2E_TMP/data" -o /dev/null -q || fail "dedisgen -o /dev/null"
# two outputs written in place may share it (no temp file to collide; it said "the same file")
"$DEDISGEN" "$E2E_TMP/data" -o /dev/null --json /dev/null -q || fail "dedisgen -o /dev/null --json /dev/null"
[ -c /dev/null ] || fail "/dev/null was replaced"
mkfifo "$E2E_TMP/fifo"
cat "$E2E_TMP/fifo" >"$E2E_TMP/fifo.out" &
expect_ok --target null --procs 1 --file-size 1MiB -q --json "$E2E_TMP/fifo"
wait
[ -s "$E2E_TMP/fifo.out" ] && jq -e '.totals.ops == 256' "$E2E_TMP/fifo.out" >/dev/null || fail "the JSON through the FIFO is wrong"
# ... also for a user who cannot write /dev (everyone but root): --json /dev/null was refused
# there ("directory /dev is not writable", exit 2), as if a temp file were to be made beside it
# (root runs it as nobody, who needs to run the binary and read a distribution: it gets a copy of
# its own, as the bundled ones of a clone under a private home such as /root are out of its reach)
asuser=() user_dist=$E2E_TMP/pub/personalfiles.dist user_why=
mkdir "$E2E_TMP/pub"
cp "$top_srcdir/distributions/personalfiles.dist" "$user_dist"
chmod 711 "$E2E_TMP" && chmod 755 "$E2E_TMP/pub" && chmod 644 "$user_dist"
if [ "$(id -u)" -eq 0 ]; then
	as65534=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	if ! command -v setpriv >/dev/null; then
		user_why="no setpriv to run as a second user"
	elif ! "${as65534[@]}" "$DEDISBENCH" --version >/dev/null 2>&1; then
		user_why="user 65534 (nobody) cannot run $DEDISBENCH (a build under a private home such as /root?)"
	elif ! "${as65534[@]}" test -r "$user_dist"; then
		user_why="user 65534 (nobody) cannot read $user_dist (a private TMPDIR?)"
	else
		asuser=("${as65534[@]}")
	fi
fi
if [ -n "$user_why" ]; then
	note "--json /dev/null and /dev/stdout as a user: not tried: $user_why"
else
	"${asuser[@]}" "$DEDISBENCH" --target null --procs 1 --file-size 1MiB --dist "$user_dist" -q --json /dev/null 2>"$E2E_TMP/err" ||
		fail "--json /dev/null as a user: $(cat "$E2E_TMP/err")"
	"${asuser[@]}" "$DEDISBENCH" --target null --procs 1 --file-size 1MiB --dist "$user_dist" -q --json /dev/stdout 2>"$E2E_TMP/err" |
		cat >"$E2E_TMP/user.json" || fail "--json /dev/stdout into a pipe as a user: $(cat "$E2E_TMP/err")"
	[ -s "$E2E_TMP/user.json" ] && jq -e '.totals.ops == 256' "$E2E_TMP/user.json" >/dev/null || fail "--json /dev/stdout into a pipe as a user: $(cat "$E2E_TMP/err")"
fi
# export through a FIFO and a pipe (export /dev/stdout | gzip): written in order, not at each
# block's offset (refused with "Illegal seek" after the volume was opened)
cat "$E2E_TMP/fifo" >"$E2E_TMP/fifo.out" &
"$DEDISENGINE" export "$E2E_TMP/vol" "$E2E_TMP/fifo" -q || fail "export through a FIFO exited $?"
wait
cmp -s "$E2E_TMP/fifo.out" "$O/image" || fail "the image exported through a FIFO is wrong"
"$DEDISENGINE" export "$E2E_TMP/vol" /dev/stdout -q | cat >"$E2E_TMP/pipe.out" || fail "export to a pipe failed"
cmp -s "$E2E_TMP/pipe.out" "$O/image" || fail "the image exported to a pipe is wrong"
# A name of one of the process's own descriptors - /dev/stdout, here a link of our own to
# /proc/self/fd/1 so that nothing shared is at stake - with standard output redirected to a file:
# written through to the descriptor, the link left. It was taken for a link to replace: the output
# went to a temp file renamed over the link (as root: /dev/stdout itself became a regular file,
# for every process on the machine), standard output stayed empty, the exit status 0; not as
# root, /dev/stdout.tmp.PID could not be created (exit 2).
ln -s /proc/self/fd/1 "$E2E_TMP/fd1"
through_fd1() { # through_fd1 LABEL CHECK: the link is still one, CHECK holds on what fd 1 got
	[ -L "$E2E_TMP/fd1" ] || fail "$1: the link to /proc/self/fd/1 was replaced"
	[ -s "$E2E_TMP/fd1.out" ] && eval "$2" || fail "$1: standard output did not get the output"
	[ -z "$(find "$E2E_TMP" -maxdepth 1 -name 'fd1.tmp*')" ] || fail "$1: a temp file was left"
}
"$DEDISGEN" "$E2E_TMP/data" -o "$O/fd.dist" --json "$E2E_TMP/fd1" -q >"$E2E_TMP/fd1.out" ||
	fail "dedisgen --json through a descriptor's name exited $?"
through_fd1 "dedisgen --json" 'jq -e ".results[0].blocks > 0" "$E2E_TMP/fd1.out" >/dev/null'
"$DEDISGEN" "$E2E_TMP/data" -q -o "$E2E_TMP/fd1" >"$E2E_TMP/fd1.out" || fail "dedisgen -o through a descriptor's name exited $?"
through_fd1 "dedisgen -o" 'cmp -s "$E2E_TMP/fd1.out" "$O/fd.dist"'
# (the summary first, then the JSON: written through the same offset, neither overwrites the other)
"$DEDISBENCH" --target null --procs 1 --file-size 1MiB --json "$E2E_TMP/fd1" >"$E2E_TMP/fd1.out" ||
	fail "dedisbench --json through a descriptor's name exited $?"
through_fd1 "dedisbench --json" 'grep -q "^dedisbench: " "$E2E_TMP/fd1.out" &&
	sed -n "/^{/,\$p" "$E2E_TMP/fd1.out" | jq -e ".totals.ops == 256" >/dev/null'
"$DEDISENGINE" export "$E2E_TMP/vol" "$E2E_TMP/fd1" -q >"$E2E_TMP/fd1.out" ||
	fail "dedisengine export through a descriptor's name exited $?"
through_fd1 "dedisengine export" 'cmp -s "$E2E_TMP/fd1.out" "$O/image"'
# a --plot there is refused up front (gnuplot's PNG is renamed into place), the link left
if ((${#plot[@]})); then
	rc=0
	"$DEDISGEN" show "$O/fd.dist" --plot "$E2E_TMP/fd1" >"$E2E_TMP/fd1.out" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && [ ! -s "$E2E_TMP/fd1.out" ] || fail "show --plot through a descriptor's name: exit $rc, want 2 before any output"
	[ -L "$E2E_TMP/fd1" ] || fail "show --plot: the link to /proc/self/fd/1 was replaced"
fi

blk=$(find /dev -maxdepth 1 -type b -name 'loop*' 2>/dev/null | head -1 || true)
if [ -n "$blk" ]; then
	# bad input, refused before the run (it once ran whole, then failed writing the report: exit 1)
	for opt in --json --dist-report --access-report; do
		run_bench --target "$E2E_TMP/t" --procs 1 --file-size 1MiB "$opt" "$blk"
		[ "$RC" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] &&
			grep -q -- "$opt $blk is a block device; a report is written to a file" "$E2E_TMP/err" ||
			fail "$opt on a block device: exit $RC, want 2 before the run: $(cat "$E2E_TMP/err")"
		[ ! -s "$E2E_TMP/out" ] || fail "$opt on a block device: the run went ahead: $(cat "$E2E_TMP/out")"
	done
	if ((${#plot[@]})); then
		rc=0
		"$DEDISENGINE" stat "$E2E_TMP/vol" --plot "$blk" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "stat: --plot $blk is a block device" "$E2E_TMP/err" ||
			fail "dedisengine stat --plot on a block device: exit $rc, want 2: $(cat "$E2E_TMP/err")"
	fi
fi
[ -f "$E2E_TMP/hard" ] && cmp -s "$E2E_TMP/hard" "$E2E_TMP/victim.orig" || fail "the victim's other name changed"

# A report never replaces the run's own data (reports are renamed into place): naming the target
# file, a worker file of a directory target or anything inside an engine volume is refused up
# front (exit 2, one line, the target untouched), and so is a report path that is a directory.
refused_output() { # refused_output WANT ARGS...
	local want=$1
	shift
	run_bench "$@"
	[ "$RC" -eq 2 ] || fail "dedisbench $*: exit $RC, want 2; stderr: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q -- "$want" "$E2E_TMP/err" ||
		fail "dedisbench $*: want one line with '$want', got: $(cat "$E2E_TMP/err")"
}
T=$E2E_TMP/t
expect_ok --target "$T" --procs 1 --file-size 1MiB -q --keep
cp "$T/dedisbench.0" "$E2E_TMP/w0.orig"
for out in --json --dist-report --access-report --ledger; do
	refused_output "is a worker file of the target" --target "$T" --procs 1 --file-size 1MiB -q "$out" "$T/dedisbench.0"
	cmp -s "$T/dedisbench.0" "$E2E_TMP/w0.orig" || fail "$out naming a worker file changed it"
	refused_output "is the target" --target "$T/dedisbench.0" --procs 1 -q "$out" "$T/dedisbench.0"
	cmp -s "$T/dedisbench.0" "$E2E_TMP/w0.orig" || fail "$out naming the target file replaced it"
done
refused_output "--json $O is a directory" --target "$T" --procs 1 --file-size 1MiB -q --json "$O"
V=$E2E_TMP/vol
expect_ok --target "engine:$V" --procs 1 --file-size 1MiB -q --keep --force # it holds the import above
cp "$V/superblock" "$E2E_TMP/sb.orig"
refused_output "is inside the engine volume" --target "engine:$V" --procs 1 --file-size 1MiB -q --json "$V/superblock"
refused_output "is inside the engine volume" --target "engine:$V" --procs 1 --file-size 1MiB -q --output-dir "$V"
cmp -s "$V/superblock" "$E2E_TMP/sb.orig" || fail "a report naming the volume's superblock replaced it"
"$DEDISENGINE" fsck "$V" >/dev/null || fail "the volume is damaged after the refused runs"

# Nor a file the run reads, nor another output: the --dist file, the -f file, the trace, an
# existing --ledger, two reports under one name, a report among --output-dir's files, an input
# among them (a scaled-target.dist replayed into its own directory). Each once ran to exit 0 with
# the input or the first report replaced. replay and backup check their JSON the same way (and its
# directory: a JSON that cannot be written once showed only after the run, exit 1).
I=$E2E_TMP/in
mkdir "$I"
cp "$(dirname "$0")/../../distributions/kernels.dist" "$I/k.dist"
printf '[dedisbench]\nprocs = 1\nfile-size = 1MiB\n' >"$I/run.ini"
cp "$(dirname "$0")/../../examples/fiu-sample.trace" "$I/t.trace"
expect_ok --target "$T" --procs 1 --file-size 1MiB -q --keep --ledger "$I/ledger" --output-dir "$I/out"
cp "$I/out/scaled-target.dist" "$I/out/timeseries.csv" "$I/ledger" "$E2E_TMP"/ # the originals
( cd "$I" && md5sum k.dist run.ini t.trace ledger out/scaled-target.dist out/timeseries.csv >"$E2E_TMP/in.md5" )
common=(--target "$T" --procs 1 --file-size 1MiB -q --keep)
refused_output "is the --dist file the run reads" "${common[@]}" --dist "$I/k.dist" --dist-report "$I/k.dist"
refused_output "is the --dist file the run reads" "${common[@]}" --dist "$I/k.dist" --json "$I/../in/k.dist"
refused_output "is the --config file the run reads" --target "$T" -f "$I/run.ini" -q --keep --json "$I/run.ini"
refused_output "is the --ledger file the run reads" "${common[@]}" --ledger "$I/ledger" --json "$I/ledger"
refused_output "both name" "${common[@]}" --ledger "$I/new.ledger" --json "$I/new.ledger"
refused_output "both name" "${common[@]}" --json "$I/r.json" --access-report "$I/r.json"
refused_output "is a file --output-dir" "${common[@]}" --output-dir "$I/out" --json "$I/out/timeseries.csv"
refused_output "is a file --output-dir" "${common[@]}" --output-dir "$I/out" --dist "$I/out/scaled-target.dist"
ln -s "$I/out/scaled-target.dist" "$I/scaled.link"
refused_output "is a file --output-dir" "${common[@]}" --output-dir "$I/out" --dist "$I/scaled.link"
refused_output "is the --trace file the run reads" replay "$I/t.trace" --target "$T" -q --keep --json "$I/t.trace"
refused_output "is a worker file of the target" --workload backup --target "$T" --procs 1 --generations 2 \
	--file-size 1MiB -q --keep --json "$T/dedisbench.1"
refused_output "No such file" replay "$I/t.trace" --target "$T" -q --keep --json "$I/nodir/r.json"
( cd "$I" && md5sum -c --quiet "$E2E_TMP/in.md5" ) || fail "a refused run changed an input or a report"
[ ! -e "$I/r.json" ] && [ ! -e "$I/new.ledger" ] && [ ! -e "$I/nodir" ] || fail "a refused run wrote a report"
# what is not a collision still runs: outputs through /dev/null, latency.0.csv beside a run
# without --latency-log, a distribution in --output-dir under a name the run does not write
expect_ok "${common[@]}" --json /dev/null --dist-report /dev/null --access-report /dev/null
cp "$I/k.dist" "$I/out/mine.dist"
expect_ok "${common[@]}" --output-dir "$I/out" --dist "$I/out/mine.dist" --json "$I/out/latency.0.csv"
note "no report replaces an input (dist, config, trace, ledger) or another report"

note "reports naming the target, a worker file or an engine volume's files refused up front"
note "links and hard links under every output name replaced, never written through; devices and FIFOs as before"

# What a run writes at its end goes beneath the directories its outputs had when it started
# (issue 36, 10): another user swaps the directory that holds --json, --dist-report and
# --output-dir for a link to a directory of root's while the run goes on. The reports land in
# the directory the run began with (renamed x.old), and the victim gets nothing (they followed
# the new link into it). The run is stopped with SIGINT once the swap is done: it still reports.
swap_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! "${swap_as[@]}" true 2>/dev/null; then
	note "swapped output directory: not tried (needs root and setpriv, for nobody to swap it)"
	exit 0
fi
S=$E2E_TMP/swap
mkdir -p "$S/user/x" "$S/victim" "$S/t"
chmod 711 "$E2E_TMP"
chown -R nobody "$S/user"
swap_x() { # nobody moves user/x away and puts a link to root's victim directory in its place
	"${swap_as[@]}" sh -c "mv '$S/user/x' '$S/user/x.old' && ln -s '$S/victim' '$S/user/x'" ||
		fail "nobody could not swap $S/user/x"
}
swap_run() { # swap_run ARGS...: a dedisbench run in the background, x swapped once it started
	local pid i
	"$DEDISBENCH" "$@" -q >"$S/out" 2>"$S/err" &
	pid=$!
	on_exit "kill -KILL $pid 2>/dev/null"
	for ((i = 0; i < 300; i++)); do # bounded poll (30 s): the target made (the outputs held before)
		[ -e "$S/t/dedisbench.0" ] && break
		kill -0 "$pid" 2>/dev/null || fail "the run ended before the swap: $(cat "$S/err")"
		sleep 0.1
	done
	[ -e "$S/t/dedisbench.0" ] || fail "the run never made its target file: $(cat "$S/err")"
	swap_x
	kill -INT "$pid"
	wait "$pid" || fail "the interrupted run exited $?: $(cat "$S/err")"
	[ -z "$(ls -A "$S/victim")" ] || fail "the run wrote into the directory swapped in: $(ls -A "$S/victim")"
}
swap_run --target "$S/t" --procs 1 --file-size 1MiB --rate 50 --time 10m --json "$S/user/x/r.json" \
	--dist-report "$S/user/x/live.dist" --access-report "$S/user/x/acc.txt" --output-dir "$S/user/x/out" --latency-log "${plot[@]}"
jq -e '.status == "interrupted"' "$S/user/x.old/r.json" >/dev/null || fail "no JSON in the directory held: $(ls -A "$S/user/x.old")"
held=(live.dist acc.txt out/timeseries.csv out/latency-percentiles.csv out/access-frequency.csv out/latency.0.csv)
((${#plot[@]})) && held+=(out/timeseries.png out/latency.png out/distribution.png out/access.png)
for f in "${held[@]}"; do
	[ -s "$S/user/x.old/$f" ] || fail "$f is not in the directory held: $(ls -AR "$S/user/x.old")"
done
# a replay's JSON, the same
rm -rf "$S/user" "$S/t"/* && mkdir -p "$S/user/x" && chown -R nobody "$S/user"
awk '/^#/ { next } !n++ { print; next } { $1 = "18446744073709551615"; print; exit }' \
	"$(dirname "$0")/../../examples/fiu-sample.trace" >"$S/gap.trace" # a request, then one never due
swap_run replay "$S/gap.trace" --target "$S/t" --speed 1 --json "$S/user/x/r.json"
jq -e '.status == "interrupted" and .command == "replay"' "$S/user/x.old/r.json" >/dev/null ||
	fail "no replay JSON in the directory held: $(ls -A "$S/user/x.old")"
# dedisgen: -o, --json and --plot made as the scan starts, renamed there at its end; the scan
# stopped (the fault shim) at its first read of the tree while nobody swaps the directory
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
rm -rf "$S/user" && mkdir -p "$S/user/x" "$S/data" && chown -R nobody "$S/user"
head -c 3000000 /dev/urandom >"$S/data/big" # read with read(2) (small files go in batches)
head -c 8 /dev/zero >"$S/state"
: >"$S/log"
gout=(g.dist g.json)
((${#plot[@]})) && gout+=(g.png)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" \
	DEDIS_FAULT_ACTION=stop DEDIS_FAULT_OP=read DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH="$S/data/" \
	DEDIS_FAULT_STATE="$S/state" DEDIS_FAULT_LOG="$S/log" "$DEDISGEN" "$S/data" -o "$S/user/x/g.dist" \
	--json "$S/user/x/g.json" ${plot[@]:+--plot "$S/user/x/g.png"} -q 2>"$S/err" &
pid=$!
on_exit "kill -KILL $pid 2>/dev/null"
wait_stopped "$pid" "$S/log" "dedisgen never stopped at its first read: $(cat "$S/err")"
swap_x
kill -CONT "$pid"
wait "$pid" || fail "dedisgen exited $? after the swap: $(cat "$S/err")"
[ -z "$(ls -A "$S/victim")" ] || fail "dedisgen wrote into the directory swapped in: $(ls -A "$S/victim")"
for f in "${gout[@]}"; do
	[ -s "$S/user/x.old/$f" ] || fail "dedisgen's $f is not in the directory held: $(ls -A "$S/user/x.old")"
done
# dedisbench suite: every phase's results and the comparison at the end go beneath the
# --output-dir held since the suite began; phase 01 stopped (the shim) as it writes its JSON
rm -rf "$S/user" "$S/t"/* && mkdir -p "$S/user/x" && chown -R nobody "$S/user"
head -c 8 /dev/zero >"$S/state"
: >"$S/log"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
	DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH=01-seq-fill.json DEDIS_FAULT_STATE="$S/state" \
	DEDIS_FAULT_LOG="$S/log" "$DEDISBENCH" suite --target "$S/t" --procs 1 --file-size 1MiB --time 100ms \
	--output-dir "$S/user/x/s" -q >"$S/out" 2>"$S/err" &
pid=$!
on_exit "kill -KILL $pid 2>/dev/null"
for ((i = 0; i < 300; i++)); do # bounded poll (30 s) for the stopped phase
	[ -s "$S/log" ] && break
	sleep 0.1
done
phase=$(awk '{ print $NF }' "$S/log")
[ -n "$phase" ] || fail "the suite's first phase never wrote its JSON: $(cat "$S/err")"
wait_stopped "$phase" "$S/log" "the suite's first phase never stopped"
swap_x
kill -CONT "$phase"
wait "$pid" || fail "the suite exited $? after the swap: $(cat "$S/err")"
[ -z "$(ls -A "$S/victim")" ] || fail "the suite wrote into the directory swapped in: $(ls -A "$S/victim")"
[ -s "$S/user/x.old/s/14-nurand-read-80.json" ] && [ -s "$S/user/x.old/s/compare.csv" ] ||
	fail "the suite's results are not in the directory held: $(ls -A "$S/user/x.old/s")"
note "outputs written beneath the directories held since the start: the directory swapped in got nothing"
