#!/bin/bash
# The journal e2trim checks is the one e2fsck would load and replay
# (e2fsck_get_journal(), src/checks/journal_inode.c, src/checks/journal_check.c):
#  a. the external journal whenever s_journal_uuid is set, even when
#     s_journal_inum names an (empty) internal one; refused when no device
#     has that UUID (e2fsck stops there); with 1 KiB blocks too (the
#     journal superblock is then the device's block 2);
#  b. when inode 8 fails e2fsck's checks, e2fsck loads s_jnl_blocks, the
#     superblock's backup of its block map: a damaged inode 8 showing an
#     empty journal must not hide the real log; any damage that makes
#     e2fsck take the backup (or delete the journal), and a backup that
#     differs from the inode, is refused;
#  c. a fast-commit tail the kernel wrote is replayed by e2fsck only as
#     part of recovery: refused with the log it belongs to; a fast-commit
#     area e2fsck would not load is refused.
# In the cases with data, the transaction (or fast commit) brings back a
# file whose blocks the bitmap marks free: e2fsck -fy on a copy restores it
# byte for byte, e2trim refuses with 14 and changes no byte of the image.
# With E2TRIM_OLD naming an older e2trim, the test also shows that one
# trimming the file away (the cases it got wrong).
# Clean filesystems with journal features still trim (exit 0).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

D=$T/data
head -c 200000 /dev/urandom >"$D"
img=$T/a.img

# fsck_y IMG [e2fsck options]: e2fsck -fy until it settles (at most 3)
fsck_y() {
	local img=$1 rc i; shift
	for i in 1 2 3; do
		rc=0
		e2fsck -fy "$@" "$img" >"$T/fsck.log" 2>&1 || rc=$?
		[ "$rc" -ge 4 ] || return 0
	done
	cat "$T/fsck.log" >&2
	fail "e2fsck -fy $*: exit $rc"
}

# restored IMG NAME DATA [e2fsck options]: e2fsck -fy on a copy brings
# NAME back as DATA, byte for byte
restored() {
	local img=$1 name=$2 data=$3 copy=$T/copy.img; shift 3
	cp --sparse=always "$img" "$copy"
	fsck_y "$copy" "$@"
	rm -f "$T/back"
	dfs_read "$copy" "dump $name $T/back"
	cmp -s "$T/back" "$data" ||
		fail "e2fsck -fy did not bring $name back byte for byte"
	rm -f "$copy" "$T/back"
}

# refused IMG MESSAGE: e2trim exits 14 naming e2fsck, dry run and real
# run, and the image keeps every byte
refused() {
	local img=$1 msg=$2 before
	before=$(sha_of "$img")
	run_e2trim -n -v "$img"
	assert_rc 14 "$msg (dry run)"
	assert_grep "$msg" "$ERR" "dry run"
	assert_grep "e2fsck" "$ERR" "$msg: names e2fsck"
	run_e2trim -v "$img"
	assert_rc 14 "$msg (trim)"
	assert_grep "$msg" "$ERR" "trim"
	assert_eq "$(sha_of "$img")" "$before" "$msg: image changed"
	note "exit 14: $msg"
}

# old_loses IMG NAME DATA [e2fsck options]: with E2TRIM_OLD, that binary
# trims a copy (exit 0) and e2fsck -fy then no longer finds NAME as DATA
old_loses() {
	local img=$1 name=$2 data=$3 copy=$T/old.img rc=0; shift 3
	[ -n "${E2TRIM_OLD:-}" ] || return 0
	cp --sparse=always "$img" "$copy"
	"$E2TRIM_OLD" "$copy" >/dev/null 2>&1 || rc=$?
	assert_eq "$rc" 0 "E2TRIM_OLD on $name"
	fsck_y "$copy" "$@"
	rm -f "$T/back"
	dfs_read "$copy" "dump $name $T/back"
	! cmp -s "$T/back" "$data" || fail "E2TRIM_OLD kept $name"
	rm -f "$copy" "$T/back"
	note "E2TRIM_OLD trimmed $name away"
}

