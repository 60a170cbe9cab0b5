# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "names" (contract point 4, names are data): every name the
# target carries (a qcow2's data file and backing file, an RBD name from
# `rbd ls`) pointed at someone else's file or device: a dry run and a
# trim are refused (a backing file that is someone else's regular file
# is only read: there the run may go on), and that file is unchanged (it
# still exists, same bytes, allocation and mtime).
scenario_run() {
	local victim target how args n=0
	declare -F kind_names >/dev/null || na "the kind carries no names"
	kind_names >"$T/names"
	while IFS=$'\t' read -r victim target how; do
		read -r -a args <<<"$target"
		file_state "$victim" >"$T/victim0"
		for dry in -n ""; do
			run_e2trim -v $dry "${args[@]}"
			[ -e "$victim" ] || fail "$target ${dry:-(trim)}: $victim is gone"
			file_state "$victim" >"$T/victim1"
			diff "$T/victim0" "$T/victim1" >&2 ||
				fail "$target ${dry:-(trim)}: $victim changed (exit $RC)"
			[ "$how" = read ] || is_refusal "$RC" || { cat "$ERR" >&2
				fail "$target ${dry:-(trim)}: exit $RC, not refused"; }
		done
		n=$((n + 1))
		note "$target: exit $RC ($how), $victim unchanged"
	done <"$T/names"
	[ "$n" -gt 0 ] || fail "no hostile name made"
}
