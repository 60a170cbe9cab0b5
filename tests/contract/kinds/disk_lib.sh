# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kinds/disk_lib.sh - the whole-disk image the partition kinds (offset,
# part, loopoff) make: an MBR, partition 1 at 1 MiB holding the
# filesystem, partition 2 after it (8 MiB of someone else's bytes, 'b'),
# 1 MiB spare.  A filesystem larger than its container (SIZE smaller than
# SRC) runs on into partition 2, as a partition shrunk without resize2fs.
# DISK_TABLE=gpt4k: the same partitions in a GPT written for a 4Kn disk
# (4096-byte LBAs, its header at byte 4096), made through a loop device
# with 4096-byte sectors (sfdisk 2.38 has no --sector-size for a file).

# disk_make SRC [SIZE]: sets IMG, OFF (partition 1's byte offset), PSIZE
disk_make() {
	local src=$1 size=${2:-$(stat -c %s "$1")}
	IMG=$T/disk.img OFF=1048576 PSIZE=$size
	rm -f "$IMG"
	truncate -s $((OFF + size + 9 * 1048576)) "$IMG"
	if [ "${DISK_TABLE:-}" = gpt4k ]; then
		disk_gpt4k "$size"
	else
		printf 'label: dos\nstart=2048, size=%d, type=83\nstart=%d, size=16384, type=83\n' \
			$((size / 512)) $((2048 + size / 512)) | sfdisk -q "$IMG" || fail "sfdisk"
	fi
	dd if="$src" of="$IMG" bs=1M oflag=seek_bytes seek="$OFF" iflag=count_bytes \
		count="$size" conv=notrunc,sparse status=none || fail "dd into partition 1"
	head -c $((8 * 1048576)) /dev/zero | tr '\0' 'b' |
		dd of="$IMG" bs=1M oflag=seek_bytes seek=$((OFF + size)) conv=notrunc status=none
}
# disk_gpt4k SIZE: $IMG's table, a 4Kn GPT (partition 1 of SIZE bytes at
# OFF, partition 2 of 8 MiB after it)
disk_gpt4k() {
	local l
	l=$(loop_attach "$IMG" --sector-size 4096)
	printf 'label: gpt\nstart=256, size=%d, type=linux\nstart=%d, size=2048, type=linux\n' \
		$(($1 / 4096)) $((256 + $1 / 4096)) | sfdisk -q --no-reread "$l" 2>/dev/null ||
		fail "sfdisk on $l (4096-byte sectors)"
	losetup -d "$l" || fail "losetup -d $l"
	[ "$(dd if="$IMG" bs=1 skip=4096 count=8 status=none)" = "EFI PART" ] ||
		fail "no GPT header at byte 4096"
}
disk_copy() {
	dd if="$IMG" of="$1" bs=1M iflag=skip_bytes,count_bytes skip="$OFF" \
		count="$PSIZE" status=none
}
