# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "signature" (issue 41, point 4): the filesystem's bytes also
# carry an LVM physical volume's label (sector 1, as pvcreate writes it
# over a disk that held a whole-disk ext4 without wiping it: the old
# superblock at byte 1024 stays, and its free blocks are the LV's data).
# Whatever the kind (a file, a device, a partition, a VM image, an
# export, an RBD image), libblkid sees both at the filesystem's bytes: a
# dry run and a trim are refused with 24 naming "LVM2_member at byte
# 536", and nothing changes.
scenario_run() {
	fix fs.raw "$T/src.raw"
	lvm_label "$T/src.raw" 0
	wipefs "$T/src.raw" | grep -q LVM2_member || fail "wipefs does not see the label"
	KIND_PLAIN=1 kind_make "$T/src.raw"
	save_state "$T/state0"
	run_kind -n -v
	[ "$RC" = 24 ] || { cat "$OUT" "$ERR" >&2; fail "dry run: exit $RC, not 24"; }
	same_state "dry run" "$T/state0"
	run_kind -v
	[ "$RC" = 24 ] || { cat "$OUT" "$ERR" >&2; fail "trim: exit $RC, not 24"; }
	same_state "trim" "$T/state0"
	grep -q "LVM2_member at byte 536" "$ERR" || { cat "$ERR" >&2; fail "the refusal does not name the label"; }
	nothing_held "refusal"
	note "refused with $RC"
}
