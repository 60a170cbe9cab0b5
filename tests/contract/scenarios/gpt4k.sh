# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "gpt4k" (issue 41, point 5): the disk's table is a GPT written
# for a 4Kn disk (its header at byte 4096, 4096-byte LBAs), read from an
# image file that says nothing of its sector size.  Partition 1 holds the
# filesystem, partition 2 someone else's bytes.
#  - the filesystem fits its partition: a trim goes through (exit 0),
#    e2fsck -fn is clean, and partition 2's bytes are unchanged;
#  - the filesystem claims 32 MiB, partition 1 holds 24 (shrunk without
#    resize2fs): a dry run and a trim are refused (17 where the table
#    bounds it; a table that cannot be read is refused too) and nothing
#    changes, partition 2 included.
# Applies to the kinds whose target is a partition of a disk (part,
# offset, loopoff); a whole-disk or VM kind has no table placing it.
scenario_run() {
	[ "$(type -t disk_make)" = function ] ||
		na "not a partition of a disk image: no table places or bounds the filesystem"
	local p2
	export DISK_TABLE=gpt4k
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw"
	p2=$(p2_sum)
	run_kind -v
	[ "$RC" = 0 ] || { cat "$OUT" "$ERR" >&2; fail "trim on a 4Kn GPT: exit $RC"; }
	kind_copy "$T/after.raw"
	fs_check "$T/after.raw" "after the trim"
	[ "$(p2_sum)" = "$p2" ] || fail "partition 2's bytes changed"
	kind_teardown_target 2>/dev/null || true
	fix fs.raw "$T/src.raw"
	kind_make "$T/src.raw" $((24 * 1048576))
	save_state "$T/state0"
	run_kind -n -v
	[ "$RC" = 17 ] || { cat "$OUT" "$ERR" >&2; fail "dry run: exit $RC, not 17"; }
	same_state "dry run" "$T/state0"
	run_kind -v
	[ "$RC" = 17 ] || { cat "$OUT" "$ERR" >&2; fail "trim: exit $RC, not 17"; }
	same_state "trim" "$T/state0"
	nothing_held "refusal"
	note "trimmed; a filesystem larger than its partition refused with $RC"
}
# p2_sum: sha256 of partition 2's 8 MiB (after partition 1)
p2_sum() {
	dd if="$IMG" bs=1M iflag=skip_bytes,count_bytes skip=$((OFF + PSIZE)) \
		count=$((8 * 1048576)) status=none | sha256sum
}
