#!/bin/bash
# An aged ext4 in an RBD image, trimmed in place: Ceph's own accounting
# (rbd du --exact) drops by at least 90 % of the free space that held
# data, every file reads back the same, e2fsck -fn is clean, a second run
# frees nothing more and trims only what rbd diff calls allocated, -v and
# --json carry rbd du's numbers.
. "$(dirname "$0")/ceph_lib.sh"
own_images aged bigalloc1k
IMG=rbd/aged
SPEC="rbd:$IMG:conf=$C"

# the ext4: kept files of random bytes, then files written and deleted
mkfs "$T/fs.img" 512M -t ext4 -b 4096
mkdir -p "$T/in"
for i in 1 2 3 4 5 6; do head -c $(( i * 700 * 1024 + 123 )) /dev/urandom >"$T/in/k$i"; done
{
	for i in 1 2 3 4 5 6; do echo "write $T/in/k$i k$i"; done
} | dfs_write "$T/fs.img"
age "$T/fs.img" 7
# a large deleted file: 96 MiB of 'Z' that stays in the free space
head -c $((96 << 20)) /dev/zero | tr '\0' 'Z' >"$T/big"
printf 'write %s big\nrm big\n' "$T/big" | dfs_write "$T/fs.img"
rm -f "$T/big"
e2fsck -fn "$T/fs.img" >/dev/null 2>&1 || fail "the aged ext4 is not clean"
# what the free space holds that is not zero: the written-then-freed bytes
bs=$(dumpe2fs -h "$T/fs.img" 2>/dev/null | awk '/^Block size:/ {print $3}')
free_block_ranges "$T/fs.img" >"$T/free"
free_written=$(python3 - "$T/fs.img" "$bs" "$T/free" <<'PY'
import sys
img, bs = sys.argv[1], int(sys.argv[2])
n = 0
with open(img, "rb") as f:
    for line in open(sys.argv[3]):
        a, b = map(int, line.split())
        f.seek(a * bs)
        for _ in range(a, b + 1):
            if f.read(bs).strip(b"\0"):
                n += bs
print(n)
PY
)
note "free space that holds data: $((free_written >> 20)) MiB"
[ "$free_written" -gt $((90 << 20)) ] || fail "aging left only $free_written bytes in the free space"

rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
files_sha() {	# IMAGE -> one line per file: name sha256
	local f
	rbd -c "$C" export --no-progress "$1" "$T/out.img" >/dev/null 2>&1 || fail "rbd export $1"
	e2fsck -fn "$T/out.img" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "e2fsck -fn on the exported $1"; }
	for f in k1 k2 k3 k4 k5 k6 $(dfs_read "$T/out.img" "ls -p /" | awk -F/ '$6 ~ /^f/ {print $6}'); do
		dfs_read "$T/out.img" "dump /$f $T/dump.bin" >/dev/null
		echo "$f $(sha_of "$T/dump.bin")"
	done
	rm -f "$T/out.img" "$T/dump.bin"
}
files_sha "$IMG" >"$T/sha.before"
[ "$(wc -l <"$T/sha.before")" -ge 30 ] || fail "too few files to compare"
before=$(du_exact "$IMG")

OUT=$T/out ERR=$T/err
"$E2TRIM" -v "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$OUT" "$ERR"
assert_rc 0 "e2trim on the RBD image"
after=$(du_exact "$IMG")
freed=$((before - after))
note "rbd du --exact: $((before >> 20)) MiB before, $((after >> 20)) MiB after: $((freed >> 20)) MiB freed of $((free_written >> 20)) MiB"
[ $((freed * 10)) -ge $((free_written * 9)) ] ||
	fail "freed $freed bytes, less than 90 % of the $free_written written-then-freed bytes"
# -v says what rbd du says (to 0.1 MiB)
assert_grep "rbd image allocated $(awk -v b="$before" 'BEGIN {printf "%.1f MiB", b / 1048576}') before, $(awk -v b="$after" 'BEGIN {printf "%.1f MiB", b / 1048576}') after" "$OUT" "-v's before/after"
files_sha "$IMG" >"$T/sha.after"
diff "$T/sha.before" "$T/sha.after" || fail "a file changed"
note "$(wc -l <"$T/sha.after") files unchanged, e2fsck -fn clean"

