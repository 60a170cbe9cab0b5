#!/bin/bash
# An RBD clone and an image with a snapshot: e2trim trims the image's own
# layer only and never makes it grow (issue 33, point 3).  Before, the data
# map counted a clone's parent: discards over free space only the parent
# holds made librbd copy objects up (a fresh clone grew), and over an
# image with a snapshot they went over what the snapshot holds.
#  1. a fresh clone of an aged image (snapshot, protect, clone): rbd du
#     --exact does not grow, nothing is reported trimmed, the parent and
#     its snapshot unchanged;
#  2. a clone with writes of its own, then files deleted in it: its own
#     free space is trimmed (rbd du drops), no more reported than it held;
#  3. an image with a snapshot and writes since: what changed since the
#     snapshot is trimmed, the head does not grow, the snapshot unchanged.
# Each: files keep their sha256 and the used blocks their bytes, e2fsck -fn
# is clean on the image exported.
. "$(dirname "$0")/ceph_lib.sh"
own_images fresh own snapped gold
ERR=$T/err

# files_sha IMG: each regular file's name and sha256, one digest of all
files_sha() {
	local f
	debugfs -R "ls -p /" "$1" 2>/dev/null | awk -F/ '$3 ~ /^100/ {print $6}' |
		sort | while read -r f; do
			echo "$f $(debugfs -R "cat /$f" "$1" 2>/dev/null | sha256sum)"
		done | sha256sum | cut -d' ' -f1
}
# write_changed IMAGE OLD NEW: write into the RBD image the 64 KiB chunks
# where file NEW differs from OLD (a VM writing, as its own layer)
write_changed() {
	python3 - "$C" "$@" <<'PY' || fail "writing into $1"
import sys, rados, rbd
conf, name, old, new = sys.argv[1:]
pool, img = name.split("/")
n = 0
with rados.Rados(conffile=conf) as c, c.open_ioctx(pool) as io, \
     rbd.Image(io, img) as im, open(old, "rb") as a, open(new, "rb") as b:
    off = 0
    while True:
        x, y = a.read(65536), b.read(65536)
        if not y:
            break
        if x != y:
            im.write(y, off)
            n += 1
        off += len(y)
print(n)
PY
}
image_sha() { rbd -c "$C" export --no-progress "$1" - 2>/dev/null | sha256sum | cut -d' ' -f1; }
# trim NAME: e2trim --json on it, rc 0; its bytes_trimmed in TRIMMED
trim() {
	"$E2TRIM" --json "rbd:$1:conf=$C" >"$T/j" 2>"$ERR"; RC=$?
	cat "$ERR"
	assert_rc 0 "e2trim on $1"
	TRIMMED=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["result"]["bytes_trimmed"])' "$T/j")
}
# same_fs NAME IMG: the image exported has IMG's files and used blocks,
# and e2fsck -fn finds nothing
same_fs() {
	rbd -c "$C" export --no-progress "$1" "$T/x.img" >/dev/null 2>&1 || fail "rbd export $1"
	e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn on $1"; }
	assert_eq "$(files_sha "$T/x.img")" "$(files_sha "$2")" "$1's files"
	assert_eq "$(used_blocks_digest "$T/x.img")" "$(used_blocks_digest "$2")" "$1's used blocks"
	rm -f "$T/x.img"
}

mkfs "$T/fs.img" 256M -t ext4 -b 4096
age "$T/fs.img" 3
# the writes of a layer of its own: 24 new files (0x33), then 12 deleted
cp "$T/fs.img" "$T/own.img"
for ((i = 0; i < 24; i++)); do
	head -c $(( (i % 5 + 1) * 700 * 1024 )) /dev/zero | tr '\0' '\063' >"$T/n.$i"
	echo "write $T/n.$i n$i"
done >"$T/cmds"
for ((i = 0; i < 24; i += 2)); do echo "rm n$i"; done >>"$T/cmds"
debugfs -w -f "$T/cmds" "$T/own.img" >/dev/null 2>&1 || fail "debugfs writes"
rm -f "$T"/n.*

