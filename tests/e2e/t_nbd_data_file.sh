#!/bin/bash
# Every file a qcow2 names (its external data file, its backing chain)
# passes the gates of a target named on the command line (issue 33,
# point 4).  One aged ext4, its bytes as the raw data file of qcow2s made
# by qemu-img convert -o data_file=...,data_file_raw=on:
#  1. the data file is another user's raw image (chown 65534): refused
#     with 3 naming both uids, trim and dry run; that file byte-identical;
#  2. the data file is a loop device holding a mounted ext4 (through a
#     symlink): refused with 10, "mounted"; the loop device's backing
#     file byte-identical;
#  3. the data file is a loop device's backing file (not mounted): 10,
#     naming losetup -d;
#  4. a data file of ours: trimmed; its allocated size drops by at least
#     the free 0x5a bytes e2trim reports, every kept file's sha256 is
#     the same, e2fsck -fn is clean;
#  5. a relative data file name, e2trim run from another folder holding
#     a file of the same name: the one beside the image is trimmed (qemu
#     7.2 opens the name from its working directory), the other is
#     byte-identical;
#  6. an overlay: its backing file byte-identical, mtime unchanged, after
#     a dry run and a trim; a backing file behind a loop device: 10;
#  7. a data file name qemu would parse as a protocol (nbd:...): 3, the
#     name is never handed on.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"
need_root

base=$T/fs.raw
mkfs "$base" 64M -t ext4
age "$base" 11
# the files kept, and their sha256 (dumped by debugfs)
kept_sums() {
	local f
	for f in $(dfs_read "$1" "ls -p /" | awk -F/ '$6 ~ /^f[0-9]/ {print $6}' | sort); do
		dfs_read "$1" "dump /$f $T/dump" >/dev/null
		echo "$f $(sha_of "$T/dump")"
	done
}
kept_sums "$base" >"$T/sums0"
[ "$(wc -l <"$T/sums0")" -ge 20 ] || fail "the aged image keeps too few files"
# qcow IMG DATA: a qcow2 whose raw data file DATA holds fs.raw's bytes
qcow() {
	rm -f "$1" "$2"
	qemu-img convert -q -O qcow2 -o "data_file=$2,data_file_raw=on" "$base" "$1" ||
		fail "qemu-img convert into $1 with data file $2"
}

# 1. another user's raw image
mkdir -p "$T/d1"
qcow "$T/d1/evil.qcow2" "$T/d1/victim.raw"
chown 65534 "$T/d1/victim.raw"
sum=$(sha_of "$T/d1/victim.raw")
for opt in -n -v; do
	run_e2trim "$opt" "$T/d1/evil.qcow2"
	assert_rc 3 "data file of another uid ($opt)"
	assert_grep "belongs to uid 65534, the image to uid 0" "$ERR" "another uid: message"
	assert_eq "$(sha_of "$T/d1/victim.raw")" "$sum" "the other user's image after $opt"
done
note "another user's data file: refused (3), unchanged"

# 2. a loop device holding a mounted ext4
mkdir -p "$T/d2" "$T/mnt"
cp --sparse=always "$base" "$T/d2/mounted.raw"
loop=$(loop_attach "$T/d2/mounted.raw")
mount -o ro "$loop" "$T/mnt" || fail "mount $loop"
MOUNTS+=("$T/mnt")
qcow "$T/d2/img.qcow2" "$T/d2/tmp.raw"
rm -f "$T/d2/tmp.raw"
ln -s "$loop" "$T/d2/tmp.raw"
sum=$(sha_of "$T/d2/mounted.raw")
for opt in -n -v; do
	run_e2trim "$opt" "$T/d2/img.qcow2"
	assert_rc 10 "data file on a mounted loop device ($opt)"
	assert_grep "data file $T/d2/tmp.raw is mounted on $T/mnt" "$ERR" "mounted: message"
	assert_eq "$(sha_of "$T/d2/mounted.raw")" "$sum" "the mounted filesystem's file after $opt"
done
umount "$T/mnt" || fail "umount"
# 3. the same file behind the loop device, not mounted, named directly
qcow "$T/d2/img3.qcow2" "$T/d2/tmp3.raw"
losetup -d "$loop"
loop=$(loop_attach "$T/d2/tmp3.raw")
sum=$(sha_of "$T/d2/tmp3.raw")
run_e2trim -v "$T/d2/img3.qcow2"
assert_rc 10 "data file behind a loop device"
assert_grep "is attached to $loop; detach it (losetup -d $loop)" "$ERR" "loop: message"
assert_eq "$(sha_of "$T/d2/tmp3.raw")" "$sum" "the loop device's file"
losetup -d "$loop"
note "data file mounted or behind a loop device: refused (10), unchanged"

