#!/usr/bin/env python3
# recipes.py - runs the documentation's recipes: every shell block of README.md, of the man pages'
# EXAMPLES and every file of examples/, scaled down to temporary paths, small sizes and short times.
#
# The convention (documented in doc/notes/testing.md, "Runnable documentation"):
#  - a recipe is a ```sh or ```bash block of a Markdown file, or a .nf/.fi block of a man page's
#    EXAMPLES section whose first word is a tool or mpirun (not a file listing);
#  - markers, on the lines right above the block (Markdown: <!-- KEY: VALUE -->, roff: .\" KEY: VALUE):
#      recipe: NAME        the recipe's name (default: the file, the heading or paragraph, the line)
#      needs: WORD...      root, loop, mpi, cmd:PROGRAM, pkg:DEBIAN-PACKAGE, env:VARIABLE; absent:
#                          skipped, the reason printed (mpirun in a block: mpi, inferred)
#      slow: REASON        skipped unless DEDIS_RECIPES_SLOW=1 (package builds, apt, long sweeps)
#      skip: REASON        never run here (the reason printed)
#      setup: COMMAND      run first, unseen by the reader (fixtures the prose assumes exist)
#      expect: REGEX       the recipe's output (stdout and stderr) must match (Python re, MULTILINE)
#      expect-file: PATH   the recipe must leave PATH (relative to its directory)
#      in: source          run in a fresh copy of the source tree instead of the shared directory
#      file-size: SIZE     this block's --file-size cap instead of DEDIS_RECIPES_FILE_SIZE: for a block
#                          whose promise holds only from that size (a statistical tolerance)
#  - placeholders, rewritten in recipes, setups and examples: /mnt/NAME -> an empty directory;
#    /dev/sdX, /dev/sdb, /dev/nvme0n1, /dev/vdb -> one loop device (the recipe needs root and
#    loop); /home and /srv/NAME -> a small sample tree with duplicates, zeros and a hard link;
#    /var/tmp/X -> a temporary directory. build/, distributions/ and plots/ are the build's and the
#    source tree's; examples/ is a scaled copy; the tools are on PATH (as once installed).
#  - scaling, on every dedisbench/dedisengine command: --time/-t become DEDIS_RECIPES_TIME (2s);
#    --file-size above DEDIS_RECIPES_FILE_SIZE (16MiB) and --size above DEDIS_RECIPES_SIZE (64MiB)
#    are lowered to them; a dedisbench command on a directory or engine with no --file-size gets
#    one. In example job files (INI) the keys time, filesize and file-size likewise.
# Exit: 0 every recipe ran (or was skipped, said why), 1 the first failing recipe named, 2 usage.
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
         "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
KNOWN_MARKERS = ("recipe", "needs", "slow", "skip", "setup", "expect", "expect-file", "in", "file-size")
TOOLS = ("dedisbench", "dedisgen", "dedisengine")
MPI_TOOLS = ("dedisbench-mpi", "dedisgen-mpi")
DEVICE_RE = re.compile(r"/dev/(?:sd[a-zA-Z]|nvme\d+n\d+|vd[a-z])\b")
# A placeholder path starts a word: after a blank, a quote, '=', ':', '(' or a short option (-p/dev/sdb).
LEAD = r"(^|[\s'\"=:(]|(?<=\s)-\w)"


class Recipe:
    def __init__(self, doc, line, name, body, markers, kind="shell"):
        self.doc, self.line, self.name, self.body, self.markers, self.kind = doc, line, name, body, markers, kind

    def values(self, key):
        return [v for k, v in self.markers if k == key]

    def label(self):
        return f"{self.doc}:{self.line} \"{self.name}\""


