#!/bin/bash
# The VM formats other than qcow2 name files too (issue 33, point 4): a
# vmdk descriptor's extent lines name the files that hold its data, a
# qed and a sparse vmdk can name a backing file.  qemu-nbd follows those
# names wherever they point; e2trim follows only a qcow2's (open_chain.c
# gates them) and refuses any other image that names a file, with 3 and
# a message naming qemu-img convert.  Real images made by qemu-img over
# one ext4 (its bytes, with free blocks e2trim would discard or zero):
#  1. a vmdk (monolithicFlat) whose extent is another user's raw file:
#     refused (3) in a dry run, a trim and -z; that file keeps every
#     byte and its mtime (main followed it: -z wrote zeros over its free
#     blocks' 0x5a, exit 0);
#  2. a vmdk whose extent is a loop device holding the ext4: refused,
#     the device's backing file byte-identical;
#  3. a qed over a raw backing file: refused, backing and overlay
#     byte-identical;
#  4. a sparse vmdk over a backing vmdk: refused;
#  5. a single-file vmdk, naming nothing: still trimmed (exit 0).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"
command -v qemu-img >/dev/null || skip "qemu-img not installed (make deps installs qemu-utils)"
need_root

base=$T/fs.raw
mkfs "$base" 64M -t ext4
age "$base" 5
mtime_of() { stat -c %Y.%y "$1"; }
# refused IMG FILE WHAT NAME: every mode refused with 3 naming WHAT and
# NAME, FILE (what the image names) and IMG keep every byte and mtime
refused() {
	local img=$1 file=$2 what=$3 name=$4 sum isum mt opt
	sum=$(sha_of "$file") mt=$(mtime_of "$file") isum=$(sha_of "$img")
	for opt in -n -v -z; do
		run_e2trim "$opt" "$img"
		assert_rc 3 "$(basename "$img") naming $what ($opt)"
		assert_grep "names $what, \"$name\"" "$ERR" "$(basename "$img"): the name ($opt)"
		assert_grep "qemu-img convert -O qcow2" "$ERR" "$(basename "$img"): the fix ($opt)"
		assert_eq "$(sha_of "$file")" "$sum" "$(basename "$file") after $opt"
		assert_eq "$(mtime_of "$file")" "$mt" "$(basename "$file")'s mtime after $opt"
		assert_eq "$(sha_of "$img")" "$isum" "$(basename "$img") after $opt"
	done
}

# 1. a vmdk descriptor whose flat extent is another user's file
mkdir -p "$T/d1"
qemu-img convert -q -O vmdk -o subformat=monolithicFlat "$base" "$T/d1/evil.vmdk" ||
	fail "qemu-img convert to a monolithicFlat vmdk"
[ -f "$T/d1/evil-flat.vmdk" ] || fail "no extent file beside the descriptor"
mv "$T/d1/evil-flat.vmdk" "$T/victim.raw"
sed -i "s|\"evil-flat.vmdk\"|\"$T/victim.raw\"|" "$T/d1/evil.vmdk"
chown 65534 "$T/victim.raw"
qemu-img info --output=json "$T/d1/evil.vmdk" | grep -q "\"filename\": \"$T/victim.raw\"" ||
	fail "qemu-img does not take $T/victim.raw for the vmdk's extent"
refused "$T/d1/evil.vmdk" "$T/victim.raw" "an extent file" "$T/victim.raw"
note "a vmdk whose extent is another user's file: refused (3), that file unchanged"

# 2. its extent a loop device holding the ext4
cp --sparse=always "$base" "$T/dev.raw"
dev=$(loop_attach "$T/dev.raw")
sed "s|\"$T/victim.raw\"|\"$dev\"|" "$T/d1/evil.vmdk" >"$T/d1/dev.vmdk"
refused "$T/d1/dev.vmdk" "$T/dev.raw" "an extent file" "$dev"
losetup -d "$dev"
note "a vmdk whose extent is a loop device ($dev): refused (3), its file unchanged"

# 3. a qed over a raw backing file
cp --sparse=always "$base" "$T/back.raw"
qemu-img create -q -f qed -b back.raw -F raw "$T/over.qed" ||
	fail "qemu-img create a qed over back.raw"
refused "$T/over.qed" "$T/back.raw" "a backing file" "back.raw"
note "a qed over a backing file: refused (3), backing and overlay unchanged"

# 4. a sparse vmdk over a backing vmdk
qemu-img convert -q -O vmdk "$base" "$T/parent.vmdk" || fail "convert to a sparse vmdk"
qemu-img create -q -f vmdk -b parent.vmdk -F vmdk "$T/child.vmdk" ||
	fail "qemu-img create a vmdk over parent.vmdk"
refused "$T/child.vmdk" "$T/parent.vmdk" "a backing file" "parent.vmdk"
note "a vmdk over a backing vmdk: refused (3), both unchanged"

# 5. a vmdk of one file (its only extent is itself): trimmed
run_e2trim -v "$T/parent.vmdk"
assert_rc 0 "a single-file vmdk"
qemu-img convert -O raw "$T/parent.vmdk" "$T/after.raw" || fail "vmdk back to raw"
e2fsck -fn "$T/after.raw" >/dev/null 2>&1 || fail "the single-file vmdk: e2fsck -fn after"
note "a single-file vmdk: trimmed, e2fsck -fn clean"
exit 0
