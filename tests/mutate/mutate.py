#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""e2trim's mutation campaign: random debugfs edits of clean fixtures,
each mutant judged by the one rule: every file `e2fsck -fy` keeps when it
repairs a copy of the mutant is byte for byte the same when e2trim
really trims the mutant first (judge.py: how, and the verdicts).

  mutate.py run [-n MUTANTS] [--seed S] [-j JOBS] [--fixtures a,b] [--ops a,b]
                [--cases DIR] [--minimize N | --no-minimize]
  mutate.py replay [--full] CASEDIR...  run saved cases again (exit 1: unsafe)
  mutate.py minimize CASEDIR...         write min.dfs into saved cases
  mutate.py check FIXTURE SCRIPT        one mutant from a script of your own

Exit 1 when a mutant is unsafe or could not be judged (crashed,
bad_exit, bad_output, dry_run_wrote, fsck_failed): a harness failure is
never counted as safe.  `check` also exits 2 on refused_clean (a
refusal where e2fsck -fy changes nothing), which `run` counts and
reports as a refusal that is not true.

E2TRIM names the binary (default build/e2trim), E2FSCK the checker
(default e2fsck).  Mutant I of seed S is always the same fixture and
script, for one version of mutations.py.  Every mutant that is not
refused or trimmed is saved as CASES/<fixture>-s<S>-<I>/: case.json
(fixture, seed, index, verdict, what e2trim planned, what e2fsck said,
the files lost), script.dfs (the debugfs script that makes it from the
fixture), and for the first case of each kind min.dfs (the shortest
script still unsafe).  `mutate.py replay CASEDIR` runs min.dfs (or with
--full script.dfs) again."""

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import fixtures
import judge as verdict
import mutations

sys.path.insert(0, fixtures.IMAGES)
import fixtool  # noqa: E402  (images/: the dumpe2fs free-list parser)

E2TRIM = os.environ.get("E2TRIM", os.path.join(fixtures.TOP, "build", "e2trim"))
G = {}		# fixture name -> description, shared with the workers by fork
SAVED = verdict.FAILURES + ("realloc",)	# verdicts kept as case directories
CONTROL_SHARE = 0.1	# control mutants (mutations.CONTROLS): must be trimmed
STATS = {"controls": {}, "ways": {}}	# controls' verdicts, real trims by way


def _fixture_path(name):
    return G[name]["path"]


def write_jdata(img, lines, workdir):
    """jw -b LIST jdata.bin journals the fixture's own blocks in LIST."""
    bs = None
    for line in lines:
        m = re.match(r"jw -b ([\d,]+) (\S+)", line)
        if not m:
            continue
        if bs is None:
            bs = G[img]["bs"]
        with open(_fixture_path(img), "rb") as src, \
                open(os.path.join(workdir, m.group(2)), "wb") as dst:
            for b in m.group(1).split(","):
                src.seek(int(b) * bs)
                dst.write(src.read(bs))


def recount(img, g):
    """ssv lines that make the superblock's free counts the sum of the
    groups' (on bigalloc the groups count clusters, the superblock blocks)."""
    out = fixtures.run(["dumpe2fs", img]).stdout
    fb = sum(int(x) for x in re.findall(r"^  (\d+) free (?:blocks|clusters),", out, re.M))
    fi = sum(int(x) for x in re.findall(r" (\d+) free inodes,", out, re.M))
    return ["# op recount", "ssv free_blocks_count %d" % (fb * g["ratio"]),
            "ssv free_inodes_count %d" % fi]


def _count_ranges(text):
    n = 0
    for r in text.replace(" ", "").split(","):
        if r:
            a, _, b = r.partition("-")
            n += int(b or a) - int(a) + 1
    return n


def group_recount(img, ratio):
    """set_bg lines that make each group's free block and inode counts
    what its bitmaps say (freeb and seti leave the counts alone)."""
    out = fixtures.run(["dumpe2fs", img]).stdout
    lines = ["# op group_recount"]
    for m in re.finditer(r"^Group (\d+):.*?(\d+) free (?:blocks|clusters), "
                         r"(\d+) free inodes,[^\n]*\n  Free blocks: ?([^\n]*)\n"
                         r"  Free inodes: ?([^\n]*)$", out, re.M | re.S):
        grp = int(m.group(1))
        fb, fi = _count_ranges(m.group(4)) // ratio, _count_ranges(m.group(5))
        fix = []
        if int(m.group(2)) != fb:
            fix.append("set_bg %d free_blocks_count %d" % (grp, fb))
        if int(m.group(3)) != fi:
            fix.append("set_bg %d free_inodes_count %d" % (grp, fi))
        if fix:
            lines += fix + ["set_bg %d checksum calc" % grp]
    return lines


