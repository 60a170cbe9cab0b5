#!/bin/bash
# The advice suite (tests/advice_lib.sh), its kinds beyond t_advice.sh's:
# every refusal code on a qcow2 (e2trim's own qemu-nbd) and on an NBD URI
# (nbdkit serving the raw image), and the refusals only some kinds have:
# 24 (a partition table e2trim cannot trust: overlapping entries, both GPT
# copies damaged, -p N naming an MBR extended container, an ext
# filesystem at byte 0 under the table), 25 (an NBD server that cannot
# trim) and 26 (the image held by another qemu).  A printed command is run
# as it stands; a fix that is a person's decision is listed with the
# reason, and where the person's step is plain (stop the holder, start the
# server read-write, mend the table, name a logical partition) the suite
# takes it and checks that the next run gets past the refusal.  Small
# images (20 MiB disks, the fixtures as they are), nothing made twice.
# The table: grep -o 'ADVICE|.*' in the notes.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
# shellcheck source-path=SCRIPTDIR/.. source=advice_lib.sh
. "$(dirname "$0")/../advice_lib.sh"
# about the fixes, not another node: libext2fs's MMP wait (11 s at each
# read-write open of an MMP filesystem, e2trim's and e2fsck's) skipped
mmp_no_wait

for p in qemu-img qemu-nbd nbdkit sfdisk; do
	command -v "$p" >/dev/null || skip "$p is missing (make deps)"
done
# the system's python: a shim's start (pyenv) costs seconds a call
PY=$(command -v /usr/bin/python3 || command -v python3)
PT="$PY $(cd "$(dirname "$0")/.." && pwd)/parttable.py"

# One fixture per refusal code, and what a person decides where the
# message has no command.
CODES=(
	"12 unsafe-feature-incompat" "13 unsafe-error-fs"
	"14 unsafe-journal-recover" "15 unsafe-orphan-inode"
	"16 unsafe-gd-csum" "17 unsafe-truncated" "18 unsafe-mmp-seq"
	"18 unsafe-mmp-fsck" "19 verify/verify-data"
	"22 verify/verify-count-blocks" "23 verify/verify-inode-uninit"
)
declare -A WHY=(
	[unsafe-truncated]="the rest of the image must be found: no command brings it back"
	[unsafe-mmp-fsck]="tune2fs -f -E clear_mmp only once nobody uses it on any node"
	[unsafe-feature-incompat]="a feature e2trim cannot read: fstrim on the mounted filesystem"
)
# e2trim --fsck takes VM images: a qcow2's e2fsck fixes are commands,
# and one that is not fails here
WHY_QCOW2=''
WHY_NBD="e2fsck cannot read an NBD URI, nor --fsck: run it on the disk the server serves, where it is served"

# serve IMG [nbdkit options...]: nbdkit serving IMG on $T/kit.sock, URI
# set; it has started once its pid is in the FIFO (no sleep)
serve() {
	local img=$1 pid=
	shift
	rm -f "$T/kit.sock" "$T/kit.pid"
	mkfifo "$T/kit.pid" || fail mkfifo
	exec 5<>"$T/kit.pid"
	nbdkit -f -U "$T/kit.sock" -P "$T/kit.pid" "$@" file "$img" &
	PIDS+=("$!")
	read -r -t 300 -u 5 pid || true
	exec 5>&-
	[ "$pid" = "${PIDS[-1]}" ] || fail "nbdkit did not start"
	URI="nbd+unix:///?socket=$T/kit.sock"
	SERVER=$pid
}
unserve() {
	kill "$SERVER"
	wait "$SERVER" 2>/dev/null
	unset 'PIDS[-1]'
}

