#!/bin/bash
# The advice suite: a refusal's fix works when it is followed to the
# letter.  For every refusal fixture (images/README.md) on every kind of
# target it can be given as (the image file; partition 1 of a GPT disk
# image, -p 1; the same as disk.img?offset=N; as root, a loop device; a
# qcow2 of the disk, -p 1, for an unclean state, a journal and orphans),
# e2trim --json -n refuses it; the command the
# message gives between backquotes (the document's "fix", the convention of
# src/README.md) is run as it stands with sh -c, and the next e2trim run
# trims (0) or refuses for another documented reason.  A fix that needs a
# person (no backquotes, "fix": null) must be one of HUMAN below, where it
# is listed with why.  Also: the message names this very target (the
# partition's ?offset= spelling, not the disk's), and a swap device is
# told to swapoff, not to unmount.  The table (code, kind, fix, result) is
# printed as the test's notes.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

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

# probe TARGET...: e2trim --json -n; sets RC, FIX (empty: null), MSG
probe() {
	local json=$T/probe.json
	(cd "$T" && "$E2TRIM" --json -n "$@" >"$json" 2>"$T/probe.err")
	RC=$?
	FIX=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
print(t["fix"] or "")' "$json") || { cat "$T/probe.err"; fail "no JSON document for $*"; }
	MSG=$(cat "$T/probe.err")
}

TABLE=()
# advise NAME KIND WANT_NAME ARGS...: the fix, followed literally; WANT_NAME
# is a regex the command must match: it names this very filesystem
advise() {
	local name=$1 kind=$2 want_name=$3 code; shift 3
	probe "$@"
	code=$RC
	[ "$code" -ge 10 ] || { echo "$MSG"; fail "$name ($kind): not refused (exit $code)"; }
	if [ -z "$FIX" ]; then
		local why=${HUMAN[$name]:-${HUMAN[$kind]:-}}
		[ -n "$why" ] || { echo "$MSG"; fail "$name ($kind): exit $code with no command to run, and not listed as a person's decision"; }
		TABLE+=("$code | $kind | $name | (a person: $why) | -")
		return
	fi
	[ -z "${HUMAN[$name]:-}" ] || { echo "$MSG"; fail "$name ($kind): listed as a person's decision, but the message gives a command"; }
	# the command names this very filesystem, as e2fsck reads it (a regex)
	[[ $FIX =~ $want_name ]] || fail "$name ($kind): fix '$FIX' does not name $want_name"
	local fix=$FIX fixrc
	(cd "$T" && sh -c "$fix") >"$T/fix.out" 2>&1
	fixrc=$?
	probe "$@"
	[ "$RC" != "$code" ] || { echo "$MSG"; cat "$T/fix.out"; fail "$name ($kind): '$fix' (exit $fixrc) left the same refusal, $code"; }
	case $RC in
	0|1[0-9]|2[0-9]) ;;
	*) echo "$MSG"; fail "$name ($kind): after '$fix', exit $RC" ;;
	esac
	TABLE+=("$code | $kind | $name | $fix | $RC")
}

for name in "${SCRIPTED[@]}" "${!HUMAN[@]}"; do
	[ "$name" != qcow2 ] || continue
	base=${name#verify/}
	xz -dc "$IMAGES/$name.img.xz" >"$T/$base.img" || fail "xz $name"
	cp "$T/$base.img" "$T/orig.img"
	advise "$name" file "$base\.img" "$base.img"
	# in a partition a truncated image is whole again; libext2fs reads
	# the MMP block at its block number in the whole file, not at the
	# partition's (ext2fs_mmp_read() opens the device name itself), so
	# e2fsck cannot take MMP in a partition of an image at all
	[[ $name != unsafe-truncated && $name != *mmp* ]] || continue
	disk_of "$T/orig.img" "$T/disk.img"
	cp "$T/disk.img" "$T/disk0.img"
	# e2fsck at ?offset=N, or a loop device at -o N where e2fsck must
	# replay a journal (it cannot at an ?offset=); on -p 1, e2trim --fsck
	# for what e2fsck -p repairs (it makes the loop device itself)
	part="'disk\.img\?offset=$off'|-o $off .* disk\.img"
	advise "$name" "-p 1" "$part|^e2trim --fsck(=force)? -p 1 disk\.img$" -p 1 disk.img
	cp "$T/disk0.img" "$T/disk.img"
	advise "$name" "?offset=" "$part" "disk.img?offset=$off"
	if [ "$(id -u)" = 0 ]; then
		loop=$(loop_attach "$T/orig.img")
		advise "$name" loop "$loop" "$loop"
		losetup -d "$loop"
	fi
done

# a VM image: e2fsck cannot read it; e2trim --fsck shows it the content
# through qemu-nbd (nbdfuse), and a journal is replayed there too
for name in unsafe-error-fs unsafe-journal-recover unsafe-orphan-inode; do
	xz -dc "$IMAGES/$name.img.xz" >"$T/orig.img" || fail "xz $name"
	disk_of "$T/orig.img" "$T/disk.img"
	rm -f "$T/disk.qcow2"
	qemu-img convert -O qcow2 "$T/disk.img" "$T/disk.qcow2" || fail "qemu-img convert"
	probe -p 1 disk.qcow2
	[[ $MSG == *qemu-nbd* ]] || { echo "$MSG"; fail "qcow2: the message does not say how e2fsck can read it"; }
	advise "$name" qcow2 "^e2trim --fsck(=force)? -p 1 disk\.qcow2$" -p 1 disk.qcow2
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
		TABLE+=("10 | loop, image file | swap | $fix | 11")
	else
		left_out "swap: swapon $loop failed here"
	fi
else
	left_out "loop devices and swap (root)"
fi

note "code | kind | condition | fix as printed | exit after it"
for row in "${TABLE[@]}"; do note "$row"; done
finish
