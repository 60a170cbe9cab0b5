#!/bin/bash
# VM images e2trim cannot or must not open as they first look:
#  - an encrypted qcow2 (the AES method's header field; LUKS where
#    qemu-img can make one) and a raw LUKS volume: refused with 2,
#    "encrypted images are not supported", before qemu-nbd starts, the
#    file unchanged;
#  - a file whose first bytes say qcow2 but which is no qcow2 (version
#    0): qemu-nbd cannot open it, and the message says to give --format
#    raw if it is a raw image;
#  - a raw ext4 image with "QFI\xfb" over its (unused) first bytes, given
#    as --format raw: trimmed as raw, e2fsck -fn clean;
#  - a qcow2 with an external data file (data_file=, data_file_raw=on):
#    its clusters live in the data file, and the report's allocated sizes
#    count it (a 20 MiB deleted file: it said "0 B saved" while the data
#    file shrank by 20 MiB).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-nbd >/dev/null || skip "qemu-nbd not installed (make deps installs qemu-utils)"

# refused_unchanged FILE RC PATTERN: e2trim -v FILE exits RC naming PATTERN,
# and FILE's sha256 stays
refused_unchanged() {
	local sum
	sum=$(sha256sum "$1" | cut -d' ' -f1)
	run_e2trim -v "$1"
	assert_rc "$2" "${1##*/}"
	assert_grep "$3" "$ERR" "${1##*/}: message"
	assert_eq "$(sha256sum "$1" | cut -d' ' -f1)" "$sum" "${1##*/}: sha256"
	note "${1##*/}: exit $2: $(cat "$ERR")"
}

# encrypted: a qcow2 whose header names the legacy AES method (crypt_method
# 1, written over a plain qcow2: qemu-img no longer makes these), a qcow2
# with a LUKS key, and a raw LUKS header
aes=$T/aes.qcow2
qemu-img create -q -f qcow2 "$aes" 64M || fail "create qcow2"
printf '\000\000\000\001' | dd of="$aes" bs=1 seek=32 conv=notrunc status=none
refused_unchanged "$aes" 2 "encrypted images are not supported"
# qemu 7.2 sizes the LUKS key slot by timing PBKDF2 with the thread's CPU
# clock and gives up ("Unable to get accurate CPU usage") where that clock
# is coarse; the header field e2trim reads is the one the AES case covers
enc=$T/enc.qcow2
if qemu-img create -q -f qcow2 --object secret,id=s0,data=e2trim-test \
	-o encrypt.format=luks,encrypt.key-secret=s0 "$enc" 64M 2>"$T/enc.err"; then
	refused_unchanged "$enc" 2 "encrypted images are not supported"
elif grep -q "accurate CPU usage" "$T/enc.err"; then
	note "LUKS qcow2 not made here: $(cat "$T/enc.err")"
else
	fail "create encrypted qcow2: $(cat "$T/enc.err")"
fi
luks=$T/luks.img
truncate -s 16M "$luks"
printf 'LUKS\272\276\000\001' | dd of="$luks" conv=notrunc status=none
refused_unchanged "$luks" 2 "encrypted images are not supported"

# a qcow2 magic over a file that is no qcow2
bad=$T/bad.img
truncate -s 16M "$bad"
printf 'QFI\373' | dd of="$bad" conv=notrunc status=none
refused_unchanged "$bad" 1 "give --format raw"

# a raw ext4 whose unused first bytes spell the qcow2 magic
raw=$T/raw.img
mkfs "$raw" 64M -t ext4
age "$raw" 3
printf 'QFI\373' | dd of="$raw" conv=notrunc status=none
run_e2trim -v --format raw "$raw"
assert_rc 0 "--format raw over a qcow2 magic"
e2fsck -fn "$raw" >/dev/null 2>&1 || fail "e2fsck -fn after --format raw"

# an external data file
q=$T/ext.qcow2
data=$T/ext.data
qemu-img create -q -f qcow2 -o data_file="$data",data_file_raw=on "$q" 64M || fail "create data_file qcow2"
fs=$T/fs.raw
mkfs "$fs" 64M -t ext4
head -c $((20 << 20)) /dev/urandom >"$T/big"
debugfs -w -R "write $T/big big" "$fs" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm big" "$fs" >/dev/null 2>&1 || fail "debugfs rm"
qemu-img convert -n -O qcow2 "$fs" "$q" || fail "convert into the data_file qcow2"
d0=$(alloc_bytes "$data")
q0=$(alloc_bytes "$q")
run_e2trim --json "$q"
assert_rc 0 "qcow2 with a data file"
read -r trimmed before after < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]["result"]
print(r["bytes_trimmed"], r["allocated_before"], r["allocated_after"])' "$OUT") ||
	fail "JSON result"
d1=$(alloc_bytes "$data")
q1=$(alloc_bytes "$q")
[ "$trimmed" -ge $((19 << 20)) ] || fail "only $trimmed bytes trimmed of a 20 MiB deleted file"
assert_eq "$before" "$((d0 + q0))" "allocated before: the qcow2 and its data file"
assert_eq "$after" "$((d1 + q1))" "allocated after: the qcow2 and its data file"
[ $(( (d0 - d1) * 10 )) -ge $((trimmed * 9)) ] ||
	fail "the data file shrank by $((d0 - d1)), less than 90 % of $trimmed"
e2fsck -fn "$data" >/dev/null 2>&1 || fail "e2fsck -fn of the data file (raw)"
note "data_file: $trimmed bytes trimmed; allocated $before -> $after (data file $d0 -> $d1)"
exit 0
