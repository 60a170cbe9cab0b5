#!/bin/bash
# The advice suite: a refusal's fix works when it is followed to the
# letter.  For every refusal fixture (images/README.md) on every kind of
# target it can be given as (the image file; partition 1 of a GPT disk
# image, -p 1; the same as disk.img?offset=N; as root, a loop device; a
# qcow2 of the disk, -p 1, for an unclean state, a journal and orphans;
# whole qcow2s, NBD URIs and codes 24-26 are t_advice_vm.sh's), e2trim
# --json -n refuses it; the command the message gives between backquotes
# (the document's "fix", the convention of src/README.md) is run as it
# stands with sh -c, and the next e2trim run trims (0) or refuses for
# another documented reason (the steps: tests/advice_lib.sh).  A fix that needs a
# person (no backquotes, "fix": null) must be one of HUMAN below, where it
# is listed with why.  Also: the message names this very target (the
# partition's ?offset= spelling, not the disk's), and a swap device is
# told to swapoff, not to unmount.  The table (code, kind, fix, result) is
# printed as the test's notes, lines "ADVICE|...".
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
# shellcheck source-path=SCRIPTDIR/.. source=advice_lib.sh
. "$(dirname "$0")/../advice_lib.sh"
# about the fixes, not another node: libext2fs's MMP wait (11 s at each
# read-write open of an MMP filesystem, e2trim's and e2fsck's) skipped
mmp_no_wait

# The refusals with a fix a script may run, then those only a person can
# decide, with the reason the suite accepts.
SCRIPTED=(
	unsafe-journal-recover unsafe-error-fs unsafe-not-valid
	unsafe-orphan-inode unsafe-orphan-file unsafe-gd-csum
	unsafe-gd-csum-crc16 unsafe-gd-uninit-flag unsafe-bitmap-csum
	unsafe-desc-layout unsafe-mmp-seq
	verify/verify-data verify/verify-xattr verify/verify-journal
	verify/verify-count-blocks verify/verify-inode-uninit
)
declare -A HUMAN=(
	[unsafe-truncated]="the rest of the image must be found: no command brings it back"
	[unsafe-mmp-fsck]="tune2fs -f -E clear_mmp only once nobody uses it on any node"
	[unsafe-feature-incompat]="a feature e2trim cannot read: fstrim on the mounted filesystem"
)
# a fix may be an e2trim command (--fsck on -p N and VM images): the one
# under test, by the name the message gives
mkdir -p "$T/bin"
ln -sf "$E2TRIM" "$T/bin/e2trim"
export PATH="$T/bin:$PATH"

# disk_of IMG DISK: IMG as partition 1 (32 MiB, at 1 MiB) of a GPT disk
# image; sets $off.  The table is written once (sfdisk is slow on a busy
# machine), then copied.
disk_of() {
	local img=$1 disk=$2
	if [ ! -e "$T/table.img" ]; then
		truncate -s 36M "$T/table.img"
		printf 'label: gpt\nstart=2048, size=65536, type=L\n' |
			sfdisk -q "$T/table.img" >/dev/null 2>&1 || fail "sfdisk"
	fi
	[ "$(stat -c %s "$img")" -le $((32 << 20)) ] || fail "$img: larger than the partition"
	cp --sparse=always "$T/table.img" "$disk"
	dd if="$img" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none || fail "dd"
	off=1048576
}

# advise_name NAME KIND WANT_NAME ARGS...: advise (advice_lib.sh), the
# reason a person decides taken from HUMAN; a fixture listed there must
# give no command
advise_name() {
	local name=$1 kind=$2 want_name=$3
	shift 3
	advise "$name" "$kind" - "$want_name" "${HUMAN[$name]:-${HUMAN[$kind]:-}}" "$@"
	[ "$ADVICE_PERSON" = 1 ] || [ -z "${HUMAN[$name]:-}" ] ||
		fail "$name ($kind): listed as a person's decision, but the message gives a command"
}

for name in "${SCRIPTED[@]}" "${!HUMAN[@]}"; do
	base=${name#verify/}
	# made once, sparse; every kind gets a sparse copy
	unxz_to "$IMAGES/$name.img.xz" "$T/orig.img"
	cp --sparse=always "$T/orig.img" "$T/$base.img"
	advise_name "$name" file "$base\.img" "$base.img"
	# in a partition a truncated image is whole again; libext2fs reads
	# the MMP block at its block number in the whole file, not at the
	# partition's (ext2fs_mmp_read() opens the device name itself), so
	# e2fsck cannot take MMP in a partition of an image at all
	[[ $name != unsafe-truncated && $name != *mmp* ]] || continue
	disk_of "$T/orig.img" "$T/disk.img"
	cp --sparse=always "$T/disk.img" "$T/disk0.img"
	# e2fsck at ?offset=N, or a loop device at -o N where e2fsck must
	# replay a journal (it cannot at an ?offset=); on -p 1, e2trim --fsck
	# for what e2fsck -p repairs (it makes the loop device itself)
	part="'disk\.img\?offset=$off'|-o $off .* disk\.img"
	advise_name "$name" "-p 1" "$part|^e2trim --fsck(=force)? -p 1 disk\.img$" -p 1 disk.img
	cp --sparse=always "$T/disk0.img" "$T/disk.img"
	advise_name "$name" "?offset=" "$part" "disk.img?offset=$off"
	if [ "$(id -u)" = 0 ]; then
		loop=$(loop_attach "$T/orig.img")
		advise_name "$name" loop "$loop" "$loop"
		losetup -d "$loop"
	fi
done

# a VM image: e2fsck cannot read it; e2trim --fsck shows it the content
# through qemu-nbd (nbdfuse), and a journal is replayed there too (whole
# qcow2s, NBD URIs and the codes of some kinds only, 24, 25, 26:
# t_advice_vm.sh)
for name in unsafe-error-fs unsafe-journal-recover unsafe-orphan-inode; do
	unxz_to "$IMAGES/$name.img.xz" "$T/orig.img"
	disk_of "$T/orig.img" "$T/disk.img"
	rm -f "$T/disk.qcow2"
	qemu-img convert -O qcow2 "$T/disk.img" "$T/disk.qcow2" || fail "qemu-img convert"
	advise_name "$name" "qcow2 -p 1" "^e2trim --fsck(=force)? -p 1 disk\.qcow2$" -p 1 disk.qcow2
	[[ $ADVICE_MSG == *qemu-nbd* ]] || { echo "$ADVICE_MSG"; fail "qcow2: the message does not say how e2fsck can read it"; }
done

# swap: told to swapoff (not "unmount it"), and swapoff is the fix
if [ "$(id -u)" = 0 ]; then
	truncate -s 16M "$T/swap.img"
	mkswap "$T/swap.img" >/dev/null 2>&1 || fail mkswap
	loop=$(loop_attach "$T/swap.img")
	if swapon "$loop" 2>/dev/null; then
		for target in "$loop" swap.img; do
			probe "$target"
			code=$RC fix=$FIX
			[[ $MSG != *"unmount it"* ]] || { echo "$MSG"; fail "swap ($target): told to unmount"; }
			assert_eq "$code $fix" "10 swapoff $loop" "swap ($target): exit and fix"
		done
		sh -c "$fix" || fail "$fix"
		probe swap.img
		assert_eq "$RC" 11 "swap, after $fix: not ext"
		advice_row 10 "loop, image file" swap "$fix" 11
	else
		left_out "swap: swapon $loop failed here"
	fi
else
	left_out "loop devices and swap (root)"
fi

advice_table
finish