# a second run frees nothing more; its JSON carries rbd du's numbers.
# It trims only free space that rbd diff calls allocated (widened to
# librbd's 64 KiB chunks): rbd diff tells each 4 MiB object from its start
# to its last byte, so what the first run freed inside an object still
# reads as allocated there and is sent again; qemu's block status (whole
# objects) called more allocated still.
rbd -c "$C" diff --format json "$IMG" >"$T/diff.json" || fail "rbd diff"
rbd -c "$C" export --no-progress "$IMG" "$T/out.img" >/dev/null 2>&1 || fail "rbd export"
free_block_ranges "$T/out.img" >"$T/free"
[ -s "$T/free" ] || fail "dumpe2fs of the exported image"
rm -f "$T/out.img"
"$E2TRIM" --json "$SPEC" >"$T/j" 2>"$ERR"; RC=$?
assert_rc 0 "the second run"
python3 - "$T/j" "$T/diff.json" "$T/free" "$bs" <<'PY' || fail "the second run trimmed free space that rbd diff calls a hole"
import json, sys
G = 65536
r = json.load(open(sys.argv[1]))["targets"][0]["result"]
diff = [(e["offset"], e["offset"] + e["length"]) for e in json.load(open(sys.argv[2]))
        if e["exists"] in (True, "true")]
bs = int(sys.argv[4])
free = []
for line in open(sys.argv[3]):
    a, b = map(int, line.split())
    a, b = a * bs, (b + 1) * bs
    if free and free[-1][1] == a:
        free[-1] = (free[-1][0], b)
    else:
        free.append((a, b))
wide = [(s // G * G, -(-e // G) * G) for s, e in diff]
allowed = 0
for a, b in free:
    a, b = -(-a // G) * G, b // G * G
    for s, e in wide:
        lo, hi = max(a, s), min(b, e)
        if lo < hi:
            allowed += hi - lo
print(f"  second run: {r['requests']} requests, {r['bytes_trimmed']} bytes; "
      f"free space rbd diff calls allocated: {allowed} bytes", file=sys.stderr)
assert r["bytes_trimmed"] <= allowed, (r["bytes_trimmed"], allowed)
PY
again=$(du_exact "$IMG")
assert_eq "$again" "$after" "rbd du --exact after a second run"
python3 - "$T/j" "$after" <<'PY' || fail "the JSON's allocated_before/after are not rbd du's"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
r = t["result"]
a = int(sys.argv[2])
assert r["allocated_before"] == a and r["allocated_after"] == a, r
PY
files_sha "$IMG" >"$T/sha.again"
diff "$T/sha.before" "$T/sha.again" || fail "a file changed in the second run"
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1

# 1 KiB blocks with bigalloc and two descriptor blocks (at 2 and 3, where
# ext2fs_descriptor_block_loc2() says 2 and 2): the descriptors read again
# under the lock are those libext2fs read (before: every run refused, 26)
mkfs "$T/b.img" 40M -t ext4 -b 1024 -O bigalloc -C 2048 -g 1024
dumpe2fs "$T/b.img" 2>/dev/null | grep -q "Group descriptors at 2-3$" ||
	fail "bigalloc 1k: the descriptors are not at 2-3"
rbd -c "$C" import --no-progress "$T/b.img" rbd/bigalloc1k || fail "rbd import"
"$E2TRIM" "rbd:rbd/bigalloc1k:conf=$C" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 0 "e2trim on 1 KiB-block bigalloc with two descriptor blocks"
rbd -c "$C" export --no-progress rbd/bigalloc1k "$T/b.out" >/dev/null 2>&1 || fail "rbd export"
e2fsck -fn "$T/b.out" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "e2fsck -fn after"; }
rbd -c "$C" rm --no-progress rbd/bigalloc1k >/dev/null 2>&1
exit 0
