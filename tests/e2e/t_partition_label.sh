#!/bin/bash
# A partition of an image has one name, however it was chosen: -p 1 and
# -p all call partition 1 "disk.img, partition 1" in its refusal, -p 2
# and -p all call partition 2 "disk.img, partition 2" in its report, and
# in --list's first column beside another image; the two runs print the
# same lines for it, byte for byte.  JSON keeps its fields as they were:
# "target" the name as given, "partition" the number.
# The disk: a GPT, partition 1 (8 MiB) holding an ext4 of 12 MiB (17,
# the filesystem does not fit), partition 2 an aged ext4 of its own size.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$T" || fail "cd $T"
truncate -s 32M disk.img
printf 'label: gpt\nstart=2048, size=16384, type=L\nstart=18432, size=40960, type=L\n' |
	sfdisk -q disk.img || fail "sfdisk"
o1=$((2048 * 512)) o2=$((18432 * 512))
mke2fs -q -F -t ext4 -E nodiscard,offset=$o1 disk.img 12M || fail "mke2fs 1"
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$o2 disk.img 20M ||
	fail "mke2fs 2"
age_part disk.img $o2 20 5 31
want=$(oracle_extents "disk.img?offset=$o2" | aligned_extents "$(stat -f -c %S disk.img)" $o2 |
	awk '{s += $2} END {print s + 0}')
[ "$want" -gt 0 ] || fail "nothing to trim in partition 2 of the fixture"

# partition 1, refused: the same line with -p 1 and with -p all
run_e2trim -n -v -p 1 disk.img
assert_rc 17 "-p 1: the filesystem is larger than partition 1"
refusal=$(grep '^e2trim: ' "$ERR")
[[ $refusal == "e2trim: disk.img, partition 1: "* ]] ||
	{ cat "$ERR"; fail "-p 1: the refusal is not labelled \"disk.img, partition 1\""; }

# partition 2, trimmed (dry run): its report, with dumpe2fs's byte count
run_e2trim -n -v -p 2 disk.img
assert_rc 0 "-p 2"
cp "$OUT" p2.out
assert_grep "^disk\.img, partition 2: .* ($want bytes) trimmed (dry run)$" p2.out \
	"-p 2: the summary line, labelled \"disk.img, partition 2\", dumpe2fs's bytes"

run_e2trim -n -v -p all disk.img
assert_rc 64 "-p all: partition 1 refused, partition 2 trimmed"
grep -Fxq -- "$refusal" "$ERR" ||
	{ echo "-p 1:   $refusal"; cat "$ERR"; fail "-p all words partition 1's refusal otherwise than -p 1"; }
grep '^disk\.img, partition 2: ' "$OUT" >all2.out
cmp -s p2.out all2.out ||
	{ diff p2.out all2.out; fail "-p all reports partition 2 otherwise than -p 2"; }
note "partition 1 refused, partition 2 reported: the same lines with -p N and -p all"

# several targets: --list's first column and "given twice" alike
cp --sparse=always disk.img copy.img
run_e2trim -n --list -p 2 disk.img copy.img
assert_rc 0 "-p 2 --list on two images"
assert_eq "$(awk '{print $1}' "$OUT" | uniq | tr '\n' ' ')" \
	'disk.img,\x20partition\x202 copy.img,\x20partition\x202 ' "-p 2 --list: the column names the partition"
cp "$OUT" list.n
run_e2trim -n --list -p all disk.img copy.img
assert_rc 64 "-p all --list on two images"
cmp -s list.n "$OUT" || { diff list.n "$OUT"; fail "--list: -p all's lines differ from -p 2's"; }
twice="e2trim: ./disk.img, partition 2: is given twice (the same as disk.img, partition 2); name each filesystem once"
for p in 2 all; do
	run_e2trim -n -p "$p" disk.img ./disk.img
	grep -Fxq -- "$twice" "$ERR" || { cat "$ERR"; fail "-p $p: \"given twice\" does not name partition 2 as -p all does"; }
done
note "--list's column and \"given twice\": the same with -p 2 and -p all"

# JSON: "target" is the name as given, "partition" the number, both ways
for p in 2 all; do
	run_e2trim -n --json -p "$p" disk.img
	python3 - "$OUT" "$p" <<'EOF' || fail "--json -p $p: target/partition fields"
import json, sys
doc = json.load(open(sys.argv[1]))
t = [(x["target"], x["partition"], x["status"]) for x in doc["targets"]]
want = [("disk.img", 2, "dry-run")]
if sys.argv[2] == "all":
    want.insert(0, ("disk.img", 1, "refused"))
assert t == want, t
EOF
done
note "JSON: target \"disk.img\", partition 1 and 2, with -p N and -p all"
