# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict on one mutant: the one rule itself.

    A: a copy of the mutant, repaired by `e2fsck -fy` (no e2trim).
    B: the mutant after a dry run (which must not write: its times, size
       and allocation stay as they were), then a
       real trim (`e2trim --list`: an image file's free blocks punched),
       then `e2fsck -fy`.

Every file A keeps (path, type, size, content: one debugfs rdump of the
tree) must be in B byte for byte, and B must hold nothing A does not.
Beyond the files, every block that is in use in A after the repair
(xattr blocks, the journal, directory and extent blocks, the inode
tables with every inode field and in-inode xattr, the superblocks and
descriptors) must read the same in B, and e2fsck -fy must say of B what
it said of A (its exit code): a trim that makes e2fsck fix something it
did not have to fix before is unsafe.  Any difference is unsafe,
whatever the reason.  No fixture-dependent guess decides it.

Refusing is not safe by itself.  Control mutants (no edit, or edits
e2fsck calls harmless: mutations.CONTROLS; the harness checks that
e2fsck -fy changes nothing in them) must be trimmed: a refusal there is
"refused_control", a failure, so that a program that refuses everything
cannot pass.  Any other refusal of a mutant in which e2fsck -fy changes
nothing is labelled "refused_clean" (a refusal where e2fsck would not
have had to act: allowed, since where a field and the content disagree
e2trim may refuse, but counted, for the refusals that are not true).

The real trim goes one of several ways (MODE, drawn per mutant): the
image file, a loop device over it, -z, --zero-fill, --secure on a loop
device (which cannot: exit 2 and nothing changed, then the file way),
or the image as a qcow2 through qemu-nbd, converted back for the oracle.

Every judged image goes on past its filesystem (fixtures.TAIL_BYTES of
random data after its last block, as a neighbour's bytes follow a
partition): those bytes are in no free range, so a trim that touches them
is unsafe by the block comparison above.  On a filesystem with
multi-mount protection (the fixture ext4-mmp) the MMP block must be
marked clean after the real trim, as it was before (e2fsck -fy would take
a block left in use over and hide it): else unsafe.

Verdicts:
  refused      e2trim exit is a documented refusal (10-19, 22-27) and
               stderr says why ("e2trim: ...")
  trimmed      the kept files are the same; every planned block is free
               in A
  realloc      the kept files are the same, but e2fsck took some planned
               blocks while repairing A (a new journal, lost+found, a
               copy of a multiply-claimed block): a label, not a failure
  unsafe       the kept files or in-use blocks differ, or e2fsck -fy's
               exit differs between A and B
  refused_clean  a refusal of a mutant in which e2fsck -fy changes
               nothing: a label, not a failure
  refused_control  a refusal of a control mutant
Harness failures (each makes the run fail, like unsafe):
  crashed      e2trim killed by a signal, or hung (timeout)
  bad_exit     an exit that is neither 0 nor a documented refusal, or a
               refusal that does not say why
  bad_output   exit 0 with a plan that is empty or not "start length"
               lines, a real trim that plans other ranges than its dry
               run, or a planned range that does not read as zeros after
               the real trim
  dry_run_wrote  the dry run changed the image
  harness_error  the harness itself failed on the mutant (a timeout of
               debugfs, say): saved, counted, never safe
  fsck_failed  e2fsck -fy exits 8 or more on A (or times out) while
               e2trim planned a trim: no oracle, and e2fsck would stop
               there while e2trim trims"""

import hashlib
import os
import re
import shutil
import subprocess

import fixtures

# README's exit table: 10-19 and 22-27 are refusals; 20 and 21 belong to
# --fsck, which the harness never gives.
REFUSALS = set(range(10, 20)) | set(range(22, 28))
FAILURES = ("unsafe", "refused_control", "crashed", "bad_exit", "bad_output",
             "dry_run_wrote", "fsck_failed", "harness_error")
MODES = ("file", "loop", "zeroout", "zero-fill", "secure", "nbd")
VERDICTS = ("refused", "refused_clean", "trimmed", "realloc") + FAILURES
E2FSCK = os.environ.get("E2FSCK", "e2fsck")


def _e2trim(e2trim, args, timeout=120):
    try:
        r = subprocess.run([e2trim] + args, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timeout after %d s" % timeout


def _fsck(img):
    try:
        f = subprocess.run([E2FSCK, "-fy", img], env=fixtures.ENV,
                           capture_output=True, text=True, errors="replace",
                           timeout=300)
        return f.returncode, f.stdout + f.stderr
    except subprocess.TimeoutExpired:
        return -999, "timeout"


def _stamp(img):
    """What any write, punch or truncate of IMG changes, as the kernel
    keeps it: modification and change times (ns), size, allocation.  A
    dry run must leave all four alone; cheaper than comparing 64 MiB
    for every mutant, most of which are refused."""
    st = os.stat(img)
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_blocks


MMP_SEQ_CLEAN = 0xFF4D4D50	# EXT4_MMP_SEQ_CLEAN: no node uses it


def _mmp(img):
    """(block, sequence) of IMG's MMP block, (None, None) without
    multi-mount protection.  A node that uses the filesystem writes its
    own sequence there and EXT4_MMP_SEQ_CLEAN when it lets go; one left
    in use keeps every other node (a mount, e2fsck) waiting or refusing.
    e2fsck -fy takes it over, so the judge reads it before any repair.
    Every opener for writing (e2trim, e2fsck) also stamps the block with
    its wall-clock time and node name: its bytes are no oracle."""
    import struct
    with open(img, "rb") as f:
        f.seek(1024)
        sb = f.read(1024)
        if len(sb) < 1024 or struct.unpack_from("<H", sb, 0x38)[0] != 0xEF53:
            return None, None
        incompat = struct.unpack_from("<I", sb, 0x60)[0]
        if not incompat & 0x100:	# EXT4_FEATURE_INCOMPAT_MMP
            return None, None
        blk = struct.unpack_from("<Q", sb, 0x168)[0]
        bs = 1024 << struct.unpack_from("<I", sb, 0x18)[0]
        f.seek(blk * bs)
        mmp = f.read(8)
    return blk, (struct.unpack_from("<I", mmp, 4)[0] if len(mmp) == 8 else None)


def _plan(out):
    """[(start, length)] of a --list output, or None if a line is not one."""
    plan = []
    for line in out.splitlines():
        m = re.fullmatch(r"\s*(\d+)\s+(\d+)\s*", line)
        if not m:
            return None
        plan.append((int(m.group(1)), int(m.group(2))))
    return plan


def _not_zero(img, plan):
    """Planned ranges that do not read as zeros after the real trim."""
    bad = []
    with open(img, "rb") as f:
        for start, length in plan:
            f.seek(start)
            left, pos = length, start
            while left:
                n = min(left, 8 << 20)
                if f.read(n) != bytes(n):
                    bad.append((start, length))
                    break
                left -= n
                pos += n
    return bad


def _ls_tree(img):
    """[(path, ino, mode, size)] of every entry under /, a level a run."""
    todo, seen, found = ["/"], {2}, []
    while todo:
        batch, todo = todo, []
        r = subprocess.run(["debugfs", "-f", "-", img], input="".join(
            "ls -p %s\n" % d for d in batch), env=fixtures.ENV,
            capture_output=True, text=True, errors="replace", timeout=120)
        cur = None
        for line in r.stdout.splitlines():
            if line.startswith("debugfs: ls -p "):
                cur = line[len("debugfs: ls -p "):]
                continue
            parts = line.split("/")
            if cur is None or len(parts) < 8 or not parts[1].isdigit():
                continue
            ino, mode, name = int(parts[1]), int(parts[2], 8), parts[5]
            if name in (".", "..") or ino == 0:
                continue
            path = cur.rstrip("/") + "/" + name
            size = int(parts[6]) if parts[6].isdigit() else 0
            found.append((path, ino, mode, size))
            if (mode & 0o170000) == 0o040000 and ino not in seen:
                seen.add(ino)
                todo.append(path)
    return found


def _giants(img, workdir, bs):
    """Regular files larger than the image (sparse, as e2fsck allows):
    dumping them would write terabytes.  Their size and the hash of their
    mapped blocks, read from the image, stand for their content; then
    they are unlinked from this copy, which nothing reads after."""
    limit = os.path.getsize(img)
    big = [(p, i, sz) for p, i, m, sz in _ls_tree(img)
           if (m & 0o170000) == 0o100000 and sz > limit]
    files = {}
    if not big:
        return files
    r = subprocess.run(["debugfs", "-f", "-", img], input="".join(
        "blocks <%d>\n" % i for _, i, _ in big), env=fixtures.ENV,
        capture_output=True, text=True, errors="replace", timeout=120)
    chunks = r.stdout.split("debugfs: blocks <")[1:]
    with open(img, "rb") as f:
        for (path, ino, size), chunk in zip(big, chunks):
            h = hashlib.sha256()
            for b in chunk.split("\n", 1)[-1].split():
                if b.isdigit():
                    f.seek(int(b) * bs)
                    h.update(f.read(bs))
            files[path.lstrip("/")] = ("file", size, "blocks:" + h.hexdigest())
    subprocess.run(["debugfs", "-w", "-f", "-", img], input="".join(
        "unlink %s\n" % p for p, _, _ in big), env=fixtures.ENV,
        capture_output=True, text=True, timeout=120)
    return files


def manifest(img, workdir, tag, bs):
    """{path: (type, size, sha256 or link target)} of every file e2fsck
    kept in IMG, from one debugfs rdump of / (no root needed)."""
    giants = _giants(img, workdir, bs)
    out = os.path.join(workdir, "tree." + tag)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = subprocess.run(["debugfs", "-R", "rdump / " + out, img],
                       env=fixtures.ENV, capture_output=True, text=True,
                       errors="replace", timeout=120)
    files = {}
    for root, dirs, names in os.walk(out):
        for n in dirs + names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, out)
            st = os.lstat(p)
            if os.path.islink(p):
                files[rel] = ("link", st.st_size, os.readlink(p))
            elif os.path.isdir(p):
                files[rel] = ("dir", 0, "")
            elif os.path.isfile(p):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                files[rel] = ("file", st.st_size, h.hexdigest())
            else:
                files[rel] = ("other", 0, "")
    shutil.rmtree(out, ignore_errors=True)
    files.update(giants)
    # what debugfs could not read is part of the oracle too
    errs = sorted(l for l in r.stderr.splitlines()
                  if l and not l.startswith("debugfs "))
    return files, errs


def diff_manifests(a, b):
    """Human lines: what B lost or changed of A, and what B has beyond."""
    out = []
    for p in sorted(a):
        if p not in b:
            out.append("lost %s (%s, %d bytes)" % (p, a[p][0], a[p][1]))
        elif a[p] != b[p]:
            out.append("changed %s: %s %d -> %s %d" % (p, a[p][0], a[p][1],
                                                     b[p][0], b[p][1]))
    for p in sorted(set(b) - set(a)):
        out.append("extra %s (%s, %d bytes)" % (p, b[p][0], b[p][1]))
    return out


def fsck_changes(img, workdir):
    """e2fsck -fy's exit on a copy of IMG: 0 when it finds nothing to
    change.  (-fn is not enough: it skips a journal's recovery and calls
    the rest clean.)"""
    c = os.path.join(workdir, "clean.img")
    shutil.copyfile(img, c)
    try:
        return _fsck(c)[0]
    finally:
        os.unlink(c)


def _used_differs(a, b, free, bs, most=50):
    """Blocks in use in A (not in FREE, A's free ranges after e2fsck -fy)
    whose bytes differ in B: [block], at most MOST."""
    bad = []
    fi = 0
    with open(a, "rb") as fa, open(b, "rb") as fb:
        pos = 0
        chunk = max(bs, 1 << 20)
        while len(bad) < most:
            x, y = fa.read(chunk), fb.read(chunk)
            if not x:
                break
            if x != y:
                for off in range(0, len(x), bs):
                    if x[off:off + bs] == y[off:off + bs]:
                        continue
                    blk = (pos + off) // bs
                    while fi < len(free) and free[fi][1] < blk:
                        fi += 1
                    if not (fi < len(free) and free[fi][0] <= blk):
                        bad.append(blk)
            pos += len(x)
    return bad


def _within(got, plan):
    """Ranges of GOT not wholly inside one range of PLAN (both sorted
    byte extents; PLAN's ranges are disjoint)."""
    out, j = [], 0
    for start, length in got:
        while j < len(plan) and plan[j][0] + plan[j][1] <= start:
            j += 1
        if not (j < len(plan) and plan[j][0] <= start and
                start + length <= plan[j][0] + plan[j][1]):
            out.append((start, length))
    return out


def _sha(path, skip=None):
    """SHA-256 of PATH, the byte range SKIP (start, length) read as zeros."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        data = f.read()
    if skip:
        start, length = skip
        data = data[:start] + bytes(len(data[start:start + length])) + \
            data[start + length:]
    h.update(data)
    return h.hexdigest()


def _mmp_range(img, bs):
    """The MMP block's bytes (start, length), None without MMP."""
    blk, _ = _mmp(img)
    return (blk * bs, bs) if blk else None


def _run_loop(e2trim, img, args):
    """e2trim ARGS on a loop device over IMG; (rc, out, err)."""
    r = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError("losetup: " + r.stderr)
    dev = r.stdout.strip()
    try:
        return _e2trim(e2trim, args + [dev])
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def _run_nbd(e2trim, img, args, workdir):
    """e2trim ARGS on IMG made a qcow2, converted back into IMG."""
    q = os.path.join(workdir, "mut.qcow2")
    subprocess.run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", img, q],
                   check=True, capture_output=True)
    rc, out, err = _e2trim(e2trim, args + [q])
    subprocess.run(["qemu-img", "convert", "-f", "qcow2", "-O", "raw", q, img],
                   check=True, capture_output=True)
    os.unlink(q)
    return rc, out, err


def _real_trim(e2trim, img, mode, workdir, res, bs):
    """The real trim of MODE: (rc, --list output, stderr); a mode this
    host cannot give falls back to the file, and so does NBD for an MMP
    filesystem (e2trim refuses it there, 12: libext2fs reads the MMP block
    only on a device or an image file)."""
    root = os.geteuid() == 0 and shutil.which("losetup")
    mmp = _mmp_range(img, bs)
    if mode in ("loop", "secure") and not root:
        mode = "file"
    if mode == "nbd" and (mmp or not (shutil.which("qemu-img") and
                                      shutil.which("qemu-nbd"))):
        mode = "file"
    res["mode"] = mode
    if mode in ("secure", "zeroout"):
        # a loop device cannot discard securely, tmpfs cannot zero a
        # range: exit 2 must change nothing (but the MMP block, which
        # the open for writing stamps; its sequence is checked after the
        # trim); then the file way
        before = _sha(img, mmp)
        if mode == "secure":
            rc, out, err = _run_loop(e2trim, img, ["--secure", "--list"])
        else:
            rc, out, err = _e2trim(e2trim, ["-z", "--list", img])
        if rc != 2:
            return rc, out, err
        if _sha(img, mmp) != before:
            return None, "", "%s exited 2 and changed the image" % mode
        res["mode"] = mode = mode + ",file"
        return _e2trim(e2trim, ["--list", img])
    if mode == "loop":
        return _run_loop(e2trim, img, ["--list"])
    if mode == "nbd":
        return _run_nbd(e2trim, img, ["--list"], workdir)
    extra = ["--zero-fill"] if mode == "zero-fill" else []
    return _e2trim(e2trim, extra + ["--list", img])


def _refusal(img, rc, err, res, workdir):
    """The verdict on a refusal RC: refused, refused_clean,
    refused_control or bad_exit."""
    if rc not in REFUSALS or not re.search(r"^e2trim: \S", err, re.M):
        return "bad_exit"
    if res.get("control"):
        res["why"] = "refused with %d a control mutant, which must be trimmed" % rc
        return "refused_control"
    res["fsck_rc"] = fsck_changes(img, workdir)
    if res["fsck_rc"] == 0:
        res["why"] = ("refused with %d, but e2fsck -fy finds nothing to "
                      "change in the mutant" % rc)
        return "refused_clean"
    return "refused"


def judge_image(e2trim, img, workdir, bs, free_ranges, used_in_plan, res,
                mode="file"):
    """Judge the mutant IMG (consumed) into RES; returns RES."""
    a = os.path.join(workdir, "fsck.img")
    mmp_blk, mmp_before = _mmp(img)
    before = _stamp(img)
    rc, out, err = _e2trim(e2trim, ["-n", "--list", img])
    res.update(e2trim_rc=rc, e2trim_err=err[-2000:])
    if rc is None or rc < 0 or rc >= 128:
        res["verdict"] = "crashed"
        return res
    if _stamp(img) != before:
        res["verdict"] = "dry_run_wrote"
        return res
    if rc != 0:
        res["verdict"] = _refusal(img, rc, err, res, workdir)
        return res
    plan = _plan(out)
    if not plan:
        res.update(verdict="bad_output", why="exit 0, plan %s: %r" % (
            "empty" if plan == [] else "unreadable", out[:200]))
        return res
    res["plan_extents"] = len(plan)
    shutil.copyfile(img, a)
    rc2, out2, err2 = _real_trim(e2trim, img, mode, workdir, res, bs)
    got = _plan(out2) if rc2 == 0 else None
    # --zero-fill zeroes every free block, the 4 KiB units a trim keeps
    # back at an extent's edges too: its list is not the trim's
    outside = [] if res["mode"] == "zero-fill" else _within(got or [], plan)
    if got is None or (res["mode"] in ("file", "loop", "secure,file", "zeroout,file")
                       and got != plan) or \
            outside:
        res.update(verdict="bad_output", why="the real trim (%s) exited %s "
                   "and listed %d ranges (dry run: %d; outside it: %s): %s" % (
                       res["mode"], rc2, len(got or []), len(plan),
                       outside[:3], err2[-300:]))
        return res
    nz = _not_zero(img, got)
    if nz:
        res.update(verdict="bad_output", why="%d listed ranges not zero "
                   "after the real trim (%s), e.g. %s" % (len(nz), res["mode"],
                                                          nz[:3]))
        return res
    # the MMP block as e2trim left it, before e2fsck takes it over
    _, mmp_after = _mmp(img)
    if mmp_before == MMP_SEQ_CLEAN and mmp_after != MMP_SEQ_CLEAN:
        res.update(verdict="unsafe", lost=["the MMP block is left marked in "
                                           "use after the trim (mmp_seq %s, "
                                           "was clean)" % (
                                               "%#x" % mmp_after if mmp_after
                                               is not None else "unreadable")])
        return res
    frc, fout = _fsck(a)
    res.update(fsck_rc=frc, fsck_out=fout[-6000:])
    if frc < 0 or frc >= 8:
        res["verdict"] = "fsck_failed"
        return res
    brc, bout = _fsck(img)
    res.update(fsck_trimmed_rc=brc)
    if brc != frc:
        res.update(verdict="unsafe", lost=["e2fsck -fy exits %d after the "
                                           "trim, %d without it" % (brc, frc)],
                   fsck_trimmed_out=bout[-3000:])
        return res
    free_a = free_ranges(a)
    # the MMP block holds the last opener's clock and node: not compared
    changed = [b for b in _used_differs(a, img, free_a, bs) if b != mmp_blk]
    ma, ea = manifest(a, workdir, "a", bs)
    mb, eb = manifest(img, workdir, "b", bs)
    lost = diff_manifests(ma, mb)
    if ea != eb:
        lost.append("debugfs read errors differ: %s / %s" % (ea[:3], eb[:3]))
    if changed:
        lost.append("blocks in use after e2fsck -fy differ: %s" % changed[:20])
    res["kept_files"] = len(ma)
    bad = used_in_plan(plan, free_a, bs)
    if bad:
        res["kept_in_plan"] = bad[:50]
        res["kept_blocks"] = sum(y - x + 1 for x, y in bad)
    if lost:
        res.update(verdict="unsafe", lost=lost[:50], lost_files=len(lost),
                   plan=plan[:200], fsck_trimmed_out=bout[-3000:])
    else:
        res["verdict"] = "realloc" if bad else "trimmed"
    return res
