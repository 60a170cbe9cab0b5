# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # CX, E2PID, STAGES: for the kinds and scenarios
# tests/contract/lib.sh - what every case of the target-contract suite
# starts with (src/target/README.md, "The target contract").
#
# A case is one scenario over one kind of target, run by case.sh in its
# own bash with its own $T: tests/lib.sh, this file, the kind's file
# (kinds/KIND.sh) and the scenario's (scenarios/SCENARIO.sh), then
# scenario_run.  The kind gives the target and its oracles, the scenario
# what is asserted; neither knows the other.
#
# A kind defines (the interface every kind added later must fill in):
#   KIND_WHOLE=1|0   its target is a whole disk (stale-superblock case)
#   KIND_MMP=1|0     e2trim takes a filesystem with MMP through it
#   kind_na SCEN     prints why SCEN does not apply to it, or nothing
#   kind_make SRC [SIZE]  the target around the raw bytes of file SRC (a
#                    filesystem, or a whole disk where KIND_WHOLE=1): a
#                    container of SIZE bytes (SRC's size) holding SRC's
#                    first SIZE bytes; sets KARGS, e2trim's words for it
#   kind_copy OUT    the filesystem's bytes as they are now, into file OUT
#                    (read without e2trim: cp, dd, qemu-img, rbd export)
#   kind_write DIR   the kind's own writer (a VM's qemu, a mount, a second
#                    NBD client, a librbd client) writes the new files of
#                    make_patch's DIR into the filesystem: 0 it wrote,
#                    1 it was kept out (why in $T/writer.err)
#   kind_state       every byte, allocation, mtime, lock (and Ceph object)
#                    of the target's containers, one line each
#   kind_alloc       the bytes the target's own layer allocates
#   kind_left FREE   of the extents of file FREE ("start length", bytes of
#                    the filesystem), the bytes the kind's own layer still
#                    allocates; "-" when it keeps no map
#   kind_held        whatever is still held (locks on its files, servers,
#                    RBD locks and watchers), one line each; nothing: ""
#   kind_names       hostile names: lines "VICTIM<TAB>TARGET<TAB>HOW" where
#                    TARGET (e2trim's words) carries the name of file
#                    VICTIM, someone else's; HOW "refuse": the run must be
#                    refused, "read": VICTIM is only read (a backing
#                    file), the run may go on; made by the kind
#   kind_teardown    what cleanup() does not know about (RBD images)
#   kind_bytes       (a kind whose bytes live in a file of this machine)
#                    "FILE OFFSET": that file and where the filesystem
#                    starts in it, OFFSET "-" when not raw there (qcow2);
#                    the paths_* scenarios (paths_lib.sh) write through it
# shellcheck source-path=SCRIPTDIR/.. source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CX=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CX_FIX:?run through tests/contract/run.sh (it makes the fixtures)}"
KARGS=()

# The refusal codes a case accepts as "refused" (src/e2trim.h): what the
# target cannot do or be given as (2, 3: a name e2trim will not follow is
# refused as a bad argument), in use (10), every gate's code (11-19,
# 22-24), the VM image's (25-27).
is_refusal() {
	case $1 in 2 | 3 | 10 | 1[1-9] | 2[2-7]) return 0 ;; esac
	return 1
}

# na REASON: the scenario does not apply to this kind (runner: N/A).
na() { echo "N/A: $*"; exit 78; }

# contract_cleanup: the kind's own, then tests/lib.sh's
contract_cleanup() {
	if declare -F kind_teardown >/dev/null; then kind_teardown; fi
	cleanup
}
trap contract_cleanup EXIT

# e2trim with its temporary files kept where the case can see them: a run
# that ends, however it ends, must leave $T/tmp empty.
mkdir -p "$T/tmp"
export TMPDIR=$T/tmp

# e2trim on the kind's target; RC, OUT, ERR as run_e2trim
run_kind() { run_e2trim "$@" "${KARGS[@]}"; }

# json_field FILE KEY: result.KEY of the first target of a --json report
json_field() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["targets"][0]
r = d.get("result") or {}
v = r.get(sys.argv[2], d.get(sys.argv[2]))
print("null" if v is None else v)' "$1" "$2"
}

