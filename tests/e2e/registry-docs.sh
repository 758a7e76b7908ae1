#!/bin/bash
# Registry walk: every name the programs accept from a fixed set (I/O engines, access patterns,
# bundled distributions, engine indexes and every other option with a list of values, the
# target keywords and the engine: target's options) is in the tool's --help, its man page and
# its bash completion. The names come from the programs themselves (their refusal of a value
# lists the choices), so a new name that is not documented everywhere fails here.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
cd "$E2E_TMP" # a refused value writes nothing; anything else would land here
export PATH="$top_builddir:$PATH" DEDIS_DISTDIR=$top_srcdir/distributions DEDIS_LOCK_DIR=$E2E_TMP/locks
mkdir "$DEDIS_LOCK_DIR"
MAN=$top_builddir/man
for tool in dedisbench dedisgen dedisengine; do
	[ -f "$MAN/$tool.1" ] || fail "no man page $MAN/$tool.1 (make builds it)"
done
# shellcheck source=/dev/null
. "$top_srcdir/completion/dedisbench"
# shellcheck source=/dev/null
. "$top_srcdir/completion/dedisgen"
# shellcheck source=/dev/null
. "$top_srcdir/completion/dedisengine"

# Gaps in the programs' own text (C code, not data): each is reported, and fails once fixed so
# that it leaves this list. Form: DOC TOOL WHERE NAME.
KNOWN_GAPS=()
GAPS=()
CHECKED=0

# has_name TEXT NAME: NAME is a word of TEXT (a NAME ending in ':' or '=' may run on: engine:DIR).
has_name() {
	local text
	if [[ $2 == *[:=] ]]; then
		[[ $1 == *"$2"* ]]
		return
	fi
	text=" $(printf '%s' "$1" | tr ',;:()|="/.\047\t\n[]' ' ') "
	[[ $text == *" $2 "* ]]
}

# check DOC TOOL WHERE TEXT NAMES...: record each of NAMES missing from TEXT.
check() {
	local doc=$1 tool=$2 where=$3 text=$4 name
	shift 4
	for name in "$@"; do
		CHECKED=$((CHECKED + 1))
		has_name "$text" "$name" || GAPS+=("$doc $tool $where $name")
	done
}

declare -A HELP
# each option's entry on one line (--help wraps long ones), as the completion reads it
for tool in dedisbench dedisgen dedisengine; do HELP[$tool]=$(_dedis_help_entries "$tool"); done

# help_line TOOL OPT: the line of TOOL --help that describes OPT.
help_line() {
	grep -E -- "^ {2,6}(-[A-Za-z0-9], )?$2( |$)" <<<"${HELP[$1]}" || fail "$1 --help has no line for $2"
}

# man_text TOOL: the man page as plain text (font escapes and roff's '\-' undone).
man_text() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$MAN/$1.1"
}

# man_entry TOOL OPT: the OPTIONS entry of OPT (the lines after its tag, to the next macro).
man_entry() {
	man_text "$1" | awk -v opt="$2" '
		prev == ".TP" && $0 ~ ("(^|, )" opt "( |$)") && !done { on = 1; prev = $0; next }
		on && /^\./ { on = 0; done = 1 }
		on { print }
		{ prev = $0 }'
}


# refused_choices TOOL OPT: the names the program lists when it refuses the value 'xx' for OPT
# (nothing for an option without a fixed list). A second bad option stops any run; a value
# dedisbench checks only after parsing (--dist) is tried on a null target of one block, where
# the other options run (each in a fresh directory: --json xx must not make --dist xx a file).
refused_choices() {
	local out
	case $1 in
	dedisbench)
		out=$(dedisbench "$2" xx --procs xx 2>&1 || true)
		[[ $out == *"--procs: 'xx'"* ]] &&
			out=$(cd "$(mktemp -d -p "$E2E_TMP")" &&
				dedisbench "$2" xx -T null --procs 1 --file-size 4KiB --quiet 2>&1 </dev/null || true) ;;
	dedisgen) out=$(dedisgen "$2" xx --threads xx "$E2E_TMP/none" 2>&1 || true) ;;
	dedisengine) out=$(dedisengine format "$E2E_TMP/none" "$2" xx --size xx 2>&1 || true) ;;
	esac
	printf '%s\n' "$out" | sed -nE \
		-e "s/.*unknown value 'xx' \((one of: )?(.*)\)$/\2/p" \
		-e 's/.*not a bundled distribution \((.*)\)$/\1/p' |
		sed -E 's/,? or /, /g; s/, /\n/g'
}

# options_with_values TOOL: the long options of TOOL --help that take a value.
options_with_values() {
	grep -oE -- '^ {2,6}(-[A-Za-z0-9], )?--[a-z][a-z0-9-]* [^ ]' <<<"${HELP[$1]}" | grep -oE -- '--[a-z0-9-]+'
}