# txn IMG NAME: the blocks that hold NAME's existence (superblock, bitmaps,
# inode table block, root directory block) as they are now, into $T/txn;
# prints them as jw's -b list.  Replayed after NAME is removed, they
# bring it back while the bitmap marks its blocks free.
txn() {
	local img=$1 root ib bb ibm b
	root=$(dfs_read "$img" "blocks /" | awk '{print $1}')
	ib=$(dfs_read "$img" "imap $2" | awk '/located at block/ {print $4+0}')
	bb=$(dumpe2fs "$img" 2>/dev/null | awk '/Block bitmap at/ {print $4; exit}')
	ibm=$(dumpe2fs "$img" 2>/dev/null | awk '/Inode bitmap at/ {print $4; exit}')
	for b in 1 "$bb" "$ibm" "$ib" "$root"; do
		dd if="$img" bs=4096 skip="$b" count=1 status=none
	done >"$T/txn"
	echo "1,$bb,$ibm,$ib,$root"
}

# --- clean filesystems with journal features: trimmed ----------------------
for opts in "-t ext3" "-t ext4 -b 1024" "-t ext4 -b 65536" \
	"-t ext4 -O fast_commit" "-t ext4 -O ^has_journal" \
	"-t ext4 -O ^metadata_csum"; do
	# shellcheck disable=SC2086
	mkfs "$img" 256M $opts
	printf 'write %s f\n' "$D" | dfs_write "$img"
	run_e2trim "$img"
	assert_rc 0 "clean $opts"
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "clean $opts: e2fsck -fn after"
	dfs_read "$img" "dump f $T/back"
	cmp -s "$T/back" "$D" || fail "clean $opts: f changed"
done
# a journal too long for its map to fit in the inode (one extent tree
# block), and one of 4 GiB whose size e2fsck itself cannot compare
for size in 1024 4096; do
	rm -f "$img"; truncate -s 40G "$img"
	mke2fs -q -F -t ext4 -J size=$size "$img" || fail "mke2fs -J size=$size"
	run_e2trim -n "$img"
	assert_rc 0 "clean, $size MiB journal"
done
note "clean: ext3, ext4 1k/64k blocks, fast_commit, no journal, no csum, 1 and 4 GiB journals"

# --- a. external journal named by UUID beside s_journal_inum ---------------
# libblkid's cache: a file of the test's own (e2fsck and e2trim both read
# BLKID_FILE), not the host's, which other tests' loop devices change
export BLKID_FILE=$T/blkid.tab
# A clean external journal alone (s_journal_inum 0): trimmed
truncate -s 8M "$T/jdev.img"
mke2fs -q -F -O journal_dev -b 4096 "$T/jdev.img" || fail "mke2fs journal_dev"
dev=$(loop_attach "$T/jdev.img")
mkfs "$img" 128M -t ext4 -J device="$dev" >/dev/null
run_e2trim "$img"
assert_rc 0 "clean, external journal"
losetup -d "$dev"
note "clean external journal: trimmed"
# 1 KiB blocks: the journal device's ext2 superblock is its block 1, the
# journal superblock block 2 (read at block 1, it is no journal at all)
truncate -s 8M "$T/jdev1k.img"
mke2fs -q -F -O journal_dev -b 1024 "$T/jdev1k.img" || fail "mke2fs journal_dev -b 1024"
dev=$(loop_attach "$T/jdev1k.img")
mkfs "$img" 64M -t ext4 -b 1024 -J device="$dev" >/dev/null
run_e2trim "$img"
assert_rc 0 "clean, external journal, 1 KiB blocks"
head -c 1024 /dev/urandom >"$T/b1k"
printf 'jo -f %s\njw -b 300 %s\njc\n' "$T/jdev1k.img" "$T/b1k" | dfs_write "$img"
dfs_read "$img" "logdump -f $T/jdev1k.img" | grep -q "commit block" ||
	fail "no committed transaction in the 1 KiB external journal"
dumpe2fs -h "$img" 2>/dev/null | grep -q needs_recovery &&
	printf 'feature -needs_recovery\n' | dfs_write "$img"
