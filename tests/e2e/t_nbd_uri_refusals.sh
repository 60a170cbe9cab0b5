#!/bin/bash
# NBD servers that run already, named by URI: nbdkit's file plugin over a
# raw image trims it (holes punched, used blocks identical); a read-only
# qemu-nbd cannot trim and is refused with 25; a qcow2 that another
# qemu-nbd holds (qemu's image lock) is refused with 26, with qemu's own
# words.  Each refusal changes nothing.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"
command -v nbdkit >/dev/null || skip "nbdkit not installed (make deps installs it)"

PIDS=()
# shellcheck disable=SC2317  # called by the trap
stop_servers() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	cleanup
}
trap stop_servers EXIT
# wait_sock SOCK: until a server listens there
wait_sock() {
	local i
	for i in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done
	fail "no server on $1"
}

raw="$T/fs.raw"
mkfs "$raw" 128M -t ext4
age "$raw" 3
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck before"
used0=$(used_blocks_digest "$raw")
hbs=$(stat -f -c %S "$raw")
oracle_extents "$raw" | aligned_extents "$hbs" >"$T/plan"
want=$(awk '{s += $2} END {print s + 0}' "$T/plan")

# nbdkit's file plugin: trims punch holes in the raw file
nbdkit -U "$T/kit.sock" -P "$T/kit.pid" file "$raw" || fail "nbdkit"
wait_sock "$T/kit.sock"
PIDS+=("$(cat "$T/kit.pid")")
uri="nbd+unix:///?socket=$T/kit.sock"
alloc0=$(alloc_bytes "$raw")
run_e2trim -v "$uri"
assert_rc 0 "trim through nbdkit"
kill "$(cat "$T/kit.pid")"
alloc1=$(alloc_bytes "$raw")
[ $(( (alloc0 - alloc1) * 10 )) -ge $((want * 9)) ] ||
	fail "raw file shrank by $((alloc0 - alloc1)), less than 90 % of $want"
assert_eq "$(used_blocks_digest "$raw")" "$used0" "used blocks after the trim"
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck after"
note "nbdkit file plugin: $alloc0 -> $alloc1 bytes allocated"

# a server that takes nothing smaller than 4 KiB and prefers 64 KiB
# (blocksize-policy refuses anything else): the superblock is read as
# whole blocks, and the trims go in whole 64 KiB units
mkfs "$T/bs.raw" 64M -t ext4
age "$T/bs.raw" 9
used_bs=$(used_blocks_digest "$T/bs.raw")
nbdkit -U "$T/bs.sock" -P "$T/bs.pid" --filter=blocksize-policy file "$T/bs.raw" \
	blocksize-minimum=4096 blocksize-preferred=65536 blocksize-maximum=1M \
	blocksize-error-policy=error || fail "nbdkit blocksize-policy"
wait_sock "$T/bs.sock"
PIDS+=("$(cat "$T/bs.pid")")
run_e2trim -n --list "nbd+unix:///?socket=$T/bs.sock"
assert_rc 0 "dry run through a 4 KiB-minimum server"
oracle_extents "$T/bs.raw" | aligned_extents 65536 >"$T/bs.plan"
cmp -s "$OUT" "$T/bs.plan" || { diff "$OUT" "$T/bs.plan" | head; fail "--list not in the server's preferred 64 KiB"; }
run_e2trim -v "nbd+unix:///?socket=$T/bs.sock"
assert_rc 0 "trim through a 4 KiB-minimum server"
kill "$(cat "$T/bs.pid")"
assert_eq "$(used_blocks_digest "$T/bs.raw")" "$used_bs" "used blocks (blocksize-policy)"
e2fsck -fn "$T/bs.raw" >/dev/null 2>&1 || fail "e2fsck after (blocksize-policy)"

# a read-only server: refused with 25, nothing changed
mkfs "$T/fs2.raw" 64M -t ext4
age "$T/fs2.raw" 5
qemu-img convert -O qcow2 "$T/fs2.raw" "$T/q2.qcow2" || fail "convert"
sum=$(file_md5 "$T/q2.qcow2")
qemu-nbd -f qcow2 --read-only --persistent -k "$T/ro.sock" "$T/q2.qcow2" &
PIDS+=("$!")
wait_sock "$T/ro.sock"
run_e2trim -v "nbd+unix:///?socket=$T/ro.sock"
assert_rc 25 "read-only NBD server"
assert_grep "the NBD server cannot trim; start it with discard enabled" "$ERR" "25's message"
# the dry run of a read-only server is fine: it only counts
run_e2trim -n -v "nbd+unix:///?socket=$T/ro.sock"
assert_rc 0 "dry run through a read-only server"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null
assert_eq "$(file_md5 "$T/q2.qcow2")" "$sum" "refused image changed"

# another qemu-nbd holds the image: refused with 26, nothing changed
qemu-nbd -f qcow2 --persistent -k "$T/hold.sock" "$T/q2.qcow2" &
PIDS+=("$!")
wait_sock "$T/hold.sock"
run_e2trim -v "$T/q2.qcow2"
assert_rc 26 "image locked by another qemu-nbd"
assert_grep 'open in another program (qemu.s image lock)' "$ERR" "26's message"
assert_grep 'Failed to get .*lock' "$ERR" "qemu's own words"
run_e2trim -n "$T/q2.qcow2"
assert_rc 26 "dry run of a locked image"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null
assert_eq "$(file_md5 "$T/q2.qcow2")" "$sum" "locked image changed"

# the lock gone, the same image trims
run_e2trim "$T/q2.qcow2"
assert_rc 0 "trim once the lock is gone"

# no server there at all
run_e2trim "nbd+unix:///?socket=$T/none.sock"
assert_rc 1 "no server"
assert_grep "cannot connect to the NBD server" "$ERR" "no server's message"
note "25, 26 and a missing server refused; nothing changed"
exit 0
