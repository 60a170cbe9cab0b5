# shellcheck shell=bash
# Scenario "signals" (contract point 6, a stop leaves nothing held):
# SIGINT and SIGTERM at each pause point.  e2trim exits 130; no lock
# (qemu's on the files, O_EXCL, RBD locks and watchers), no server it
# started, no temporary file and no MMP mark are left (once per kind that
# takes MMP: an MMP filesystem stopped between two batches, its MMP block
# clean again); every file keeps its bytes, e2fsck -fn is clean.
one_stop() {
	local stage=$1 sig=$2 src=$3
	kind_make "$src"
	pause_at "$stage" -v
	kill -s "$sig" "$E2PID" || fail "$stage $sig: e2trim gone while held"
	resume_e2trim
	assert_rc 130 "$stage $sig"
	nothing_held "$stage $sig"
	kind_copy "$T/after.raw"
	fs_check "$T/after.raw" "$stage $sig"
	fs_files "$T/after.raw" >"$T/files.after"
	diff "$T/files.before" "$T/files.after" >&2 || fail "$stage $sig: files changed"
	if [ "$src" = "$T/mmp.raw" ]; then
		dfs_read "$T/after.raw" dump_mmp | grep -q '^sequence: ff4d4d50' ||
			{ dfs_read "$T/after.raw" dump_mmp >&2; fail "$stage $sig: MMP block left marked"; }
	fi
	kind_teardown_target 2>/dev/null || true
}

scenario_run() {
	local s sig
	fix fs.raw "$T/src.raw"
	fs_files "$T/src.raw" >"$T/files.before"
	for s in $STAGES; do
		for sig in INT TERM; do one_stop "$s" "$sig" "$T/src.raw"; done
	done
	if [ "$KIND_MMP" = 1 ]; then
		fix mmp.raw "$T/mmp.raw"
		fs_files "$T/mmp.raw" >"$T/files.before"
		one_stop trimming TERM "$T/mmp.raw"
		note "8 stops (4 points x INT, TERM) and one with MMP: 130, nothing held"
	else
		note "8 stops (4 points x INT, TERM): 130, nothing held (MMP: e2trim refuses it through this kind)"
	fi
}