refused "$img" "its log starts at block"
losetup -d "$dev"
note "external journal with 1 KiB blocks: clean trimmed, a committed log refused"
mkfs "$img" 128M -t ext4
printf 'write %s f\n' "$D" | dfs_write "$img"
truncate -s 8M "$T/jdev.img"
mke2fs -q -F -O journal_dev -b 4096 "$T/jdev.img" || fail "mke2fs journal_dev"
ju=$(dumpe2fs -h "$T/jdev.img" 2>/dev/null | awk '/^Filesystem UUID/ {print $3}')
list=$(txn "$img" f)
printf 'ssv journal_uuid %s\nrm f\njo -f %s\njw -b %s %s\njc\nfeature -needs_recovery\n' \
	"$ju" "$T/jdev.img" "$list" "$T/txn" | dfs_write "$img"
dfs_read "$img" "logdump -f $T/jdev.img" | grep -q "commit block" ||
	fail "no committed transaction in the external journal"
dfs_read "$img" "stat <8>" | grep -q "Size: 16777216" || fail "inode 8 is not an internal journal"
dfs_read "$img" "logdump" | grep -q "commit block" && fail "the internal journal is not empty"
cp "$T/jdev.img" "$T/jcopy.img"
restored "$img" f "$D" -j "$T/jcopy.img"
dev=$(loop_attach "$T/jdev.img")
refused "$img" "its log starts at block"
cp "$T/jdev.img" "$T/jcopy.img"
old_loses "$img" f "$D" -j "$T/jcopy.img"
losetup -d "$dev"
# No device of that UUID: e2fsck cannot go on; e2trim must not either.
# e2fsck asks libblkid's cache for the UUID (here a file of the test's
# own, emptied first: no stale entry) and, when no device has it, falls
# back to the device number in s_journal_dev (the loop device that held
# the journal, which may hold anything by now).  Each fallback has its
# message: s_journal_dev 0, "Can't find external journal"; a device there
# that holds no journal, "External journal has bad superblock".
# e2fsck_stops WHAT MESSAGE: e2fsck -fy on a copy exits with 8 saying it
e2fsck_stops() {
	local rc=0
	rm -f "$BLKID_FILE"
	cp --sparse=always "$img" "$T/copy.img"
	e2fsck -fy "$T/copy.img" >"$T/fsck.log" 2>&1 || rc=$?
	assert_eq "$((rc & 8))" 8 "e2fsck -fy, $1 (exit $rc)"
	assert_grep "$2" "$T/fsck.log" "e2fsck stops, $1"
	rm -f "$T/copy.img"
}
printf 'ssv journal_dev 0\n' | dfs_write "$img"
e2fsck_stops "s_journal_dev 0" "Can't find external journal"
refused "$img" "external journal UUID=$ju not found (e2fsck uses it"
truncate -s 8M "$T/zero.img"
zdev=$(loop_attach "$T/zero.img")
printf 'ssv journal_dev %s\n' "$(python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_rdev)' "$zdev")" |
	dfs_write "$img"
e2fsck_stops "s_journal_dev naming $zdev (zeros)" "External journal has bad superblock"
refused "$img" "external journal UUID=$ju not found (e2fsck uses it"
losetup -d "$zdev"
old_loses "$img" f "$D" -j "$T/jdev.img"

# --- b. inode 8 damaged: e2fsck loads the backup in s_jnl_blocks ------------
# Inode 8 becomes a one-block file whose block holds the journal superblock
# as it was while empty; s_jnl_blocks still maps the real journal, whose
# log holds the transaction that re-creates f.  ext3: e2fsck 1.47 builds
# its stand-in inode from the backup without EXTENTS_FL, so only a block
# map backup loads (an extent-mapped one fails too and the journal is
# deleted, which e2trim refuses alike, below).
mkfs "$img" 128M -t ext3
printf 'write %s f\n' "$D" | dfs_write "$img"
jn=$(( $(dfs_read "$img" "stat <8>" | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -1) / 4096 ))
jb=$(dfs_read "$img" "bmap <8> 0")
last=$(dfs_read "$img" "bmap <8> $((jn - 1))")
dd if="$img" of="$T/stale" bs=4096 skip="$jb" count=1 status=none
list=$(txn "$img" f)
printf 'rm f\njo\njw -b %s %s\njc\nfeature -needs_recovery\n' "$list" "$T/txn" |
	dfs_write "$img"
