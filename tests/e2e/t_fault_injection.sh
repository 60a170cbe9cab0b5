#!/bin/bash
# Failed and interrupted requests, end to end: an LD_PRELOAD shim
# (tests/inject/fault_fallocate.c) makes the first, a middle or the last
# hole punch of a trim on an image file fail with EIO, EOPNOTSUPP or
# EINVAL, or a SIGINT/SIGTERM arrive while it runs.  main() must map each
# to its exit code (1; 2 when nothing could be discarded at all; 130), the
# report must name the failed offset and count exactly the requests done
# before it, and nothing after it may change: the image's bytes are
# compared with what the completed requests alone would have left.
# Then the same through a loop device with io_uring made unavailable:
# e2trim falls back to one BLKDISCARD at a time, and the loop device's
# own discard counter must agree with the report.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)

shim=$T/fault.so
${CC:-cc} -shared -fPIC -o "$shim" "$here/inject/fault_fallocate.c" -ldl ||
	fail "cannot build the fault shim"
# an ASan build wants its runtime first; the shim only wraps fallocate()
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

img=$T/fs.img
mkfs "$img" 64M -t ext4 -g 4096
age "$img" 5
hbs=$(stat -f -c %S "$img")
cp --sparse=always "$img" "$T/orig.img"
used=$(used_blocks_digest "$img")

# the requests a full trim makes: each free extent trimmed inward to the
# host block (the image is fully allocated, so no hole is skipped)
oracle_extents "$img" >"$T/plan"
awk -v g="$hbs" '{ a = int(($1 + g - 1) / g) * g; b = int(($1 + $2) / g) * g
	if (b > a) print a, b - a }' "$T/plan" >"$T/requests"
n=$(wc -l <"$T/requests")
[ "$n" -ge 10 ] || fail "only $n requests in the test image"
req_start() { sed -n "$1p" "$T/requests" | cut -d' ' -f1; }
bytes_before() { head -n "$(($1 - 1))" "$T/requests" | awk '{s += $2} END {print s + 0}'; }

disc_requests() { awk '{print $12}' "/sys/block/$(basename "$1")/stat"; }

# fault AT WHAT RC WHY [dev]: run with the shim on the image file, or on
# a loop device over it; check exit code, report, image
fault() {
	local at=$1 what=$2 rc=$3 why=$4 kind=${5:-file} ndone bytes dev d0
	cp --sparse=always "$T/orig.img" "$img"
	case $what in INT|TERM) ndone=$at ;; *) ndone=$((at - 1)) ;; esac
	if [ "$kind" = dev ]; then
		dev=$(loop_attach "$img")
		d0=$(disc_requests "$dev")
		E2TRIM_NO_URING=1 E2TRIM_FAULT=$at:$what LD_PRELOAD=$shim \
			run_e2trim -v "$dev"
		assert_eq "$(($(disc_requests "$dev") - d0))" "$ndone" \
			"fault $what at $at ($kind): discards the device saw"
		losetup -d "$dev"
		LOOPS=()
	else
		E2TRIM_FAULT=$at:$what LD_PRELOAD=$shim run_e2trim -v "$img"
	fi
	assert_rc "$rc" "fault $what at request $at ($kind)"
	bytes=$(bytes_before $((ndone + 1)))
	assert_grep "$why" "$ERR" "fault $what at $at: reason"
	assert_grep "($bytes bytes) trimmed in $ndone request" "$ERR" \
		"fault $what at $at: partial report"
	grep -q "trimmed$" "$OUT" && fail "fault $what at $at: a summary was printed"
	# exactly the first $ndone requests were punched, nothing else changed
	head -n "$ndone" "$T/requests" >"$T/done"
	python3 "$here/same_outside.py" "$T/orig.img" "$img" "$T/done" 1 >/dev/null ||
		fail "fault $what at $at: bytes outside the completed requests changed"
	[ "$ndone" = 0 ] || python3 "$here/holes.py" "$img" "$T/done" 1 >/dev/null ||
		fail "fault $what at $at: completed requests are not holes"
	assert_eq "$(used_blocks_digest "$img")" "$used" "fault $what at $at: used blocks"
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fault $what at $at: e2fsck -fn"; }
	note "$kind: $what at request $at of $n: exit $rc, $ndone requests reported"
}

mid=$((n / 2))
for at in 1 "$mid" "$n"; do
	fault "$at" 5 1 "discard at byte $(req_start "$at") failed: Input/output error"
	fault "$at" 22 1 "discard at byte $(req_start "$at") failed: Invalid argument"
done
# not supported at all: exit 2, but only when nothing was discarded
fault 1 95 2 "discard at byte $(req_start 1) failed: Operation not supported"
fault "$mid" 95 1 "discard at byte $(req_start "$mid") failed: Operation not supported"
# a signal during a request: it completes, no other starts
for sig in INT TERM; do
	fault 1 "$sig" 130 "interrupted after"
	fault "$mid" "$sig" 130 "interrupted after"
done
# no fault: the shim itself changes nothing
cp --sparse=always "$T/orig.img" "$img"
E2TRIM_FAULT=0:5 LD_PRELOAD=$shim run_e2trim -v "$img"
assert_rc 0 "no fault"
assert_grep "($(bytes_before $((n + 1))) bytes) trimmed" "$OUT" "no fault: bytes"

need_root
# no fault: the ioctl fallback trims it all (the faults below show that
# it is the path taken: they are injected into the ioctl)
cp --sparse=always "$T/orig.img" "$img"
dev=$(loop_attach "$img")
d0=$(disc_requests "$dev")
E2TRIM_NO_URING=1 LD_PRELOAD=$shim run_e2trim -v "$dev"
assert_rc 0 "no io_uring"
assert_eq "$(($(disc_requests "$dev") - d0))" "$n" "no io_uring: discards the device saw"
assert_grep "($(bytes_before $((n + 1))) bytes) trimmed" "$OUT" "no io_uring: bytes"
losetup -d "$dev"
LOOPS=()
python3 "$here/holes.py" "$img" "$T/requests" 1 >/dev/null || fail "no io_uring: not all holes"
assert_eq "$(used_blocks_digest "$img")" "$used" "no io_uring: used blocks"
# a ring that takes fewer bitmap reads than it was given is not trusted:
# they are read again through libext2fs, and the plan is dumpe2fs's
cp --sparse=always "$T/orig.img" "$img"
dev=$(loop_attach "$img")
E2TRIM_URING_SHORT=1 LD_PRELOAD=$shim run_e2trim -n --list "$dev"
assert_rc 0 "short io_uring submission"
list_oracle "$dev" "$img" >"$T/want"
cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head; fail "short io_uring submission: plan differs from dumpe2fs"; }
losetup -d "$dev"
LOOPS=()
fault "$mid" 5 1 "discard at byte $(req_start "$mid") failed: Input/output error" dev
fault 1 95 2 "discard at byte $(req_start 1) failed: Operation not supported" dev
fault "$mid" INT 130 "interrupted after" dev
exit 0
