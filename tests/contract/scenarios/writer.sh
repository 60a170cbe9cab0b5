# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "writer" (contract point 1, held alone): at each pause point
# (before verification, during it, at the first discard, between two
# batches) the kind's own writer writes three new files into the
# filesystem ($CX_FIX/patch: debugfs put them into blocks the old bitmaps
# call free, which the run's plan discards).  Either the writer is kept
# out and the run trims as usual, every old file intact; or it gets in,
# and the run is refused with a documented code and every new file
# survives byte for byte.  e2fsck -fn is clean either way.
one_stage() {
	local stage=$1 p=$CX_FIX/patch w=0 lost
	pause_at "$stage" -v --json
	kind_write "$p" || w=$?
	resume_e2trim
	kind_copy "$T/after.raw"
	if [ "$w" = 0 ]; then
		lost=$(new_files_lost "$T/after.raw" "$p")
		is_refusal "$RC" || { cat "$ERR" >&2
			fail "$stage: the writer got in and the run went on (exit $RC); new files lost:${lost:- none}"; }
		[ -z "$lost" ] || fail "$stage: refused with $RC, but new files lost:$lost"
		fs_check "$T/after.raw" "$stage"
		note "$stage: the writer got in; refused with $RC, its files intact"
		# the next stage starts from the filesystem without them
		kind_teardown_target 2>/dev/null || true
		kind_make "$T/src.raw"
	else
		writer_kept_out "$stage"
	fi
	nothing_held "$stage"
}

scenario_run() {
	local s
	fix fs.raw "$T/src.raw"
	# a run whose writer was kept out changed free space only: the next
	# stage goes on with the same target
	kind_make "$T/src.raw"
	for s in $STAGES; do one_stage "$s"; done
}
