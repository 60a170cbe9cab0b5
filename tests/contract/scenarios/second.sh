# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "second" (contract point 3, its own layer only, never
# growing): a trim, then a second one.  The first never grows what the
# target's own layer allocates; the second sends at most what the first
# left allocated in the free space (the kind's own map: SEEK_DATA,
# qemu-img map of the top layer, rbd diff) and grows nothing either.
# Every file keeps its bytes; e2fsck -fn is clean.
scenario_run() {
	local a0 a1 a2 left b1 b2
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw"
	kind_copy "$T/before.raw"
	fs_files "$T/before.raw" >"$T/files.before"
	a0=$(kind_alloc)
	run_kind --json
	assert_rc 0 "first trim"
	cp "$OUT" "$T/j1"
	a1=$(kind_alloc)
	kind_copy "$T/after1.raw"
	oracle_extents "$T/after1.raw" >"$T/free"
	left=$(kind_left "$T/free")
	run_kind --json
	assert_rc 0 "second trim"
	a2=$(kind_alloc)
	b1=$(json_field "$T/j1" bytes_trimmed)
	b2=$(json_field "$OUT" bytes_trimmed)
	[ "$a1" -le "$a0" ] || fail "the first trim grew the target: $a0 -> $a1 bytes"
	[ "$a2" -le "$a1" ] || fail "the second trim grew the target: $a1 -> $a2 bytes"
	if [ "$left" = - ]; then
		note "bytes: the kind keeps no map, so the second run sends all free space again ($b2 bytes, the first $b1)"
		[ "$b2" -le "$b1" ] || fail "the second trim sent $b2 bytes, more than the first's $b1"
	else
		[ "$b2" -le "$left" ] ||
			fail "the second trim sent $b2 bytes, more than the $left the first left allocated"
	fi
	kind_copy "$T/after2.raw"
	fs_check "$T/after2.raw" "after the second trim"
	fs_files "$T/after2.raw" >"$T/files.after"
	diff "$T/files.before" "$T/files.after" >&2 || fail "files changed"
	nothing_held "after the second trim"
	note "allocated $a0 -> $a1 -> $a2; trimmed $b1 then $b2 (left: $left)"
}