def parse_markers(lines, pattern):
    """Markers on the consecutive comment lines right above a block (nearest last)."""
    out = []
    for text in reversed(lines):
        m = pattern.match(text)
        if not m:
            break
        for part in [m.group(1)]:
            km = re.match(r"\s*([a-z-]+)\s*:\s*(.*?)\s*$", part)
            if not km:
                raise SystemExit(f"recipes: malformed marker '{text.strip()}'")
            if km.group(1) not in KNOWN_MARKERS:
                raise SystemExit(f"recipes: unknown marker '{km.group(1)}' in '{text.strip()}' "
                                 f"(known: {', '.join(KNOWN_MARKERS)})")
            out.append((km.group(1), km.group(2)))
    return list(reversed(out))


def markdown_recipes(path, label):
    md_marker = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
    lines = open(path, encoding="utf-8").read().split("\n")
    recipes, heading, i, count = [], label, 0, {}
    while i < len(lines):
        text = lines[i]
        if text.startswith("#") and not text.startswith("#!"):
            heading = text.lstrip("#").strip()
        fence = re.match(r"^(```+|~~~+)\s*(\S*)", text)
        if fence:
            start, lang = i, fence.group(2)
            j = i + 1
            while j < len(lines) and not lines[j].startswith(fence.group(1)):
                j += 1
            if lang in ("sh", "bash", "shell"):
                # marker lines are directly above the fence (blank lines between are allowed)
                k = start
                while k > 0 and lines[k - 1].strip() == "":
                    k -= 1
                above = []
                while k > 0 and md_marker.match(lines[k - 1]):
                    above.insert(0, lines[k - 1])
                    k -= 1
                markers = parse_markers(above, md_marker)
                count[heading] = count.get(heading, 0) + 1
                name = heading if count[heading] == 1 else f"{heading} (block {count[heading]})"
                for key, value in markers:
                    if key == "recipe":
                        name = value
                recipes.append(Recipe(label, start + 1, name, "\n".join(lines[start + 1:j]), markers))
            i = j + 1
            continue
        i += 1
    return recipes


def roff_text(s):
    s = re.sub(r"\\f[BIRP]", "", s)
    s = s.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'").replace("\\ ", " ")
    return s.replace("@VERSION@", "0").replace("@PKGDATADIR@", "/usr/share/dedis")


def man_recipes(path, label):
    roff_marker = re.compile(r'^\.\\"\s*(.*?)\s*$')
    lines = open(path, encoding="utf-8").read().split("\n")
    recipes, in_examples, i, para = [], False, 0, ""
    while i < len(lines):
        text = lines[i]
        if text.startswith(".SH"):
            in_examples = text.split(None, 1)[1:] == ["EXAMPLES"]
        elif in_examples and text == ".nf":
            j = i + 1
            while j < len(lines) and lines[j] != ".fi":
                j += 1
            body = roff_text("\n".join(lines[i + 1:j]))
            words = body.split()
            first = words[0] if words else ""
            k, above = i, []
            while k > 0 and (lines[k - 1] in (".PP", ".RS") or roff_marker.match(lines[k - 1])):
                if roff_marker.match(lines[k - 1]):
                    above.insert(0, lines[k - 1])
                k -= 1
            markers = [(key, roff_text(value)) for key, value in parse_markers(above, roff_marker)]
            # a listing of a file (a distribution) is not a command
            if first in TOOLS or first == "mpirun" or first.startswith("build/") or \
                    any(key == "recipe" for key, _ in markers):
                name = para if len(para) <= 72 else para[:72].rsplit(" ", 1)[0] + " ..."
                name = name.rstrip(":") or "EXAMPLES"
                for key, value in markers:
                    if key == "recipe":
                        name = value
                recipes.append(Recipe(label, i + 2, name, body, markers))
            i = j + 1
            continue
        elif in_examples and not text.startswith("."):
            # the paragraph that introduces the next block names it
            para = (para + " " if lines[i - 1] and not lines[i - 1].startswith(".") else "") + roff_text(text).strip()
            para = para.strip()
        i += 1
    return recipes


