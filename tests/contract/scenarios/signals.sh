# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "signals" (contract point 6, a stop leaves nothing held):
# SIGINT and SIGTERM at each pause point, one target.  e2trim exits 130;
# no lock (qemu's on the files, RBD locks and watchers), no server it
# started and no temporary file is left.  Where the kind takes MMP, once
# more on an MMP filesystem stopped during verification: its MMP block is
# clean again.  Every file keeps its bytes, e2fsck -fn is clean.
one_stop() {
	local stage=$1 sig=$2
	pause_at "$stage" -v
	kill -s "$sig" "$E2PID" || fail "$stage $sig: e2trim gone while held"
	resume_e2trim
	# 130 (README: interrupted), or, before the first discard, death by
	# that signal (src/cli/e2trim.c: "they simply end the process")
	case $RC in
	130) ;;
	$((128 + $(kill -l "$sig")))) note "$stage $sig: ended by the signal (exit $RC)" ;;
	*) cat "$ERR" >&2; fail "$stage $sig: exit $RC, expected 130" ;;
	esac
	nothing_held "$stage $sig"
}

after_stops() {	# FILES WHAT
	kind_copy "$T/after.raw"
	fs_check "$T/after.raw" "$2"
	fs_files "$T/after.raw" >"$T/files.after"
	diff "$1" "$T/files.after" >&2 || fail "$2: files changed"
}

scenario_run() {
	local s sig
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw"
	for s in $STAGES; do
		for sig in INT TERM; do one_stop "$s" "$sig"; done
	done
	after_stops "$CX_FIX/fs.files" "after 8 stops"
	if [ "$KIND_MMP" = 1 ]; then
		kind_teardown_target 2>/dev/null || true
		fix mmp.raw "$T/mmp.raw"
		fs_files "$T/mmp.raw" >"$T/mmp.files"
		kind_make "$T/mmp.raw"
		mmp_no_wait	# about the stop, not another node (11 s saved)
		# in the middle of verification: MMP is taken, no discard yet
		one_stop verifying TERM
		kind_copy "$T/after.raw"
		dfs_read "$T/after.raw" dump_mmp | grep -q '^sequence: ff4d4d50' ||
			{ dfs_read "$T/after.raw" dump_mmp | grep -E 'seq|node' >&2
			  fail "MMP block left marked (not clean) after a stop"; }
		after_stops "$T/mmp.files" "MMP, stopped"
		note "8 stops (4 points x INT, TERM) and one with MMP: 130, nothing held"
	else
		note "8 stops (4 points x INT, TERM): 130, nothing held (MMP: e2trim refuses it through this kind)"
	fi
}
