#!/bin/bash
# A bounded run of the mutation campaign (make mutate runs 10 000): a few
# hundred random debugfs edits of the clean fixtures, a fixed seed.  For
# each mutant e2trim -n --list must refuse, or plan only blocks that are
# free after e2fsck -fy repairs a copy of the same mutant.  Any unsafe
# mutant fails the test; its case (fixture, seed, debugfs script) is
# printed, and tests/mutate/mutate.py replay CASEDIR runs it again.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
MUTATE=$(cd "$(dirname "$0")/../mutate" && pwd)/mutate.py
command -v python3 >/dev/null || fail "python3 is missing (make deps)"

n=${MUTATE_SMOKE:-300}
# the small fixtures (16-32 MiB, and bigalloc): setup stays a few seconds
fx=ext2-1k,ext3,ext4-noflex,ext4-bigalloc16k,ext4-uninitbg,ext4-sparse2,rich
if ! python3 "$MUTATE" run -n "$n" --seed 20261203 -j 2 --minimize 1 --fixtures "$fx" \
	--cases "$T/cases" >"$T/mutate.out" 2>&1; then
	cat "$T/mutate.out" >&2
	for d in "$T"/cases/*/; do
		grep -q '"verdict": "\(unsafe\|crashed\)"' "${d}case.json" 2>/dev/null || continue
		echo "--- $(basename "$d"): ${d}min.dfs" >&2
		cat "${d}min.dfs" "${d}script.dfs" 2>/dev/null | head -20 >&2
	done
	fail "unsafe or crashed mutants (above)"
fi
grep '^mutants tried' "$T/mutate.out"
grep -q "^mutants tried $n:" "$T/mutate.out" || fail "not every mutant was judged"
exit 0
