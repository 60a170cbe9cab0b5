#!/bin/bash
# The in-use gate (exit 10) on real loop devices, for dry runs: a mounted
# loop device, the image file behind it (also through a symlink), a
# device that another program holds open with O_EXCL.  --force does not
# get past it, and the image's bytes do not change.  Needs root.
# (t_trim_ranges_and_refusals.sh checks the same for real runs.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
need_root

img=$(fixture ext4)
ln -s "$img" "$T/link.img"
dev=$(loop_attach "$img")
LOOPS+=("$dev")	# loop_attach ran in a subshell: detach it at exit here

# not in use yet: the same dry run works on the device and on the file
run_e2trim -n --list "$dev"
assert_rc 0 "idle loop device"
cp "$OUT" "$T/plan.dev"
run_e2trim -n --list "$img"
assert_rc 0 "image of an idle loop device"
cmp -s "$OUT" "$T/plan.dev" || fail "device and image plans differ"

mkdir -p "$T/mnt"
mount "$dev" "$T/mnt" || fail "mount $dev"
MOUNTS+=("$T/mnt")
for target in "$dev" "$img" "$T/link.img"; do
	for opts in "-n" "-n --force" "-n --list -v"; do
		# shellcheck disable=SC2086
		run_e2trim $opts "$target"
		assert_rc 10 "mounted: e2trim $opts $target"
		assert_grep "is mounted or in use" "$ERR" "mounted: $target message"
		assert_grep "unmount it first" "$ERR" "mounted: $target fix"
		[ ! -s "$OUT" ] || fail "mounted: e2trim $opts $target printed a plan"
	done
done
assert_grep "mounted on $T/mnt" "$ERR" "the mount point is named"
note "mounted: device, image and symlink refused with exit 10"
umount "$T/mnt" || fail "umount"
MOUNTS=()
sum=$(sha_of "$img")

# held with O_EXCL by another program (as mkfs, e2fsck or a mount would)
hold_excl "$dev"
rcs=
for target in "$dev" "$img"; do
	for opts in "-n" "-n --force"; do
		# shellcheck disable=SC2086
		run_e2trim $opts "$target"
		rcs="$rcs $RC"
		grep -q "in use" "$ERR" || rcs="$rcs(no message)"
	done
done
release_excl
assert_eq "$rcs" " 10 10 10 10" "held O_EXCL: exit codes of device, device --force, image, image --force"
note "held O_EXCL: refused with exit 10"

# released: a dry run works again, with the same plan
run_e2trim -n --list "$dev"
assert_rc 0 "released loop device"
cmp -s "$OUT" "$T/plan.dev" || fail "plan changed after the refusals"
assert_eq "$(sha_of "$img")" "$sum" "image after the refused dry runs"
exit 0
