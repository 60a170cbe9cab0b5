#!/bin/bash
# --json: stdout is one JSON document (python3's json module reads it),
# and its numbers are those of -v, of --list and of the dumpe2fs oracle.
# A refused target and a target that is not ext still get their entry;
# a name with quotes, backslashes and a newline comes back byte for byte.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

img="$T/aged.img"
mkfs "$img" 64M -t ext4
age "$img" 7
hbs=$(stat -f -c %S "$img")

# q FILE EXPR: EXPR of the document in FILE (d), printed
q() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print("null" if v is None else v)' "$1" "$2"
}

run_e2trim -n --list "$img"
assert_rc 0 "dry run --list"
list_sum=$(awk '{s += $2} END {print s + 0}' "$OUT")
run_e2trim -n -v "$img"
cp "$OUT" "$T/v"
v_bytes=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$T/v")
v_extents=$(sed -n 's/.*: \([0-9]*\) free extents\{0,1\},.*/\1/p' "$T/v")
run_e2trim -n --json "$img"
assert_rc 0 "dry run --json"
cp "$OUT" "$T/dry.json"
[ ! -s "$ERR" ] || { cat "$ERR"; fail "--json wrote to stderr on success"; }
q "$T/dry.json" 'd["version"], d["exit_code"], len(d["targets"])' >"$T/head"
assert_eq "$(cat "$T/head")" "(1, 0, 1)" "version, exit code, one target"
e='d["targets"][0]'
assert_eq "$(q "$T/dry.json" "${e}[\"status\"]")" "dry-run" "status"
assert_eq "$(q "$T/dry.json" "${e}[\"target\"]")" "$img" "target as given"
assert_eq "$(q "$T/dry.json" "${e}[\"result\"][\"bytes_trimmed\"]")" "$v_bytes" "bytes_trimmed = -v"
assert_eq "$(q "$T/dry.json" "${e}[\"result\"][\"extents\"]")" "$v_extents" "extents = -v"
assert_eq "$(q "$T/dry.json" "${e}[\"result\"][\"bytes_trimmed\"] + ${e}[\"result\"][\"bytes_already_sparse\"]")" \
	"$list_sum" "bytes trimmed + already sparse = the --list sum"
