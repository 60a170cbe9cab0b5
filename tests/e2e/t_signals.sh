#!/bin/bash
# SIGINT and SIGTERM in the middle of a long trim through a loop device:
# the requests in flight finish, no other starts, e2trim says what it did
# ("interrupted after ... trimmed in N requests") and exits 130.  The
# report must be exact: the loop device's own discard counters
# (/sys/block/loopN/stat fields 12 and 14) must agree with it.  And the
# filesystem must come out clean with every used block unchanged.
#
# The image: ext4 filled with fallocated files, then a 4 KiB hole punched
# every 8 KiB: about 200 000 free extents, a few seconds of discards.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

img=$T/frag.img
mnt=$T/mnt
mkfs "$img" 2G -t ext4
mkdir -p "$mnt"
dev=$(loop_attach "$img")
mount -o nodiscard "$dev" "$mnt" || fail "mount"
MOUNTS+=("$mnt")
python3 - "$mnt" <<'PY' || fail "cannot fragment the free space"
import ctypes, os, sys
mnt = sys.argv[1]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                           ctypes.c_longlong]
st = os.statvfs(mnt)
left = st.f_bavail * st.f_frsize * 95 // 100
chunk, i = 64 << 20, 0
while left >= chunk:
    fd = os.open(f"{mnt}/f{i}", os.O_RDWR | os.O_CREAT, 0o644)
    if libc.fallocate(fd, 0, 0, chunk):
        sys.exit(f"fallocate: errno {ctypes.get_errno()}")
    for off in range(0, chunk, 8192):   # FALLOC_FL_PUNCH_HOLE|KEEP_SIZE
        if libc.fallocate(fd, 3, off, 4096):
            sys.exit(f"punch: errno {ctypes.get_errno()}")
    os.close(fd)
    left -= chunk
    i += 1
PY
umount "$mnt" || fail "umount"
MOUNTS=()
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn before"; }
used=$(used_blocks_digest "$img")

run_e2trim -n -v "$dev"
assert_rc 0 "dry run"
total=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed (dry run)$/\1/p' "$OUT")
extents=$(grep -o '[0-9]* free extents' "$OUT" | cut -d' ' -f1)
[ "${extents:-0}" -gt 100000 ] || fail "only ${extents:-0} free extents"
note "$extents free extents, $total bytes planned"

stat_field() { awk -v f="$2" '{print $f}' "/sys/block/$(basename "$1")/stat"; }

# interrupt SIG: start a trim, signal it while it is held at its first
# progress report of the trimming stage (some discards done, most not:
# the pause point of src/cli/test_hooks.c, so no timing is involved)
interrupt() {
	local sig=$1 r0 s0 pid bytes reqs r1 s1
	r0=$(stat_field "$dev" 12)
	s0=$(stat_field "$dev" 14)
	pause_arm trimming
	# shellcheck disable=SC2086
	${E2TRIM_WRAP:-} "$E2TRIM" -v "$dev" >"$T/out" 2>"$T/err" &
	pid=$!
	pause_wait
	[ "$(stat_field "$dev" 12)" -gt "$r0" ] || fail "$sig: held before any discard"
	kill -s "$sig" "$pid" || fail "$sig: e2trim is gone while held"
	pause_release 1
	pause_disarm
	RC=0
	wait "$pid" || RC=$?
	ERR=$T/err
	[ "$RC" != 99 ] || { cat "$ERR"; fail "$sig: valgrind reported errors"; }
	assert_rc 130 "$sig"
	assert_grep "interrupted after" "$ERR" "$sig: partial report"
	grep -q "trimmed$" "$T/out" && fail "$sig: a full summary was printed"
	bytes=$(sed -n 's/.*interrupted after .* (\([0-9]*\) bytes) trimmed in .*/\1/p' "$ERR")
	reqs=$(sed -n 's/.* trimmed in \([0-9]*\) requests\{0,1\};.*/\1/p' "$ERR")
	if [ -z "$bytes" ] || [ -z "$reqs" ]; then
		cat "$ERR"
		fail "$sig: cannot read the report"
	fi
	[ "$bytes" -gt 0 ] || fail "$sig: nothing reported trimmed"
	[ "$bytes" -lt "$total" ] ||
		fail "$sig: $bytes bytes reported, expected between 0 and $total"
	# exactly what the device saw: every request counted, no other
	r1=$(stat_field "$dev" 12)
	s1=$(stat_field "$dev" 14)
	assert_eq "$((r1 - r0))" "$reqs" "$sig: loop discard requests vs report"
	assert_eq "$(((s1 - s0) * 512))" "$bytes" "$sig: loop discarded bytes vs report"
	note "$sig: exit 130 after $reqs requests ($extents free extents), $bytes of $total bytes"
}

interrupt INT
interrupt TERM

# Two targets at once (-j 2, two loop devices over two copies): one
# SIGINT stops both; each says what it trimmed, in the order given, its
# device's counters agree, and the run ends with 130.
cp --sparse=always "$img" "$T/frag2.img"
dev2=$(loop_attach "$T/frag2.img")
r0=$(stat_field "$dev" 12); s0=$(stat_field "$dev" 14)
q0=$(stat_field "$dev2" 12); u0=$(stat_field "$dev2" 14)
# shellcheck disable=SC2086
pause_arm trimming
${E2TRIM_WRAP:-} "$E2TRIM" -v -j 2 "$dev" "$dev2" >"$T/out" 2>"$T/err" &
pid=$!
# both held mid-trim at once, then one SIGINT
pause_wait; held=$PAUSED
pause_wait; held="$held, $PAUSED"
note "-j 2: held: $held"
kill -s INT "$pid" || fail "-j 2: e2trim is gone while held"
signal_taken "$pid"	# the main thread takes it: before the workers go on
pause_release 2
pause_disarm
RC=0
wait "$pid" || RC=$?
ERR=$T/err
assert_rc 130 "-j 2, SIGINT"
assert_eq "$(grep -c 'interrupted after' "$ERR")" 2 "-j 2: both partial reports"
assert_eq "$(sed -n 's/^e2trim: \([^:]*\): interrupted after.*/\1/p' "$ERR" | tr '\n' ' ')" \
	"$dev $dev2 " "-j 2: in the order given"
for d in "$dev" "$dev2"; do
	line=$(grep "^e2trim: $d: interrupted after" "$ERR")
	bytes=$(echo "$line" | sed -n 's/.* (\([0-9]*\) bytes) trimmed in .*/\1/p')
	if [ "$d" = "$dev" ]; then a=$r0 b=$s0; else a=$q0 b=$u0; fi
	assert_eq "$(( ($(stat_field "$d" 14) - b) * 512 ))" "$bytes" "-j 2: $d discarded bytes vs report"
	[ "$(stat_field "$d" 12)" -gt "$a" ] || fail "-j 2: $d saw no discard"
done
note "-j 2: SIGINT stopped both, exit 130, each report exact"
losetup -d "$dev2"

losetup -d "$dev"
LOOPS=()
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after"; }
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks"
exit 0
