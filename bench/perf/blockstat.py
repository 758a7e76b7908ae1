#!/usr/bin/python3
"""blockstat.py - what a deduplicating, per-block compressing store sees in some data; the
project's independent check of dedisgen's compressibility and locality sections.

usage: blockstat.py [-b BLOCK] [--sections] [--json-only] FILE...

The files are one stream, in the order given, each starting on a block boundary and zero-padded
to it at its end (as dedisgen reads them). Every block is fingerprinted (SHA-1, hashlib); each
distinct content is compressed on its own with zstd level 1 (python3-zstandard) and LZ4 (python3-
lz4), sizes capped at the block size. LZ4 is measured two ways: lz4.block.compress (what
blockcomp.py uses: python-lz4 compresses through its dictionary-capable streaming path) and
LZ4_compress_default (what dedis-dist(5) specifies and dedisgen calls; reached through lz4.frame
with independent blocks and no checksums, whose payload is exactly that call's output: the
frame adds 15 bytes, and stores a block that does not shrink as it is, i.e. capped). Definitions (dedis-dist(5)): position i is
a block's number; first(i) the smallest position holding the same content; i is a duplicate when
first(i) < i; sequential when i-1 is a duplicate too and first(i) == first(i-1) + 1; dup runs are
maximal stretches of duplicates; copy runs maximal stretches of non-zero duplicates each
sequential to the one before; zero runs maximal stretches of duplicates of the all-zero block.

Prints a table, then one JSON line. The JSON's top-level figures count every distinct content
(the zero block included) and bin sizes in eighths as ceil(8 * size / block) - 1, which is how
shared/tools/blockcomp.py states them; its "dedis" object holds the same data as dedisgen writes
it (zero block left out, buckets floor(32 * size / block), cells, run histograms). --sections
prints that object as the [compressibility 2] / [locality 1] text dedisgen writes with
--compress-sample all, so the two can be compared with diff.

Needs Debian's python3-lz4 and python3-zstandard (run with /usr/bin/python3).
"""
import argparse
import hashlib
import json
import math
import sys
from array import array

import lz4.block
import lz4.frame
import zstandard

GROUPS = ("all", "1", "2-3", "4-15", "16+")
KINDS = ("new", "dup", "copy", "zero")
FRAME_OVERHEAD = 15  # magic 4, FLG/BD/HC 3, block size 4, end mark 4


def lz4_default_size(block):
    """The size LZ4_compress_default gives the block, capped at the block size."""
    n = len(lz4.frame.compress(block, compression_level=0, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                               block_linked=False, content_checksum=False, block_checksum=False,
                               store_size=False)) - FRAME_OVERHEAD
    return min(n, len(block))


def read_stream(paths, bs):
    """Yields the blocks of the files in order, each file block-aligned and tail-padded."""
    for path in paths:
        with open(path, "rb", buffering=1 << 22) as f:
            while True:
                b = f.read(bs)
                if not b:
                    break
                if len(b) < bs:
                    b += bytes(bs - len(b))
                yield b


def group_of(copies):
    if copies == 1:
        return "1"
    if copies < 4:
        return "2-3"
    if copies < 16:
        return "4-15"
    return "16+"


class Runs:
    """Run-length histograms: bin k holds lengths 2^k .. 2^(k+1)-1, as [count, blocks]."""

    def __init__(self):
        self.bins = {k: {} for k in KINDS}

    def close(self, kind, length):
        if length:
            k = length.bit_length() - 1
            c, b = self.bins[kind].get(k, (0, 0))
            self.bins[kind][k] = (c + 1, b + length)


