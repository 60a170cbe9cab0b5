# shellcheck shell=bash source-path=SCRIPTDIR/..
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "paths_link" (issue 41, 1): a loop device attached through a
# second hard link to the file, the link then removed (sysfs says
# "... (deleted)": only LOOP_GET_STATUS64's device and inode tell it is
# the same file).  Mounted before the run: refused 10 up front; not
# mounted: held by the run, so a mount through it at every pause point
# is kept out, or the run refused with the new files intact.
# shellcheck source=../paths_lib.sh
. "$CX/paths_lib.sh"
w_na() { not_raw "a loop device over it shows no filesystem to mount (a process writing to it is paths_proc's)"; }
w_no_stages() { :; }
link_loop() {
	ln "$FILE" "$T/link.img" || fail "ln"
	L3=$(loop_attach "$T/link.img" -o "$OFF_RAW")
	rm "$T/link.img"
	grep -q '(deleted)' "/sys/block/${L3##*/}/loop/backing_file" || fail "sysfs does not say the link is gone"
}
w_upfront() {
	link_loop
	mount -t ext4 "$L3" "$T/mnt" || fail "mount $L3 before the run"
	MOUNTS+=("$T/mnt")
}
w_before() { link_loop; }
w_write() { mount_patch "$1" "$L3"; }
w_after() {
	paths_unmount "$T/mnt"
	[ -z "${L3:-}" ] || losetup -d "$L3" 2>/dev/null
	L3=
}
