# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the mutation campaign and what the mutators need to know
about each: geometry, groups, and the inodes that own blocks.

A fixture is either a good image of images/ (decompressed once into the
cache directory) or "rich", made here from mke2fs + debugfs with a fixed
clock: inline data, extended attributes (in-inode and in a block), fast
and slow symlinks, an htree directory, files in several groups."""

import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
IMAGES = os.path.join(TOP, "images")
UUID = "5b3c4e0a-6f1d-4f0e-9a51-3c2d7e8f9a10"

# Small, aged, clean images of images/ (see images/README.md).  The
# larger bigalloc64k (128 MiB) and tail are left out to keep a mutant
# near 0.2 s.  ext4-mmp is in: a trim must leave its MMP block clean
# (judge.py), and libext2fs's 11 s wait at each open for writing is
# skipped by tests/inject/mmp_no_wait.c (mmp_no_wait() below).
IMAGE_FIXTURES = ["ext2-1k", "ext3", "ext4", "ext4-noflex", "ext4-metabg",
                  "ext4-bigalloc16k", "ext4-uninit", "ext4-uninitbg",
                  "ext4-sparse2", "ext4-mmp"]
FIXTURES = IMAGE_FIXTURES + ["rich"]

# E2FSCK_TIME: e2fsck stamps the superblock (s_lastcheck, s_wtime) with
# it, not with E2FSPROGS_FAKE_TIME: two repairs a second apart would
# otherwise differ in block 1, which the judge compares.
ENV = dict(os.environ, LC_ALL="C", TZ="UTC", E2FSPROGS_FAKE_TIME="1700000000",
           E2FSCK_TIME="1700000000",
           SOURCE_DATE_EPOCH="1700000000",
           MKE2FS_CONFIG=os.path.join(TOP, "tests", "mke2fs.conf"),
           PATH=os.environ.get("PATH", "") + ":/sbin:/usr/sbin")


# Every judged image goes on past its filesystem: TAIL_BYTES of data
# (random, the same for a fixture every time) after the last block, as a
# filesystem in a partition or in a larger image has its neighbour's
# bytes there.  A trim that discards past the filesystem's end changes
# them, and the judge compares every byte that is not free (judge.py).
TAIL_BYTES = 64 << 10


def tail_of(name):
    """The bytes that follow fixture NAME's filesystem in a judged image."""
    import random
    return random.Random("tail:" + name).randbytes(TAIL_BYTES)


def is_mmp(name):
    """Whether fixture NAME has multi-mount protection."""
    return "mmp" in name


def mmp_no_wait(cache):
    """From here on, e2fsck's and e2trim's libext2fs skip the MMP wait
    (tests/inject/mmp_no_wait.c, built into CACHE): the MMP protocol still
    runs, only the 11 s another node would have had to answer are gone."""
    so = os.path.join(cache, "mmp_no_wait.so")
    if not os.path.exists(so):
        r = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC",
                            "-o", so + ".tmp%d" % os.getpid(),
                            os.path.join(TOP, "tests", "inject", "mmp_no_wait.c")],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("cannot build mmp_no_wait.so: " + r.stderr)
        os.rename(so + ".tmp%d" % os.getpid(), so)
    for env in (os.environ, ENV):
        env["LD_PRELOAD"] = so
        # a sanitized e2trim wants its runtime first; this shim is harmless
        asan = env.get("ASAN_OPTIONS", "")
        if "verify_asan_link_order" not in asan:
            env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + \
                "verify_asan_link_order=0"


def run(cmd, **kw):
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True,
                          errors="replace", **kw)


def debugfs_script(img, lines, write=True):
    """Run debugfs on IMG with LINES as its -f script; stdout+stderr."""
    path = img + ".dfs"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = run(["debugfs"] + (["-w"] if write else []) + ["-f", path, img],
            timeout=60)
    os.unlink(path)
    return r.stdout + r.stderr


def _make_rich(img, work):
    """An 8 MiB ext4 with inline data, xattrs, symlinks and an htree."""
    if os.path.exists(img):
        os.unlink(img)
    with open(img, "wb") as f:
        f.truncate(8 << 20)
    r = run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "1024", "-g", "1024",
             "-N", "1024", "-O", "inline_data,^resize_inode", "-U", UUID,
             "-E", "hash_seed=%s,nodiscard,lazy_itable_init=0,"
             "lazy_journal_init=0" % UUID, img])
    if r.returncode:
        raise RuntimeError("mke2fs: " + r.stderr)
    cmds = ["set_current_time 20231114221320", "mkdir d1", "mkdir d2",
            "mkdir d1/sub", "mkdir big"]
    # files of known content, each its own byte, big enough to reach
    # several groups; small ones end up inline
    sizes = [30, 50, 100, 900, 3000, 20000, 70000, 150000, 400000, 9000,
             200, 45000, 120000, 5, 1500]
    for i, size in enumerate(sizes):
        blob = os.path.join(work, "blob%d" % i)
        with open(blob, "wb") as f:
            f.write(bytes([0x41 + i]) * size)
        where = ["d1", "d2", "d1/sub", ""][i % 4]
        cmds.append("write %s %s/f%d" % (blob, where, i) if where
                    else "write %s f%d" % (blob, i))
    cmds.append("cd /big")	# mknod takes a name, not a path
    for i in range(120):	# enough entries for an htree after -D
        cmds.append("mknod n%03d p" % i)
    cmds.append("cd /")
    cmds += ["symlink d1/fast f1",
             "symlink d2/slow /" + "x" * 200,
             "ea_set d1/f3 user.small tiny",
             "ea_set -f %s d1/f4 user.big" % os.path.join(work, "blob3"),
             "ea_set d2/f5 trusted.t value-in-inode"]
    out = debugfs_script(img, cmds)
    if "rror" in out.replace("No error", ""):
        raise RuntimeError("rich fixture: " + out)
    run(["e2fsck", "-fyD", img])
    r = run(["e2fsck", "-fn", img])
    if r.returncode:
        raise RuntimeError("rich fixture not clean: " + r.stdout)


