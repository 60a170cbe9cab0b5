# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdict on one mutant: the one rule itself.

    A: a copy of the mutant, repaired by `e2fsck -fy` (no e2trim).
    B: the mutant after a dry run (which must not write: its times, size
       and allocation stay as they were), then a
       real trim (`e2trim --list`: an image file's free blocks punched),
       then `e2fsck -fy`.

Every file A keeps (path, type, size, content: one debugfs rdump of the
tree) must be in B byte for byte, and B must hold nothing A does not.
Any difference is unsafe, whatever the reason.  No fixture-dependent
guess decides it.

Verdicts:
  refused      e2trim exit is a documented refusal (10-19, 22-27) and
               stderr says why ("e2trim: ...")
  trimmed      the kept files are the same; every planned block is free
               in A
  realloc      the kept files are the same, but e2fsck took some planned
               blocks while repairing A (a new journal, lost+found, a
               copy of a multiply-claimed block): a label, not a failure
  unsafe       the kept files differ, or e2fsck fails on B only
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
FAILURES = ("unsafe", "crashed", "bad_exit", "bad_output", "dry_run_wrote",
            "fsck_failed", "harness_error")
VERDICTS = ("refused", "trimmed", "realloc") + FAILURES
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


def judge_image(e2trim, img, workdir, bs, free_ranges, used_in_plan, res):
    """Judge the mutant IMG (consumed) into RES; returns RES."""
    a = os.path.join(workdir, "fsck.img")
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
        ok = rc in REFUSALS and re.search(r"^e2trim: \S", err, re.M)
        res["verdict"] = "refused" if ok else "bad_exit"
        return res
    plan = _plan(out)
    if not plan:
        res.update(verdict="bad_output", why="exit 0, plan %s: %r" % (
            "empty" if plan == [] else "unreadable", out[:200]))
        return res
    res["plan_extents"] = len(plan)
    shutil.copyfile(img, a)
    rc2, out2, err2 = _e2trim(e2trim, ["--list", img])
    if rc2 != 0 or _plan(out2) != plan:
        res.update(verdict="bad_output", why="the real trim exited %s and "
                   "planned %d ranges (dry run: %d): %s" % (
                       rc2, len(_plan(out2) or []), len(plan), err2[-300:]))
        return res
    nz = _not_zero(img, plan)
    if nz:
        res.update(verdict="bad_output", why="%d planned ranges not zero "
                   "after the real trim, e.g. %s" % (len(nz), nz[:3]))
        return res
    frc, fout = _fsck(a)
    res.update(fsck_rc=frc, fsck_out=fout[-6000:])
    if frc < 0 or frc >= 8:
        res["verdict"] = "fsck_failed"
        return res
    brc, bout = _fsck(img)
    res.update(fsck_trimmed_rc=brc)
    if brc < 0 or brc >= 8:
        res.update(verdict="unsafe", lost=["e2fsck -fy fails after the trim "
                                           "(exit %d), not before" % brc],
                   fsck_trimmed_out=bout[-3000:])
        return res
    ma, ea = manifest(a, workdir, "a", bs)
    mb, eb = manifest(img, workdir, "b", bs)
    lost = diff_manifests(ma, mb)
    if ea != eb:
        lost.append("debugfs read errors differ: %s / %s" % (ea[:3], eb[:3]))
    res["kept_files"] = len(ma)
    bad = used_in_plan(plan, free_ranges(a), bs)
    if bad:
        res["kept_in_plan"] = bad[:50]
        res["kept_blocks"] = sum(y - x + 1 for x, y in bad)
    if lost:
        res.update(verdict="unsafe", lost=lost[:50], lost_files=len(lost),
                   plan=plan[:200], fsck_trimmed_out=bout[-3000:])
    else:
        res["verdict"] = "realloc" if bad else "trimmed"
    return res
