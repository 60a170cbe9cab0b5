#!/bin/bash
# Bytes a guest can write never choose the image format.  A raw ext4
# image (and a raw GPT disk) whose first 512 bytes were overwritten with
# a real qcow2 header, owned by an unprivileged user who runs e2trim: no
# qemu-nbd is started as qcow2 (a qemu-nbd shim first in PATH logs every
# start), e2trim refuses with 3 asking for --format, and the image and
# the file in it (sha256 via debugfs dump) are unchanged.  --format raw
# trims it as raw (the file intact, e2fsck clean); --format qcow2 does
# what was asked (qemu-nbd -f qcow2, read-only until the gates pass: the
# refusal, 11, changes nothing).  A real qcow2 still opens by its magic.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

# as 65534 when root (a user who owns the image and nothing else)
U=()
u="$T/u"
mkdir "$u"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 711 "$T"
	U=(env TMPDIR="$u" setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
# the shim: logs how qemu-nbd was started, then is qemu-nbd
mkdir "$u/bin"
printf '#!/bin/sh\necho "$*" >>"%s"\nexec %s "$@"\n' "$u/qemu-nbd.log" \
	"$(command -v qemu-nbd)" >"$u/bin/qemu-nbd"
chmod 755 "$u/bin/qemu-nbd"
export PATH="$u/bin:$PATH"

qemu-img create -q -f qcow2 "$T/tiny.qcow2" 64M || fail "qemu-img create"
# a guest's bytes: the qcow2 header over sector 0 of IMG
qcow2_header_over() {
	dd if="$T/tiny.qcow2" of="$1" bs=512 count=1 conv=notrunc status=none ||
		fail "dd"
}
as_user() {
	[ "${#U[@]}" = 0 ] || chown -R 65534:65534 "$u"
	RC=0
	# shellcheck disable=SC2086  # E2TRIM_WRAP is a command line
	"${U[@]}" ${E2TRIM_WRAP:-} "$E2TRIM" "$@" >"$T/out" 2>"$T/err" || RC=$?
	OUT="$T/out"; ERR="$T/err"
}
dump_sum() {	# IMG[?offset=] FILE: sha256 of FILE as debugfs reads it
	debugfs -R "dump /$2 $T/dump" "$1" >/dev/null 2>&1 || fail "debugfs dump $2"
	sha256sum <"$T/dump"
}

# a raw ext4 image with a file in use
img="$u/fs.img"
mkfs "$img" 96M -t ext4
age "$img" 7
head -c 12M /dev/urandom >"$T/keep"
debugfs -w -R "write $T/keep keep" "$img" >/dev/null 2>&1 || fail "debugfs write"
keep=$(dump_sum "$img" keep)
qcow2_header_over "$img"
qemu-img info "$img" 2>/dev/null | grep -q "file format: qcow2" ||
	fail "qemu-img does not take the image for a qcow2 (the test's premise)"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck before"
sum=$(sha256sum <"$img")

as_user -v "$img"
assert_rc 3 "a raw ext4 image with a qcow2 header"
assert_grep "first bytes say qcow2, but it also reads as a raw disk or ext filesystem" "$ERR" "3's message"
assert_grep "\-\-format raw or --format qcow2" "$ERR" "3's message asks for --format"
[ ! -e "$u/qemu-nbd.log" ] || { cat "$u/qemu-nbd.log"; fail "qemu-nbd was started"; }
as_user -n "$img"
assert_rc 3 "dry run of it"
[ ! -e "$u/qemu-nbd.log" ] || { cat "$u/qemu-nbd.log"; fail "qemu-nbd was started (dry run)"; }
assert_eq "$(sha256sum <"$img")" "$sum" "the image after the refusals"

# --format qcow2: what was asked, and a refusal changes nothing
cp "$img" "$u/asked.img"
as_user -v --format qcow2 "$u/asked.img"
grep -q -- "-f qcow2" "$u/qemu-nbd.log" || fail "--format qcow2 did not start qemu-nbd -f qcow2"
[ "$RC" != 0 ] || fail "--format qcow2 over a raw filesystem trimmed something"
assert_eq "$(sha256sum <"$u/asked.img")" "$sum" "the image after --format qcow2"
rm -f "$u/qemu-nbd.log" "$u/asked.img"

# --format raw: trimmed as the raw filesystem it is
alloc=$(alloc_bytes "$img")
as_user -v --format raw "$img"
assert_rc 0 "--format raw"
[ ! -e "$u/qemu-nbd.log" ] || fail "qemu-nbd was started with --format raw"
[ "$(alloc_bytes "$img")" -lt "$alloc" ] || fail "--format raw trimmed nothing"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck after --format raw"
assert_eq "$(dump_sum "$img" keep)" "$keep" "the file after --format raw"
note "raw ext4 with a qcow2 header: 3; --format raw trims it, the file intact"

# a raw GPT disk whose sector 0 (the protective MBR) became a qcow2 header
disk="$u/disk.img"
gpt_disk "$disk"
debugfs -w -R "write $T/keep keep" "$disk?offset=$off" >/dev/null 2>&1 || fail "debugfs write (disk)"
keep=$(dump_sum "$disk?offset=$off" keep)
qcow2_header_over "$disk"
sum=$(sha256sum <"$disk")
as_user -v -p 2 "$disk"
assert_rc 3 "a raw GPT disk with a qcow2 header"
[ ! -e "$u/qemu-nbd.log" ] || { cat "$u/qemu-nbd.log"; fail "qemu-nbd was started (disk)"; }
assert_eq "$(sha256sum <"$disk")" "$sum" "the disk after the refusal"
# the table's protective MBR is gone (the header): by offset
as_user -v --format raw "$disk?offset=$off"
assert_rc 0 "--format raw disk?offset="
assert_eq "$(dump_sum "$disk?offset=$off" keep)" "$keep" "the file in partition 2"
e2fsck -fn "$disk?offset=$off" >/dev/null 2>&1 || fail "e2fsck after (disk)"
note "raw GPT disk with a qcow2 header: 3; --format raw trims it"

# a header that qemu would not open (cluster_bits 0) over a raw ext4:
# raw, with a warning
mkfs "$u/bad.img" 64M -t ext4
age "$u/bad.img" 8
qcow2_header_over "$u/bad.img"
printf '\0\0\0\0' | dd of="$u/bad.img" bs=1 seek=20 conv=notrunc status=none
as_user -v "$u/bad.img"
assert_rc 0 "a raw ext4 with a broken qcow2 header"
assert_grep "no valid qcow2 header follows .* trimmed as raw" "$ERR" "the warning"
[ ! -e "$u/qemu-nbd.log" ] || fail "qemu-nbd was started (broken header)"
e2fsck -fn "$u/bad.img" >/dev/null 2>&1 || fail "e2fsck after (broken header)"

# a real qcow2 is still one
mkfs "$T/real.raw" 64M -t ext4
age "$T/real.raw" 2
qemu-img convert -O qcow2 "$T/real.raw" "$u/real.qcow2" || fail "convert"
as_user -v "$u/real.qcow2"
assert_rc 0 "a real qcow2"
grep -q -- "-f qcow2" "$u/qemu-nbd.log" || fail "a real qcow2 was not opened as one"
qemu-img check -q "$u/real.qcow2" || fail "qemu-img check"
exit 0
