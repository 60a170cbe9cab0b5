#!/bin/bash
# --fsck with the real e2fsck on images that e2trim alone refuses: not
# cleanly unmounted (13, e2fsck -p exits 1), errors recorded (13),
# orphans (15), a journal to replay (14).  e2fsck repairs each, e2trim
# opens it afresh and trims, the data stays and e2fsck -fn is clean
# afterwards.  What e2fsck -p cannot repair stops the run with 21 and
# trims nothing; a dry run's e2fsck -n repairs nothing, so the gates
# still refuse.  Bitmap differences need --fsck=force.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
export E2FSCK_TIME=$E2FSPROGS_FAKE_TIME	# e2fsck's own writes, reproducible

base="$T/base.img" img="$T/f.img"
mkfs "$base" 64M -t ext4 -g 4096
age "$base" 11
dfs() {	# IMG debugfs-commands...
	local img=$1; shift
	printf '%s\n' "$@" >"$T/dfs.cmds"
	debugfs -w -f "$T/dfs.cmds" "$img" >/dev/null 2>&1 || fail "debugfs $*"
}

# e2trim --fsck trims $img; the blocks in use are those that e2fsck -p
# alone leaves (on a copy), byte for byte, and e2fsck -fn is clean after
fsck_then_trim() {	# what
	local before want
	cp "$img" "$T/alone.img"
	e2fsck -p "$T/alone.img" >/dev/null 2>&1
	[ $? -le 1 ] || fail "$1: e2fsck -p cannot repair it"
	want=$(used_blocks_digest "$T/alone.img")
	before=$(alloc_bytes "$img")
	run_e2trim --fsck -v "$img"
	assert_rc 0 "$1: --fsck"
	assert_grep "trimmed" "$OUT" "$1: trim report"
	[ "$(alloc_bytes "$img")" -lt "$before" ] || fail "$1: nothing trimmed"
	assert_eq "$(used_blocks_digest "$img")" "$want" "$1: blocks in use"
	e2fsck -fn "$img" >"$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$1: e2fsck -fn after"; }
}

# clean: e2fsck -p says so and the trim follows
cp "$base" "$img"
fsck_then_trim "clean"
assert_grep "clean" "$ERR" "e2fsck's clean line"
note "clean: e2fsck -p output shown, trimmed"

# not cleanly unmounted: e2fsck -p checks, exits 1, e2trim trims
cp "$base" "$img"
dfs "$img" "ssv state 0"
run_e2trim -n "$img"
assert_rc 13 "not clean, no --fsck"
fsck_then_trim "not clean"
assert_grep "was not cleanly unmounted, check forced" "$ERR" "e2fsck's output"
note "not clean: 13 alone, trimmed after e2fsck -p (exit 1)"

# errors recorded: e2fsck -n (dry run) repairs nothing, the gate refuses
cp "$base" "$img"
dfs "$img" "ssv state 3"
sum=$(sha_of "$img")
run_e2trim --fsck -n "$img"
assert_rc 13 "errors recorded, --fsck -n"
assert_grep "contains a file system with errors" "$ERR" "e2fsck -n output"
assert_eq "$(sha_of "$img")" "$sum" "image after --fsck -n"
fsck_then_trim "errors recorded"
note "errors recorded: -n still 13 (e2fsck -n fixes nothing), --fsck trims"

# orphans and a journal to replay
cp "$base" "$img"
head -c 300000 /dev/zero | tr '\0' '\201' >"$T/orphan"
dfs "$img" "write $T/orphan orphan"
ino=$(debugfs -R "stat orphan" "$img" 2>/dev/null | awk '/^Inode:/ {print $2; exit}')
dfs "$img" "unlink orphan" "sif <$ino> links_count 0" "sif <$ino> dtime 0" \
	"ssv last_orphan $ino"
run_e2trim -n "$img"
assert_rc 15 "orphan, no --fsck"
fsck_then_trim "orphan"
assert_grep "Clearing orphaned inode $ino" "$ERR" "e2fsck released the orphan"
cp "$base" "$img"
dfs "$img" "feature needs_recovery"
run_e2trim -n "$img"
assert_rc 14 "journal, no --fsck"
fsck_then_trim "journal"
assert_grep "recovering journal" "$ERR" "e2fsck replayed the journal"
note "orphan (15) and journal (14): trimmed after e2fsck -p"