def example_recipes(srcdir):
    """examples/: an INI job file runs as `dedisbench -f FILE`, a shell script as `sh FILE DIR`;
    a file may say otherwise in its own comments: `# recipe-run: COMMAND` ({file}: the file),
    and `recipe-needs:`, `recipe-slow:`, `recipe-skip:` as in the block markers."""
    out = []
    exdir = os.path.join(srcdir, "examples")
    for name in sorted(os.listdir(exdir)) if os.path.isdir(exdir) else []:
        path = os.path.join(exdir, name)
        markers, run = [], None
        for text in open(path, encoding="utf-8", errors="replace").read().split("\n")[:40]:
            m = re.match(r"^\s*[#;]+\s*recipe-([a-z-]+)\s*:\s*(.*?)\s*$", text)
            if m and m.group(1) == "run":
                run = m.group(2)
            elif m:
                if m.group(1) not in KNOWN_MARKERS:
                    raise SystemExit(f"recipes: examples/{name}: unknown marker recipe-{m.group(1)}")
                markers.append((m.group(1), m.group(2)))
        if run is None:
            if name.endswith(".ini"):
                run = "dedisbench -f {file} --target /mnt/example-ini --json example-ini.json -q"
                markers.append(("expect-file", "example-ini.json"))
            elif name.endswith(".sh"):
                run = "sh {file} /mnt/example-sh"
            else:
                raise SystemExit(f"recipes: examples/{name}: no rule to run it (give it a "
                                 f"'# recipe-run: COMMAND' comment, or a rule in tests/e2e/recipes.py)")
        out.append(Recipe("examples", 0, name, run.replace("{file}", "examples/" + name), markers))
    return out


def size_bytes(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-z]*)", text)
    if not m or m.group(2).lower() not in UNITS:
        return None
    return float(m.group(1)) * UNITS[m.group(2).lower()]