# 4. a data file of ours
mkdir -p "$T/d4"
qcow "$T/d4/img.qcow2" "$T/d4/data.raw"
alloc0=$(alloc_bytes "$T/d4/data.raw")
run_e2trim -v "$T/d4/img.qcow2"
assert_rc 0 "data file of ours"
trimmed=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT")
alloc1=$(alloc_bytes "$T/d4/data.raw")
[ "${trimmed:-0}" -ge $((8 << 20)) ] || fail "only ${trimmed:-0} bytes trimmed"
[ $((alloc0 - alloc1)) -ge $((trimmed * 9 / 10)) ] ||
	fail "the data file's allocation dropped by $((alloc0 - alloc1)), less than 90 % of $trimmed"
kept_sums "$T/d4/data.raw" >"$T/sums1"
cmp -s "$T/sums0" "$T/sums1" || { diff "$T/sums0" "$T/sums1" | head; fail "kept files changed"; }
e2fsck -fn "$T/d4/data.raw" >/dev/null 2>&1 || fail "e2fsck -fn on the data file"
note "data file of ours: $trimmed bytes trimmed, allocated $alloc0 -> $alloc1"

# 5. a relative name, run from a folder with a file of the same name
mkdir -p "$T/d5/vm" "$T/d5/elsewhere"
(cd "$T/d5/vm" && qemu-img convert -q -O qcow2 -o data_file=data.raw,data_file_raw=on \
	"$base" img.qcow2) || fail "convert with a relative data file name"
cp --sparse=always "$base" "$T/d5/elsewhere/data.raw"
sum=$(sha_of "$T/d5/elsewhere/data.raw")
alloc0=$(alloc_bytes "$T/d5/vm/data.raw")
RC=0
(cd "$T/d5/elsewhere" && "$E2TRIM" -v ../vm/img.qcow2) >"$T/out" 2>"$T/err" || RC=$?
OUT=$T/out ERR=$T/err
assert_rc 0 "relative data file name from another folder"
assert_eq "$(sha_of "$T/d5/elsewhere/data.raw")" "$sum" "the same-named file in the working folder"
[ "$(alloc_bytes "$T/d5/vm/data.raw")" -lt "$alloc0" ] || fail "the data file beside the image was not trimmed"
note "relative data file name: the one beside the image trimmed, the other unchanged"

# 6. an overlay: the backing file is never written
mkdir -p "$T/d6"
qemu-img convert -q -O qcow2 "$base" "$T/d6/base.qcow2" || fail "convert base"
qemu-img create -q -f qcow2 -b base.qcow2 -F qcow2 "$T/d6/top.qcow2" || fail "overlay"
touch -d @1600000000 "$T/d6/base.qcow2"
sum=$(sha_of "$T/d6/base.qcow2")
mtime=$(stat -c %Y.%y "$T/d6/base.qcow2")
for opt in -n -v; do
	run_e2trim "$opt" "$T/d6/top.qcow2"
	assert_rc 0 "overlay ($opt)"
	assert_eq "$(sha_of "$T/d6/base.qcow2")" "$sum" "backing file bytes after $opt"
	assert_eq "$(stat -c %Y.%y "$T/d6/base.qcow2")" "$mtime" "backing file mtime after $opt"
done
loop=$(loop_attach "$T/d6/base.qcow2")
run_e2trim -v "$T/d6/top.qcow2"
assert_rc 10 "backing file behind a loop device"
assert_grep "backing file $T/d6/base.qcow2 is attached to $loop" "$ERR" "backing loop: message"
assert_eq "$(sha_of "$T/d6/base.qcow2")" "$sum" "backing file bytes after the refusal"
losetup -d "$loop"
note "overlay: backing file unchanged (bytes, mtime) by -n and a trim; behind a loop device: 10"

# 7. names are data: a data file name qemu would read as a protocol
mkdir -p "$T/d7"
(cd "$T/d7" && qemu-img convert -q -O qcow2 -o data_file=abcd.raw,data_file_raw=on \
	"$base" img.qcow2) || fail "convert into d7"
python3 - "$T/d7/img.qcow2" <<'PY' || fail "rename the data file in the header"
import sys
p = sys.argv[1]
b = open(p, "rb").read(65536)
i = b.find(b"abcd.raw")
assert i > 0
with open(p, "r+b") as f:
    f.seek(i)
    f.write(b"nbd:x.ra")
PY
sum=$(sha_of "$T/d7/img.qcow2")
run_e2trim -n "$T/d7/img.qcow2"
assert_rc 3 "a data file named nbd:x.ra"
assert_grep 'its data file is named "nbd:x.ra", which qemu would read as a protocol' "$ERR" "protocol name: message"
assert_eq "$(sha_of "$T/d7/img.qcow2")" "$sum" "the image after the refusal"
note "a data file name with a protocol prefix: refused (3)"
exit 0
