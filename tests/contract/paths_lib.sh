# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # read by the paths_* scenarios
# tests/contract/paths_lib.sh - what the "paths_*" scenarios share (issue
# 41, 1: every path to the target's bytes is held or seen).  Each scenario
# is one writer that reaches the filesystem's bytes by another path than
# the target's name: a second loop device over the file, qemu on a loop
# target's backing file, a loop device through a removed link, a fuse2fs
# mount, a process holding the file open for writing.  It defines
#   w_na          why the writer cannot reach this kind, or nothing
#   w_upfront     (optional) the writer in place before the run: the run
#                 must be refused up front (10), naming $UPFRONT_PID if
#                 set, no e2fsck command printed; w_after lets it go
#   w_no_stages   why the writer is tried at no pause point, or nothing
#   w_before      set up before each run (a loop device attached)
#   w_write DIR   at a pause point, write DIR's new files through that
#                 path: 0 wrote, 1 kept out (why in $T/writer.err)
#   w_after       after the run has ended: let go (umount, close, detach)
# and the oracle is writer.sh's: either the writer is kept out and the
# run trims (every old file intact), or it gets in and the run is refused
# (10) with every new file intact (or, held after its last discard, ends
# with 0 and every new file intact); e2fsck -fn is clean either way.
#
# The kinds give kind_bytes: "FILE OFFSET", the file their filesystem's
# bytes live in and where (OFFSET "-" when they are not raw there: a
# qcow2); $DEV is set for a loop-device target.

# paths_bytes: FILE and OFF of the kind's bytes (OFF "-": not raw)
paths_bytes() {
	read -r FILE OFF_RAW < <(kind_bytes)
	[ -n "$FILE" ] || fail "kind_bytes said nothing"
}

# the stages a writer is tried at, and a lower bound on the time held at
# the one between batches: the processes are looked at again at most
# once a second there (src/open/open_paths.c), the loop devices every 100 ms
PATHS_STAGES=${PATHS_STAGES:-$STAGES}

paths_stage() {
	local stage=$1 p=$CX_FIX/patch w=0 lost
	w_before
	pause_at "$stage" -v
	w_write "$p" || w=$?
	# not a race: a lower bound on elapsed time, so that the look between
	# batches is due (as t_image_loop_race)
	[ "$stage" != trimming ] || [ "$w" != 0 ] || sleep "${PATHS_MID_WAIT:-1.2}"
	resume_e2trim
	w_after
	kind_copy "$T/after.raw"
	if [ "$w" = 0 ]; then
		lost=$(new_files_lost "$T/after.raw" "$p")
		[ -z "$lost" ] || { cat "$ERR" >&2; fail "$stage: the writer got in, exit $RC, new files lost:$lost"; }
		# exit 0 only where the run had nothing left to discard (held
		# between batches after its last one): its files intact says so
		[ "$RC" = 10 ] || [ "$RC" = 0 ] || { cat "$ERR" >&2
			fail "$stage: the writer got in and the run was refused $RC, not 10"; }
		fs_check "$T/after.raw" "$stage"
		if [ "$RC" = 10 ]; then
			note "$stage: the writer got in; refused with 10 ($(cut -c1-160 "$ERR")), its files intact"
		else
			note "$stage: the writer got in after the last discard; exit 0, its files intact"
		fi
		kind_teardown_target 2>/dev/null || true
		kind_make "$T/src.raw"
		paths_bytes
	else
		writer_kept_out "$stage"
	fi
}

scenario_run() {
	local why s
	mkdir -p "$T/mnt"
	declare -F kind_bytes >/dev/null || fail "the kind gives no kind_bytes"
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw"
	paths_bytes
	why=$(w_na)
	[ -z "$why" ] || na "$why"
	if declare -F w_upfront >/dev/null; then
		w_upfront
		save_state "$T/state0"
		run_kind -v
		[ "$RC" = 10 ] || { cat "$ERR" >&2; fail "up front: not refused 10 (exit $RC)"; }
		[ -z "${UPFRONT_PID:-}" ] || assert_grep "pid $UPFRONT_PID" "$ERR" "up front: the refusal names the process"
		! grep -q e2fsck "$ERR" || fail "up front: a repair command for a filesystem in use: $(cat "$ERR")"
		w_after
		kind_copy "$T/after.raw"
		fs_check "$T/after.raw" "up front"
		fs_files "$T/after.raw" >"$T/files.after"
		diff "$CX_FIX/fs.files" "$T/files.after" >&2 || fail "up front: files changed"
		note "up front: refused 10: $(cut -c1-200 "$ERR")"
	fi
	why=$(w_no_stages)
	if [ -n "$why" ]; then
		note "at the pause points: N/A: $why"
	else
		for s in $PATHS_STAGES; do paths_stage "$s"; done
	fi
	nothing_held "after the stages"
}

# not_raw: the reason a writer of the filesystem's raw bytes cannot reach
# a kind whose file holds a qcow2 image, or nothing
not_raw() {
	[ "$OFF_RAW" != - ] || echo "the file holds a qcow2 image, not the filesystem's bytes at an offset: $1"
}

# paths_unmount MNT: unmount MNT if mounted, and for a FUSE mount wait
# until its daemon has gone (it writes the image back after umount returns)
paths_unmount() {
	local pid=
	mountpoint -q "$1" || return 0
	pid=$(fuse_daemon_of "$1")
	umount "$1" || fail "umount $1"
	[ -z "$pid" ] || wait_exit "$pid" "the FUSE daemon of $1"
}

# fuse_daemon_of MNT: the pid of the fuse2fs serving MNT (its argv names
# MNT's last component and it runs from a folder of $T), or nothing
fuse_daemon_of() {
	local p
	for p in $(pgrep -x fuse2fs); do
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qx "$1" && echo "$p"
	done
	true
}