def make_mutant(fixture, lines, workdir):
    img = os.path.join(workdir, "mut.img")
    shutil.copyfile(_fixture_path(fixture), img)
    # data after the filesystem's end (fixtures.TAIL_BYTES): a trim past
    # it is judged unsafe
    with open(img, "ab") as f:
        f.write(fixtures.tail_of(fixture))
    write_jdata(fixture, lines, workdir)
    path = os.path.join(workdir, "script.dfs")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run(["debugfs", "-w", "-f", path, img], cwd=workdir,
                       env=fixtures.ENV, capture_output=True, text=True,
                       errors="replace", timeout=60)
    return img, r.stdout + r.stderr


def free_ranges(img):
    """Free block ranges [a, b] after repair, from dumpe2fs."""
    out = fixtures.run(["dumpe2fs", img]).stdout
    return sorted((a, b) for _, a, b in fixtool.parse_free_ranges(out))


def used_in_plan(plan, free, bs):
    """Block ranges of PLAN (byte extents) that FREE does not cover."""
    bad = []
    for start, length in plan:
        lo, hi = start // bs, (start + length - 1) // bs
        cur = lo
        for a, b in free:
            if b < cur:
                continue
            if a > hi:
                break
            if a > cur:
                bad.append((cur, min(a - 1, hi)))
            cur = max(cur, b + 1)
            if cur > hi:
                break
        if cur <= hi:
            bad.append((cur, hi))
    return bad


def judge(fixture, lines, workdir, made=None, mode="file"):
    """Make the mutant (unless MADE: its image and debugfs output) and
    judge it (judge.py: the verdicts), the real trim done MODE's way.
    Returns a dict."""
    if not made and mutations.NEEDS_RECOUNT in lines and \
            "# op group_recount" not in lines:
        img, out = make_mutant(fixture, lines, workdir)
        more = group_recount(img, G[fixture]["ratio"])
        made = img, out + fixtures.debugfs_script(img, more)
        lines = lines + more
    img, dfs_out = made or make_mutant(fixture, lines, workdir)
    res = {"fixture": fixture, "script": lines, "debugfs": dfs_out[-4000:]}
    res["control"] = any(l.startswith("# control ") for l in lines)
    if res["control"]:
        rc = verdict.fsck_changes(img, workdir)
        if rc != 0:	# the harness's own mistake, never a verdict on e2trim
            res.update(verdict="harness_error", e2trim_rc=None, e2trim_err="",
                       why="control mutant, but e2fsck -fy exits %d" % rc)
            return res
    return verdict.judge_image(E2TRIM, img, workdir, G[fixture]["bs"],
                               free_ranges, used_in_plan, res, mode)


def mutant(seed, index, names):
    """Fixture and script of mutant INDEX of SEED (always the same)."""
    rng = random.Random("%d-%d" % (seed, index))
    fixture = names[index % len(names)]
    # drawn apart, so that every other mutant of a seed stays what it was
    side = random.Random("side-%d-%d" % (seed, index))
    mode = side.choice(verdict.MODES * 1 + ("file",) * 4)
    if not ONLY and side.random() < CONTROL_SHARE:
        return fixture, mutations.generate_control(side, G[fixture]), False, mode
    lines = mutations.generate(rng, G[fixture], ONLY)
    return fixture, lines, rng.random() < 0.7, mode


def minimize(fixture, lines, workdir):
    """Drop whole operations, then single lines, while still unsafe."""
    def unsafe(ls):
        return judge(fixture, ls, workdir)["verdict"] == "unsafe"
    ops, cur = [], []
    for line in lines:
        if line.startswith("# op ") and cur:
            ops.append(cur)
            cur = []
        cur.append(line)
    if cur:
        ops.append(cur)
    i = 0
    while len(ops) > 1 and i < len(ops):
        trial = ops[:i] + ops[i + 1:]
        if unsafe(sum(trial, [])):
            ops = trial
        else:
            i += 1
    best = sum(ops, [])
    i = 0
    while i < len(best):
        if best[i].startswith("#"):
            i += 1
            continue
        trial = best[:i] + best[i + 1:]
        if unsafe(trial):
            best = trial
        else:
            i += 1
    return best


