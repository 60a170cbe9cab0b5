# shellcheck shell=bash
# Scenario "writer" (contract point 1, held alone): at each pause point
# (before verification, during it, at the first discard, between two
# batches) the kind's own writer writes three new files into the
# filesystem.  Either it is kept out and the run trims as usual, or it
# gets in and the run is refused with a documented code; in both cases
# every file written survives byte for byte and e2fsck -fn is clean.

one_stage() {
	local stage=$1 p=$T/p.${1%@*} w=0 f i
	kind_make "$T/src.raw"
	kind_copy "$T/before.raw"
	make_patch "$T/before.raw" "$p"
	fs_files "$T/before.raw" >"$T/files.before"
	pause_at "$stage" -v --json
	kind_write "$p" || w=$?
	resume_e2trim
	kind_copy "$T/after.raw"
	fs_check "$T/after.raw" "$stage"
	if [ "$w" = 0 ]; then
		is_refusal "$RC" || { cat "$ERR" >&2
			fail "$stage: the writer got in and the run went on (exit $RC)"; }
		for i in 1 2 3; do
			f=$(dfs_read "$T/after.raw" "dump cx_new$i $T/got$i" >/dev/null
			    sha_of "$T/got$i" 2>/dev/null)
			assert_eq "$f" "$(sha_of "$p/f$i")" "$stage: new file cx_new$i after the run"
		done
		note "$stage: the writer got in; refused with $RC, its files intact"
	else
		assert_rc 0 "$stage: the writer was kept out ($(head -c 200 "$T/writer.err"))"
		fs_files "$T/after.raw" >"$T/files.after"
		diff "$T/files.before" "$T/files.after" >&2 || fail "$stage: files changed"
		note "$stage: the writer was kept out: $(grep -m1 . "$T/writer.err" | cut -c1-100)"
	fi
	nothing_held "$stage"
	kind_teardown_target 2>/dev/null || true
}

scenario_run() {
	local s
	fix fs.raw "$T/src.raw"
	for s in $STAGES; do one_stage "$s"; done
}
