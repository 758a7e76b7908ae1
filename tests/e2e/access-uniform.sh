#!/bin/bash
# access-uniform.sh - what uniform access looks like (README, recipe 7 and the pictures): with m
# operations on N blocks each block's count is Binomial(m, 1/N) (about Poisson(m/N)), so the
# hottest 10 % of blocks take more than 10 % of the operations - about 30 % at one operation per
# block, 20 % at four - and access.png is a hump at m/N, not flat. Two fixed-seed uniform runs
# (sizes, not times: the same operations on any machine): the reported hottest-10 % share is the
# binomial expectation within 1.5 points (its spread at N = 16384 is about 0.3), and the most
# common count is the binomial's mode.
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
mkdir "$E2E_TMP/d"
# expected NBLOCKS OPS: the expected share of operations on the hottest 10 % of NBLOCKS blocks
# when OPS operations each pick a block uniformly: the blocks whose count is above the 90 %
# quantile q, and enough of those at q to make up 10 %; E[X; X >= k] = m p P(Y >= k - 1), Y ~
# Binomial(m - 1, p).
expected() {
	awk -v n="$1" -v m="$2" 'function pmf(k, t) { return exp(lgam(t + 1) - lgam(k + 1) - lgam(t - k + 1) + k * log(1 / n) + (t - k) * log(1 - 1 / n)) }
	function lgam(x,  s) { # log Gamma(x), Stirling with 3 terms after a shift to x >= 8
		s = 0; while (x < 8) { s -= log(x); x++ }
		return s + (x - 0.5) * log(x) - x + 0.5 * log(2 * 3.141592653589793) + 1 / (12 * x) - 1 / (360 * x ^ 3) + 1 / (1260 * x ^ 5) }
	BEGIN {
		top = 400; tail = 0
		for (k = top; k >= 0; k--) { p = pmf(k, m); if (tail + p > 0.1) { q = k; break } tail += p }
		ex = 0; for (k = q; k <= top; k++) ex += pmf(k, m - 1)   # P(Y >= q), Y ~ Bin(m - 1, 1/N)
		printf "%.6f\n", (m / n * ex + (0.1 - tail) * q) / (m / n)
	}'
}
for per_block in 1 4; do
	size=$((32 * per_block * 2))MiB   # 2 workers x 32 MiB = 16384 blocks of 4 KiB
	expect_ok --target "$E2E_TMP/d" --procs 2 --file-size 32MiB --access uniform --mode write --size "$size" \
		--seed 7 -q -j "$E2E_TMP/u$per_block.json" --access-report "$E2E_TMP/a$per_block.txt"
	J=$E2E_TMP/u$per_block.json
	blocks=$(jget "$J" .access.blocks) ops=$(jget "$J" .totals.ops)
	[ "$ops" -eq $((blocks * per_block)) ] || fail "$size: $ops operations on $blocks blocks, want $per_block per block"
	got=$(jget "$J" .access.hottest_10pct_share) want=$(expected "$blocks" "$ops")
	note "uniform, $per_block operation(s) per block: hottest 10 % took $got of the operations, binomial $want"
	awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; exit !(d < 0.015 && d > -0.015) }' ||
		fail "uniform at $per_block per block: hottest-10 % share $got, binomial expectation $want (tolerance 0.015)"
	# the histogram access.png draws: its most common count is the binomial's mode, floor((m+1)/N)
	# (or the one below it: Poisson(4) has 3 and 4 equally likely)
	mode=$(awk '!/^#/ && $2 > b { b = $2; c = $1 } END { print c }' "$E2E_TMP/a$per_block.txt")
	[ "$mode" -eq "$per_block" ] || [ "$mode" -eq $((per_block - 1)) ] ||
		fail "uniform at $per_block per block: most blocks got $mode accesses, want $per_block (a hump, not flat)"
done
# the hottest 10 % take far more than 10 % at one operation per block, less at four
awk -v a="$(jget "$E2E_TMP/u1.json" .access.hottest_10pct_share)" -v b="$(jget "$E2E_TMP/u4.json" .access.hottest_10pct_share)" \
	'BEGIN { exit !(a > 0.25 && b < a && b > 0.15) }' || fail "the shares do not fall with operations per block"
exit 0