def save_case(cases, name, res, extra):
    d = os.path.join(cases, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "script.dfs"), "w") as f:
        f.write("\n".join(res["script"]) + "\n")
    if extra.get("min"):
        with open(os.path.join(d, "min.dfs"), "w") as f:
            f.write("\n".join(extra["min"]) + "\n")
    case = {k: v for k, v in res.items() if k not in ("script",)}
    case.update({k: v for k, v in extra.items() if k != "min"})
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    return d


def _work(args):
    seed, index, names, cases = args
    fixture, lines, do_recount, mode = mutant(seed, index, names)
    wd = tempfile.mkdtemp(prefix="m%d." % index, dir=SCRATCH)
    try:
        made = make_mutant(fixture, lines, wd)
        if mutations.NEEDS_RECOUNT in lines:
            more = group_recount(made[0], G[fixture]["ratio"])
            lines = lines + more
            made = (made[0], made[1] + fixtures.debugfs_script(made[0], more))
        if do_recount:	# keep the superblock's totals agreeing too
            more = recount(made[0], G[fixture])
            lines = lines + more
            made = (made[0], made[1] + fixtures.debugfs_script(made[0], more))
        try:
            res = judge(fixture, lines, wd, made, mode)
        except Exception as e:	# never lose a mutant, never call it safe
            res = {"fixture": fixture, "script": lines, "verdict": "harness_error",
                   "why": repr(e)[-2000:], "e2trim_rc": None, "e2trim_err": ""}
        if res["verdict"] in SAVED:
            res["case_dir"] = save_case(cases, "%s-s%d-%d" % (fixture, seed, index),
                                        res, {"seed": seed, "index": index})
            res["ops"] = _ops(lines)
        return index, res
    finally:
        shutil.rmtree(wd, ignore_errors=True)


def _ops(lines):
    return "+".join(sorted({l[5:] for l in lines if l.startswith("# op ")
                            and l != "# op recount"}))


def _minimize_case(d):
    """Write min.dfs into case directory D; its class: the ops left."""
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    with open(os.path.join(d, "script.dfs")) as f:
        lines = f.read().splitlines()
    wd = tempfile.mkdtemp(prefix="min.", dir=SCRATCH)
    try:
        best = minimize(case["fixture"], lines, wd)
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    with open(os.path.join(d, "min.dfs"), "w") as f:
        f.write("\n".join(best) + "\n")
    return d, _ops(best) or "recount"


def setup(names, cache):
    if any(fixtures.is_mmp(n) for n in names):
        fixtures.mmp_no_wait(cache)
    for n in names:
        p = fixtures.prepare(n, cache)
        G[n] = fixtures.describe(p)
        G[n]["path"] = p
        G[n]["free"] = free_ranges(p)