class Scaler:
    def __init__(self, work, loop, duration, file_size, size):
        self.work, self.loop = work, loop
        self.duration, self.file_size, self.size = duration, file_size, size

    def paths(self, text):
        w = self.work

        def place(m):
            lead, kind, name = m.group(1), m.group(2), m.group(3) or ""
            if kind == "/mnt/":
                return f"{lead}{w}/mnt/{name}"
            if kind == "/srv/":
                return f"{lead}{w}/data/{name}"
            if kind == "/home":
                return f"{lead}{w}/data/home"
            return f"{lead}{w}/var-tmp/{name}"
        # one pass: a rewritten path is never rewritten again
        text = re.sub(LEAD + r"(/mnt/|/srv/|/var/tmp/|/home(?=[\s/'\"]|$))([\w.-]*)", place, text)
        return DEVICE_RE.sub(self.loop or "/dev/NO-LOOP-DEVICE", text)

    def cap(self, m, limit):
        value = size_bytes(m.group(3))
        if value is None or value <= size_bytes(limit):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}{limit}"

    def command(self, seg):
        """One command of a pipeline or list: the tool's durations and sizes."""
        words = seg.split()
        # dedisbench-mpi and dedisgen-mpi take their tool's options: scaled as it is
        tool = next((os.path.basename(x).removesuffix("-mpi") for x in words
                     if os.path.basename(x) in TOOLS + MPI_TOOLS), None)
        if tool not in ("dedisbench", "dedisengine"):
            return seg
        seg = re.sub(r"(\s)(--time[= ]|-t ?)(\S+)", lambda m: f"{m.group(1)}--time {self.duration}", seg)
        seg = re.sub(r"(\s)(--file-size[= ])(\S+)", lambda m: self.cap(m, self.file_size), seg)
        seg = re.sub(r"(\s)(--size[= ])(\S+)", lambda m: self.cap(m, self.size), seg)
        if tool == "dedisbench" and not re.search(r"\s(--file-size|-F)\b", seg) and \
                not re.search(r"--target[= ]null\b|-T ?null\b", seg) and \
                not (self.loop and self.loop in seg):
            # after the suite sub-command (it comes first), else after the tool; a replay sizes
            # its target from the trace, a compare reads results
            if not re.search(r"dedisbench\s+(replay|compare)\b", seg):
                seg = re.sub(r"(\S*dedisbench(?:\s+suite\b)?)(?=\s|$)",
                             rf"\1 --file-size {self.file_size}", seg, count=1)
        return seg

    def shell(self, text):
        text = self.paths(text.replace("\\\n", " "))
        out = []
        for line in text.split("\n"):
            parts = re.split(r"(&&|\|\||;|\|)", line)
            out.append("".join(p if i % 2 else self.command(p) for i, p in enumerate(parts)))
        return "\n".join(out)

    def ini(self, text):
        text = self.paths(text)
        text = re.sub(r"(?m)^(\s*time\s*=\s*)\S+", rf"\g<1>{self.duration}", text)
        mib = int(size_bytes(self.file_size) // (1 << 20))
        text = re.sub(r"(?m)^(\s*filesize\s*=\s*)(\d+)", lambda m: m.group(1) + str(min(int(m.group(2)), mib)), text)
        return re.sub(r"(?m)^(\s*file-size\s*=\s*)(\S+)",
                      lambda m: m.group(1) + (self.file_size if (size_bytes(m.group(2)) or 0) > size_bytes(self.file_size)
                                              else m.group(2)), text)


def make_sample_tree(path):
    """A small dataset (about 12 MiB, fixed seed): files of fresh blocks and of blocks drawn from a
    pool with skewed popularity (contents with 2 to dozens of copies), a whole-file copy (a copied
    run), zeros, text, a hard link and a partial tail block."""
    import random
    rnd = random.Random(16)
    pool = [rnd.randbytes(4096) for _ in range(256)]
    weights = [1.0 / (rank + 1) for rank in range(len(pool))]
    os.makedirs(os.path.join(path, "sub"), exist_ok=True)
    files = {}
    for i in range(120):
        blocks = [rnd.randbytes(4096) if rnd.random() < 0.6 else rnd.choices(pool, weights)[0]
                  for _ in range(rnd.randint(8, 40))]
        files[f"{'sub/' if i % 3 == 0 else ''}f{i:02d}.bin"] = b"".join(blocks)
    files["sub/copy-of-f01.bin"] = files["f01.bin"]
    files["zeros.bin"] = bytes(64 << 10)
    files["text.txt"] = b"dedis sample line\n" * 4000
    files["sub/tail.bin"] = rnd.randbytes(10000)
    for name, data in files.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    link = os.path.join(path, "sub", "link-to-f02.bin")
    if not os.path.exists(link):
        os.link(os.path.join(path, "f02.bin"), link)


def missing_need(need, loop):
    if need == "root":
        return None if os.geteuid() == 0 else "needs root"
    if need == "loop":
        return None if loop else "needs a loop device (root, losetup)"
    if need == "mpi":
        if os.environ.get("DEDIS_SANITIZED") == "1":
            return "MPI runs in the normal build (ranks under ASan miss the liveness deadlines)"
        return None if shutil.which("mpirun") or shutil.which("mpiexec") else "needs MPI (mpirun)"
    if need.startswith("cmd:"):
        return None if shutil.which(need[4:]) else f"needs the command {need[4:]}"
    if need.startswith("pkg:"):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", need[4:]], capture_output=True, text=True)
        return None if "install ok installed" in r.stdout else f"needs the Debian package {need[4:]}"
    if need.startswith("env:"):
        return None if os.environ.get(need[4:]) else f"needs ${need[4:]} set"
    raise SystemExit(f"recipes: unknown need '{need}' (known: root loop mpi cmd:X pkg:X env:X)")


def why_skipped(r, loop):
    for reason in r.values("skip"):
        return f"skipped: {reason}"
    needs = " ".join(r.values("needs")).split()
    if DEVICE_RE.search(r.body + " ".join(r.values("setup"))):
        needs += ["root", "loop"]
    if re.search(r"\s--plot\b", r.body):
        needs.append("cmd:gnuplot")
    if re.search(r"(^|[|\s])jq\s", r.body):
        needs.append("cmd:jq")
    if re.search(r"(^|[|;&\s])mpirun\s", r.body):
        needs.append("mpi")
    for need in needs:
        why = missing_need(need, loop)
        if why:
            return f"skipped: {why}"
    for reason in r.values("slow"):
        if os.environ.get("DEDIS_RECIPES_SLOW") != "1":
            return f"skipped: slow ({reason}); DEDIS_RECIPES_SLOW=1 runs it"
    return None


def source_copy(srcdir, dest):
    files = subprocess.run(["git", "-C", srcdir, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True)
    if files.returncode:
        shutil.copytree(srcdir, dest, symlinks=True, ignore=shutil.ignore_patterns("build", "build-*"))
        return
    for rel in filter(None, files.stdout.decode().split("\0")):
        src = os.path.join(srcdir, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))


def prepare(args, w, scaler):
    for d in ("mnt", "data", "var-tmp", "bin"):
        os.makedirs(os.path.join(w, d), exist_ok=True)
    for tool in TOOLS + MPI_TOOLS:
        dst = os.path.join(w, "bin", tool)
        if tool in MPI_TOOLS and not os.path.exists(os.path.join(args.builddir, tool)):
            continue  # built only where Open MPI is (configure --with-mpi)
        if not os.path.lexists(dst):
            os.symlink(os.path.join(args.builddir, tool), dst)
    for name, target in (("build", args.builddir), ("distributions", os.path.join(args.srcdir, "distributions")),
                         ("plots", os.path.join(args.srcdir, "plots"))):
        if not os.path.lexists(os.path.join(w, name)):
            os.symlink(target, os.path.join(w, name))
    exdir = os.path.join(args.srcdir, "examples")
    os.makedirs(os.path.join(w, "examples"), exist_ok=True)
    for name in sorted(os.listdir(exdir)) if os.path.isdir(exdir) else []:
        text = open(os.path.join(exdir, name), encoding="utf-8", errors="replace").read()
        scaled = scaler.ini(text) if name.endswith(".ini") else scaler.shell(text) if name.endswith(".sh") else text
        with open(os.path.join(w, "examples", name), "w", encoding="utf-8") as f:
            f.write(scaled)


def run_recipe(r, args, work, scaler, env):
    cwd = work
    if r.values("in") == ["source"]:
        cwd = os.path.join(work, "source-copy")
        shutil.rmtree(cwd, ignore_errors=True)
        source_copy(args.srcdir, cwd)
    elif r.values("in"):
        raise SystemExit(f"recipes: {r.label()}: 'in:' takes 'source'")
    script = [f"# {r.label()}", "set -eo pipefail",
              "trap 'echo \"recipe command failed (exit $?): $BASH_COMMAND\" >&2' ERR"]
    if r.values("file-size"):
        if size_bytes(r.values("file-size")[0]) is None:
            raise SystemExit(f"recipes: {r.label()}: 'file-size:' takes a size (64MiB)")
        scaler = Scaler(scaler.work, scaler.loop, scaler.duration, r.values("file-size")[0], scaler.size)
    script += [scaler.shell(s) for s in r.values("setup")]
    script.append(scaler.shell(r.body))
    text = "\n".join(script) + "\n"
    for m in re.finditer(re.escape(work) + r"/data/([\w.-]+)", text):
        if not os.path.isdir(os.path.join(work, "data", m.group(1))):
            make_sample_tree(os.path.join(work, "data", m.group(1)))
    for m in re.finditer(re.escape(work) + r"/mnt/([\w.-]+)", text):
        os.makedirs(os.path.join(work, "mnt", m.group(1)), exist_ok=True)
    path = os.path.join(work, f"recipe-{args.seq}.sh")
    with open(path, "w") as f:
        f.write(text)
    start = time.monotonic()
    try:
        p = subprocess.run(["bash", path], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout)
        output, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        output, rc = (e.output or b"").decode(errors="replace") + f"\n(timed out after {args.timeout} s)", 124
    with open(path[:-3] + ".log", "w") as f:
        f.write(output)
    problem = None
    if rc:
        problem = f"exited {rc}"
    else:
        for rx in r.values("expect"):
            if not re.search(rx, output, re.MULTILINE):
                problem = f"its output lacks what the documentation promises (expect: {rx})"
                break
        for rel in r.values("expect-file"):
            if not problem and not os.path.exists(os.path.join(cwd, rel)):
                problem = f"it left no {rel} (expect-file)"
    return problem, output, time.monotonic() - start, path


def main():
    ap = argparse.ArgumentParser(description="run the documentation's recipes, scaled down")
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--builddir", required=True)
    ap.add_argument("--work", required=True, help="an empty temporary directory")
    ap.add_argument("--loop", default="", help="a scratch loop device for /dev/sdX")
    ap.add_argument("--doc", action="append", default=[], help="a Markdown file or man page (.1.in, .5.in)")
    ap.add_argument("--examples", action="store_true", help="also every file of examples/")
    ap.add_argument("--list", action="store_true", help="list the recipes as rewritten, run nothing")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("DEDIS_RECIPES_TIMEOUT", "300")))
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    srcdir = os.path.abspath(args.srcdir) + "/"

    def scaler_for(workdir):
        return Scaler(workdir, args.loop, os.environ.get("DEDIS_RECIPES_TIME", "2s"),
                      os.environ.get("DEDIS_RECIPES_FILE_SIZE", "16MiB"), os.environ.get("DEDIS_RECIPES_SIZE", "64MiB"))
    # Each document runs in a directory of its own (its recipes in order share it, as a reader's
    # shell would): no document depends on what another one left.
    docs = []
    for doc in args.doc:
        path = os.path.abspath(doc)
        label = path[len(srcdir):] if path.startswith(srcdir) else os.path.basename(path)
        found = man_recipes(path, label) if re.search(r"\.\d\.in$", path) else markdown_recipes(path, label)
        docs.append((label, found))
    if args.examples:
        docs.append(("examples", example_recipes(args.srcdir)))
    if args.list:
        for label, found in docs:
            sc = scaler_for(os.path.join(args.work, re.sub(r"[^\w.-]", "_", label)))
            for r in found:
                print(f"== {r.label()} {r.markers}\n{sc.shell(r.body)}")
        return 0
    ran = skipped = 0
    args.seq = 0
    for label, found in docs:
        workdir = os.path.join(args.work, re.sub(r"[^\w.-]", "_", label))
        sc = scaler_for(workdir)
        prepare(args, workdir, sc)
        env = dict(os.environ, PATH=os.path.join(workdir, "bin") + ":" + os.environ.get("PATH", ""),
                   TMPDIR=os.path.join(workdir, "var-tmp"))
        # mpirun as root, as the man pages' examples say a reader adds --allow-run-as-root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        for r in found:
            args.seq += 1
            why = why_skipped(r, args.loop)
            if why:
                print(f"SKIP recipe {r.label()}: {why.split(': ', 1)[1]}", flush=True)
                skipped += 1
                continue
            problem, output, secs, path = run_recipe(r, args, workdir, sc, env)
            if problem:
                tail = "\n".join("    " + x for x in output.rstrip().split("\n")[-25:])
                print(f"FAIL recipe {r.label()}: {problem}\n  as run: {path}\n  output (last lines):\n{tail}",
                      file=sys.stderr, flush=True)
                return 1
            print(f"ok   recipe {r.label()} ({secs:.1f} s)", flush=True)
            ran += 1
    print(f"recipes: {ran} ran, {skipped} skipped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
