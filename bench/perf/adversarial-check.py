#!/usr/bin/env python3
# adversarial-check.py - adversarial-sweep.sh's two byte-level checks: a manifest of a directory
# tree (to prove a victim untouched) and a block-by-block comparison of an engine export.
"""Usage:
  adversarial-check.py manifest DIR
      one line per entry below DIR (DIR itself as '.'): type, mode, owner, size, mtime, content
      SHA-256 (files), link target (links), extended attributes. What a reader changes (atime)
      and what another name changes (link count, ctime) is left out: only what a writer does.
  adversarial-check.py blocks EXPORT IMAGE [--zero-below N] [--allow-zero]
      every 4 KiB block of EXPORT must equal IMAGE's (blocks below N: zeros), or, with
      --allow-zero, be zeros; prints the first differing block and exits 1 otherwise.
"""
import hashlib
import os
import stat
import sys

BLOCK = 4096


def entry_line(root, rel):
    path = os.path.join(root, rel)
    st = os.lstat(path)
    kind = stat.S_IFMT(st.st_mode)
    fields = [rel, oct(st.st_mode), str(st.st_uid), str(st.st_gid), str(st.st_mtime_ns)]
    if kind == stat.S_IFREG:
        digest = hashlib.sha256()
        with open(path, 'rb') as f:
            for chunk in iter(lambda: f.read(1 << 20), b''):
                digest.update(chunk)
        fields += [str(st.st_size), digest.hexdigest()]
    elif kind == stat.S_IFLNK:
        fields.append('-> ' + os.readlink(path))
    try:
        names = sorted(os.listxattr(path, follow_symlinks=False))
        for name in names:
            value = os.getxattr(path, name, follow_symlinks=False)
            fields.append('%s=%s' % (name, hashlib.sha256(value).hexdigest()[:16]))
    except OSError:
        pass
    return ' '.join(fields)


def manifest(root):
    lines = [entry_line(root, '.')]
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            lines.append(entry_line(root, os.path.relpath(os.path.join(top, name), root)))
    print('\n'.join(lines))
    return 0


def blocks(export, image, zero_below, allow_zero):
    zero = bytes(BLOCK)
    with open(export, 'rb') as e, open(image, 'rb') as i:
        n = 0
        while True:
            got = e.read(BLOCK)
            want = i.read(BLOCK)
            if not got and not want:
                return 0
            if zero_below is not None and n < zero_below:
                want = zero
            if got != want and not (allow_zero and got == zero):
                print('block %d differs (%s)' % (n, 'zeros' if got == zero else
                                                  'short' if len(got) < BLOCK else 'other bytes'))
                return 1
            n += 1


def main(argv):
    if len(argv) == 3 and argv[1] == 'manifest':
        return manifest(argv[2])
    if len(argv) >= 4 and argv[1] == 'blocks':
        zero_below = None
        if '--zero-below' in argv:
            zero_below = int(argv[argv.index('--zero-below') + 1])
        return blocks(argv[2], argv[3], zero_below, '--allow-zero' in argv)
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
