# shellcheck shell=bash source-path=SCRIPTDIR/..
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "paths_qemu" (issue 41, 1): qemu (qemu-io, as a VM) opens the
# backing file of a loop-device target and writes the new files into it
# at every pause point: kept out by qemu's image locks, which e2trim takes
# on the backing file too, or the run refused with the files intact.
# shellcheck source=../paths_lib.sh
. "$CX/paths_lib.sh"
w_na() {
	[ -n "${DEV:-}" ] || echo "the target is not a loop device: qemu on the file named is the writer scenario's"
}
w_no_stages() { :; }
w_before() { :; }
w_write() { qemu_io_patch "$1" "$OFF_RAW" raw "$FILE"; }
w_after() { :; }
