#!/bin/bash
# A stop at any moment leaves nothing held (issue 34 point 1).  e2trim is
# held at each pause point (src/cli/test_hooks.c: verifying@start, after
# open and the gates; verifying, mid-verification; trimming@start, before
# the first discard; trimming, mid-trim), sent SIGINT, SIGTERM, SIGHUP or
# SIGPIPE there, and let go.  Then, independently of e2trim:
#  - on an MMP filesystem (mke2fs -O mmp), the MMP block is clean again
#    (debugfs dump_mmp: sequence ff4d4d50) and e2fsck -fn exits 0 (a
#    block left saying "e2fsck is running" makes it exit 12);
#  - on a qcow2 image, the qemu-nbd that e2trim started is gone, and so
#    is the directory of its socket (found through /proc/net/unix);
#  - nothing is left in TMPDIR, and no child of e2trim runs on;
#  - the exit code is the documented one: 130 for INT, TERM and HUP, 1
#    (a write error) for PIPE.
# A SIGHUP ignored when e2trim starts (nohup) stays ignored: the run goes
# on to its end.  And the case as people meet it: `e2trim --list IMG | head -1` on the
# MMP filesystem, with more lines than the pipe holds (so e2trim writes
# after head has gone: SIGPIPE for sure), and the reader closed while
# e2trim is held before its first line.
# libext2fs's MMP wait (11 s an open) is skipped (mmp_no_wait): 17 stops
# are about what a stop leaves, not about another node.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
mmp_no_wait
command -v qemu-img >/dev/null || skip "qemu-img not installed (make deps installs it)"

export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

# a 64 MiB file with a 4 KiB hole every 8 KiB: 8192 free extents (the
# --list output is ~120 KiB) and 8 groups to verify one by one; then MMP
img=$T/mmp.img
mnt=$T/mnt
mkfs "$img" 128M -t ext4 -b 4096 -g 4096 -N 2048
mkdir -p "$mnt"
mount -o loop,nodiscard "$img" "$mnt" || fail "mount"
MOUNTS+=("$mnt")
python3 - "$mnt/f" <<'PY' || fail "cannot fragment the free space"
import ctypes, os, sys
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                           ctypes.c_longlong]
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"\x5a" * (64 << 20))
for off in range(0, 64 << 20, 8192):   # FALLOC_FL_PUNCH_HOLE|KEEP_SIZE
    if libc.fallocate(fd, 3, off, 4096):
        sys.exit(f"punch: errno {ctypes.get_errno()}")
os.close(fd)
PY
umount "$mnt" || fail "umount"
MOUNTS=()
tune2fs -O mmp -E mmp_update_interval=1 "$img" >/dev/null 2>&1 || fail "tune2fs -O mmp"
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn before"; }
cp --sparse=always "$img" "$T/orig.img"

mmp_seq() { dfs_read "$1" dump_mmp | sed -n 's/^sequence: //p'; }
assert_eq "$(mmp_seq "$img")" ff4d4d50 "MMP block before"

# the qcow2: the same filesystem without MMP (libext2fs's MMP reads the
# device by name with O_DIRECT, which an NBD connection has not), in
# 4 KiB clusters so that each free extent is a trim of its own
cp --sparse=always "$img" "$T/q.raw"
tune2fs -O ^mmp "$T/q.raw" >/dev/null 2>&1 || fail "tune2fs -O ^mmp"
qemu-img convert -O qcow2 -o cluster_size=4096 "$T/q.raw" "$T/orig.qcow2" || fail "qemu-img convert"
rm -f "$T/q.raw"

# the socket a server listens on (its fd 3, socket activation's), by path
server_socket() {
	local ino
	ino=$(readlink "/proc/$1/fd/3" 2>/dev/null | tr -dc 0-9)
	[ -n "$ino" ] && awk -v i="$ino" '$7 == i {print $8}' /proc/net/unix
}

# stop_at STAGE SIG ARGS...: e2trim ARGS held at STAGE, sent SIG there,
# let go; sets RC, KIDS (its children while held) and SOCKS (their
# sockets' paths).  The FIFO says "exited" once e2trim has ended, so a
# run that ends before its pause fails instead of hanging.
stop_at() {
	local stage=$1 sig=$2 pid sub k
	shift 2
	pause_arm "$stage"
	rm -f "$T/run.pid" "$T/run.rc"
	(
		rc=0
		# SIGHUP's disposition set, never inherited (a make check
		# under nohup gives an ignored one, which bash cannot undo):
		# the default, or STOP_IGNORED=HUP: ignored, as nohup starts it
		local sigdisp=--default-signal=HUP
		[ -z "${STOP_IGNORED:-}" ] || sigdisp=--ignore-signal=$STOP_IGNORED
		env "$sigdisp" "$E2TRIM" "$@" >"$T/out" 2>"$T/err" &
		echo "$!" >"$T/run.pid"
		wait "$!" || rc=$?
		echo "$rc" >"$T/run.rc"
		echo exited >&7
	) &
	sub=$!
	unset E2TRIM_TEST_PAUSE
	pause_wait
	if [ "$PAUSED" = exited ]; then
		wait "$sub"
		cat "$T/err" >&2
		fail "$stage $sig: e2trim $* ended (exit $(cat "$T/run.rc")) before its pause"
	fi
	pid=$(cat "$T/run.pid")
	KIDS=$(pgrep -P "$pid" | tr '\n' ' ')
	SOCKS=
	for k in $KIDS; do SOCKS="$SOCKS $(server_socket "$k")"; done
	kill -s "$sig" "$pid" || fail "$stage $sig: e2trim is gone while held"
	pause_release 1
	pause_wait
	assert_eq "$PAUSED" exited "$stage $sig: the end of the run"
	wait "$sub"
	pause_disarm
	RC=$(cat "$T/run.rc") ERR=$T/err
}

