#!/bin/bash
# Access skew: on the same run length and seed, NURand's hottest-10 % share of operations is
# at least 3x uniform's (and uniform's is near 10 %, sequential's exactly 10 %).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
J="$E2E_TMP/r.json"
mkdir "$E2E_TMP/t"
# 256 MiB of writes over 2 x 16 MiB (page cache; the files stay 32 MiB): 65536 ops over 8192
# blocks. Fewer ops per block inflate uniform's share by chance (2 per block: ~0.24, not 0.10),
# while NURand's (A = N/10) tends to ~0.57 whatever the run length, so 8 per block keep the
# expected ratio (~3.4) clear of 3.
common=(--target "$E2E_TMP/t" --procs 2 --file-size 16MiB --block-size 4096 --size 256MiB
	--seed 1234 -w --quiet)
OPS=$((256 * 1024 * 1024 / 4096))

share() { # ACCESS: run, check the op count, print hottest_10pct_share
	expect_ok "${common[@]}" --access "$1" --json "$J"
	[ "$(jget "$J" .totals.ops)" -eq $OPS ] || fail "$1: totals.ops $(jget "$J" .totals.ops), want $OPS"
	[ "$(jget "$J" .config.access)" = "$1" ] || fail "$1: config.access is $(jget "$J" .config.access)"
	jget "$J" .access.hottest_10pct_share
}

uni=$(share uniform)
nur=$(share nurand)
seq=$(share seq)

fcmp "$uni" ">" 0.05 && fcmp "$uni" "<" 0.25 || fail "uniform hottest-10 % share $uni is implausible"
fcmp "$seq" ">=" 0.099 && fcmp "$seq" "<=" 0.101 || fail "seq hottest-10 % share $seq, want 0.10"
fcmp "$nur" "<=" 1 || fail "nurand share $nur > 1"
ratio=$(awk -v a="$nur" -v b="$uni" 'BEGIN { printf "%.2f", a / b }')
fcmp "$ratio" ">=" 3 || fail "nurand share $nur is only ${ratio}x uniform's $uni (want >= 3x)"

note "hottest 10 %: uniform $uni, nurand $nur (${ratio}x), seq $seq"
