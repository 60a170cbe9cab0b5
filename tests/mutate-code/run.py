#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make mutate-code: break e2trim on purpose and require the tests to see it.

Each mutant of mutants.txt is applied to its own scratch copy of the tree
(the tracked files as they are in the work tree), built there, and run
against the tests it is tagged with; a mutant none of them kills then
meets the whole `make check` of its copy (unless QUICK).  A mutant's
"suite:" says where its tests live: e2e (the default: tests/e2e/ and the
unit tests), ceph (tests/ceph/: a fresh cluster for each mutant and one
for the baseline, so that nothing a mutant's tests left in the cluster
decides the next one's fate; a survivor then meets every Ceph test, not
`make check`) or boot (tests/boot/: listed, never run here; see
BOOT_HOWTO).  A run takes one suite (--suite); the mutants of the others
are listed as NOT RUN, naming the make target that runs them.  Copies share
nothing, so mutants run side by side (JOBS).  First the tagged tests run
on an unmutated copy: one that fails there kills nothing (reported as
BASELINE); in `make check`, only failures of other tests count.

  run.py [--only a,b] [--jobs N] [--quick] [--keep] [--list] [--no-baseline]
         [--suite e2e|ceph]

Environment: MUTANTS_CODE (same as --only), MUTATE_CODE_QUICK=1 (same as
--quick), MUTATE_CODE_TMP (where the copies go; default /tmp).

