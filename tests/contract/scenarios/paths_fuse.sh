# shellcheck shell=bash source-path=SCRIPTDIR/..
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "paths_fuse" (issue 41, 1): fuse2fs (e2fsprogs' FUSE driver: no
# loop device, no lock) mounts the file that holds the filesystem, by a
# relative name (mountinfo then shows the source as typed), at the
# filesystem's offset.  Mounted before the run: refused 10 up front and no
# e2fsck command printed; mounted at a pause point and the new files
# written through it, kept mounted: the run refused 10 before its next
# discard, the files intact after the unmount.
# shellcheck source=../paths_lib.sh
. "$CX/paths_lib.sh"
w_na() {
	local why
	why=$(not_raw "fuse2fs reads raw filesystems only")
	[ -n "$why" ] || command -v fuse2fs >/dev/null || skip "fuse2fs is missing: make deps"
	[ -n "$why" ] || [ -c /dev/fuse ] || skip "no /dev/fuse"
	echo "$why"
}
fuse_mount() {
	(cd "$(dirname "$FILE")" && fuse2fs "$(basename "$FILE")" "$T/mnt" -o offset="$OFF_RAW") \
		>"$T/writer.err" 2>&1 || return 1
	# a case that fails leaves no mount behind (cleanup)
	MOUNTS+=("$T/mnt")
}
w_upfront() { fuse_mount || fail "fuse2fs before the run: $(cat "$T/writer.err")"; }
w_no_stages() { :; }
w_before() { :; }
w_write() {
	local i
	fuse_mount || return 1
	for i in 1 2 3; do cp "$1/f$i" "$T/mnt/cx_new$i" || fail "cp through fuse2fs"; done
	sync
}
w_after() { paths_unmount "$T/mnt"; }
