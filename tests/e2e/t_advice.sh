#!/bin/bash
# The advice suite: a refusal's fix works when it is followed to the
# letter.  For every refusal fixture (images/README.md) on every kind of
# target it can be given as (the image file; partition 1 of a GPT disk
# image, -p 1; the same as disk.img?offset=N; as root, a loop device; a
# qcow2 of the disk, -p 1, for an unclean state, a journal and orphans;
# whole qcow2s, NBD URIs and codes 24-26 are t_advice_vm.sh's), e2trim
# --json -n refuses it; the command the message gives between backquotes
# (the document's "fix", the convention of src/README.md) is run as it
# stands with sh -c, and the next e2trim run trims (0) or refuses with a
# code the message announced (the steps: tests/advice_lib.sh).  A fix that needs a
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

# Bounds before state (issue 42): a filesystem larger than its partition
# (24 MiB in partition 1, 16 MiB) and not cleanly unmounted, partition 2
# full of data right after it.  Through -p 1, ?offset=, a loop device at
# -o without a size limit (its file's table bounds it) and with one, the
# answer is 17 and no command (a person grows the partition back or gives
# the right one): a state's fix, e2fsck -fy 'big.img?offset=N', ran e2fsck
# into partition 2.  Partition 2's bytes are compared after each case.
p2_sum() { dd if="$T/big.img" bs=1M skip=17 count=32 status=none | sha256sum; }
truncate -s 52M "$T/big.img"
printf 'label: gpt\nstart=2048, size=32768, type=L\nstart=34816, size=65536, type=L\n' |
	sfdisk -q "$T/big.img" >/dev/null 2>&1 || fail "sfdisk big.img"
truncate -s 24M "$T/big-fs.img"
mke2fs -q -F -t ext4 "$T/big-fs.img" >/dev/null 2>&1 || fail "mke2fs big-fs.img"
debugfs -w -R "ssv state 0" "$T/big-fs.img" >/dev/null 2>&1 || fail "debugfs ssv state"
dd if="$T/big-fs.img" of="$T/big.img" bs=1M seek=1 conv=notrunc status=none || fail dd
head -c 32M /dev/urandom | dd of="$T/big.img" bs=1M seek=17 conv=notrunc iflag=fullblock status=none || fail dd
p2=$(p2_sum)
GROW="the partition must be grown back (or the right one given): a person's decision"
advise outgrown "-p 1" 17 - "$GROW" -p 1 big.img
assert_eq "$(p2_sum)" "$p2" "outgrown, -p 1: partition 2's bytes"
advise outgrown "?offset=" 17 - "$GROW" "big.img?offset=1048576"
assert_eq "$(p2_sum)" "$p2" "outgrown, ?offset=: partition 2's bytes"
# e2trim --fsck -p 1 (the fix printed for -p N): e2fsck on a loop device
# bounded by the partition aborts; e2trim says why (17), not 21
run_e2trim --fsck -p 1 "$T/big.img"
assert_rc 17 "outgrown, e2trim --fsck -p 1"
assert_eq "$(p2_sum)" "$p2" "outgrown, --fsck -p 1: partition 2's bytes"
advice_row 17 "--fsck -p 1" outgrown "person: $GROW" 17
# ... and where e2trim --fsck has no loop device (not root) and would
# give e2fsck "?offset=", which nothing bounds: the probe checks the
# bounds itself, and e2fsck is not run at all (main ran it past the
# partition's end before saying 17)
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	cp "$T/big.img" "$T/big-nobody.img"
	chmod 666 "$T/big-nobody.img"
	RC=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$E2TRIM" -v --fsck -p 1 "$T/big-nobody.img" \
		>"$T/out" 2>"$T/err" || RC=$?
	ERR=$T/err
	assert_rc 17 "outgrown, e2trim --fsck -p 1 without loop devices (not root)"
	! grep -q "running" "$ERR" || { cat "$ERR"; fail "outgrown, --fsck -p 1 not root: e2fsck ran on an unbounded view"; }
	advice_row 17 "--fsck -p 1, not root" outgrown "person: $GROW" 17
