#!/bin/bash
# Multi-mount protection with a live user: another "node" keeps bumping
# the MMP sequence number of the ext4-mmp fixture, as a mounting kernel
# does.  A dry run and a real run both refuse with exit 18 (a sequence
# that is not "clean": a node holds it), --force too, the node's sequence
# number stays, and nothing but the MMP block changes.  Once the other node leaves the block clean, a
# dry run works again.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

img=$(fixture ext4-mmp)
sum=$(sha_of "$img")
run_e2trim -n --list "$img"
assert_rc 0 "clean MMP"
cp "$OUT" "$T/plan"

# the other node: a new sequence number, checksummed, before each run, as
# a mounting kernel bumps it every update interval.  The test writes it
# itself between the runs: no writer in the background whose pace on a
# loaded host decides what e2trim sees.  Each run must leave the node's
# number where it is (e2trim never claims the block of a live node).
seq=$((0x100))
rcs=
for opts in "-n" "-n --force" "" "--force"; do
	seq=$((seq + 1))
	python3 "$IMAGES/fixtool.py" mmp "$img" "$seq" othernode sdb ||
		fail "the other node's write"
	# shellcheck disable=SC2086
	run_e2trim $opts --list "$img"
	rcs="$rcs $RC"
	grep -q "multi-mount protection" "$ERR" || rcs="$rcs(no message)"
	[ ! -s "$OUT" ] || rcs="$rcs(plan)"
	got=$(dfs_read "$img" dump_mmp | awk '$1 == "sequence:" {print $2}')
	[ "$((16#$got))" = "$seq" ] || rcs="$rcs(sequence $got)"
done
assert_eq "$rcs" " 18 18 18 18" "live MMP: exit codes of -n, -n --force, real, real --force"
note "live MMP: refused with exit 18 by dry and real runs"

# the other node leaves: the MMP block as the fixture had it, and so the
# whole image must be byte for byte the fixture again
python3 "$IMAGES/fixtool.py" mmp "$img" 0xFF4D4D50 e2trim-fixture ext4-mmp.img
assert_eq "$(sha_of "$img")" "$sum" "image outside the MMP block"
run_e2trim -n --list "$img"
assert_rc 0 "MMP released"
cmp -s "$OUT" "$T/plan" || fail "plan changed"
exit 0