expected_rc() { if [ "$1" = PIPE ]; then echo 1; else echo 130; fi; }

# nothing of the run left: children, their sockets, temporary files
nothing_left() {
	local what=$1 k s
	for k in $KIDS; do
		[ ! -d "/proc/$k" ] || fail "$what: child $k ($(tr '\0' ' ' <"/proc/$k/cmdline")) still runs"
	done
	for s in $SOCKS; do
		[ ! -e "$s" ] || fail "$what: the server's socket $s is left"
		[ ! -e "$(dirname "$s")" ] || fail "$what: the socket's folder $(dirname "$s") is left"
	done
	[ -z "$(ls -A "$TMPDIR")" ] || fail "$what: left in TMPDIR: $(ls -A "$TMPDIR")"
}

stages="verifying@start verifying trimming@start trimming"
n=0
for stage in $stages; do
	for sig in INT TERM HUP PIPE; do
		cp --sparse=always "$T/orig.img" "$img"
		stop_at "$stage" "$sig" -v "$img"
		assert_rc "$(expected_rc "$sig")" "MMP, $stage, SIG$sig"
		assert_grep "interrupted" "$ERR" "MMP, $stage, SIG$sig: what was done"
		assert_eq "$(mmp_seq "$img")" ff4d4d50 "MMP, $stage, SIG$sig: the MMP block after"
		e2fsck -fn "$img" >"$T/fsck" 2>&1 ||
			{ cat "$T/fsck"; fail "MMP, $stage, SIG$sig: e2fsck -fn after"; }
		nothing_left "MMP, $stage, SIG$sig"
		n=$((n + 1))
	done
done
note "MMP: $n stops (4 pause points x INT TERM HUP PIPE): MMP clean, e2fsck -fn clean, exit 130 (PIPE: 1), nothing left"

# nohup: a SIGHUP ignored when e2trim starts stays ignored, the run goes on
cp --sparse=always "$T/orig.img" "$img"
STOP_IGNORED=HUP stop_at verifying@start HUP -v "$img"
assert_rc 0 "MMP, SIGHUP ignored from the start (nohup)"
assert_grep "trimmed$" "$T/out" "nohup: the full summary"
assert_eq "$(mmp_seq "$img")" ff4d4d50 "nohup: the MMP block after"

n=0
for stage in $stages; do
	for sig in INT TERM HUP PIPE; do
		cp --sparse=always "$T/orig.qcow2" "$T/q.qcow2"
		stop_at "$stage" "$sig" -v "$T/q.qcow2"
		assert_rc "$(expected_rc "$sig")" "qcow2, $stage, SIG$sig"
		case $KIDS in *[0-9]*) ;; *) fail "qcow2, $stage: no qemu-nbd seen while held";; esac
		case $SOCKS in */*) ;; *) fail "qcow2, $stage: no server socket seen while held";; esac
		nothing_left "qcow2, $stage, SIG$sig"
		qemu-img check "$T/q.qcow2" >/dev/null 2>&1 || fail "qcow2, $stage, SIG$sig: qemu-img check"
		n=$((n + 1))
	done
done
note "qcow2: $n stops: qemu-nbd and its socket folder gone when e2trim has ended, exit 130 (PIPE: 1)"

# The reader of --list goes away while e2trim is held before its first
# line: the next write meets a pipe with no reader (SIGPIPE, EPIPE).
cp --sparse=always "$T/orig.img" "$img"
rm -f "$T/list.fifo"; mkfifo "$T/list.fifo" || fail "mkfifo"
exec 5<>"$T/list.fifo"
pause_arm trimming@start
(
	# the test's end of the FIFO is the only reader: not this copy
	exec 5<&-
	rc=0
	"$E2TRIM" --list "$img" >"$T/list.fifo" 2>"$T/err" || rc=$?
	echo "$rc" >"$T/run.rc"
	echo exited >&7
) &
sub=$!
unset E2TRIM_TEST_PAUSE
pause_wait
[ "$PAUSED" != exited ] || { cat "$T/err"; fail "--list: ended before its pause"; }
exec 5<&-	# the reader is gone (head -1 after its line)
pause_release 1
pause_wait
wait "$sub"
pause_disarm
RC=$(cat "$T/run.rc") ERR=$T/err
assert_rc 1 "--list, reader gone"
assert_eq "$(mmp_seq "$img")" ff4d4d50 "--list, reader gone: the MMP block after"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "--list, reader gone: e2fsck -fn after"
nothing_left "--list, reader gone"

# and literally: head -1 takes one line of ~100 KiB, more than the pipe
# holds, so e2trim writes after head has gone whatever the timing
cp --sparse=always "$T/orig.img" "$img"
"$E2TRIM" --list "$img" 2>"$T/err" | head -1 >"$T/first"
RC=${PIPESTATUS[0]} ERR=$T/err
assert_rc 1 "e2trim --list IMG | head -1"
[ -s "$T/first" ] || fail "head -1 got no line"
assert_eq "$(mmp_seq "$img")" ff4d4d50 "--list | head -1: the MMP block after"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "--list | head -1: e2fsck -fn after"
nothing_left "--list | head -1"
note "e2trim --list IMG | head -1 (and the reader closed while held): exit 1, MMP clean, e2fsck -fn clean"
exit 0