def cmd_run(a):
    global ONLY
    names = a.fixtures.split(",") if a.fixtures else fixtures.FIXTURES
    if a.ops:
        ONLY = a.ops.split(",")
        unknown = set(ONLY) - set(mutations.op_names())
        if unknown:
            sys.exit("unknown ops %s; ops: %s" % (",".join(sorted(unknown)),
                                                  ",".join(mutations.op_names())))
    setup(names, CACHE)
    os.makedirs(a.cases, exist_ok=True)
    t0 = time.time()
    counts = dict.fromkeys(("tried",) + verdict.VERDICTS, 0)
    by_rc, by_fix, classes = {}, {}, {}
    jobs = [(a.seed, i, names, a.cases) for i in range(a.mutants)]
    with multiprocessing.Pool(a.jobs) as pool:
        for _, res in pool.imap_unordered(_work, jobs, chunksize=4):
            v = res["verdict"]
            counts["tried"] += 1
            if res.get("control"):
                c = STATS["controls"]
                c[v] = c.get(v, 0) + 1
            if res.get("mode"):
                STATS["ways"][res["mode"]] = STATS["ways"].get(res["mode"], 0) + 1
            counts[v] += 1
            if v == "refused":
                by_rc[res["e2trim_rc"]] = by_rc.get(res["e2trim_rc"], 0) + 1
            f = by_fix.setdefault(res["fixture"], {})
            f[v] = f.get(v, 0) + 1
            if v in SAVED:
                key = v + ":" + res["ops"]
                classes.setdefault(key, []).append(res["case_dir"])
                print("%s: %s (%s)" % (v.upper(), res["case_dir"], key),
                      file=sys.stderr, flush=True)
            if a.progress and counts["tried"] % a.progress == 0:
                print("... %d mutants, %d unsafe, %.0f s" % (
                    counts["tried"], counts["unsafe"], time.time() - t0),
                    file=sys.stderr, flush=True)
            if a.progress and counts["tried"] % a.progress == 0 and a.summary:
                _summary(a, counts, by_rc, by_fix, classes, time.time() - t0)
        secs = time.time() - t0
        report(a, names, counts, by_rc, by_fix, classes, secs)
        if a.no_minimize:
            return _failed(counts)
        # one case of each kind, the shortest scripts first, cut down to
        # what still fails
        todo = sorted((os.path.getsize(os.path.join(ds[0], "script.dfs")), ds[0])
                      for k, ds in classes.items() if k.startswith("unsafe"))
        minimized = {}
        for d, key in pool.imap_unordered(_minimize_case, [d for _, d in todo[:a.minimize]]):
            minimized.setdefault(key, []).append(d)
        for key, ds in sorted(minimized.items()):
            print("minimal class %s: %d cases, e.g. %s/min.dfs" % (key, len(ds), ds[0]))
    return _failed(counts)


def _failed(counts):
    """1 if any mutant is unsafe or the harness could not judge it."""
    return 1 if any(counts[v] for v in verdict.FAILURES) else 0


def _summary(a, counts, by_rc, by_fix, classes, secs):
    with open(a.summary, "w") as f:
        json.dump({"counts": counts, "by_rc": by_rc, "by_fixture": by_fix,
                   "classes": classes, "seconds": secs}, f, indent=1)


def report(a, names, counts, by_rc, by_fix, classes, secs):
    print("mutants tried %d: refused %d, trimmed %d, unsafe %d, "
          "crashed %d (refused control %d, refused clean %d, realloc %d, "
          "fsck failed %d, bad exit %d, "
          "bad output %d, dry run wrote %d, harness error %d; seed %d, "
          "%.0f s, %.2f s/mutant/job)" % (
              counts["tried"], counts["refused"], counts["trimmed"],
              counts["unsafe"], counts["crashed"], counts["refused_control"],
              counts["refused_clean"],
              counts["realloc"],
              counts["fsck_failed"], counts["bad_exit"], counts["bad_output"],
              counts["dry_run_wrote"], counts["harness_error"],
              a.seed, secs, secs * a.jobs / max(1, counts["tried"])))
    print("refused by exit code: " + ", ".join(
        "%d: %d" % kv for kv in sorted(by_rc.items())))
    print("controls (must be trimmed): %d, trimmed %d; real trims by way: %s" % (
        sum(STATS["controls"].values()), STATS["controls"].get("trimmed", 0),
        ", ".join("%s %d" % kv for kv in sorted(STATS["ways"].items()))))
    for n in names:
        print("  %-18s %s" % (n, ", ".join("%s %d" % kv for kv in sorted(by_fix.get(n, {}).items()))))
    for key, dirs in sorted(classes.items()):
        print("class %s: %d, e.g. %s" % (key, len(dirs), dirs[0]))
    sys.stdout.flush()
    if a.summary:
        _summary(a, counts, by_rc, by_fix, classes, secs)


