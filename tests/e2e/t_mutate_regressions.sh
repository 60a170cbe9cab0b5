#!/bin/bash
# Every class of unsafe mutant that the mutation campaign found is kept
# as tests/mutate/regressions/NAME.dfs: a debugfs script applied to a
# clean fixture of images/ (its header names the fixture and what is
# expected).  On each mutant e2trim must refuse, or every file e2fsck -fy
# keeps must be the same after a real trim ("expect: safe"; judge.py).
# fsck_failed (e2fsck stops where e2trim trims) is a hole too.
# A class that is still open says "expect: xfail": the test notes the
# hole and passes, and fails once e2trim is safe on it, so that the line
# is flipped to "expect: safe" and stays so.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
MUTATE_DIR=$(cd "$(dirname "$0")/../mutate" && pwd)
command -v python3 >/dev/null || fail "python3 is missing (make deps)"

n=0 bad=0
for dfs in "$MUTATE_DIR"/regressions/*.dfs; do
	name=$(basename "$dfs" .dfs)
	fixture=$(sed -n 's/^# fixture: *//p' "$dfs")
	expect=$(sed -n 's/^# expect: *//p' "$dfs")
	if [ -z "$fixture" ] || [ -z "$expect" ]; then fail "$name: no fixture or expect line"; fi
	python3 "$MUTATE_DIR/mutate.py" check "$fixture" "$dfs" >"$T/out" 2>&1
	rc=$?
	verdict=$(sed -n 's/^verdict: \([a-z_]*\).*/\1/p' "$T/out")
	n=$((n + 1))
	case "$expect:$verdict" in
	safe:refused|safe:trimmed|safe:realloc) note "$name: $(head -1 "$T/out" | cut -c1-100)" ;;
	xfail:unsafe|xfail:fsck_failed) note "$name: known hole, still $verdict (xfail)" ;;
	xfail:refused|xfail:trimmed|xfail:realloc)
		echo "XPASS $name: now $verdict; flip 'expect: xfail' to 'expect: safe' in $dfs" >&2
		bad=$((bad + 1)) ;;
	*)
		cat "$T/out" >&2
		echo "FAIL $name: expected $expect, got '$verdict' (rc $rc)" >&2
		bad=$((bad + 1)) ;;
	esac
done
[ "$n" -gt 0 ] || fail "no regression cases found"
[ "$bad" = 0 ] || fail "$bad of $n regression cases"
exit 0
