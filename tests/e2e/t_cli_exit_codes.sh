#!/bin/bash
# Exit codes a fleet script already understands (issue 26, point 2).
# Several targets end as fstrim -a does: 0, 64 some failed, 32 all
# failed; an interruption ends with 130 (as a shell says for SIGINT), one
# target or several, so that a script written for fstrim never reads it
# as "all failed".  With --json an interrupted single target still
# prints its document, and a target stopped before its first request has
# "result": null.  --quiet-unsupported (fstrim's option, in
# e2trim@.service) turns a disk that cannot discard into exit 0 without
# a message.  Signals come while e2trim is held at a pause point
# (src/cli/test_hooks.c), never after a sleep.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# strict JSON: UTF-8 bytes decoded strictly, then parsed
strict_json() {
	python3 -c 'import json, sys
json.loads(sys.stdin.buffer.read().decode("utf-8"))' <"$1" ||
		{ cat "$1"; fail "$2: not a strict JSON document"; }
}
# q FILE EXPR: EXPR of the document in FILE (d), printed
q() {
	python3 -c 'import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
v = eval(sys.argv[2])
print("null" if v is None else v)' "$1" "$2"
}

# fragment IMG: 200 free one-block extents more, each holding bytes (a
# request of its own).  A target held at its first completed request
# must still have requests to send, whatever the timing: with fewer free
# extents than the 32 e2trim keeps in flight (target_uring.c) all of them
# may be sent before the first completion is seen, and the run ends whole.
fragment() {
	local i
	printf 'e%.0s' $(seq 4096) >"$T/blk"
	{ for ((i = 0; i < 400; i++)); do echo "write $T/blk s$i"; done
	  for ((i = 0; i < 400; i += 2)); do echo "rm s$i"; done; } | dfs_write "$1"
}

cd "$T" || fail "cd"
mkfs a.img 32M -t ext4
age a.img 3
fragment a.img
mkfs b.img 32M -t ext4
age b.img 4
fragment b.img
for f in a.img b.img; do
	n=$("$E2TRIM" -n --list "$f" | wc -l)
	[ "$n" -gt 96 ] || fail "$f: only $n free extents, not many more than 32"
done
head -c 1M /dev/zero >zeros.img

run_e2trim -n zeros.img missing.img
assert_rc 32 "several targets, all failed (fstrim's 32)"
run_e2trim -n a.img zeros.img
assert_rc 64 "several targets, some failed (fstrim's 64)"
run_e2trim -n zeros.img
assert_rc 11 "a single target keeps its own code"
run_e2trim -n a.img b.img
assert_rc 0 "several targets, all trimmed"

# interrupt SIG ARGS...: e2trim ARGS held at its first trimming report
# with bytes done, SIG sent, released; RC, OUT, ERR as run_e2trim sets
interrupt() {
	local sig=$1 stage=$2 n=$3 pid i
	shift 3
	pause_arm "$stage"
	# shellcheck disable=SC2086
	${E2TRIM_WRAP:-} "$E2TRIM" "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	for ((i = 0; i < n; i++)); do pause_wait; done
	kill -s "$sig" "$pid" || fail "$sig: e2trim is gone while held"
	signal_taken "$pid"
	pause_release "$n"
	pause_disarm
	RC=0
	wait "$pid" || RC=$?
	OUT=$T/out ERR=$T/err
	[ "$RC" != 99 ] || { cat "$ERR"; fail "$sig: valgrind reported errors"; }
}

cp --sparse=always a.img a2.img
interrupt INT trimming 1 -v a2.img
assert_rc 130 "one target, SIGINT mid-trim"
assert_grep "interrupted after" "$ERR" "one target: partial report"
cp --sparse=always a.img a2.img
cp --sparse=always b.img b2.img
interrupt TERM trimming 2 -v -j 2 a2.img b2.img
assert_rc 130 "-j 2, SIGTERM mid-trim"
assert_eq "$(grep -c 'interrupted after' "$ERR")" 2 "-j 2: both partial reports"

# --json, one target, SIGTERM while it verifies (before any request):
# the document is printed, the target "interrupted", "result" null
cp --sparse=always a.img a2.img
sum=$(md5sum <a2.img)
interrupt TERM verifying 1 --json a2.img
assert_rc 130 "--json, one target, SIGTERM before the first discard"
strict_json "$OUT" "--json interrupted"
assert_eq "$(q "$OUT" 'd["exit_code"], d["targets"][0]["status"], d["targets"][0]["result"]')" \
	"(130, 'interrupted', None)" "--json interrupted: exit code, status, result"
assert_eq "$(md5sum <a2.img)" "$sum" "interrupted before the first discard: image unchanged"

# the units and hooks pass --quiet-unsupported, as fstrim.service does
src=$(cd "$(dirname "$0")/../../src" && pwd)
for f in systemd/e2trim@.service dracut/90e2trim/e2trim-pre-mount.sh \
	 initramfs-tools/scripts/local-premount/e2trim; do
	grep -q -- '--quiet-unsupported' "$src/$f" || fail "$f: no --quiet-unsupported"
done

# --quiet-unsupported: a loop device cannot secure-discard (exit 2)
if [ "$(id -u)" != 0 ] || ! losetup -f >/dev/null 2>&1; then
	note "left out (not root): --quiet-unsupported on a loop device"
	exit 0
fi
dev=$(loop_attach a.img)
[ "$(cat /sys/block/"$(basename "$dev")"/queue/discard_granularity)" != 0 ] ||
	skip "loop devices cannot discard here"
sum=$(md5sum <a.img)
run_e2trim -s "$dev"
assert_rc 2 "--secure on a loop device"
run_e2trim -s --json "$dev"
assert_rc 2 "--secure --json on a loop device"
strict_json "$OUT" "--secure --json"
assert_eq "$(q "$OUT" 'd["targets"][0]["status"], d["targets"][0]["result"]')" \
	"('failed', None)" "refused by the device before its first request: result null"
run_e2trim -s --quiet-unsupported "$dev"
assert_rc 0 "--quiet-unsupported: a disk that cannot discard"
[ ! -s "$ERR" ] || { cat "$ERR"; fail "--quiet-unsupported: a message"; }
run_e2trim -s --quiet-unsupported --json "$dev"
assert_rc 0 "--quiet-unsupported --json"
assert_eq "$(q "$OUT" 'd["exit_code"], d["targets"][0]["status"]')" "(0, 'unsupported')" \
	"--quiet-unsupported --json: status"
run_e2trim -s --quiet-unsupported "$dev" zeros.img
assert_rc 64 "--quiet-unsupported: the other target's failure still counts"
assert_eq "$(md5sum <a.img)" "$sum" "nothing discarded"
losetup -d "$dev"
LOOPS=()
exit 0
