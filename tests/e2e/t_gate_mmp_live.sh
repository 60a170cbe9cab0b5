#!/bin/bash
# Multi-mount protection with a live user: another "node" keeps bumping
# the MMP sequence number of the ext4-mmp fixture, as a mounting kernel
# does.  A dry run and a real run (which waits 2 x the check interval + 1 s
# as e2fsck does) both refuse with exit 18, --force too, and nothing but
# the MMP block changes.  Once the other node leaves the block clean, a
# dry run works again.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

img=$(fixture ext4-mmp)
sum=$(file_md5 "$img")
run_e2trim -n --list "$img"
assert_rc 0 "clean MMP"
cp "$OUT" "$T/plan"

# the other node: a new sequence number every half second, checksummed
# (the pace is the node's own; the test waits only for its first write,
# which it confirms through a FIFO, and every refusal below needs just that)
mkfifo "$T/node.ready" || fail "mkfifo"
exec 5<>"$T/node.ready"
python3 - "$IMAGES" "$img" "$T/node.ready" >"$T/node" 2>&1 <<'PY' &
import sys, time
sys.path.insert(0, sys.argv[1])
import fixtool
seq = 0x100
while True:
    fixtool.cmd_mmp(sys.argv[2], hex(seq), "othernode", "sdb")
    if seq == 0x100:
        with open(sys.argv[3], "w") as f:
            f.write("running\n")
    seq += 1
    time.sleep(0.5)
PY
node=$!
line=
read -r -t 300 -u 5 line || true
exec 5>&-
[ "$line" = running ] || { kill $node; cat "$T/node" >&2; fail "the other node did not start"; }

rcs=
for opts in "-n" "-n --force" "" "--force"; do
	# shellcheck disable=SC2086
	run_e2trim $opts --list "$img"
	rcs="$rcs $RC"
	grep -q "multi-mount protection" "$ERR" || rcs="$rcs(no message)"
	[ ! -s "$OUT" ] || rcs="$rcs(plan)"
done
kill $node; wait $node 2>/dev/null
assert_eq "$rcs" " 18 18 18 18" "live MMP: exit codes of -n, -n --force, real, real --force"
note "live MMP: refused with exit 18 by dry and real runs"

# the other node leaves: the MMP block as the fixture had it, and so the
# whole image must be byte for byte the fixture again
python3 "$IMAGES/fixtool.py" mmp "$img" 0xFF4D4D50 e2trim-fixture ext4-mmp.img
assert_eq "$(file_md5 "$img")" "$sum" "image outside the MMP block"
run_e2trim -n --list "$img"
assert_rc 0 "MMP released"
cmp -s "$OUT" "$T/plan" || fail "plan changed"
exit 0