dd if="$T/stale" of="$img" bs=4096 seek="$last" conv=notrunc status=none
printf 'sif <8> size 4096\nsif <8> block[0] %s\n' "$last" | dfs_write "$img"
[ "$(dfs_read "$img" "bmap <8> 0")" = "$last" ] || fail "inode 8 does not map the stale block"
dfs_read "$img" "logdump" | grep -q "commit block" && fail "inode 8's journal is not empty"
e2fsck -fn "$img" 2>&1 | grep -q "journal has data" ||
	fail "e2fsck does not load the backup's log"
restored "$img" f "$D"
refused "$img" "journal inode 8 is smaller than 1024 blocks; e2fsck would replace it with its backup in the superblock"
old_loses "$img" f "$D"

# Each other way inode 8 fails e2fsck's checks, with an empty log.
for edit in "sif <8> links_count 0|has no links" \
	"sif <8> flags 0x80800|is encrypted" \
	"sif <8> size 0x10001000|maps fewer blocks than its size" \
	"sif <8> block[5] 0|maps fewer blocks than its size"; do
	mkfs "$img" 128M -t ext4
	printf 'write %s f\n%s\n' "$D" "${edit%%|*}" | dfs_write "$img"
	# e2fsck -fn keeps quiet about the backup: -fy on a copy
	cp --sparse=always "$img" "$T/copy.img"
	e2fsck -fy "$T/copy.img" >"$T/fsck.log" 2>&1
	grep -q "invalid journal\|Backing up journal" "$T/fsck.log" ||
		{ cat "$T/fsck.log" >&2; fail "${edit%%|*}: e2fsck -fy finds nothing"; }
	refused "$img" "${edit#*|}"
done
# inode 8 passes, its backup differs: e2fsck uses inode 8 and only
# refreshes the backup ("Backing up journal inode block information"),
# so e2trim follows inode 8 too, and f survives the trim
mkfs "$img" 128M -t ext4
printf 'write %s f\nssv jnl_blocks[5] 7\n' "$D" | dfs_write "$img"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "a stale backup: e2fsck -fn is not clean"
cp --sparse=always "$img" "$T/copy.img"
e2fsck -fy "$T/copy.img" >"$T/fsck.log" 2>&1
grep -q "Backing up journal" "$T/fsck.log" || { cat "$T/fsck.log" >&2; fail "a stale backup: e2fsck -fy does not refresh it"; }
run_e2trim "$img"
assert_rc 0 "a stale backup of inode 8's block map"
dfs_read "$img" "dump f $T/f.out" >/dev/null
cmp -s "$T/f.out" "$D" || fail "a stale backup: f changed"
note "inode 8 passes, s_jnl_blocks stale: trimmed as e2fsck would use inode 8, f kept"
# No backup to fall back to: e2fsck deletes the journal.
mkfs "$img" 128M -t ext4
printf 'write %s f\nssv jnl_backup_type 0\nsif <8> links_count 0\n' "$D" | dfs_write "$img"
refused "$img" "has no links; e2fsck would delete the journal"

# --- c. fast commits -------------------------------------------------------
# The kernel writes f into the fast-commit area after a full commit (g);
# the image is copied while mounted, as a crash would leave it.
# fc_image: 0 when $T/fc.img holds f in a fast commit.  The kernel may
# still turn the fsync into a full commit (on a loaded machine it did,
# once in several runs): then the image is made again, at most 3 times.
fc_image() {
	local dev
	mkfs "$img" 128M -t ext4 -O fast_commit
	dev=$(loop_attach "$img")
	mkdir -p "$T/mnt"
	# commit=600, noinit_itable: no timed commit and no background
	# zeroing of inode tables (a journalled descriptor change) can turn
	# the fsync into a full commit
	mount -o commit=600,noinit_itable "$dev" "$T/mnt" || fail "mount fast_commit"
	MOUNTS+=("$T/mnt")
	head -c 100000 /dev/urandom >"$T/mnt/g"
	sync -f "$T/mnt/g"
	cp "$D" "$T/mnt/f"
	python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY))' "$T/mnt/f"
	cp --sparse=always "$img" "$T/fc.img"
	umount "$T/mnt"; MOUNTS=()
	losetup -d "$dev"
	dfs_read "$T/fc.img" "logdump" >"$T/logdump"
	grep -q "Fast Commit Area" "$T/logdump" &&
		grep -q 'CREAT_DENTRY.*name "f' "$T/logdump"
}
for try in 1 2 3; do
	fc_image && break
	note "try $try: the kernel made the fsync a full commit; again"