def locality(firsts, zero_first):
    """The [locality 1] figures of the whole stream (one piece)."""
    runs = Runs()
    dups = seq = 0
    kind_dup, kind_len, copy_len, zero_len = False, 0, 0, 0
    prev_first, prev_dup = None, False
    for i, f in enumerate(firsts):
        dup = f < i
        zero = dup and f == zero_first
        nxt = prev_dup and f == prev_first + 1
        if dup:
            dups += 1
            if nxt:
                seq += 1
        if kind_len and dup == kind_dup:
            kind_len += 1
        else:
            runs.close("dup" if kind_dup else "new", kind_len)
            kind_dup, kind_len = dup, 1
        if dup and not zero:
            if copy_len and nxt:
                copy_len += 1
            else:
                runs.close("copy", copy_len)
                copy_len = 1
        else:
            runs.close("copy", copy_len)
            copy_len = 0
        if zero:
            zero_len += 1
        else:
            runs.close("zero", zero_len)
            zero_len = 0
        prev_first, prev_dup = f, dup
    runs.close("dup" if kind_dup else "new", kind_len)
    runs.close("copy", copy_len)
    runs.close("zero", zero_len)
    return {"analysed": len(firsts), "window": 0, "duplicates": dups, "sequential": seq,
            **{k: {str(b): list(v) for b, v in sorted(runs.bins[k].items())} for k in KINDS}}