def prepare(name, cache):
    """Path of fixture NAME in CACHE, made or decompressed if missing."""
    img = os.path.join(cache, name + ".img")
    if os.path.exists(img):
        return img
    tmp = img + ".tmp%d" % os.getpid()
    if name == "rich":
        work = tmp + ".d"
        os.makedirs(work, exist_ok=True)
        _make_rich(tmp, work)
        subprocess.run(["rm", "-rf", work])
    else:
        with open(tmp, "wb") as f:
            subprocess.run(["xz", "-dc", os.path.join(IMAGES, name + ".img.xz")],
                           stdout=f, check=True)
    os.rename(tmp, img)
    return img


def _sb(img):
    out = run(["dumpe2fs", img]).stdout
    g = {}
    for key, field in [("bs", "Block size"), ("blocks", "Block count"),
                       ("inodes", "Inode count"), ("ipg", "Inodes per group"),
                       ("bpg", "Blocks per group"),
                       ("first_data", "First block"),
                       ("first_ino", "First inode"),
                       ("isz", "Inode size")]:
        m = re.search(r"^%s:\s+(\d+)" % field, out, re.M)
        g[key] = int(m.group(1)) if m else 0
    m = re.search(r"^Cluster size:\s+(\d+)", out, re.M)
    g["ratio"] = int(m.group(1)) // g["bs"] if m else 1
    m = re.search(r"^Filesystem features:\s+(.*)$", out, re.M)
    g["features"] = m.group(1).split() if m else []
    g["groups"] = []
    for m in re.finditer(r"^Group (\d+): .*?\n(.*?)(?=^Group |\Z)", out,
                         re.M | re.S):
        body = m.group(2)
        grp = {}
        for key, pat in [("bbitmap", r"Block bitmap at (\d+)"),
                         ("ibitmap", r"Inode bitmap at (\d+)"),
                         ("itable", r"Inode table at (\d+)")]:
            mm = re.search(pat, body)
            grp[key] = int(mm.group(1)) if mm else 0
        g["groups"].append(grp)
    return g


def _walk(img):
    """Every inode reachable from /: {ino: path}, directories first."""
    seen, todo, names = set(), ["/"], {}
    while todo:
        batch, todo = todo, []
        out = debugfs_script(img, ["ls -p %s" % d for d in batch], write=False)
        cur = None
        for line in out.splitlines():
            if line.startswith("debugfs: ls -p "):
                cur = line[len("debugfs: ls -p "):]
                continue
            parts = line.split("/")
            if len(parts) < 6 or not parts[1].isdigit() or cur is None:
                continue
            ino, mode, name = int(parts[1]), int(parts[2], 8), parts[5]
            if name in (".", "..") or ino == 0:
                continue
            path = (cur.rstrip("/") + "/" + name)
            if ino not in names:
                names[ino] = path
            if (mode & 0o170000) == 0o040000 and ino not in seen:
                seen.add(ino)
                todo.append(path)
    return names


def describe(img):
    """What the mutators need: geometry, groups, and the inodes that own
    blocks with their flags and block lists (special inodes too)."""
    g = _sb(img)
    names = _walk(img)
    inos = sorted(set(names) | {2, 7, 8, 11})
    out = debugfs_script(img, ["stat <%d>\nblocks <%d>" % (i, i)
                               for i in inos], write=False)
    info = {}
    cur = None
    for chunk in out.split("debugfs: "):
        m = re.match(r"(stat|blocks) <(\d+)>", chunk)
        if not m:
            continue
        ino = int(m.group(2))
        d = info.setdefault(ino, {"ino": ino, "path": names.get(ino),
                                  "flags": 0, "type": "?", "blocks": []})
        if m.group(1) == "stat":
            mm = re.search(r"Type: (\S+).*?Flags: (0x[0-9a-f]+)", chunk, re.S)
            if mm:
                d["type"], d["flags"] = mm.group(1), int(mm.group(2), 16)
            mm = re.search(r"File ACL: (\d+)", chunk)
            d["acl"] = int(mm.group(1)) if mm else 0
        else:
            body = chunk.split("\n", 1)[1] if "\n" in chunk else ""
            d["blocks"] = [int(x) for x in body.split() if x.isdigit()]
        cur = d
    del cur
    g["inos"] = [info[i] for i in inos if i in info]
    g["max_ino"] = max(inos)
    # the journal superblock as mke2fs left it: clean and empty
    g["jsb"] = b""
    if 8 in info and info[8]["blocks"] and "has_journal" in g["features"]:
        with open(img, "rb") as f:
            f.seek(info[8]["blocks"][0] * g["bs"])
            g["jsb"] = f.read(1024)
    return g