def _print_verdict(res):
    print("verdict: %s (e2trim exit %s, e2fsck exit %s, after the trim %s)" % (
        res["verdict"], res["e2trim_rc"], res.get("fsck_rc", "-"),
        res.get("fsck_trimmed_rc", "-")))
    if res.get("why"):
        print(res["why"])
    if res["verdict"] in ("bad_exit", "crashed"):
        print("e2trim said: " + res["e2trim_err"][-500:])
    if res.get("kept_blocks"):
        print("blocks of the plan in use after e2fsck -fy: %d, in %s" % (
            res["kept_blocks"], res["kept_in_plan"][:10]))
    if res.get("lost"):
        print("files e2fsck -fy keeps that the trim lost or changed (%d):\n  %s" % (
            len(res["lost"]), "\n  ".join(res["lost"][:20])))
    if res["verdict"] in ("unsafe", "realloc", "fsck_failed"):
        print("e2fsck -fy said:\n" + res.get("fsck_out", ""))


def cmd_replay(a):
    worst = 0
    for d in a.cases:
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        script = os.path.join(d, "min.dfs" if not a.full and
                              os.path.exists(os.path.join(d, "min.dfs")) else "script.dfs")
        with open(script) as f:
            lines = f.read().splitlines()
        setup([case["fixture"]], CACHE)
        wd = tempfile.mkdtemp(dir=SCRATCH)
        try:
            print("== %s (%s, %s)" % (d, case["fixture"], os.path.basename(script)))
            res = judge(case["fixture"], lines, wd)
            _print_verdict(res)
            worst |= res["verdict"] in verdict.FAILURES
        finally:
            shutil.rmtree(wd, ignore_errors=True)
    return 1 if worst else 0


def cmd_minimize(a):
    for d in a.cases:
        with open(os.path.join(d, "case.json")) as f:
            setup([json.load(f)["fixture"]], CACHE)
        d, key = _minimize_case(d)
        print("%s: %s" % (d, key))
        with open(os.path.join(d, "min.dfs")) as f:
            print(f.read(), end="")
    return 0


def cmd_check(a):
    with open(a.script) as f:
        lines = f.read().splitlines()
    setup([a.fixture], CACHE)
    wd = tempfile.mkdtemp(dir=SCRATCH)
    try:
        res = judge(a.fixture, lines, wd, mode=a.mode)
        _print_verdict(res)
        if a.json:
            print(json.dumps(res))
        # one mutant, asked for by name: a refusal where e2fsck -fy
        # changes nothing is what the question was about (run counts
        # it among the refusals that are not true; here it fails)
        if res["verdict"] == "refused_clean":
            print("check: refused_clean fails a one-off check (exit 2)")
            return 2
        return 1 if res["verdict"] in verdict.FAILURES else 0
    finally:
        shutil.rmtree(wd, ignore_errors=True)


def main():
    global CACHE, SCRATCH
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", default=os.environ.get("MUTATE_CACHE"),
                   help="where fixtures are kept decompressed (default: scratch)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("-n", "--mutants", type=int, default=1000)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--fixtures")
    r.add_argument("--ops", help="only these operations (names of "
                   "mutations.op_names(), comma-separated)")
    r.add_argument("--cases", default="mutate-cases")
    r.add_argument("--no-minimize", action="store_true")
    r.add_argument("--minimize", type=int, default=40,
                   help="kinds of unsafe case to minimize, one case each (40)")
    r.add_argument("--progress", type=int, default=0)
    r.add_argument("--summary")
    r.set_defaults(func=cmd_run)
    r = sub.add_parser("replay")
    r.add_argument("--full", action="store_true", help="script.dfs, not min.dfs")
    r.add_argument("cases", nargs="+")
    r.set_defaults(func=cmd_replay)
    r = sub.add_parser("minimize", help="write min.dfs into saved cases")
    r.add_argument("cases", nargs="+")
    r.set_defaults(func=cmd_minimize)
    r = sub.add_parser("check")
    r.add_argument("fixture")
    r.add_argument("script")
    r.add_argument("--json", action="store_true")
    r.add_argument("--mode", default="file", choices=verdict.MODES,
                   help="the real trim's way (judge.py)")
    r.set_defaults(func=cmd_check)
    a = p.parse_args()
    # tmpfs when there is one: a mutant is a few copies of a small image
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    SCRATCH = tempfile.mkdtemp(prefix="e2trim-mutate.", dir=base)
    CACHE = a.cache or os.path.join(SCRATCH, "fixtures")
    os.makedirs(CACHE, exist_ok=True)
    try:
        return a.func(a)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)


CACHE = SCRATCH = ONLY = None
if __name__ == "__main__":
    sys.exit(main())
