# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "comesgoes" (contract point 1, issue 41.2): a writer that
# honours none of the kind's holds comes and goes while e2trim is held at
# a pause point: a loop device attached over the host file that holds
# the filesystem's bytes (kind_raw_at: FILE OFFSET), mounted, three new
# files written, unmounted and detached.  Nothing of it is left for a
# look at loop devices or locks to see; what it leaves is in the
# filesystem (the superblock's mount count and times, the descriptors'
# free counts), which e2trim reads again before the first discard and
# before each batch.  So at every pause point the run must be refused
# (26) with every new file intact byte for byte, and e2fsck -fn clean.
# A kind whose bytes no host file holds raw (a VM image's clusters, an
# NBD export, RBD objects) says why in kind_na.
came_and_went() {
	local dir=$1 file off loop mnt=$T/mnt i
	read -r file off < <(kind_raw_at)
	loop=$(loop_attach "$file" -o "$off")
	mkdir -p "$mnt"
	mount -t ext4 "$loop" "$mnt" || fail "mount $loop (the writer)"
	MOUNTS+=("$mnt")
	for i in 1 2 3; do cp "$dir/f$i" "$mnt/cx_new$i"; done
	unmount_loop "$mnt" "$loop"
}

one_stage() {
	local stage=$1 p=$CX_FIX/patch lost
	pause_at "$stage" -v
	came_and_went "$p"
	# between two batches the next look is due once 100 ms have passed
	# since the last: not a race, a lower bound on the time held
	[ "$stage" != trimming ] || sleep 0.2
	resume_e2trim
	kind_copy "$T/after.raw"
	lost=$(new_files_lost "$T/after.raw" "$p")
	[ "$RC" = 26 ] || { cat "$ERR" >&2
		fail "$stage: a writer came and went and the run went on (exit $RC); new files lost:${lost:- none}"; }
	[ -z "$lost" ] || fail "$stage: refused with 26, but new files lost:$lost"
	fs_check "$T/after.raw" "$stage"
	nothing_held "$stage"
	note "$stage: a writer came and went; refused with 26, its files intact"
}

scenario_run() {
	local s
	fix fs.raw "$T/src.raw"
	for s in $STAGES; do
		kind_make "$T/src.raw"
		one_stage "$s"
		kind_teardown_target 2>/dev/null || true
	done
}
