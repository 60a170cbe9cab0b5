#!/bin/bash
# Every unsafe fixture of images/ (see images/README.md and the table in
# tests/fixtures.sh) is refused with its own exit code and a message that
# names the fix, by a dry run and by a real run alike, and the image is
# left byte for byte as it was.  --force gets past exactly the gates it is
# documented to (13 not clean, 14 journal, 15 orphans): a WARNING on stderr
# and the same plan as dumpe2fs gives; every other refusal stands.
#
# Each fixture is checked on its own, so one failing does not hide the
# others; the test fails if any did.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

no_plan() {	# what: a refusal prints no extent
	[ ! -s "$OUT" ] || { head -3 "$OUT" >&2; fail "$1: printed a plan"; }
}

check_unsafe() {	# name code forcible fix...
	local name=$1 code=$2 forcible=$3; shift 3
	local fix="$*" img sum
	img=$(fixture "$name") || exit 1
	sum=$(sha_of "$img")

	run_e2trim -n --list "$img"
	assert_rc "$code" "$name: dry run"
	assert_grep "^e2trim: .*$fix" "$ERR" "$name: dry run names the fix"
	no_plan "$name: dry run"
	assert_eq "$(sha_of "$img")" "$sum" "$name: image after a refused dry run"

	# the refusal comes before anything is written or discarded
	run_e2trim --list "$img"
	assert_rc "$code" "$name: real run"
	assert_grep "^e2trim: .*$fix" "$ERR" "$name: real run names the fix"
	no_plan "$name: real run"
	assert_eq "$(sha_of "$img")" "$sum" "$name: image after a refused real run"

	run_e2trim -n --list --force "$img"
	if [ "$forcible" = 1 ]; then
		assert_rc 0 "$name: dry run with --force"
		assert_grep "WARNING: .*trimming anyway because of --force" "$ERR" "$name: --force warning"
		list_oracle "$img" "$img" >"$T/want"
		[ -s "$T/want" ] || fail "$name: dumpe2fs lists no free space"
		cmp -s "$OUT" "$T/want" || { diff "$OUT" "$T/want" | head >&2; fail "$name: forced plan differs from dumpe2fs"; }
		note "$name: exit $code; --force: WARNING and $(wc -l <"$T/want") extents"
	else
		assert_rc "$code" "$name: dry run with --force (not overridable)"
		no_plan "$name: --force"
		# a real run with --force must still refuse, before any discard
		run_e2trim --force "$img"
		assert_rc "$code" "$name: real run with --force (not overridable)"
		note "$name: exit $code, also with --force"
	fi
	assert_eq "$(sha_of "$img")" "$sum" "$name: image after every run"
	rm -f "$img"
}

failed=()
for entry in "${UNSAFE_FIXTURES[@]}"; do
	# shellcheck disable=SC2086
	( check_unsafe $entry ) || failed+=("${entry%% *}")
done
[ ${#failed[@]} = 0 ] || fail "unsafe fixtures that failed: ${failed[*]}"
exit 0