# 1. every code on a qcow2 and an NBD URI
for c in "${CODES[@]}"; do
	code=${c%% *} name=${c#* }
	base=${name#verify/}
	unxz_to "$IMAGES/$name.img.xz" "$T/$base.img"
	qemu-img convert -f raw -O qcow2 "$T/$base.img" "$T/vm.qcow2" || fail "qemu-img convert"
	serve "$T/$base.img"
	if [[ $name == *mmp* ]]; then
		# libext2fs reads the MMP block by opening the device's name
		# itself (ext2fs_mmp_read()): a qcow2 or an NBD URI is no such
		# name, so e2trim refuses MMP there (12) and names a device
		# route; taken for the qcow2 (a raw copy), the next run refuses
		# for the fixture's own MMP state instead (its code)
		for k in qcow2 "NBD URI"; do
			if [ "$k" = qcow2 ]; then probe vm.qcow2; else probe "$URI"; fi
			if [ "$RC" != 12 ] || [[ $MSG != *"multi-mount protection (MMP)"*"not through NBD"* ]]; then
				echo "$MSG"; fail "$name ($k): exit $RC, expected 12 naming MMP through NBD"
			fi
		done
		qemu-img convert -O raw "$T/vm.qcow2" "$T/vm.raw" || fail "qemu-img convert -O raw"
		probe vm.raw
		assert_rc "$code" "$name: the raw copy the message's route gives"
		advice_row 12 qcow2 "$base" "person: e2trim on a device or raw copy holding it (qemu-nbd --connect, qemu-img convert -O raw)" "$code once a person did: the raw copy, refused for its own MMP state"
		advice_row 12 "NBD URI" "$base" "person: the server is the operator's: run e2trim on the disk it serves, where it is served" -
		rm -f "$T/vm.raw"
	else
		advise "$base" qcow2 "$code" 'vm\.qcow2' "${WHY[$name]:-$WHY_QCOW2}" vm.qcow2
		advise "$base" "NBD URI" "$code" '-' "${WHY[$name]:-$WHY_NBD}" "$URI"
	fi
	unserve
	rm -f "$T/$base.img" "$T/vm.qcow2"
done

# MMP in a partition: libext2fs reads the MMP block by the device's name
# at its block number in the whole file, not the partition's, and e2fsck
# cannot take it there either: e2trim refuses it (12) and names a loop
# device over the partition, which the suite takes: the next run, on
# that device, trims (a dry run: 0)
truncate -s 36M "$T/mmpdisk.img"
printf 'label: gpt\nstart=2048, size=65536, type=L\n' |
	sfdisk -q "$T/mmpdisk.img" >/dev/null 2>&1 || fail sfdisk
xz -dc "$IMAGES/ext4-mmp.img.xz" |
	dd of="$T/mmpdisk.img" bs=1M seek=1 conv=notrunc,sparse status=none || fail dd
for k in "-p 1" "?offset="; do
	if [ "$k" = "-p 1" ]; then probe -p 1 mmpdisk.img; else probe "mmpdisk.img?offset=1048576"; fi
	if [ "$RC" != 12 ] || [[ $MSG != *"losetup --find --show --offset 1048576 --sizelimit 33554432 "* ]]; then
		echo "$MSG"; fail "a clean MMP filesystem ($k): exit $RC, expected 12 with the loop device route"
	fi
	l=$(losetup --find --show --offset 1048576 --sizelimit 33554432 "$T/mmpdisk.img") || fail losetup
	LOOPS+=("$l")
	probe "$l"
	assert_rc 0 "a clean MMP filesystem ($k): e2trim on the loop device the message names"
	losetup -d "$l"; unset 'LOOPS[-1]'
	advice_row 12 "$k" ext4-mmp "person: attach the partition as a loop device (losetup --find --show --offset N --sizelimit S IMG) and run e2trim on it" "0 once a person did: e2trim on that loop device"
done
rm -f "$T/mmpdisk.img"

# the same in a partition: a qcow2 of a GPT disk, -p 1, and an NBD URI
# serving a raw disk image, -p 1
truncate -s 20M "$T/table.img"
printf 'label: gpt\nstart=2048, size=32768, type=L\n' |
	sfdisk -q "$T/table.img" >/dev/null 2>&1 || fail sfdisk
xz -dc "$IMAGES/unsafe-gd-csum-crc16.img.xz" |
	dd of="$T/table.img" bs=1M seek=1 conv=notrunc,sparse status=none || fail dd
cp --sparse=always "$T/table.img" "$T/disk.img"
qemu-img convert -f raw -O qcow2 "$T/disk.img" "$T/vm.qcow2" || fail "qemu-img convert"
advise unsafe-gd-csum-crc16 "qcow2 -p 1" 16 'vm\.qcow2' "$WHY_QCOW2" -p 1 vm.qcow2
serve "$T/disk.img"
advise unsafe-gd-csum-crc16 "NBD URI -p 1" 16 '-' "$WHY_NBD" -p 1 "$URI"
unserve

# 2. 24: a table e2trim cannot trust, as a file, a qcow2 and an NBD URI
# (a loop device takes no -p: 3, give the image or a partition device;
# the kernel's partition devices carry no table to check)
mkfs_p1() {	# DISK: a clean ext4 in partition 1 (8 MiB at 1 MiB)
	mke2fs -q -t ext4 -E offset=1048576 "$1" 8M >/dev/null 2>&1 || fail "mke2fs in $1"
}
truncate -s 20M "$T/gpt.img"
printf 'label: gpt\nstart=2048, size=16384, type=L\nstart=18432, size=16384, type=L\n' |
	sfdisk -q "$T/gpt.img" >/dev/null 2>&1 || fail sfdisk
mkfs_p1 "$T/gpt.img"
truncate -s 20M "$T/dos.img"
printf 'label: dos\nstart=2048, size=16384, type=83\nstart=18432, size=20480, type=5\nstart=20480, size=16384, type=83\n' |
	sfdisk -q "$T/dos.img" >/dev/null 2>&1 || fail sfdisk
mkfs_p1 "$T/dos.img"
mke2fs -q -t ext4 -E offset=$((20480 * 512)) "$T/dos.img" 8M >/dev/null 2>&1 || fail "mke2fs in partition 5"

P24=(overlap gpt-both extended fs-at-0)
declare -A W24=(
	[overlap]="which entry is right is the owner's to know: mend the table (sfdisk)"
	[gpt-both]="both GPT copies are damaged: the table must be written again by someone who knows it"
	[extended]="-p names an extended container: the person picks one of its logical partitions"
	[fs-at-0]="a filesystem at byte 0 and a table: which one is stale is the owner's to know (wipefs)"
)
make24() {	# WHAT IMG: the disk of case WHAT; sets PART (the -p N)
	PART=1
	case $1 in
	overlap) cp --sparse=always "$T/gpt.img" "$2"; $PT gpt-set "$2" 2 10000 30000 || fail parttable ;;
	gpt-both) cp --sparse=always "$T/gpt.img" "$2"; $PT gpt-break-both "$2" || fail parttable ;;
	extended) cp --sparse=always "$T/dos.img" "$2"; PART=2 ;;
	fs-at-0)
		truncate -s 20M "$2"
		mke2fs -q -t ext4 "$2" 8M >/dev/null 2>&1 || fail mke2fs
		printf 'label: dos\nstart=18432, size=16384, type=83\n' |
			sfdisk -q --wipe never "$2" >/dev/null 2>&1 || fail sfdisk
		;;
	esac
}
for what in "${P24[@]}"; do
	make24 "$what" "$T/p24.img"
	advise "$what" "file -p $PART" 24 - "${W24[$what]}" -p "$PART" p24.img
	case $what in
	overlap) person_did "partition 2 set right again (sfdisk)" \
		"$PT gpt-set p24.img 2 18432 34815" -p 1 p24.img ;;
	extended) [[ $MSG == *"give -p with one of its logical partitions (5)"* && $MSG != *"fix the table"* ]] ||
			{ echo "$MSG"; fail "extended: the message does not name -p 5, or tells to fix a table that is right"; }
		person_did "-p 5 given" true -p 5 p24.img ;;
	esac
	make24 "$what" "$T/p24.img"
	qemu-img convert -f raw -O qcow2 "$T/p24.img" "$T/vm.qcow2" || fail "qemu-img convert"
	advise "$what" "qcow2 -p $PART" 24 - "${W24[$what]}" -p "$PART" vm.qcow2
	serve "$T/p24.img"
	advise "$what" "NBD URI -p $PART" 24 - "${W24[$what]}" -p "$PART" "$URI"
	unserve