# completion_words TOOL OPT: the words that put the completion of TOOL where OPT applies (the
# first subcommand its --help names for it).
completion_words() {
	local sub
	sub=$(help_line "$1" "$2" | sed -nE 's/.*\(([a-z]+)(, [a-z, ]+)?\)$/\1/p')
	case $1 in
	dedisbench) echo _dedisbench dedisbench ;;
	dedisgen) echo _dedisgen dedisgen "${sub:-scan}" ;;
	dedisengine) echo _dedisengine dedisengine "${sub:-format}" vol ;;
	esac
}

# 1. Every option with a fixed list of values, in each tool: I/O engines, access patterns,
#    modes, bundled distributions, engine indexes, hashes, ...
registries=0
for tool in dedisbench dedisgen dedisengine; do
	for opt in $(options_with_values "$tool"); do
		mapfile -t names < <(refused_choices "$tool" "$opt")
		((${#names[@]})) || continue
		registries=$((registries + 1))
		check help "$tool" "$opt" "$(help_line "$tool" "$opt")" "${names[@]}"
		entry=$(man_entry "$tool" "$opt")
		[ -n "$entry" ] || fail "$MAN/$tool.1 has no OPTIONS entry for $opt"
		check man "$tool" "$opt" "$entry" "${names[@]}"
		read -ra words < <(completion_words "$tool" "$opt")
		comp "${words[@]}" "$opt" ''
		check completion "$tool" "$opt" "$got" "${names[@]}"
		note "$tool $opt: ${names[*]}"
	done
done
# the registries the issue names must be among those walked
for want in "dedisbench --ioengine io_uring" "dedisbench --access nurand" "dedisbench --dist kernels" \
	"dedisengine --index bloom"; do
	read -r tool opt name <<<"$want"
	refused_choices "$tool" "$opt" | grep -x -- "$name" >/dev/null || fail "$tool $opt does not list $name when refusing a value"
done

# 2. Target keywords: what --target takes besides a path (each checked to work as one).
dedisbench -T null --procs 1 --file-size 64KiB --quiet || fail "-T null is not a target"
dedisbench -T "engine:$E2E_TMP/vol" --procs 1 --file-size 64KiB --quiet || fail "-T engine:DIR is not a target"
targets=(null engine:)
check help dedisbench --target "$(help_line dedisbench --target)" "${targets[@]}"
check man dedisbench --target "$(man_entry dedisbench --target)" "${targets[@]}"
comp _dedisbench dedisbench -T ''
check completion dedisbench --target "$got" "${targets[@]}"

# 3. The engine: target's options (KEY=VALUE after the directory), from its refusal of one.
out=$(dedisbench -T "engine:$E2E_TMP,xx=xx" --procs 1 2>&1 || true)
spec=$(printf '%s\n' "$out" | sed -nE "s/.*unknown engine option 'xx=xx' \((.*)\)$/\1/p")
[ -n "$spec" ] || fail "engine:DIR,xx=xx is not refused with the list of options: $out"
where="engine:DIR,KEY=VALUE"
for kv in ${spec//, / }; do # index=mem|bdb|bloom
	key=${kv%%=*}
	IFS='|' read -ra values <<<"${kv#*=}"
	check help dedisbench "$where" "${HELP[dedisbench]}" "$key=" "${values[@]}"
	check man dedisbench "$where" "$(man_text dedisbench)" "$key=" "${values[@]}"
	comp _dedisbench dedisbench -T engine : /vol,
	check completion dedisbench "$where" "$got" "/vol,$key="
	comp _dedisbench dedisbench -T engine : "/vol,$key" = ''
	check completion dedisbench "$where" "$got" "${values[@]}"
	note "engine: option $key: ${values[*]}"
done

# Report: a gap not known fails; a known gap that is gone fails too (take it off the list).
bad=0
for g in "${GAPS[@]}"; do
	known=0
	for k in "${KNOWN_GAPS[@]}"; do [ "$g" = "$k" ] && known=1; done
	if ((known)); then
		note "known gap: $g"
	else
		echo "registry-docs: missing: $g" >&2
		bad=1
	fi
done
for k in "${KNOWN_GAPS[@]}"; do
	found=0
	for g in "${GAPS[@]}"; do [ "$g" = "$k" ] && found=1; done
	((found)) || { echo "registry-docs: known gap '$k' is fixed: take it off KNOWN_GAPS" >&2; bad=1; }
done
((bad == 0)) || fail "names missing from --help, a man page or the completion (above)"
note "$registries option registries, the target keywords and engine: options: $CHECKED name checks"