def analyse(paths, bs):
    zc = zstandard.ZstdCompressor(level=1)
    zero = hashlib.sha1(bytes(bs)).digest()
    contents = {}  # digest -> [first position, copies, zstd size, lz4 (block API) size, LZ4_compress_default size]
    firsts = array("Q")
    for i, b in enumerate(read_stream(paths, bs)):
        d = hashlib.sha1(b).digest()
        c = contents.get(d)
        if c is None:
            z = min(len(zc.compress(b)), bs)
            l4 = min(len(lz4.block.compress(b, store_size=False)), bs)
            contents[d] = c = [i, 0, z, l4, lz4_default_size(b)]
        c[1] += 1
        firsts.append(c[0])
    n = len(firsts)
    if n == 0:
        sys.exit("blockstat: no data")
    zero_first = contents[zero][0] if zero in contents else -1

    # as blockcomp.py states them: every distinct content, eighths ceil(8 s / B) - 1
    eighths = {g: [0] * 8 for g in GROUPS}
    stored_z = stored_l = 0
    for first, copies, z, l4, _ in contents.values():
        stored_z += z
        stored_l += l4
        k = min(7, (8 * z - 1) // bs)
        eighths["all"][k] += 1
        eighths[group_of(copies)][k] += 1
    loc = locality(firsts, zero_first)
    dup_runs = loc["dup"]
    nruns = sum(c for c, _ in dup_runs.values())
    long_blocks = sum(b for k, (c, b) in dup_runs.items() if int(k) >= 3)
    dups = loc["duplicates"]

    # as dedisgen writes them: the zero block left out, buckets floor(32 s / B)
    cells, measured = {}, {}
    d_eighths = {g: [0] * 8 for g in GROUPS}
    nz_n = nz_z = nz_l = 0
    for digest, (first, copies, z, _, l4) in contents.items():
        if digest == zero:
            continue
        cls = copies.bit_length() - 1
        zb, lb = min(31, 32 * z // bs), min(31, 32 * l4 // bs)
        cell = cells.setdefault((cls, zb, lb), [0, 0, 0])
        cell[0] += 1
        cell[1] += z
        cell[2] += l4
        measured[cls] = measured.get(cls, 0) + 1
        d_eighths["all"][zb // 4] += 1
        d_eighths[group_of(copies)][zb // 4] += 1
        nz_n += 1
        nz_z += z
        nz_l += l4

    def mean_unit(total, count):
        return max(1, math.floor(total / count * 2**20 / bs + 0.5))  # C's lround for x >= 0, never 0

    distinct = len(contents)
    out = {
        "files": paths, "block": bs, "blocks": n, "distinct": distinct,
        "zero_blocks": contents[zero][1] if zero in contents else 0,
        "dedup_ratio": round(n / distinct, 4),
        "lz4_ratio_after_dedup": round(distinct * bs / stored_l, 3),
        "zstd1_ratio_after_dedup": round(distinct * bs / stored_z, 3),
        "total_saving_zstd1": round(n * bs / stored_z, 3),
        "hist_zstd1_eighths": {g: [round(x / max(1, sum(v)), 4) for x in v] for g, v in eighths.items()},
        "hist_counts": {g: sum(v) for g, v in eighths.items()},
        "dup_runs_mean": round(dups / max(1, nruns), 2),
        "dup_share_in_runs_ge8": round(long_blocks / max(1, dups), 4),
        "dup_share_sequential_source": round(loc["sequential"] / max(1, dups), 4),
        "dedis": {
            "zstd_ratio": nz_n * bs / nz_z if nz_z else 0,
            "lz4_ratio": nz_n * bs / nz_l if nz_l else 0,
            "zstd_eighths": {g: [x / max(1, sum(v)) for x in v] for g, v in d_eighths.items()},
            "measured": {str(k): v for k, v in sorted(measured.items())},
            "cells": [[c, zb, lb, v[0], mean_unit(v[1], v[0]), mean_unit(v[2], v[0])]
                      for (c, zb, lb), v in sorted(cells.items())],
            "locality": loc,
        },
    }
    return out


def sections_text(d):
    lines = ["[compressibility 2]", "codecs zstd-1 lz4",
             "sample 1 %d" % sum(d["measured"].values())]
    lines += ["measured %s %d" % (k, v) for k, v in d["measured"].items()]
    lines += ["cell %d %d %d %d %d %d" % tuple(c) for c in d["cells"]]
    loc = d["locality"]
    lines += ["[locality 1]", "analysed %d 0" % loc["analysed"],
              "duplicates %d %d" % (loc["duplicates"], loc["sequential"])]
    for kind in KINDS:
        lines += ["%s %s %d %d" % (kind, k, c, b) for k, (c, b) in loc[kind].items()]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("-b", "--block-size", type=int, default=4096)
    ap.add_argument("--sections", action="store_true",
                    help="print only the dedis-dist(5) sections (as dedisgen --compress-sample all writes them)")
    ap.add_argument("--json-only", action="store_true", help="print only the JSON line")
    a = ap.parse_args()
    if a.block_size < 64 or a.block_size & (a.block_size - 1):
        sys.exit("blockstat: the block size must be a power of two >= 64")
    out = analyse(a.files, a.block_size)
    if a.sections:
        print(sections_text(out["dedis"]))
        return
    if not a.json_only:
        d = out["dedis"]
        print("%s: %d blocks of %d, %d distinct, dedup %.4f" % (" ".join(a.files), out["blocks"], out["block"],
                                                                 out["distinct"], out["dedup_ratio"]))
        print("after dedup, each block compressed alone: LZ4 %.3f:1 (lz4.block), zstd -1 %.3f:1" %
              (out["lz4_ratio_after_dedup"], out["zstd1_ratio_after_dedup"]))
        print("  as dedisgen measures them (zero block left out, LZ4_compress_default): LZ4 %.3f:1, zstd -1 "
              "%.3f:1" % (d["lz4_ratio"], d["zstd_ratio"]))
        print("compressed size (zstd -1, eighths of a block), share of distinct contents, by copies:")
        for g in GROUPS:
            print("  %5s (%8d): %s" % (g, out["hist_counts"][g],
                                       " ".join("%5.3f" % x for x in out["hist_zstd1_eighths"][g])))
        print("duplicates: %d of %d blocks; %.1f %% in runs >= 8, %.1f %% with a sequential source, mean run "
              "%.2f blocks" % (d["locality"]["duplicates"], out["blocks"], 100 * out["dup_share_in_runs_ge8"],
                               100 * out["dup_share_sequential_source"], out["dup_runs_mean"]))
    print(json.dumps(out, separators=(",", ":")))


if __name__ == "__main__":
    main()
