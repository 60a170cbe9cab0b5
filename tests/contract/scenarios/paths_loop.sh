# shellcheck shell=bash source-path=SCRIPTDIR/..
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "paths_loop" (issue 41, 1): a second loop device over the file
# that holds the filesystem's bytes (losetup -o to where they start),
# attached before the run.  Mounted before the run: refused 10 up front;
# not mounted: held by the run (O_EXCL), so a mount through it at every
# pause point is kept out, or the run refused with the new files intact.
# shellcheck source=../paths_lib.sh
. "$CX/paths_lib.sh"
w_na() { not_raw "a loop device over it shows no filesystem to mount (a process writing to it is paths_proc's)"; }
w_no_stages() { :; }
w_upfront() {
	L2=$(loop_attach "$FILE" -o "$OFF_RAW")
	mount -t ext4 "$L2" "$T/mnt" || fail "mount $L2 before the run"
	MOUNTS+=("$T/mnt")
}
w_before() { L2=$(loop_attach "$FILE" -o "$OFF_RAW"); }
w_write() { mount_patch "$1" "$L2"; }
w_after() {
	paths_unmount "$T/mnt"
	[ -z "${L2:-}" ] || losetup -d "$L2" 2>/dev/null
	L2=
}
