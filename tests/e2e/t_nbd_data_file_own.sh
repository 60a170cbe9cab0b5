#!/bin/bash
# A qcow2's external data file must be the image's own (issue 41, point
# 6).  qemu keeps each cluster a qcow2 allocates at the same offset of its
# data file, and nothing else there; the gates of a named file (regular,
# plain name, same owner, not attached) do not see whose bytes it holds.
#  1. another disk as the data file: a qcow2 made with its own data file
#     (data_file_raw=off: only its clusters), then pointed at another raw
#     ext4 disk of the same owner that holds a file where the qcow2
#     allocates no cluster (qemu-img amend -o data_file=...): refused
#     with 3 (as the other data-file gates), the message naming the file
#     and the byte, trim and dry run; that disk byte-identical.  Today's
#     main trimmed through it (exit 0).
#  2. a data file of its own with data past the image's virtual size:
#     refused with 3, "past the image's virtual size"; unchanged.
#  3. genuine data_file_raw=off and =on images: trimmed (exit 0), their
#     kept files the same (sha256 through qemu-img convert back to raw),
#     e2fsck -fn clean.  (t_nbd_data_file keeps the other gates.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"
need_root

# refused WHAT PATTERN FILE IMG: e2trim on IMG exits 3 naming PATTERN,
# trim and dry run, and FILE stays byte-identical
refused() {
	local what=$1 pat=$2 file=$3 img=$4 sum opt
	sum=$(sha_of "$file")
	for opt in -n -v; do
		run_e2trim "$opt" "$img"
		assert_rc 3 "$what ($opt)"
		assert_grep "$pat" "$ERR" "$what ($opt): message"
		assert_eq "$(sha_of "$file")" "$sum" "$what ($opt): $file's sha256"
	done
}

# 1. another disk: a fresh ext4 of the same size, with a file of its own
mkfs "$T/src.raw" 64M -t ext4
mkfs "$T/other.raw" 64M -t ext4
head -c $((2 << 20)) /dev/urandom >"$T/blob"
dfs_write "$T/other.raw" <<EOF
write $T/blob precious
EOF
(cd "$T" && qemu-img convert -q -O qcow2 -o data_file=own.raw,data_file_raw=off src.raw vm.qcow2) ||
	fail "qemu-img convert with a data file"
(cd "$T" && qemu-img amend -f qcow2 -o data_file=other.raw vm.qcow2) || fail "qemu-img amend"
(cd "$T" && qemu-img info vm.qcow2) | grep -q "data file: other.raw" || fail "the amend did not take"
refused "another disk as the data file" "its data file $T/other.raw holds data at byte [0-9]*, where the image allocates no cluster" \
	"$T/other.raw" "$T/vm.qcow2"
dfs_read "$T/other.raw" "cat /precious" | cmp -s - "$T/blob" || fail "the other disk's file"

# 2. its own data file, with data past the virtual size
(cd "$T" && qemu-img convert -q -O qcow2 -o data_file=long.raw,data_file_raw=off src.raw long.qcow2) ||
	fail "qemu-img convert (long)"
[ "$(stat -c %s "$T/long.raw")" = $((64 << 20)) ] || fail "long.raw is not 64 MiB"
head -c 65536 /dev/urandom >>"$T/long.raw"
refused "data past the virtual size" "past the image's virtual size" "$T/long.raw" "$T/long.qcow2"

# 3. genuine images, raw=off and raw=on: trimmed, their files kept
mkfs "$T/aged.raw" 64M -t ext4
age "$T/aged.raw" 7
for raw in off on; do
	(cd "$T" && qemu-img convert -q -O qcow2 -o data_file=d$raw.raw,data_file_raw=$raw aged.raw g$raw.qcow2) ||
		fail "qemu-img convert (raw=$raw)"
	alloc0=$(alloc_bytes "$T/d$raw.raw")
	run_e2trim -v "$T/g$raw.qcow2"
	assert_rc 0 "a genuine data file (data_file_raw=$raw)"
	[ "$(alloc_bytes "$T/d$raw.raw")" -lt "$alloc0" ] ||
		fail "raw=$raw: the data file gave no space back"
	(cd "$T" && qemu-img convert -q -O raw g$raw.qcow2 back.raw) || fail "convert back (raw=$raw)"
	e2fsck -fn "$T/back.raw" >/dev/null 2>&1 || fail "e2fsck -fn after the trim (raw=$raw)"
	for f in f1 f3 f5 f7; do
		[ "$(dfs_read "$T/back.raw" "cat /$f" | sha256sum)" = "$(dfs_read "$T/aged.raw" "cat /$f" | sha256sum)" ] ||
			fail "raw=$raw: /$f changed"
	done
done
finish
