#!/bin/bash
# dedisbench's JSON has one key style (snake_case) and says its schema_version (2); compare reads
# a report of schema 1 (no schema_version, config keys spelled as the options: "read-rate") as
# it reads today's: the same phase name, rate included, and the same figures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp

NEW=$E2E_TMP/new.json OLD=$E2E_TMP/old.json
expect_ok --target null --size 4MiB --dist kernels --mode mixed --access uniform --read-rate 100 \
	--write-rate 50 --time 1s --seed 3 --json "$NEW" -q
jcheck "$NEW" '.schema_version == 2' "no schema_version 2" '{tool, schema_version}'
# no key anywhere in the document is spelled with a hyphen
jcheck "$NEW" '[.. | objects | keys[] | select(test("-"))] == []' "keys with a hyphen" \
	'[.. | objects | keys[] | select(test("-"))] | unique'
jcheck "$NEW" '.config | .read_rate == 100 and .write_rate == 50 and .block_size == 4096 and
	(has("file_size") and has("read_pct") and has("output_dir"))' "config keys in snake_case" .config
grep -q '`schema_version`' "$top_srcdir/doc/results-schema.md" || fail "doc/results-schema.md does not describe schema_version"

# The same report as schema 1 wrote it.
jq 'del(.schema_version) | .config |= with_entries(.key |= gsub("_"; "-"))
	| .config.dist_path = .config["dist-path"] | del(.config["dist-path"])' "$NEW" >"$OLD"
jcheck "$OLD" '.config["read-rate"] == 100 and (.config | has("read_rate") | not)' "the old-style copy" .config
for f in "$NEW" "$OLD"; do
	expect_ok compare "$f"
	grep -q '^uniform mixed @100r+50w/s ' "$E2E_TMP/out" ||
		fail "compare of $(basename "$f"): no 'uniform mixed @100r+50w/s' row: $(cat "$E2E_TMP/out")"
	sed 1d "$E2E_TMP/out" >"$E2E_TMP/rows.$(basename "$f")"
done
cmp -s "$E2E_TMP/rows.new.json" "$E2E_TMP/rows.old.json" ||
	fail "compare reads the schema-1 report otherwise: $(diff "$E2E_TMP/rows.new.json" "$E2E_TMP/rows.old.json")"
expect_ok compare "$OLD" "$NEW"
[ "$(grep -c '^ *null' "$E2E_TMP/out")" -eq 1 ] && grep -q '^uniform mixed @100r+50w/s ' "$E2E_TMP/out" ||
	fail "an old and a new report of one run are not one phase: $(cat "$E2E_TMP/out")"
note "schema 2 keys in snake_case; compare reads schema 1's 'read-rate' as 'read_rate'"
