# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "bigger" (contract point 2, inside every layer's bounds): the
# filesystem claims 32 MiB, its container (file, device, partition,
# virtual disk, export, RBD image) holds 24 MiB of it: a dry run and a
# trim are refused, and nothing changes, the bytes past the container
# (partition 2, the rest of the file behind a truncating server or a
# sized loop device) included.
scenario_run() {
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw" $((24 * 1048576))
	save_state "$T/state0"
	run_kind -n -v
	is_refusal "$RC" || { cat "$OUT" "$ERR" >&2; fail "dry run: exit $RC, not refused"; }
	same_state "dry run" "$T/state0"
	run_kind -v
	is_refusal "$RC" || { cat "$OUT" "$ERR" >&2; fail "trim: exit $RC, not refused"; }
	same_state "trim" "$T/state0"
	nothing_held "refusal"
	note "refused with $RC: $(grep -m1 e2trim "$ERR" | cut -c1-120)"
}
