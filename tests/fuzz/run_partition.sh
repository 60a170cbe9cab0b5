#!/bin/bash
# tests/fuzz/run_partition.sh FUZZER SECONDS - make fuzz-partition: seed
# the corpus with tables sfdisk writes (an MBR with three logical
# partitions, one with an ext4 in a logical partition, a GPT), packed by
# pack_table.py, fuzz for SECONDS, then say how many inputs ran and what
# was found.  Corpus and findings stay beside the fuzzer between runs.
set -euo pipefail
fuzzer=$(realpath "$1")
seconds=${2:-120}
# an input that runs longer than this is a hang: libFuzzer stops there,
# writes it as timeout-<sha1> into the findings and exits non-zero
timeout=${FUZZ_TIMEOUT:-20}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(dirname "$fuzzer")/partition
corpus=$dir/corpus
seeds=$dir/seeds
found=$dir/findings
mkdir -p "$corpus" "$seeds" "$found"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# seed NAME PARTNO SFDISK-SCRIPT [MKE2FS-SECTOR]: a 64 MiB disk with that
# table (and an ext4 at that sector), packed
seed() {
	local img=$tmp/$1.img
	truncate -s 64M "$img"
	printf '%b' "$3" | sfdisk -q "$img" >/dev/null
	if [ -n "${4:-}" ]; then
		mke2fs -q -F -t ext4 -E nodiscard,offset=$(($4 * 512)) "$img" 8M
	fi
	python3 "$here/pack_table.py" "$img" "$seeds/$1" "$2"
}
logical='label: dos\nstart=2048, size=16384, type=83\nstart=18432, size=100000, type=5\nstart=20480, size=16384, type=83\nstart=38912, size=16384, type=83\nstart=57344, size=16384, type=83\n'
seed dos-logical 6 "$logical"
seed dos-logical-ext4 5 "$logical" 20480
seed gpt 2 'label: gpt\nstart=2048, size=16384\nstart=18432, size=16384\n' 18432

rc=0
"$fuzzer" "$corpus" "$seeds" -max_total_time="$seconds" -timeout="$timeout" \
	-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
	-artifact_prefix="$found/" 2>"$dir/fuzz.log" || rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' \
	"$dir/fuzz.log" || tail -20 "$dir/fuzz.log"
echo "corpus: $(find "$corpus" -type f | wc -l) inputs; findings: $(find "$found" -type f | wc -l) in $found"
if [ "$rc" != 0 ]; then
	grep -E 'ERROR|SUMMARY|Test unit written' "$dir/fuzz.log" | head -20
	exit 1
fi
