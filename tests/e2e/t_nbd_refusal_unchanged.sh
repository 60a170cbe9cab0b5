#!/bin/bash
# A refusal changes nothing, in every format: qcow2 images with a
# persistent dirty bitmap (qemu rewrites the bitmap directory and grows
# the file when it opens one for writing), refused for an unclean
# filesystem (13), orphans (15), a bitmap that marks used blocks free
# (19), no ext filesystem (11), --zero-fill (3) and --secure (2), which
# only the target refuses, and a dry run; each image's sha256 is
# unchanged, bitmaps included.  Then a trim of the clean one works (qemu
# reopened read-write after the gates) and keeps its bitmap.  No root.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

# qcow2 IMG.raw NAME: NAME.qcow2 of it, with a persistent bitmap
qcow2() {
	qemu-img convert -O qcow2 "$1" "$T/$2.qcow2" || fail "convert $2"
	qemu-img bitmap --add "$T/$2.qcow2" dirty0 || fail "bitmap --add $2"
}
refused() {	# NAME RC what [options]
	local sum name=$1 rc=$2 what=$3
	shift 3
	sum=$(sha256sum <"$T/$name.qcow2")
	run_e2trim -v "$@" "$T/$name.qcow2"
	set -- "$name" "$rc" "$what"
	assert_rc "$2" "$3"
	assert_eq "$(sha256sum <"$T/$1.qcow2")" "$sum" "$3: the image after the refusal"
	qemu-img check -q "$T/$1.qcow2" || fail "$3: qemu-img check"
}

raw="$T/fs.raw"
mkfs "$raw" 64M -t ext4
age "$raw" 5
qcow2 "$raw" clean

cp "$raw" "$T/unclean.raw"
debugfs -w -R "ssv state 0" "$T/unclean.raw" >/dev/null 2>&1 || fail "ssv state"
qcow2 "$T/unclean.raw" unclean
refused unclean 13 "an unclean filesystem"

cp "$raw" "$T/orphan.raw"
debugfs -w -R "ssv last_orphan 12" "$T/orphan.raw" >/dev/null 2>&1 || fail "ssv last_orphan"
qcow2 "$T/orphan.raw" orphan
refused orphan 15 "orphan inodes"

# a used block marked free: the whole of f1's first block
cp "$raw" "$T/freed.raw"
blk=$(debugfs -R "bmap f1 0" "$T/freed.raw" 2>/dev/null)
debugfs -w -R "freeb $blk" "$T/freed.raw" >/dev/null 2>&1 || fail "freeb"
qcow2 "$T/freed.raw" freed
refused freed 19 "a used block marked free"

truncate -s 64M "$T/zero.raw"
qcow2 "$T/zero.raw" zero
refused zero 11 "no filesystem"

# refused by the target, after every gate passed
refused clean 3 "--zero-fill of a VM image" --zero-fill
refused clean 2 "--secure of a VM image" --secure

sum=$(sha256sum <"$T/clean.qcow2")
run_e2trim -n -v "$T/clean.qcow2"
assert_rc 0 "dry run"
assert_eq "$(sha256sum <"$T/clean.qcow2")" "$sum" "the image after a dry run"
note "13, 15, 19, 11, --zero-fill (3), --secure (2) and a dry run: every qcow2 with a bitmap unchanged"

# the trim itself: reopened read-write after the gates, the bitmap kept
run_e2trim -v "$T/clean.qcow2"
assert_rc 0 "trim of the clean image"
assert_grep "trimmed" "$OUT" "the report"
qemu-img check -q "$T/clean.qcow2" || fail "qemu-img check after the trim"
qemu-img info "$T/clean.qcow2" | grep -q "name: dirty0" || fail "the bitmap is gone"
qemu-img convert -O raw "$T/clean.qcow2" "$T/back.raw" || fail "convert back"
assert_eq "$(used_blocks_digest "$T/back.raw")" "$(used_blocks_digest "$raw")" "used blocks after the trim"
e2fsck -fn "$T/back.raw" >/dev/null 2>&1 || fail "e2fsck after the trim"
exit 0