# the oracle: dumpe2fs's free extents, and its superblock
oracle_extents "$img" >"$T/oracle"
assert_eq "$(q "$T/dry.json" "${e}[\"result\"][\"extents\"]")" "$(wc -l <"$T/oracle")" "extents = dumpe2fs's"
want=$(aligned_extents "$hbs" <"$T/oracle" | awk '{s += $2} END {print s + 0}')
assert_eq "$list_sum" "$want" "--list sum = dumpe2fs's extents aligned"
dumpe2fs -h "$img" 2>/dev/null >"$T/sb"
for f in "Block count:blocks" "Free blocks:free_blocks" "Block size:block_size" \
	 "Filesystem UUID:uuid"; do
	want=$(awk -F: -v k="${f%%:*}" '$1 == k {gsub(/^ +/, "", $2); print $2}' "$T/sb")
	assert_eq "$(q "$T/dry.json" "${e}[\"filesystem\"][\"${f##*:}\"]")" "$want" "filesystem.${f##*:}"
done
assert_eq "$(q "$T/dry.json" "${e}[\"filesystem\"][\"type\"], ${e}[\"device\"], ${e}[\"error\"]")" \
	"('ext4', None, None)" "type, no device for an image, no error"

# the real run: what the file occupies drops by exactly the bytes trimmed
alloc0=$(alloc_bytes "$img")
run_e2trim --json "$img"
assert_rc 0 "--json trim"
cp "$OUT" "$T/real.json"
alloc1=$(alloc_bytes "$img")
assert_eq "$(q "$T/real.json" "${e}[\"status\"]")" "trimmed" "status"
assert_eq "$(q "$T/real.json" "${e}[\"result\"][\"allocated_before\"]")" "$alloc0" "allocated_before = st_blocks before"
assert_eq "$(q "$T/real.json" "${e}[\"result\"][\"allocated_after\"]")" "$alloc1" "allocated_after = st_blocks after"
assert_eq "$(q "$T/real.json" "${e}[\"result\"][\"bytes_trimmed\"]")" "$((alloc0 - alloc1))" "the drop is the bytes trimmed"
assert_eq "$(q "$T/real.json" "${e}[\"result\"][\"bytes_trimmed\"]")" "$v_bytes" "as the dry run said"
assert_eq "$(q "$T/real.json" "type(${e}[\"result\"][\"seconds\"]).__name__")" "float" "seconds"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after"

# -m and -l as asked, and the minimum applied
run_e2trim -n --json -m 64K -l 32M "$img"
assert_eq "$(q "$OUT" "${e}[\"request\"]")" \
	"{'offset': 0, 'length': 33554432, 'minimum': 65536, 'minimum_applied': 65536}" "request"
# -o as asked: the request's offset is the one given, not 0
run_e2trim -n --json -o 4M -l 32M "$img"
assert_eq "$(q "$OUT" "${e}[\"request\"][\"offset\"], ${e}[\"request\"][\"length\"]")" \
	"(4194304, 33554432)" "request offset and length with -o 4M"

# Every documented number against a figure of its own, where the extent
# count, the requests and the bytes all differ: a labelled 1 KiB-block
# filesystem in an image file on a host with 4 KiB blocks, so that
# alignment to the host's block drops bytes and whole extents, and -m 3K
# drops others.  The oracles: dumpe2fs's free extents (below the minimum
# before alignment, then aligned inward) and the lines of --list.
sum_of() { awk '{s += $2} END {printf "%.0f\n", s}' "$@"; }
img1k="$T/k1.img"
mkfs "$img1k" 64M -t ext4 -b 1024 -L json-lbl
fill_free "$img1k"
# files of 1, 2, 3, 5 and 7 KiB, every other one deleted: free extents
# of each of those sizes, at every alignment
: >"$T/k1.cmds"
for ((i = 0; i < 150; i++)); do
	kib=$(( (i / 2) % 5 )); kib=$(( kib == 0 ? 1 : kib == 1 ? 2 : kib == 2 ? 3 : kib == 3 ? 5 : 7 ))
	[ -e "$T/blob.$kib" ] || head -c $((kib * 1024)) /dev/zero | tr '\0' '\245' >"$T/blob.$kib"
	echo "write $T/blob.$kib g$i" >>"$T/k1.cmds"
done
for ((i = 0; i < 150; i += 2)); do echo "rm g$i" >>"$T/k1.cmds"; done
debugfs -w -f "$T/k1.cmds" "$img1k" >/dev/null 2>&1 || fail "debugfs small files"
oracle_extents "$img1k" >"$T/k1.all"
oracle_extents "$img1k" 3072 >"$T/k1.min"
aligned_extents "$hbs" <"$T/k1.min" >"$T/k1.aligned"
run_e2trim -n --list -m 3K "$img1k"
assert_rc 0 "--list of the 1 KiB-block image"
cmp -s "$OUT" "$T/k1.aligned" || fail "1 KiB blocks: --list is not dumpe2fs's extents aligned"
run_e2trim -n --json -m 3K "$img1k"
assert_rc 0 "--json of the 1 KiB-block image"
cp "$OUT" "$T/k1.json"
r="${e}[\"result\"]"
assert_eq "$(q "$T/k1.json" "${r}[\"extents\"]")" "$(wc -l <"$T/k1.min")" "extents = dumpe2fs's at least 3 KiB"
assert_eq "$(q "$T/k1.json" "${r}[\"requests\"]")" "$(wc -l <"$T/k1.aligned")" "requests = the lines of --list"
assert_eq "$(q "$T/k1.json" "${r}[\"bytes_below_minimum\"]")" \
	"$(( $(sum_of "$T/k1.all") - $(sum_of "$T/k1.min") ))" "bytes_below_minimum = dumpe2fs's extents under 3 KiB"
assert_eq "$(q "$T/k1.json" "${r}[\"bytes_kept_for_alignment\"]")" \
	"$(( $(sum_of "$T/k1.min") - $(sum_of "$T/k1.aligned") ))" "bytes_kept_for_alignment = what aligning to $hbs drops"
assert_eq "$(q "$T/k1.json" "${r}[\"bytes_trimmed\"] + ${r}[\"bytes_already_sparse\"]")" \
	"$(sum_of "$T/k1.aligned")" "bytes trimmed + already sparse = the aligned extents"
# the three must differ, or the checks above could not tell them apart
if [ "$(wc -l <"$T/k1.min")" = "$(wc -l <"$T/k1.aligned")" ] ||
	[ "$(sum_of "$T/k1.min")" = "$(sum_of "$T/k1.aligned")" ] ||
	[ "$(wc -l <"$T/k1.all")" = "$(wc -l <"$T/k1.min")" ]; then
	fail "the 1 KiB-block image does not tell the figures apart"
fi
dumpe2fs -h "$img1k" 2>/dev/null >"$T/k1.sb"
sbv() { awk -F: -v k="$1" '$1 == k {gsub(/^ +/, "", $2); print $2}' "$T/k1.sb"; }
assert_eq "$(q "$T/k1.json" "${e}[\"filesystem\"][\"label\"]")" "$(sbv "Filesystem volume name")" "label = dumpe2fs's"
assert_eq "$(q "$T/k1.json" "${e}[\"filesystem\"][\"cluster_size\"], ${e}[\"filesystem\"][\"block_size\"]")" \
	"(1024, $(sbv "Block size"))" "no bigalloc: a cluster is a block"
assert_eq "$(q "$T/k1.json" "${e}[\"filesystem\"][\"offset\"], ${e}[\"partition\"]")" "(0, None)" "a bare filesystem: offset 0, no partition"

# bigalloc: the cluster size is dumpe2fs's, not the block size
mkfs "$T/big.img" 128M -t ext4 -b 4096 -O bigalloc -C 65536
run_e2trim -n --json "$T/big.img"
assert_rc 0 "--json of a bigalloc image"
assert_eq "$(q "$OUT" "${e}[\"filesystem\"][\"cluster_size\"]")" \
	"$(dumpe2fs -h "$T/big.img" 2>/dev/null | awk '/^Cluster size:/ {print $3}')" "cluster_size = dumpe2fs's"

# a partition of a whole-disk image: its number, and the offset sfdisk gave
gpt_disk "$T/disk.img"
run_e2trim -n --json -p 2 "$T/disk.img"
assert_rc 0 "--json -p 2"
assert_eq "$(q "$OUT" "${e}[\"partition\"], ${e}[\"filesystem\"][\"offset\"]")" "(2, $off)" "partition and offset"
assert_eq "$(q "$OUT" "${e}[\"result\"][\"extents\"]")" \
	"$(oracle_extents "$T/disk.img?offset=$off" | wc -l)" "partition 2: extents = dumpe2fs's"

# a refused target, one that is not ext, and an odd name: each its entry
# (refused by the superblock's gates, at open: no filesystem fields)
cp "$img" "$T/unclean.img"
debugfs -w -R "ssv state 0" "$T/unclean.img" >/dev/null 2>&1 || fail "debugfs"
odd="$T/a \"quoted\" \\ name
with a newline.img"
cp "$img" "$odd"
head -c 1M /dev/zero >"$T/zeros.img"
run_e2trim -n --json "$T/unclean.img" "$T/zeros.img" "$odd"
assert_rc 64 "some failed"
cp "$OUT" "$T/mixed.json"
assert_eq "$(q "$T/mixed.json" '[(t["status"], t["exit_code"], t["filesystem"] is None, t["result"] is None) for t in d["targets"]]')" \
	"[('refused', 13, True, True), ('refused', 11, True, True), ('dry-run', 0, False, False)]" "entries"
printf '%s' "$odd" >"$T/odd.name"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["targets"][2]["target"] == open(sys.argv[2]).read(), d["targets"][2]["target"]
assert d["exit_code"] == 64
assert "run e2fsck -f" in d["targets"][0]["error"]' "$T/mixed.json" "$T/odd.name" ||
	fail "escaped name, exit code or message"
assert_grep "unclean.img: was not cleanly unmounted" "$ERR" "the message stays on stderr"

# a block device: its discard limits as sysfs gives them; no allocated size
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	dev=$(loop_attach "$img")
	run_e2trim -n --json "$dev"
	assert_rc 0 "--json on $dev"
	q=/sys/class/block/$(basename "$dev")/queue
	assert_eq "$(q "$OUT" "${e}[\"device\"][\"discard_granularity\"]")" \
		"$(granularity "$dev")" "discard granularity"
	mb=$(cat "$q/discard_max_bytes")
	assert_eq "$(q "$OUT" "${e}[\"device\"][\"discard_max_bytes\"]")" "$mb" "discard_max_bytes"
	assert_eq "$(q "$OUT" "${e}[\"result\"][\"allocated_before\"], ${e}[\"result\"][\"allocated_after\"]")" \
		"(None, None)" "a device's allocated size is unknown"
	# a real trim: requests and bytes are what the loop device counted
	# (/sys/block/loopN/stat fields 12 and 14: discards, sectors)
	dev1k=$(loop_attach "$img1k")
	st=/sys/block/$(basename "$dev1k")/stat
	d0=$(awk '{print $12}' "$st"); s0=$(awk '{print $14}' "$st")
	run_e2trim --json -m 3K "$dev1k"
	assert_rc 0 "--json trim of $dev1k"
	assert_eq "$(q "$OUT" "${e}[\"result\"][\"requests\"]")" "$(( $(awk '{print $12}' "$st") - d0 ))" \
		"requests = the loop device's discard count"
	assert_eq "$(q "$OUT" "${e}[\"result\"][\"bytes_trimmed\"]")" "$(( ($(awk '{print $14}' "$st") - s0) * 512 ))" \
		"bytes_trimmed = the loop device's discarded sectors"
	[ "$(q "$OUT" "${e}[\"result\"][\"requests\"]")" != "$(q "$OUT" "${e}[\"result\"][\"extents\"]")" ] ||
		fail "$dev1k: requests and extents do not differ; the check cannot tell them apart"
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
note "--json: $v_bytes bytes, $v_extents extents, as -v, --list and dumpe2fs say"
exit 0
