#!/bin/bash
# bash completion: the three files source cleanly, options come from each tool's --help,
# --dist completes the bundled distribution names, subcommands filter options.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
C=$top_srcdir/completion
export PATH="$top_builddir:$PATH"
cd "$E2E_TMP" # file-name completion sees an empty directory

# shellcheck source=/dev/null
. "$C/dedisbench"
# shellcheck source=/dev/null
. "$C/dedisgen"
# shellcheck source=/dev/null
. "$C/dedisengine"
complete -p dedisbench dedisgen dedisengine >/dev/null || fail "a completion is not registered"

# expect WANT FUNC WORDS...: WANT (space-separated) must all be among the candidates.
expect() {
	local want=$1 w
	shift
	comp "$@"
	for w in $want; do
		[[ $got == *" $w "* ]] || fail "completing '${*:2}': expected $w, got [$got]"
	done
}
# expect_only WANT FUNC WORDS...: exactly WANT.
expect_only() {
	local want=$1
	shift
	comp "$@"
	[ "${COMPREPLY[*]}" = "$want" ] || fail "completing '${*:2}': expected exactly [$want], got [$got]"
}

expect --access _dedisbench dedisbench --acc
DEDIS_DISTDIR=$top_srcdir/distributions expect_only personalfiles _dedisbench dedisbench --dist per
DEDIS_DISTDIR=$top_srcdir/distributions expect "archival highperf kernel-trees kernels personalfiles ubuntuamd" \
	_dedisbench dedisbench -d ''
DEDIS_DISTDIR=$top_srcdir/distributions expect_only personalfiles _dedisbench dedisbench --dist = per
expect_only "uniform" _dedisbench dedisbench --access u
expect "--target --procs --time --json --output-dir" _dedisbench dedisbench --
expect_only "null" _dedisbench dedisbench -T nu
expect_only "suite" _dedisbench dedisbench su
expect_only "backup" _dedisbench dedisbench --workload b
# every choice of an option with a fixed set of values
expect_only "runs scattered" _dedisbench dedisbench --layout ''
expect_only "dist" _dedisbench dedisbench --compress ''
expect_only "global replica" _dedisbench dedisbench --rank-content ''
expect_only "default none content zero" _dedisbench dedisbench --populate ''
# an engine: target's options, the argument split by bash at ':' and '=', or whole
expect_only "/vol,index= /vol,compress=" _dedisbench dedisbench -T engine : /vol,
expect_only "mem bdb bloom" _dedisbench dedisbench -T engine : /vol,index = ''
expect_only "engine:/vol,compress=lz4" _dedisbench dedisbench --target engine:/vol,compress=l

# Every long option of --help is offered.
want=$("$top_builddir/dedisbench" --help | grep -oE -- '^ {2,6}(-[A-Za-z0-9], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' | tr '\n' ' ')
expect "$want" _dedisbench dedisbench --

# An uninstalled binary: the source tree next to build/ (a fake tree with its own distribution).
mkdir -p tree/build tree/distributions
ln -s "$top_builddir/dedisbench" tree/build/dedisbench
: >tree/distributions/mydataset.dist
(unset DEDIS_DISTDIR; expect_only mydataset _dedisbench "$E2E_TMP/tree/build/dedisbench" --dist my)

# dedisgen: subcommands, options filtered by subcommand, choices.
expect_only "show" _dedisgen dedisgen sh
expect "--top --json --plot" _dedisgen dedisgen show --
comp _dedisgen dedisgen show --
[[ $got == *" --max-diff "* || $got == *" --db "* ]] && fail "dedisgen show offers options of other subcommands: [$got]"
expect "--max-diff" _dedisgen dedisgen compare --ma
expect "--block-size --db --mem-limit --output" _dedisgen dedisgen /srv --
expect_only "sha1 sha256" _dedisgen dedisgen --hash ''
# every long option of --help is offered by the subcommands it names (an option whose name and
# metavariable fill --help's column, --compress-sample RATE, was once lost to the parse)
expect "--compress-sample --no-locality" _dedisgen dedisgen /srv --
expect "--max-diff --max-ratio-diff --max-tv --max-locality-diff" _dedisgen dedisgen compare --
got_all=" "
for sub in /srv merge show compare; do comp _dedisgen dedisgen $sub --; got_all+="$got "; done
for opt in $("$top_builddir/dedisgen" --help | grep -oE -- '^ {2,6}(-[A-Za-z0-9], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
	[[ $got_all == *" $opt "* ]] || fail "dedisgen --help has $opt but no subcommand's completion offers it"
done
expect_only "auto pread mmap" _dedisgen dedisgen /srv --read-method ''
expect "auto all off" _dedisgen dedisgen /srv --compress-sample ''

# dedisengine: commands, per-command options, choices.
expect_only "stat" _dedisengine dedisengine st
expect "--size --index --hash" _dedisengine dedisengine format vol --
expect_only "bdb bloom" _dedisengine dedisengine format vol --index b
expect_only "full" _dedisengine dedisengine format vol --preallocate f
expect_only "lz4" _dedisengine dedisengine format vol --compress l
# an option's value given with '=' (bash splits it into three words) is not a positional word:
# the FILE of import still completes as a file name
touch img.raw
expect_only "img.raw" _dedisengine dedisengine import --commit-every = 4 vol i
rm img.raw
got_all=" "
for c in format stat fsck gc import export discard; do comp _dedisengine dedisengine $c vol --; got_all+="$got "; done
for opt in $("$top_builddir/dedisengine" --help | grep -oE -- '^ {2,6}(-[A-Za-z0-9], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
	[[ $got_all == *" $opt "* ]] || fail "dedisengine --help has $opt but no command's completion offers it"
done
comp _dedisengine dedisengine stat --
[[ $got == *" --size "* ]] && fail "dedisengine stat offers format's --size: [$got]"
# Every fixed choice of every option comes from the tools' option tables (registries included:
# --ioengine's engines), never from a list in the completion files.
for tool in dedisbench dedisgen dedisengine; do
	while read -r opt meta choices; do
		[[ -n $choices && $opt == --* ]] || continue
		want=$(echo $choices)
		case $tool in
		dedisbench) comp _dedisbench dedisbench "$opt" '' ;;
		dedisgen) comp _dedisgen dedisgen /srv "$opt" '' ;;
		dedisengine) comp _dedisengine dedisengine format vol "$opt" '' ;;
		esac
		[ "${COMPREPLY[*]}" = "$want" ] || fail "$tool $opt: completion offers [${COMPREPLY[*]}], the table [$want]"
	done < <(DEDIS_PRINT_COMPLETION=1 "$top_builddir/$tool")
done
expect_only "sync libaio io_uring" _dedisbench dedisbench --ioengine ''
for f in "$C"/*; do
	grep -qE 'io_uring|sha256|nurand' "$f" && fail "$f names a choice the option table gives"
done
note "completion works for dedisbench, dedisgen and dedisengine"
