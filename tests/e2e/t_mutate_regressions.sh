#!/bin/bash
# Every class of unsafe mutant that the mutation campaign found is kept
# as tests/mutate/regressions/NAME.dfs: a debugfs script applied to a
# clean fixture of images/ (its header names the fixture and what is
# expected).  On each mutant e2trim must refuse, or every file e2fsck -fy
# keeps must be the same after a real trim ("expect: safe"; judge.py).
# fsck_failed (e2fsck stops where e2trim trims) is a hole too.
# A class that is still open says "expect: xfail": the test notes the
# hole and passes, and fails once e2trim is safe on it, so that the line
# is flipped to "expect: safe" and stays so.  A refusal is safe only with
# the code its class calls for ("# code: N"), and a control case ("expect:
# trimmed": a change e2fsck calls harmless) must be trimmed, so that a
# program that refuses everything fails here (checked at the end).
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
	code=$(sed -n 's/^# code: *//p' "$dfs")
	python3 "$MUTATE_DIR/mutate.py" check "$fixture" "$dfs" >"$T/out" 2>&1
	rc=$?
	verdict=$(sed -n 's/^verdict: \([a-z_]*\).*/\1/p' "$T/out")
	got=$(sed -n 's/^verdict: [a-z_]* (e2trim exit \([0-9]*\).*/\1/p' "$T/out")
	n=$((n + 1))
	case "$expect:$verdict" in
	safe:refused|safe:refused_clean)
		if [ -z "$code" ] || [ "$got" != "$code" ]; then
			cat "$T/out" >&2
			echo "FAIL $name: refused with ${got:-?}, its class calls for ${code:-(no '# code:' line)}" >&2
			bad=$((bad + 1))
		else
			note "$name: $(head -1 "$T/out" | cut -c1-100)"
		fi ;;
	safe:trimmed|safe:realloc|trimmed:trimmed) note "$name: $(head -1 "$T/out" | cut -c1-100)" ;;
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

# The judge on a program that refuses everything with an e2trim-style
# message: the control case must fail it (refused_control, exit 1).
# shellcheck disable=SC2016  # the $1 is the fake program's own
printf '#!/bin/sh\necho "e2trim: $1: block bitmap marks in-use blocks free; run e2fsck -f" >&2\nexit 19\n' \
	>"$T/refuse-all"
chmod +x "$T/refuse-all"
ctl=$MUTATE_DIR/regressions/control-rm.dfs
if E2TRIM=$T/refuse-all python3 "$MUTATE_DIR/mutate.py" check ext4 "$ctl" >"$T/out" 2>&1; then
	cat "$T/out" >&2
	fail "a program that refuses everything passes the control case"
fi
grep -q '^verdict: refused_control ' "$T/out" || { cat "$T/out" >&2; fail "refuse-all: not refused_control"; }
note "a program that refuses everything: $(head -1 "$T/out")"
exit 0
