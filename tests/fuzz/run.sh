#!/bin/bash
# tests/fuzz/run.sh FUZZER SECONDS - make fuzz: seed the corpus with every
# fixture in images/ (packed, see pack.py), fuzz for SECONDS, then say how
# many inputs ran and what was found.  The corpus and the findings stay in
# the fuzzer's directory between runs; a finding is turned into a
# regression image with
#   E2TRIM_FUZZ_SAVE=images/fuzz-NAME.img FUZZER ARTIFACT; xz -9 images/fuzz-NAME.img
# and tests/e2e/t_fuzz_regressions.sh runs e2trim on it.
set -euo pipefail
fuzzer=$(realpath "$1")
seconds=${2:-120}
# an input that runs longer than this is a hang: libFuzzer stops there,
# writes it as timeout-<sha1> into the findings and exits non-zero
timeout=${FUZZ_TIMEOUT:-20}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(dirname "$fuzzer")
corpus=$dir/corpus
seeds=$dir/seeds
found=$dir/findings
mkdir -p "$corpus" "$seeds" "$found"

for xz in "$here"/../../images/*.img.xz; do
	name=$(basename "$xz" .img.xz)
	[ -s "$seeds/$name" ] && [ "$seeds/$name" -nt "$xz" ] && continue
	xz -dc "$xz" >"$seeds/$name.img"
	python3 "$here/pack.py" "$seeds/$name.img" "$seeds/$name"
	python3 "$here/pack.py" --fix-csums "$seeds/$name.img" "$seeds/$name.fix"
	rm -f "$seeds/$name.img"
done

nseeds=$(find "$seeds" -type f | wc -l)
[ "$nseeds" -gt 0 ] || { echo "fuzz: no seed made from images/*.img.xz" >&2; exit 1; }
before=$(find "$found" -type f | wc -l)
# stderr of the target (every refusal) is closed; libFuzzer keeps its own.
# The target counts the inputs it ran and those that got as far as a
# checked plan: a set-up that refuses everything fuzzes nothing.
counts=$dir/counts
rm -f "$counts"
rc=0
E2TRIM_FUZZ_COUNTS=$counts \
"$fuzzer" "$corpus" "$seeds" -max_total_time="$seconds" -timeout="$timeout" \
	-rss_limit_mb=2048 -max_len=1048576 -len_control=0 \
	-close_fd_mask=3 -print_final_stats=1 \
	-artifact_prefix="$found/" 2>"$dir/fuzz.log" || rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' \
	"$dir/fuzz.log" || tail -20 "$dir/fuzz.log"
after=$(find "$found" -type f | wc -l)
echo "corpus: $(find "$corpus" -type f | wc -l) inputs; findings: $after in $found ($((after - before)) new)"
if [ "$rc" != 0 ]; then
	grep -E 'ERROR|SUMMARY|Test unit written' "$dir/fuzz.log" | head -20
	exit 1
fi
read -r ran planned <"$counts" 2>/dev/null || { echo "fuzz: the target never ran an input" >&2; exit 1; }
echo "inputs run: $ran; with a checked plan and dry run: $planned"
[ "$planned" -gt 0 ] || { echo "fuzz: no input got as far as a plan: the set-up is broken" >&2; exit 1; }