rbd -c "$C" import --no-progress "$T/fs.img" rbd/gold || fail "rbd import"
rbd -c "$C" snap create --no-progress rbd/gold@base || fail "rbd snap create"
rbd -c "$C" snap protect rbd/gold@base || fail "rbd snap protect"
gold_sha=$(image_sha rbd/gold@base)
gold_du=$(du_exact rbd/gold@base)
parent_unchanged() {
	assert_eq "$(image_sha rbd/gold@base)" "$gold_sha" "the parent snapshot's bytes after $1"
	assert_eq "$(du_exact rbd/gold@base)" "$gold_du" "the parent snapshot's rbd du after $1"
	assert_eq "$(du_exact rbd/gold)" 0 "the parent's head after $1"
}

# 1. a fresh clone: nothing of its own to trim, and it must not grow
rbd -c "$C" clone rbd/gold@base rbd/fresh || fail "rbd clone"
before=$(du_exact rbd/fresh)
trim rbd/fresh
after=$(du_exact rbd/fresh)
[ "$after" -le "$before" ] || fail "the fresh clone grew: rbd du --exact $before -> $after (reported trimmed: $TRIMMED)"
assert_eq "$TRIMMED" 0 "bytes reported trimmed on a fresh clone"
parent_unchanged "the fresh clone's trim"
same_fs rbd/fresh "$T/fs.img"
note "fresh clone: rbd du --exact $before -> $after, 0 reported trimmed, parent unchanged"

# 2. a clone that wrote files of its own and deleted some
rbd -c "$C" clone rbd/gold@base rbd/own || fail "rbd clone"
chunks=$(write_changed rbd/own "$T/fs.img" "$T/own.img")
before=$(du_exact rbd/own)
trim rbd/own
after=$(du_exact rbd/own)
[ "$after" -lt "$before" ] || fail "the clone's own free space was not trimmed: rbd du --exact $before -> $after"
[ "$TRIMMED" -le "$before" ] || fail "reported trimmed $TRIMMED, more than the clone's own $before"
parent_unchanged "the clone's trim"
same_fs rbd/own "$T/own.img"
note "clone with its own writes ($chunks chunks): rbd du --exact $((before >> 10)) -> $((after >> 10)) KiB, $((TRIMMED >> 10)) KiB reported trimmed"

# 3. an image with a snapshot, and writes since
rbd -c "$C" import --no-progress "$T/fs.img" rbd/snapped || fail "rbd import"
rbd -c "$C" snap create --no-progress rbd/snapped@s1 || fail "rbd snap create"
write_changed rbd/snapped "$T/fs.img" "$T/own.img" >/dev/null
s1_sha=$(image_sha rbd/snapped@s1)
s1_du=$(du_exact rbd/snapped@s1)
before=$(du_exact rbd/snapped)
trim rbd/snapped
after=$(du_exact rbd/snapped)
[ "$after" -le "$before" ] || fail "the head grew: rbd du --exact $before -> $after"
[ "$TRIMMED" -le "$before" ] || fail "reported trimmed $TRIMMED, more than what changed since the snapshot ($before)"
[ "$after" -lt "$before" ] || fail "what changed since the snapshot was not trimmed: $before -> $after"
assert_eq "$(image_sha rbd/snapped@s1)" "$s1_sha" "the snapshot's bytes"
assert_eq "$(du_exact rbd/snapped@s1)" "$s1_du" "the snapshot's rbd du"
same_fs rbd/snapped "$T/own.img"
note "image with a snapshot: head rbd du --exact $((before >> 10)) -> $((after >> 10)) KiB, $((TRIMMED >> 10)) KiB reported trimmed, snapshot unchanged"

for i in fresh own; do rbd -c "$C" rm --no-progress "rbd/$i" >/dev/null 2>&1; done
rbd -c "$C" snap unprotect rbd/gold@base >/dev/null 2>&1
for i in gold snapped; do
	rbd -c "$C" snap purge --no-progress "rbd/$i" >/dev/null 2>&1
	rbd -c "$C" rm --no-progress "rbd/$i" >/dev/null 2>&1
done
exit 0
