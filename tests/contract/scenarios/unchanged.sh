# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "unchanged" (contract point 5): -n, and a refusal (the
# filesystem not cleanly unmounted: 13, in a dry run and a trim), leave
# every byte, allocation, mtime, lock and (RBD) object of the target as
# it was.  Where the kind takes MMP, a dry run of an MMP filesystem too.
scenario_run() {
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw"
	save_state "$T/state0"
	run_kind -n -v --json
	assert_rc 0 "dry run"
	same_state "dry run" "$T/state0"
	kind_teardown_target 2>/dev/null || true

	fix fs.raw "$T/unclean.raw"
	echo "ssv state 0" | dfs_write "$T/unclean.raw"
	kind_make "$T/unclean.raw"
	save_state "$T/state0"
	run_kind -n -v
	assert_rc 13 "dry run of an unclean filesystem"
	same_state "refused dry run" "$T/state0"
	run_kind -v
	assert_rc 13 "trim of an unclean filesystem"
	same_state "refused trim" "$T/state0"
	nothing_held "refusal"
	kind_teardown_target 2>/dev/null || true

	if [ "$KIND_MMP" = 1 ]; then
		fix mmp.raw "$T/mmp.raw"
		kind_make "$T/mmp.raw"
		save_state "$T/state0"
		run_kind -n -v
		assert_rc 0 "dry run with MMP"
		same_state "dry run with MMP" "$T/state0"
		note "-n, 13 (dry and real) and -n with MMP: nothing changed"
	else
		note "-n and 13 (dry and real): nothing changed (MMP: e2trim refuses it through this kind)"
	fi
}
