# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "repoint" (contract point 4, issue 41.3): the target is named
# through a symlink, which is re-pointed to a decoy of the same kind (a
# second container holding another filesystem) while e2trim is held at
# "opened" (after e2trim's own open of the name, before libext2fs's or
# qemu-nbd's) and at verifying@start (after them, before a VM image's
# writable qemu-nbd).  A name resolves once: either the run carries on
# with the object it opened (0, every file of it intact, e2fsck -fn
# clean) or it refuses (26); the decoy is never touched (its bytes,
# allocation and mtime as before).  The name in KARGS is the kind's
# $IMG or $DEV (with a ?offset= suffix, or after -p N).

# link_kargs LINK: KARGS with the kind's path replaced by LINK
link_kargs() {
	local a out=()
	for a in "${KARGS[@]}"; do
		if [ -n "${DEV:-}" ] && [ "$a" = "$DEV" ]; then
			out+=("$1")
		elif [ "$a" = "$IMG" ] || [ "${a%%\?*}" = "$IMG" ]; then
			out+=("$1${a#"$IMG"}")
		else
			out+=("$a")
		fi
	done
	KARGS=("${out[@]}")
}

# decoy_state: the decoy's bytes, allocation and mtime (and its device's)
decoy_state() {
	file_state "$DECOY_FILE"
	[ -z "$DECOY_DEV" ] || sha_of "$DECOY_DEV"
}

one_stage() {
	local stage=$1
	# the decoy: the kind around the writer's filesystem, moved aside
	DEV=
	kind_make "$CX_FIX/patch/new.raw"
	DECOY_FILE=$T/decoy.${IMG##*.} DECOY_DEV=${DEV:-}
	mv "$IMG" "$DECOY_FILE"
	DEV=
	kind_make "$T/src.raw"
	ln -sfn "${DEV:-$IMG}" "$T/link"
	link_kargs "$T/link"
	decoy_state >"$T/decoy.before"
	pause_at "$stage" -v
	ln -sfn "${DECOY_DEV:-$DECOY_FILE}" "$T/link"
	resume_e2trim
	decoy_state >"$T/decoy.after"
	diff "$T/decoy.before" "$T/decoy.after" >&2 || fail "$stage: the decoy changed"
	case $RC in
	0)
		kind_copy "$T/after.raw"
		fs_check "$T/after.raw" "$stage"
		fs_files "$T/after.raw" >"$T/files.after"
		diff "$CX_FIX/fs.files" "$T/files.after" >&2 || fail "$stage: files changed"
		note "$stage: re-pointed; the object opened was trimmed, the decoy untouched" ;;
	26)
		note "$stage: re-pointed; refused with 26, the decoy untouched" ;;
	*)
		cat "$ERR" >&2
		fail "$stage: exit $RC, expected 0 (the object opened) or 26" ;;
	esac
	nothing_held "$stage"
	rm -f "$T/link"
	kind_teardown_target 2>/dev/null || true
	[ -z "$DECOY_DEV" ] || losetup -d "$DECOY_DEV"
}

scenario_run() {
	local s
	fix fs.raw "$T/src.raw"
	for s in opened verifying@start; do one_stage "$s"; done
}
