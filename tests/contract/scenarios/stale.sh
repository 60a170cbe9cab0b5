# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "stale" (contract point 2): a disk that held a whole-disk ext4
# and was repartitioned without wiping it (an MBR, partition 1 at 1 MiB
# holding a live aged ext4, the old superblock still at byte 1024).  The
# whole disk named as the target: refused (naming -p N and wipefs), every
# byte of partition 1 unchanged.  Applies to whole-disk kinds.
scenario_run() {
	[ "$KIND_WHOLE" = 1 ] || na "not a whole-disk kind"
	fix stale.raw "$T/src.raw"
	KIND_PLAIN=1 kind_make "$T/src.raw"
	save_state "$T/state0"
	run_kind -n -v
	is_refusal "$RC" || { cat "$OUT" "$ERR" >&2; fail "dry run: exit $RC, not refused"; }
	same_state "dry run" "$T/state0"
	run_kind -v
	is_refusal "$RC" || { cat "$OUT" "$ERR" >&2; fail "trim: exit $RC, not refused"; }
	same_state "trim" "$T/state0"
	if ! grep -q -- "-p" "$ERR" || ! grep -q wipefs "$ERR"; then
		cat "$ERR" >&2
		fail "the refusal does not name -p N and wipefs"
	fi
	nothing_held "refusal"
	note "refused with $RC"
}
