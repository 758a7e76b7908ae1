# fiu-synth.awk - a synthetic block trace in the FIU IODedup format (timestamp pid process lba size
# op major minor md5...): n requests over `blocks` 4 KiB blocks, 20 % reads, 10 % of them 8 KiB,
# about 40 % of the written blocks repeating an earlier content and 2 % zero blocks.
# Usage: awk -v n=100000 -v blocks=20000 -v seed=3 -f fiu-synth.awk >synth.trace
# recipe-run: awk -v n=2000 -v blocks=500 -v seed=1 -f {file} >synth.trace && dedisbench replay synth.trace --target /mnt/example-awk -q
# (dedisbench replay synth.trace --target DIR; the real traces: see dedisbench(1), REPLAY.)
BEGIN {
	if (!n) n = 1000
	if (!blocks) blocks = n / 5
	srand(seed + 0)
	ts = 1000000000
	next_id = 0
	for (i = 0; i < n; i++) {
		ts += 1000 + int(rand() * 500000)            # ns between requests (0.25 ms on average)
		op = rand() < 0.2 ? "R" : "W"
		nb = rand() < 0.1 ? 2 : 1
		blk = int(rand() * blocks)
		line = sprintf("%.0f %d proc%d %d %d %s 8 0", ts, 1000 + int(rand() * 8), int(rand() * 4), blk * 8, nb * 8, op)
		for (k = 0; k < nb; k++) {
			r = rand()
			if (r < 0.02)
				md5 = "620f0b67a91f7f74151bc5be745b7110"  # the MD5 of 4 KiB of zeros
			else {
				id = (r < 0.42 && next_id > 0) ? int(rand() * next_id) : next_id++
				md5 = sprintf("%08x%08x%08x%08x", id, (id * 7919) % 4294967291, 3735928559 - id % 1000, 305419896 + id)
			}
			line = line " " md5
		}
		print line
	}
}