# what preen cannot repair: 21, and e2trim added nothing to e2fsck's work
cp "$base" "$img"
dfs "$img" "clri <2>" "ssv state 3"
cp "$img" "$T/byhand.img"
e2fsck -p "$T/byhand.img" >/dev/null 2>&1
[ $? = 4 ] || fail "e2fsck -p repaired a cleared root inode"
run_e2trim --fsck -v "$img"
assert_rc 21 "root inode cleared"
assert_grep "UNEXPECTED INCONSISTENCY" "$ERR" "e2fsck's output"
assert_grep "$img: e2fsck exited with 4 (errors left uncorrected); nothing trimmed; run e2fsck -f by hand" \
	"$ERR" "message for exit 4"
assert_eq "$(sha_of "$img")" "$(sha_of "$T/byhand.img")" "image after e2fsck exit 4"
note "root inode cleared: e2fsck -p exits 4 -> 21, e2trim wrote nothing"

# blocks in use marked free: e2fsck -p alone calls it clean; -f repairs
cp "$base" "$img"
dfs "$img" "write $T/orphan data"
blk=$(debugfs -R "bmap data 10" "$img" 2>/dev/null)
dfs "$img" "freeb $blk 20"
if "$E2TRIM" --help | grep -q -- --no-verify; then
	cp "$img" "$T/byhand.img"
	e2fsck -p "$T/byhand.img" >/dev/null 2>&1 || fail "e2fsck -p: not clean"
	run_e2trim --fsck "$img"
	assert_rc 19 "bitmap frees used blocks, --fsck"
	assert_eq "$(sha_of "$img")" "$(sha_of "$T/byhand.img")" \
		"image after the bitmap gate"
fi
cp "$img" "$T/byhand.img"
e2fsck -f -p "$T/byhand.img" >/dev/null 2>&1
[ $? = 1 ] || fail "e2fsck -f -p did not repair the bitmap (exit 1)"
run_e2trim --fsck=force -v "$img"
assert_rc 0 "--fsck=force"
assert_grep "running e2fsck -f -p $img" "$ERR" "e2fsck -f -p ran"
debugfs -R "cat data" "$img" 2>/dev/null | cmp -s - "$T/orphan" ||
	fail "a file's data changed after --fsck=force"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck -fn after --fsck=force"
note "bitmap differences: e2fsck -f -p repairs them, the data stays"

# --partition: e2fsck checks the partition (a loop device bounded by the
# entry, or "image?offset=N"), not the disk, and partition 1 stays as it was
disk="$T/disk.img"
truncate -s 96M "$disk"
printf 'label: gpt\nstart=2048, size=16384, type=L\nstart=18432, type=L\n' |
	sfdisk -q "$disk" || fail "sfdisk"
head -c $((16384 * 512)) /dev/zero | tr '\0' '\141' |
	dd of="$disk" bs=512 seek=2048 conv=notrunc status=none
off=$((18432 * 512))
mke2fs -q -F -t ext4 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=$off "$disk" 80M ||
	fail "mke2fs in partition 2"
head -c $((8 << 20)) /dev/zero | tr '\0' '\132' >"$T/big"
dfs "$disk?offset=$off" "write $T/big big" "write $T/orphan data"
dfs "$disk?offset=$off" "rm big" "ssv state 0"
p1=$(dd if="$disk" bs=512 skip=2048 count=16384 status=none | md5sum)
before=$(alloc_bytes "$disk")
run_e2trim -p 2 "$disk"
assert_rc 13 "partition not clean, no --fsck"
run_e2trim --fsck -v -p 2 "$disk"
assert_rc 0 "--fsck -p 2"
# as root a loop device bounded by the entry (a journal can be replayed
# there), else the ?offset= spelling
assert_grep "running e2fsck -p \(/dev/loop[0-9]*\|$disk?offset=$off\)$" "$ERR" "e2fsck on the partition"
assert_grep "was not cleanly unmounted" "$ERR" "e2fsck's output"
[ "$(alloc_bytes "$disk")" -lt "$before" ] || fail "--fsck -p 2: nothing trimmed"
e2fsck -fn "$disk?offset=$off" >/dev/null 2>&1 || fail "e2fsck -fn on partition 2 after"
debugfs -R "cat data" "$disk?offset=$off" 2>/dev/null | cmp -s - "$T/orphan" ||
	fail "a file's data changed in partition 2"
assert_eq "$(dd if="$disk" bs=512 skip=2048 count=16384 status=none | md5sum)" "$p1" \
	"partition 1 after --fsck -p 2"
note "--partition 2: e2fsck -p on a loop device (root) or image?offset=N, then the trim; partition 1 intact"
exit 0