Prints one line a mutant: KILLED (and by which test: a failing assertion,
lib.sh's "FAIL:" or cmocka's "[  FAILED  ]"), SURVIVED (a missing test),
or STALE (its text is gone, it does not build, or a test failed without
an assertion: a timeout, a crash of the test's script, a failed `make
deps` kill nothing; nor does a Ceph test's FAIL: before it ever ran
e2trim (its setup failed: tests/ceph/ceph_lib.sh's guard records each
run in E2TRIM_RUNS); fix mutants.txt or the test).
Exit 1 if any mutant survived or is stale."""

import argparse
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# suite: the make target that runs its mutants
SUITES = {"e2e": "make mutate-code", "ceph": "make mutate-code-ceph",
          "boot": None}
# A boot mutant needs the package built from the mutated copy and a guest
# boot (make check-boot): too slow to run per mutant here.  By hand:
BOOT_HOWTO = ("apply its - and + lines, then make check-boot "
              "(tests/boot/run.sh: ONLY=<test>); it must FAIL there")
# the Ceph cluster of a ceph run (start_cluster()): CEPH_CONF, CEPH_DIR
CEPH_ENV = {}


def parse(path):
    """[{name, file, suite, tests, old, new}] of mutants.txt."""
    muts, cur = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("== "):
                cur = {"name": line[3:].strip(), "tests": [], "line": n,
                       "suite": "e2e"}
                muts.append(cur)
            elif cur is None or not line.strip() or line.startswith("#"):
                continue
            elif line.startswith("file: "):
                cur["file"] = line[6:].strip()
            elif line.startswith("suite: "):
                cur["suite"] = line[7:].strip()
                if cur["suite"] not in SUITES:
                    sys.exit("%s:%d: unknown suite %r (%s)" % (
                        path, n, cur["suite"], " ".join(SUITES)))
            elif line.startswith("tests: "):
                cur["tests"] = line[7:].split()
            elif line.startswith("- ") or line.startswith("+ "):
                text = line[2:].replace("\\n", "\n").replace("\\t", "\t")
                cur["old" if line[0] == "-" else "new"] = text
            else:
                sys.exit("%s:%d: cannot read %r" % (path, n, line))
    for m in muts:
        for k in ("file", "old", "new"):
            if k not in m:
                sys.exit("%s:%d: mutant %s has no %s" % (path, m["line"],
                                                        m["name"], k))
    return muts


def copy_tree(dst):
    """The tracked files of the work tree, as they are now, into DST."""
    files = subprocess.run(["git", "-C", TOP, "ls-files", "-z"],
                           capture_output=True, check=True).stdout
    tar = subprocess.Popen(["tar", "-C", TOP, "--null", "-T", "-", "-cf", "-"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-C", dst, "-xf", "-"], stdin=tar.stdout)
    tar.stdin.write(files)
    tar.stdin.close()
    tar.stdout.close()
    if untar.wait() or tar.wait():
        raise RuntimeError("copying the tree failed")


def apply(dst, m):
    path = os.path.join(dst, m["file"])
    if not os.path.exists(path):
        return "no file %s" % m["file"]
    with open(path) as f:
        text = f.read()
    n = text.count(m["old"])
    if n != 1:
        return "the text to replace occurs %d times in %s" % (n, m["file"])
    with open(path, "w") as f:
        f.write(text.replace(m["old"], m["new"]))
    return None


def sh(cmd, cwd, env=None, timeout=1800):
    e = dict(os.environ, **(env or {}))
    e.pop("MAKEFLAGS", None)
    e.pop("MFLAGS", None)
    try:
        r = subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return -1, "timeout after %d s" % timeout


# What a kill is: a failing assertion of the test, not a timeout, a crash
# of the test's own script, a build or `make deps` that failed.  lib.sh's
# fail() prints "FAIL: ...", which run.sh shows behind "  | "; cmocka
# prints "[  FAILED  ]" for a failed assertion.
ASSERTION = re.compile(r"^(  \| )?FAIL: |^\[  FAILED  \] ", re.M)


def ran_e2trim(dst, name):
    """Did the Ceph test NAME run e2trim at all (ceph_lib.sh's guard
    writes a line for each run into E2TRIM_RUNS/NAME)?"""
    return os.path.getsize(os.path.join(dst, "e2trim-runs", name)) > 0 \
        if os.path.exists(os.path.join(dst, "e2trim-runs", name)) else False


def run_test(dst, name):
    """0 if test NAME passes on the copy in DST; else (how, output): how
    is "assert" when an assertion failed, "setup" when a Ceph test
    failed before it ran e2trim, "other" for anything else."""
    if name.startswith("test_"):
        rc, out = sh(["make", "--no-print-directory", "build/tests/" + name], dst)
        if rc:
            return "other", "does not build: " + out[-300:]
        rc, out = sh([os.path.join(dst, "build", "tests", name)], dst)
        if not rc:
            return 0
        return ("assert" if rc > 0 and ASSERTION.search(out) else "other",
                out[-400:])
    rc, out = run_suite(dst, name)
    if rc == 0 and re.search(r"^PASS ", out, re.M):
        return 0
    if rc == 0:
        return "other", "no test matched %s" % name
    # "FAIL NAME (exit RC)" or, as run.sh says it now, "(exit RC, Ns)"
    m = re.search(r"^FAIL (\S+) \(exit (\d+)[,)]", out, re.M)
    ok = m and m.group(2) == "1" and ASSERTION.search(out)
    if ok and CEPH_ENV and not ran_e2trim(dst, m.group(1)):
        return "setup", out[-400:]
    return ("assert" if ok else "other"), out[-400:]


def run_suite(dst, name=""):
    """tests/e2e/run.sh over the e2e tests, or with CEPH_ENV over
    tests/ceph/ (the cluster started once); NAME "" runs them all."""
    env = {"E2TRIM": os.path.join(dst, "build", "e2trim")}
    if CEPH_ENV:
        # as tests/ceph/run.sh runs them: one at a time, one cluster
        runs = os.path.join(dst, "e2trim-runs")
        shutil.rmtree(runs, ignore_errors=True)
        os.makedirs(runs)
        env.update(CEPH_ENV, TESTS_DIR=os.path.join(dst, "tests", "ceph"),
                   E2E_JOBS="1", SHOW_NOTES="1", E2TRIM_RUNS=runs,
                   PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    return sh(["bash", "tests/e2e/run.sh"] + ([name] if name else []), dst,
              env, timeout=3600)


def start_cluster(tmp):
    """A fresh one-node Ceph cluster (for one mutant of a ceph run, or
    its baseline): its CEPH_CONF and CEPH_DIR in CEPH_ENV."""
    d = tempfile.mkdtemp(prefix="e2trim-mc.ceph.", dir=tmp)
    # with cephx, as tests/ceph/run.sh starts it (t_rbd_cephx needs it)
    r = subprocess.run(["bash", os.path.join(TOP, "tests", "ceph", "cluster.sh"),
                        "start", os.path.join(d, "c")], capture_output=True,
                       text=True, errors="replace",
                       env=dict(os.environ, CEPH_AUTH="cephx"))
    if r.returncode:
        subprocess.run(["bash", os.path.join(TOP, "tests", "ceph", "cluster.sh"),
                        "stop", os.path.join(d, "c")])
        shutil.rmtree(d, ignore_errors=True)
        raise RuntimeError("the Ceph cluster did not start (a harness "
                           "failure, not a kill):\n" + r.stderr[-2000:])
    CEPH_ENV.update(CEPH_CONF=r.stdout.strip(), CEPH_DIR=os.path.join(d, "c"))
    return d


def stop_cluster(d):
    subprocess.run(["bash", os.path.join(TOP, "tests", "ceph", "cluster.sh"),
                    "stop", os.path.join(d, "c")])
    shutil.rmtree(d, ignore_errors=True)


def failed_in_check(out, dst=None):
    """Names of what `make check` reported as failed by an assertion
    (a Ceph test's only once it had run e2trim)."""
    names = [n for n, blk in re.findall(
        r"^FAIL (t_\w+) \(exit 1[,)].*\n((?:  \|.*\n)*)", out, re.M)
        if ASSERTION.search(blk) and not (CEPH_ENV and dst and
                                          not ran_e2trim(dst, n))]
    names += re.findall(r"^== \S*/(test_\w+)\n(?:(?!^== ).*\n)*?\[  FAILED  \]", out, re.M)
    return sorted(set(names))


def baseline(tests, tmp):
    """The tagged tests that fail on an unmutated copy: they kill nothing."""
    dst = tempfile.mkdtemp(prefix="e2trim-mc.baseline.", dir=tmp)
    try:
        copy_tree(dst)
        rc, out = sh(["make", "--no-print-directory", "-j1", "all"], dst)
        if rc:
            sys.exit("the unmutated tree does not build:\n" + out[-2000:])
        bad = {}
        for t in sorted(tests):
            r = run_test(dst, t)
            if r:
                bad[t] = r[1].strip().splitlines()[-1] if r[1].strip() else "failed"
        return bad
    finally:
        shutil.rmtree(dst, ignore_errors=True)


def one(args):
    m, quick, keep, tmp, skip, fresh = args
    try:
        cluster = start_cluster(tmp) if fresh else None
    except RuntimeError as e:
        return {"name": m["name"], "tests": m["tests"], "verdict": "stale",
                "why": str(e), "seconds": 0}
    try:
        return one_in(m, quick, keep, tmp, skip)
    finally:
        if cluster:
            stop_cluster(cluster)
            CEPH_ENV.clear()


def one_in(m, quick, keep, tmp, skip):
    t0 = time.time()
    dst = tempfile.mkdtemp(prefix="e2trim-mc.%s." % m["name"], dir=tmp)
    res = {"name": m["name"], "tests": m["tests"]}
    try:
        copy_tree(dst)
        why = apply(dst, m)
        if why:
            res.update(verdict="stale", why=why)
            return res
        rc, out = sh(["make", "--no-print-directory", "-j1", "all"], dst)
        if rc:
            res.update(verdict="stale", why="does not build: " + out[-300:])
            return res
        for t in m["tests"]:
            if t in skip:
                continue
            r = run_test(dst, t)
            if r:
                how, out = r
                if out.startswith("no test matched") or out.startswith("does not build"):
                    res.update(verdict="stale", why=out)
                    return res
                if how == "setup":	# the cluster or the test's setup
                    res.update(verdict="stale", why="%s failed before it ran "
                               "e2trim (its setup): %s" % (t, out.strip()[-300:]))
                    return res
                if how != "assert":	# a timeout or a crash proves nothing
                    res.update(verdict="stale", why="%s failed, but not by an "
                               "assertion: %s" % (t, out.strip()[-300:]))
                    return res
                res.update(verdict="killed", by=[t], how="tagged")
                return res
        if quick:
            res.update(verdict="survived", how="tagged tests only")
            return res
        if CEPH_ENV:	# every Ceph test, not make check
            rc, out = run_suite(dst)
        else:
            rc, out = sh(["make", "--no-print-directory", "check"], dst,
                         timeout=3600)
        by = [t for t in failed_in_check(out, dst) if t not in skip] if rc else []
        if by:
            res.update(verdict="killed", by=by, how="make check")
        elif rc:	# make deps, a build, a timeout: not a kill
            res.update(verdict="stale", why="make check failed, but no test "
                       "by an assertion: " + out.strip()[-300:])
        else:
            res.update(verdict="survived",
                       how="every Ceph test" if CEPH_ENV else "make check")
        return res
    except Exception as e:	# a harness failure is reported, not hidden
        res.update(verdict="stale", why="harness: %r" % e)
        return res
    finally:
        res["seconds"] = time.time() - t0
        if keep:
            res["dir"] = dst
        else:
            shutil.rmtree(dst, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default=os.environ.get("MUTANTS_CODE", ""))
    p.add_argument("--jobs", "-j", type=int, default=1)
    p.add_argument("--quick", action="store_true",
                   default=os.environ.get("MUTATE_CODE_QUICK", "") not in ("", "0"))
    p.add_argument("--keep", action="store_true", help="keep the copies")
    p.add_argument("--list", action="store_true", help="list the mutants")
    p.add_argument("--no-baseline", action="store_true",
                   help="trust that every tagged test passes unmutated")
    p.add_argument("--mutants", default=os.path.join(HERE, "mutants.txt"))
    p.add_argument("--suite", default="e2e", choices=[k for k, v in SUITES.items() if v],
                   help="run the mutants of this suite (default e2e)")
    a = p.parse_args()
    muts = parse(a.mutants)
    if a.list:
        for m in muts:
            print("%-36s %-5s %-26s %s" % (m["name"], m["suite"], m["file"],
                                          " ".join(m["tests"])))
        return 0
    if a.only:
        want = a.only.replace(",", " ").split()
        unknown = set(want) - {m["name"] for m in muts}
        if unknown:
            sys.exit("unknown mutants: " + " ".join(sorted(unknown)))
        muts = [m for m in muts if m["name"] in want]
    others = [m for m in muts if m["suite"] != a.suite]
    for m in others:	# the few of other suites by name, e2e's counted
        if m["suite"] != "e2e":
            print("NOT RUN  %-36s suite %s: %s" % (
                m["name"], m["suite"], SUITES[m["suite"]] or BOOT_HOWTO))
    n_e2e = sum(m["suite"] == "e2e" for m in others)
    if n_e2e:
        print("NOT RUN  %d e2e mutants: %s" % (n_e2e, SUITES["e2e"]))
    muts = [m for m in muts if m["suite"] == a.suite]
    if not muts:
        print("no %s mutant to run" % a.suite)
        return 0
    tmp = os.environ.get("MUTATE_CODE_TMP") or None
    t0 = time.time()
    # a stop ends the run through its finally: the cluster stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if a.suite == "ceph":
        a.jobs = 1	# one cluster at a time: it is CPU-heavy
    return run_all(a, muts, tmp, t0)


def run_all(a, muts, tmp, t0):
    skip = {}
    fresh = a.suite == "ceph"
    if not a.no_baseline:
        try:
            cluster = start_cluster(tmp) if fresh else None
        except RuntimeError as e:
            sys.exit(str(e))
        try:
            skip = baseline({t for m in muts for t in m["tests"]}, tmp)
        finally:
            if cluster:
                stop_cluster(cluster)
                CEPH_ENV.clear()
        for t, why in sorted(skip.items()):
            print("BASELINE %s fails on the unmutated tree, kills nothing: %s" % (t, why))
        print("baseline: %.0f s" % (time.time() - t0), flush=True)
    counts = {"killed": 0, "survived": 0, "stale": 0}
    survivors, stale = [], []
    with multiprocessing.Pool(a.jobs) as pool:
        for r in pool.imap_unordered(one, [(m, a.quick, a.keep, tmp, skip, fresh)
                                          for m in muts]):
            v = r["verdict"]
            counts[v] += 1
            if v == "killed":
                print("KILLED   %-36s by %s (%s, %.0f s)" % (
                    r["name"], ", ".join(r["by"]), r["how"], r["seconds"]), flush=True)
            elif v == "survived":
                survivors.append(r)
                print("SURVIVED %-36s (%s; tagged: %s; %.0f s)" % (
                    r["name"], r["how"], " ".join(r["tests"]), r["seconds"]), flush=True)
            else:
                stale.append(r)
                print("STALE    %-36s %s" % (r["name"], r["why"].strip()[-300:]), flush=True)
    print("code mutants %d: killed %d, survived %d, stale %d (%.0f s, %d jobs%s)" % (
        len(muts), counts["killed"], counts["survived"], counts["stale"],
        time.time() - t0, a.jobs, ", quick" if a.quick else ""))
    if survivors:
        print("survivors (a missing test each): " + " ".join(r["name"] for r in survivors))
    return 1 if survivors or stale else 0


if __name__ == "__main__":
    sys.exit(main())