fi
if [ "$(id -u)" = 0 ]; then
	loop=$(losetup -f --show -o 1048576 "$T/big.img") || fail "losetup -o"
	advise outgrown "loop -o" 17 - "$GROW" "$loop"
	losetup -d "$loop"
	assert_eq "$(p2_sum)" "$p2" "outgrown, loop -o: partition 2's bytes"
	loop=$(losetup -f --show -o 1048576 --sizelimit 16777216 "$T/big.img") || fail "losetup --sizelimit"
	advise outgrown "loop -o --sizelimit" 17 - "$GROW" "$loop"
	losetup -d "$loop"
	assert_eq "$(p2_sum)" "$p2" "outgrown, loop --sizelimit: partition 2's bytes"
fi

# No fix that loops: an unclean image cut short is 17 (e2fsck aborts on
# it and changes nothing: its fix was printed again and again)
unxz_to "$IMAGES/unsafe-not-valid.img.xz" "$T/cut.img"
truncate -s $(($(stat -c %s "$T/cut.img") / 2)) "$T/cut.img"
advise "unsafe-not-valid, cut short" file 17 - "${HUMAN[unsafe-truncated]}" cut.img
# a journal to replay through a --sizelimit view shorter than the
# filesystem: 17 (e2fsck replayed through the short view, then aborted)
if [ "$(id -u)" = 0 ]; then
	unxz_to "$IMAGES/unsafe-journal-recover.img.xz" "$T/short.img"
	loop=$(losetup -f --show --sizelimit $(($(stat -c %s "$T/short.img") - (1 << 20))) "$T/short.img") ||
		fail "losetup --sizelimit"
	advise "unsafe-journal-recover, short view" "loop --sizelimit" 17 - "$GROW" "$loop"
	losetup -d "$loop"
fi

# --fsck keeps the specific fix: e2fsck fails on a stale "e2fsck is
# running" MMP mark (exit 12); e2trim says that and names tune2fs -f -E
# clear_mmp (18), not 21 "run e2fsck -f by hand"
unxz_to "$IMAGES/unsafe-mmp-fsck.img.xz" "$T/mmp.img"
run_e2trim --fsck "$T/mmp.img"
assert_rc 18 "stale MMP mark, --fsck"
assert_grep "tune2fs -f -E clear_mmp" "$ERR" "stale MMP mark, --fsck"
advice_row 18 "file --fsck" unsafe-mmp-fsck "person: ${HUMAN[unsafe-mmp-fsck]}" -
# ... and on a missing external journal: attach the device (14), not 21
if [ "$(id -u)" = 0 ]; then
	export BLKID_FILE=$T/blkid.tab
	truncate -s 8M "$T/jdev.img"
	mke2fs -q -F -O journal_dev -b 4096 "$T/jdev.img" || fail "mke2fs journal_dev"
	loop=$(loop_attach "$T/jdev.img")
	truncate -s 32M "$T/extj.img"
	mke2fs -q -F -t ext4 -J device="$loop" "$T/extj.img" >/dev/null 2>&1 || fail "mke2fs -J device"
	losetup -d "$loop"
	run_e2trim --fsck "$T/extj.img"
	assert_rc 14 "external journal missing, --fsck"
	assert_grep "attach the journal device" "$ERR" "external journal missing, --fsck"
	advice_row 14 "file --fsck" "external journal missing" "person: attach the journal device with that UUID" -
	# the journal device itself: what it is and whose, nothing to trim
	uuid=$(dumpe2fs -h "$T/extj.img" 2>/dev/null | awk '/^Filesystem UUID/ {print $3}')
	advise "journal device" file 12 - "nothing to trim: discard it only once no filesystem uses it" jdev.img
	[[ $ADVICE_MSG == *"external journal device"*"$uuid"* && $ADVICE_MSG == *blkdiscard* ]] ||
		{ echo "$ADVICE_MSG"; fail "journal device: the message does not say whose journal it is, nor blkdiscard"; }
	unset BLKID_FILE
fi

# a name starting with '-': the printed command keeps the "./" (else
# e2fsck -fy -n.img takes the name for -n)
unxz_to "$IMAGES/unsafe-not-valid.img.xz" "$T/-n.img"
disk_of "$T/-n.img" "$T/-x.img"
advise "unsafe-not-valid, name -n.img" file 13 '^e2fsck -fy \./-n\.img$' "" -- -n.img
advise "unsafe-not-valid, name -x.img" "-p 1" 13 '^e2trim --fsck=force -p 1 \./-x\.img$' "" -p 1 -- -x.img

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