done
# unmounted cleanly (the kernel clears jbd2's fast-commit feature then and
# leaves checksum v3 set): trimmed
dumpe2fs -h "$img" 2>/dev/null | grep -q "Journal features:.*journal_checksum_v3" ||
	fail "the kernel did not set the journal's checksum"
run_e2trim "$img"
assert_rc 0 "fast_commit, unmounted cleanly"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "fast_commit: e2fsck -fn after the trim"
note "fast_commit after a clean unmount: trimmed"
grep -q "Fast Commit Area" "$T/logdump" ||
	{ cat "$T/logdump" >&2; fail "no fast-commit area"; }
# (debugfs 1.47 prints the name unterminated: a stray byte may follow)
grep -q 'CREAT_DENTRY.*name "f' "$T/logdump" ||
	{ cat "$T/logdump" >&2; fail "f is not in a fast commit"; }
dfs_read "$T/fc.img" "ls /" | grep -qw f && fail "f already in the directory"
restored "$T/fc.img" f "$D"
run_e2trim -n "$T/fc.img"
assert_rc 14 "fast commit, needs_recovery"
note "exit 14: a fast-commit tail with needs_recovery set"
printf 'feature -needs_recovery\n' | dfs_write "$T/fc.img"
# (e2fsck -fy replays it again, but 1.47.0 then writes the superblock
# with a bad checksum: "Run journal anyway" after a fast-commit replay)
e2fsck -fn "$T/fc.img" 2>&1 | grep -q "journal has data" || fail "e2fsck sees no journal data"
refused "$T/fc.img" "its log starts at block"
# A fast-commit area that leaves the log too few blocks: e2fsck would not
# load the journal (and would reset it).  mke2fs leaves jbd2's fast-commit
# feature to the kernel's first mount: set it here (the journal superblock
# has no checksum yet), with s_num_fc_blks = s_maxlen - 100.
mkfs "$img" 128M -t ext4 -O fast_commit
jb=$(dfs_read "$img" "bmap <8> 0")
be32() {	# offset value: a big-endian word into the journal superblock
	python3 -c 'import struct, sys
with open(sys.argv[1], "r+b") as f:
	f.seek(int(sys.argv[2]))
	f.write(struct.pack(">I", int(sys.argv[3])))' "$img" $((jb * 4096 + $1)) "$2"
}
maxlen=$(od -A n -t u1 -j $((jb * 4096 + 16)) -N 4 "$img" |
	awk '{print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4}')
be32 40 32
be32 84 $((maxlen - 100))
e2fsck -fn "$img" 2>&1 | grep -q "incorrect fast commit blocks" ||
	fail "e2fsck takes the fast-commit area"
refused "$img" "fast-commit area leaves too few blocks"

# --- an error the journal recorded (s_errno) --------------------------------
# e2fsck then marks the filesystem as having errors and checks it fully;
# e2trim refuses as for errors recorded in the superblock (13).  No
# metadata_csum: the journal superblock has no checksum to keep.
img=$T/errno.img
mkfs "$img" 64M -t ext4 -b 4096 -O ^metadata_csum
jb=$(dfs_read "$img" "bmap <8> 0")
run_e2trim -n "$img"
assert_rc 0 "a clean journal before the error is written"
be32 32 $((2 ** 32 - 5))	# -EIO
before=$(sha_of "$img")
run_e2trim -v "$img"
assert_rc 13 "the journal recorded an error"
assert_grep "the journal recorded error -5" "$ERR" "s_errno named"
assert_eq "$(sha_of "$img")" "$before" "s_errno: image changed"
echo "the journal e2fsck would load: ok"