done
advice_row 24 loop - "n/a: -p N on a loop device is a usage error (3): give the image, or a partition device of losetup -P" -

# 3. 25: an NBD server that cannot trim (nbdkit -r), whole and -p 1
mke2fs -q -t ext4 "$T/clean.img" 8M >/dev/null 2>&1 || fail mke2fs
W25="the server is the operator's: start it with discard (nbdkit without -r, qemu-nbd --discard=unmap)"
serve "$T/clean.img" -r
advise clean-ext4 "NBD URI" 25 - "$W25" "$URI"
unserve
serve "$T/clean.img"
person_did "the server started without -r" true "$URI"
unserve
serve "$T/gpt.img" -r
advise clean-ext4 "NBD URI -p 1" 25 - "$W25" -p 1 "$URI"
unserve

# 4. 26: the image held by another qemu (qemu-nbd read-write, as a VM
# holds its disk): the raw file, a partition of a raw disk (-p 1 and
# ?offset=), a qcow2, and a qcow2's backing file
W26="shutting down the VM (the qemu that holds it) is its owner's decision"
hold() {	# FORMAT IMG: qemu-nbd holding IMG read-write; HOLDER its pid
	rm -f "$T/holder.pid"
	qemu-nbd --fork --pid-file "$T/holder.pid" -f "$1" -k "$T/holder.sock" "$2" ||
		fail "qemu-nbd holder of $2"
	HOLDER=$(cat "$T/holder.pid")
	PIDS+=("$HOLDER")
}
unhold() { kill "$HOLDER"; wait_exit "$HOLDER" "the qemu-nbd holder"; unset 'PIDS[-1]'; }
held26() {	# KIND FORMAT IMG ARGS...: refused while IMG is held, naming the holder
	local kind=$1 fmt=$2 img=$3
	shift 3
	hold "$fmt" "$img"
	advise held "$kind" 26 - "$W26" "$@"
	# the holder is named (qemu's OFD locks), a qcow2's too, where
	# e2trim's own qemu-nbd failed to take the lock (qemu names nobody)
	[[ $MSG == *"held by qemu-nbd, pid $HOLDER"* ]] || { echo "$MSG"; fail "26 ($kind): the holder's pid $HOLDER is not named"; }
	unhold
	person_did "the holder stopped" true "$@"
}
held26 file raw "$T/clean.img" clean.img
held26 "file -p 1" raw "$T/gpt.img" -p 1 gpt.img
held26 "?offset=" raw "$T/gpt.img" "gpt.img?offset=1048576"
qemu-img convert -f raw -O qcow2 "$T/clean.img" "$T/vm.qcow2" || fail "qemu-img convert"
held26 qcow2 qcow2 "$T/vm.qcow2" vm.qcow2
qemu-img create -q -f qcow2 -b vm.qcow2 -F qcow2 "$T/top.qcow2" || fail "qemu-img create overlay"
held26 "qcow2 (its backing file)" qcow2 "$T/vm.qcow2" top.qcow2

advice_table
finish
