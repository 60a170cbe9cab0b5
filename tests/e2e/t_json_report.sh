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
elif [ "${CI:-}" = true ]; then
	fail "needs root and loop devices under CI"
fi
note "--json: $v_bytes bytes, $v_extents extents, as -v, --list and dumpe2fs say"
exit 0
