# shellcheck shell=bash
# tests/wholedisk_lib.sh - whole-disk images and devices for e2trim's tests,
# sourced by tests/lib.sh (which tests source; its fail, free_block_ranges
# and $T are used here): a filesystem aged inside a whole-disk image, a GPT
# disk with data on both sides of the filesystem, an LVM label, a device
# held with O_EXCL by another program.

# age_part IMG OFF COUNT MOD KIB: age the filesystem at byte OFF of a
# whole-disk image (COUNT files of (i % MOD + 1) * KIB KiB, every other
# one deleted), then write 0x5a over its free blocks, so that a trim has
# allocated bytes to give back; no root needed.  $T/blobI keeps file fI's
# bytes.
age_part() {
	local img=$1 off=$2 count=$3 mod=$4 kib=$5 fs="$1?offset=$2" i bs
	: >"$T/cmds"
	for ((i = 0; i < count; i++)); do
		head -c $(( (i % mod + 1) * kib * 1024 )) /dev/zero | tr '\0' '\245' >"$T/blob$i"
		echo "write $T/blob$i f$i" >>"$T/cmds"
	done
	for ((i = 0; i < count; i += 2)); do echo "rm f$i" >>"$T/cmds"; done
	debugfs -w -f "$T/cmds" "$fs" >/dev/null 2>&1 || fail "debugfs at $off"
	bs=$(dumpe2fs -h "$fs" 2>/dev/null | awk '/^Block size:/ {print $3}')
	free_block_ranges "$fs" | while read -r a b; do
		head -c $(( (b - a + 1) * bs )) /dev/zero | tr '\0' '\132' |
			dd of="$img" bs=1M oflag=seek_bytes seek=$(( off + a * bs )) \
				conv=notrunc status=none
	done
}

# gpt_disk IMG: a 160 MiB whole-disk image with a GPT, partition 1 full
# of 'a' (bytes that must survive), an aged ext4 in partition 2 whose
# free blocks hold 0x5a, and 'b' from partition 2's end (the
# filesystem's) up to the backup GPT: data follows the filesystem, so a
# trim one block past its end shows; sets $off to partition 2's byte
# offset.
gpt_disk() {
	local img=$1
	truncate -s 160M "$img"
	printf 'label: gpt\nstart=2048, size=65536, type=L\nstart=67584, size=196608, type=L\n' |
		sfdisk -q "$img" || fail "sfdisk"
	off=$((67584 * 512))
	head -c $((65536 * 512)) /dev/zero | tr '\0' '\141' |
		dd of="$img" bs=512 seek=2048 conv=notrunc status=none
	# sectors 264192 up to the backup GPT's 33 at the end (327680 in all)
	head -c $(((327680 - 33 - 264192) * 512)) /dev/zero | tr '\0' '\142' |
		dd of="$img" bs=512 seek=264192 conv=notrunc status=none
	mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$off "$img" 96M ||
		fail "mke2fs in partition 2"
	age_part "$img" "$off" 40 9 37
	e2fsck -fn "$img?offset=$off" >/dev/null 2>&1 || fail "e2fsck before"
}

# lvm_label IMG OFF: an LVM2 physical volume's label in the sector at byte
# OFF + 512, as pvcreate writes it (CRC and all, as libblkid checks it):
# "LABELONE" at OFF + 512, "LVM2 001" at OFF + 536; nothing else changes.
lvm_label() {
	python3 - "$1" "$2" <<'EOF' || fail "writing an LVM label into $1"
import struct, sys, zlib
def lvm_crc(data):
    # LVM's CRC: crc32's table, 0xf597a6cf to start with, no final xor
    return ~zlib.crc32(data, ~0xF597A6CF & 0xFFFFFFFF) & 0xFFFFFFFF
lab = bytearray(512)
lab[0:8] = b"LABELONE"
struct.pack_into("<QxxxxI", lab, 8, 1, 32)
lab[24:32] = b"LVM2 001"
lab[32:64] = b"e2trimTestPvUuid0123456789abcdef"
struct.pack_into("<I", lab, 16, lvm_crc(bytes(lab[20:])))
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]) + 512)
    f.write(lab)
EOF
}

# hold_excl DEV: another program holds DEV open with O_EXCL (as mkfs,
# e2fsck or a mount would), confirmed: it says so through a FIFO once it
# holds, and holds until release_excl closes its stdin.
hold_excl() {
	rm -f "$T/held" "$T/hold.in"
	mkfifo "$T/held" "$T/hold.in" || fail "mkfifo"
	python3 -c 'import os, sys
with open(sys.argv[2], "w") as f:
    try:
        fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        f.write(f"{e}\n")
        sys.exit(1)
    f.write("held\n")
sys.stdin.read()' "$1" "$T/held" <"$T/hold.in" &
	HOLDER=$!
	exec 6>"$T/hold.in"
	local line=
	read -r -t 300 line <"$T/held" || true
	[ "$line" = held ] || fail "the O_EXCL holder of $1 did not start: $line"
}
release_excl() {
	exec 6>&-
	wait "$HOLDER" 2>/dev/null
}