# fs_files RAW: sha256 of every regular file of the filesystem in RAW,
# "path sha" a line, read by debugfs (rdump), no mount
fs_files() {
	local d=$T/rdump.$$
	rm -rf "$d"; mkdir -p "$d"
	debugfs -R "rdump / $d" "$1" >/dev/null 2>&1 || { echo "rdump failed"; return; }
	(cd "$d" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
	rm -rf "$d"
}

# fs_check RAW WHAT: e2fsck -fn clean
fs_check() {
	e2fsck -fn "$1" >"$T/fsck.out" 2>&1 || { tail -5 "$T/fsck.out" >&2; fail "$2: e2fsck -fn"; }
}

# new_files_lost RAW DIR: the names of the writer's new files (make_patch's
# DIR/f1..f3, cx_new1..3 in the filesystem) that RAW does not hold byte for
# byte, space-separated with a leading space; nothing when all survived
new_files_lost() {
	local i got
	for i in 1 2 3; do
		rm -f "$T/got$i"
		dfs_read "$1" "dump cx_new$i $T/got$i" >/dev/null
		got=$(sha_of "$T/got$i" 2>/dev/null)
		[ "$got" = "$(sha_of "$2/f$i")" ] || printf ' cx_new%s' "$i"
	done
}

# writer_kept_out STAGE: the run the writer was kept out of trimmed (0),
# and left $T/after.raw clean with every file as it was ($CX_FIX/fs.files)
writer_kept_out() {
	assert_rc 0 "$1: the writer was kept out ($(head -c 200 "$T/writer.err"))"
	fs_check "$T/after.raw" "$1"
	fs_files "$T/after.raw" >"$T/files.after"
	diff "$CX_FIX/fs.files" "$T/files.after" >&2 || fail "$1: files changed"
	note "$1: the writer was kept out: $(grep -m1 . "$T/writer.err" | cut -c1-100)"
}

# make_patch RAW DIR: new files for a writer.  DIR/f1..f3 hold their
# bytes (random, fixed seed), DIR/new.raw is RAW with them written by
# debugfs (into blocks the filesystem calls free: what a trim planned
# from the old bitmaps would discard), DIR/extents the 4 KiB pieces of
# new.raw that differ from RAW ("offset length"), DIR/c.N their bytes.
make_patch() {
	local raw=$1 dir=$2 i
	mkdir -p "$dir"
	cp --sparse=always "$raw" "$dir/new.raw"
	for i in 1 2 3; do
		python3 -c 'import random, sys
random.seed(int(sys.argv[1]))
sys.stdout.buffer.write(random.randbytes(int(sys.argv[2])))' "$i" $((i * 96 * 1024 + 5000)) >"$dir/f$i"
		echo "write $dir/f$i cx_new$i"
	done | debugfs -w -f - "$dir/new.raw" >/dev/null 2>&1 || fail "debugfs: new files"
	python3 - "$raw" "$dir" <<'PY'
import sys
raw, d = sys.argv[1], sys.argv[2]
bs, out, n, run = 4096, [], 0, None
with open(raw, "rb") as a, open(d + "/new.raw", "rb") as b:
    off = 0
    while True:
        x, y = a.read(bs), b.read(bs)
        if not y:
            break
        if x != y:
            if run and run[0] + run[1] == off:
                run[1] += bs
            else:
                run = [off, bs]; out.append(run)
        off += bs
    for i, (o, l) in enumerate(out):
        b.seek(o)
        open(f"{d}/c.{i}", "wb").write(b.read(l))
with open(d + "/extents", "w") as f:
    for o, l in out:
        f.write(f"{o} {l}\n")
PY
	[ -s "$dir/extents" ] || fail "make_patch: nothing to write"
}

# qemu_io_patch DIR BASE FMT IMAGE [qemu-io options]: write DIR's extents
# at BASE + offset of IMAGE through qemu-io (qemu's block layer, with its
# image locks: what a VM does); 0 written, 1 refused
qemu_io_patch() {
	local dir=$1 base=$2 fmt=$3 img=$4 i=0 o l
	local cmds=()
	shift 4
	while read -r o l; do
		cmds+=(-c "write -q -s $dir/c.$i $((base + o)) $l")
		i=$((i + 1))
	done <"$dir/extents"
	cmds+=(-c flush)
	qemu-io "$@" -f "$fmt" "${cmds[@]}" "$img" >"$T/writer.out" 2>"$T/writer.err" || return 1
	# qemu-io exits 0 when a command failed: its errors say so
	! grep -q . "$T/writer.err" || return 1
	return 0
}

# mount_patch DIR DEV: the kernel writes DIR's files through a mount of
# DEV (what a mount of the filesystem does); 0 written, 1 kept out
mount_patch() {
	local dir=$1 dev=$2 mnt=$T/mnt i
	mkdir -p "$mnt"
	mount -t ext4 "$dev" "$mnt" 2>"$T/writer.err" || return 1
	for i in 1 2 3; do cp "$dir/f$i" "$mnt/cx_new$i"; done
	umount "$mnt" || fail "umount after the writer"
	return 0
}

# locks_on FILE...: /proc/locks lines about these files (by inode)
locks_on() {
	local f ino
	for f in "$@"; do
		[ -e "$f" ] || continue
		ino=$(stat -L -c %i "$f")
		grep -E ":$ino " /proc/locks | sed "s|^|lock on $f: |"
	done
}

# servers_of: qemu-nbd (or other qemu) processes that name a file of $T
servers_of() {
	local p
	for p in $(pgrep -x qemu-nbd) $(pgrep -f qemu-storage-daemon); do
		{ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q -- "$T" &&
			echo "server left: pid $p: $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)"
	done
	true
}

# file_state FILE...: sha256, size, allocated blocks and mtime of each
file_state() {
	local f
	# written back first: an extent block allocated at writeback
	# counts in st_blocks, and must not look like the run's doing
	sync "$@"
	for f in "$@"; do
		echo "$f $(sha_of "$f" | cut -c1-16) $(stat -c '%s %b %Y.%y' "$f")"
	done
}

# data_in FILE BASE FREE: bytes of FILE that SEEK_DATA calls data inside
# the extents of FREE ("start length"), each shifted by BASE
data_in() {
	python3 - "$1" "$2" "$3" <<'PY'
import os, sys
f, base, free = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fd = os.open(f, os.O_RDONLY)
size = os.fstat(fd).st_size
data, pos = [], 0
while pos < size:
    try:
        s = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    e = os.lseek(fd, s, os.SEEK_HOLE)
    data.append((s, e)); pos = e
n = 0
for line in open(free):
    a, l = map(int, line.split()); a += base; b = a + l
    for s, e in data:
        lo, hi = max(a, s), min(b, e)
        if hi > lo: n += hi - lo
print(n)
PY
}

# The filesystems every case starts from: made once by run.sh.
#   $CX_FIX/fs.raw      32 MiB ext4, 8 groups (-g 1024), aged: 30 files,
#                       free space written with 0x5a
#   $CX_FIX/fs.files    fs_files of fs.raw
#   $CX_FIX/patch       make_patch of fs.raw: a writer's new files
#   $CX_FIX/mmp.raw     the same with MMP (tune2fs -O mmp)
#   $CX_FIX/stale.raw   a 64 MiB disk: an old whole-disk ext4 at byte 0,
#                       then a GPT with partition 1 at 1 MiB holding a new
#                       aged ext4 (the old one's superblock left in place)
fix() { cp --sparse=always "$CX_FIX/$1" "$2"; }

# pause_at STAGE ARGS...: e2trim ARGS on the kind's target in the
# background, held at pause point STAGE (src/cli/test_hooks.c: verifying@start
# before verification, verifying during it, trimming@start at the first
# discard, trimming between two batches); returns once it is held there
# (the FIFO handshake of tests/lib.sh, no sleep).  $E2PID is e2trim's pid;
# resume_e2trim lets it go on and sets RC, OUT, ERR.
pause_at() {
	local stage=$1
	shift
	pause_arm "$stage"
	PAUSE=$T/pause
	rm -f "$PAUSE.pid" "$PAUSE.rc"
	(
		RC=0
		# a command started with & ignores SIGINT (bash): as from a
		# terminal, e2trim starts with the default action instead
		env --default-signal=INT,TERM "$E2TRIM" "$@" "${KARGS[@]}" >"$T/out" 2>"$T/err" &
		echo "$!" >"$PAUSE.pid"
		wait "$!" || RC=$?
		echo "$RC" >"$PAUSE.rc"
		echo "exited" >&7
	) &
	PAUSE_PID=$!
	unset E2TRIM_TEST_PAUSE
	pause_wait
	if [ "$PAUSED" = exited ]; then
		wait "$PAUSE_PID"
		pause_disarm
		rm -f "$PAUSE.pid"
		cat "$T/err" >&2
		fail "e2trim ended (exit $(cat "$PAUSE.rc")) before $stage"
	fi
	E2PID=$(cat "$PAUSE.pid")
}

# STAGES: the four pause points, in the order a run meets them
STAGES="verifying@start verifying trimming@start trimming"

# same_state WHAT BEFORE: kind_state and kind_held now are file BEFORE's
same_state() {
	{ kind_state; kind_held; } >"$T/state.now"
	diff "$2" "$T/state.now" >&2 || fail "$1: the target changed (above: before < > after)"
}
save_state() { { kind_state; kind_held; } >"$1"; }

# nothing_held WHAT: no lock, server, RBD lock or watcher, temp file left
nothing_held() {
	kind_held >"$T/held"
	[ ! -s "$T/held" ] || { cat "$T/held" >&2; fail "$1: left held"; }
	[ -z "$(ls -A "$T/tmp")" ] || { ls -l "$T/tmp" >&2; fail "$1: temporary files left"; }
}
