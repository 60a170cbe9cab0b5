#!/bin/bash
# What an inode owns is decided the way e2fsck's pass 1 decides it
# (src/verify/verify_rules.md), and a journal that holds transactions is not
# clean.  Each case is a clean filesystem made here with mke2fs and
# debugfs, then damaged in one way; where the damage hides file data,
# its blocks are also marked free, so a tool that believed the fields
# would trim them.  For each case:
#  - e2fsck -fn on a copy finds the damage (it would ask a question);
#  - where e2fsck -fy brings the data back, it does so byte for byte on
#    a copy (the data is real, and e2trim must keep it);
#  - e2trim refuses with the expected code and message, naming e2fsck,
#    in a dry run and in a real run, and the image does not change.
# The rules e2trim follows without refusing (HUGE_FILE_FL, INDEX_FL on a
# file, the project quota inode with links 0, a clean journal with
# checksums) trim for real, and e2fsck -fy still finds every byte.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

D=$T/data
head -c 200000 /dev/urandom >"$D"

# base IMG [mke2fs options]: a filesystem holding file f (= $D)
base() {
	local img=$1; shift
	mkfs "$img" 128M "$@"
	printf 'write %s f\n' "$D" | dfs_write "$img"
}

# free_blocks IMG NAME: mark every block of NAME free in the block bitmap
free_blocks() {
	dfs_read "$1" "blocks $2" | tr ' ' '\n' | awk 'NF {print "freeb " $1}' | dfs_write "$1"
}

# restored IMG NAME: e2fsck -fy on a copy brings NAME back as $D
restored() {
	local copy=$T/copy.img rc=0
	cp --sparse=always "$1" "$copy"
	e2fsck -fy "$copy" >"$T/fsck.log" 2>&1 || rc=$?
	[ "$rc" -lt 4 ] || { cat "$T/fsck.log" >&2; fail "e2fsck -fy: exit $rc"; }
	dfs_read "$copy" "dump $2 $T/back"
	cmp -s "$T/back" "$D" || fail "e2fsck -fy did not bring $2 back byte for byte"
	rm -f "$copy" "$T/back"
}

# refused IMG CODE MESSAGE: e2fsck -fn objects; e2trim refuses, changes nothing
refused() {
	local img=$1 code=$2 msg=$3 before
	# e2fsck -fn answers "no" to the journal's questions and exits 0
	[ "$code" = 14 ] || ! e2fsck -fn "$img" >/dev/null 2>&1 ||
		fail "$msg: e2fsck -fn finds nothing"
	before=$(sha_of "$img")
	run_e2trim -n -v --list "$img"
	assert_rc "$code" "$msg (dry run)"
	assert_grep "$msg" "$ERR" "dry run"
	assert_grep "e2fsck" "$ERR" "$msg: names e2fsck"
	[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$msg: printed a plan"; }
	run_e2trim -v "$img"
	assert_rc "$code" "$msg (trim)"
	assert_eq "$(sha_of "$img")" "$before" "$msg: image changed"
	note "exit $code: $msg"
}

# kept IMG NAME: e2trim trims for real (exit 0); e2fsck -fy still finds NAME
kept() {
	run_e2trim -v "$1"
	assert_rc 0 "$2: trim"
	restored "$1" "$2"
}

img=$T/a.img

# --- 1. inode flags against what i_block[] holds ---------------------------
# EXTENTS_FL cleared on an extent-mapped file: e2fsck sets it back.
base "$img" -t ext4
ino=$(dfs_read "$img" "stat f" | awk '/^Inode:/ {print $2; exit}')
flags=$(dfs_read "$img" "stat f" | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
printf 'sif f flags 0x%x\n' $((flags & ~0x80000)) | dfs_write "$img"
free_blocks "$img" f
e2fsck -fn "$img" 2>&1 | grep -q "missing EXTENT_FL" || fail "e2fsck does not ask about EXTENT_FL"
restored "$img" f
refused "$img" 16 "inode $ino: holds an extent tree but its extents flag is clear"

# INLINE_DATA_FL beside a valid extent header: e2fsck keeps the extents.
base "$img" -t ext4 -O inline_data
printf 'sif f flags 0x%x\n' $((0x10080000)) | dfs_write "$img"
free_blocks "$img" f
restored "$img" f
refused "$img" 16 "both the inline-data and the extents flag are set"

# INLINE_DATA_FL alone over an extent header
base "$img" -t ext4 -O inline_data
printf 'sif f flags 0x10000000\n' | dfs_write "$img"
free_blocks "$img" f
refused "$img" 16 "holds an extent tree but its extents flag is clear"

# EXTENTS_FL without the extents feature: e2fsck sets the feature back.
base "$img" -t ext4
printf 'feature -extent\n' | dfs_write "$img"
free_blocks "$img" f
restored "$img" f
refused "$img" 16 "extents flag set on a filesystem without the extents feature"

# INLINE_DATA_FL without the inline_data feature
base "$img" -t ext4
printf 'sif f flags 0x10000000\n' | dfs_write "$img"
refused "$img" 16 "inline-data flag set on a filesystem without inline_data"

# A fast symlink with EXTENTS_FL
base "$img" -t ext4
printf 'symlink sl /short/target\nsif sl flags 0x80000\n' | dfs_write "$img"
refused "$img" 16 "fast symlink with the extents flag set"

# A fifo with EXTENTS_FL
base "$img" -t ext4
printf 'mknod p0 p\nsif p0 flags 0x80000\n' | dfs_write "$img"
refused "$img" 16 "device, fifo or socket with extents"

# A directory whose mode became a fifo: e2fsck turns it back into one.
base "$img" -t ext3
printf 'mkdir d\ncd d\nwrite %s x\ncd /\nsif d mode 010755\n' "$D" | dfs_write "$img"
free_blocks "$img" d
free_blocks "$img" d/x
restored "$img" d/x
refused "$img" 16 "first block is a directory block"

# --- links and dtime -------------------------------------------------------
base "$img" -t ext4
printf 'sif f dtime 1700000000\n' | dfs_write "$img"
free_blocks "$img" f
restored "$img" f
refused "$img" 16 "has a deletion time yet links to it remain"

# --- reserved inodes, by number --------------------------------------------
base "$img" -t ext4
printf 'sif <1> mode 0100644\n' | dfs_write "$img"
refused "$img" 16 "inode 1 (bad blocks list): bad blocks inode has a mode"

base "$img" -t ext4
# e2fsck's journal loader rejects it first and takes s_jnl_blocks instead
printf 'sif <8> mode 040755\n' | dfs_write "$img"
refused "$img" 14 "journal inode 8 is not a regular file"

base "$img" -t ext4
printf 'sif <9> mode 0100644\n' | dfs_write "$img"
refused "$img" 16 "reserved inode has a mode it may not have"

base "$img" -t ext4
printf 'sif <3> block[0] 5000\n' | dfs_write "$img"
refused "$img" 16 "reserved quota inode not in use, yet it holds blocks"

base "$img" -t ext4 -O quota,project
printf 'sif <3> mode 040700\n' | dfs_write "$img"
refused "$img" 16 "quota inode is not a regular file"

base "$img" -t ext4 -O orphan_file
printf 'feature -orphan_file\n' | dfs_write "$img"
refused "$img" 16 "orphan file inode without the orphan_file feature holds blocks"

# --- 3. the project quota inode is the quota inode even with links 0 -------
base "$img" -t ext4 -O quota,project
pq=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Project quota inode:/ {print $4}')
[ "${pq:-0}" -ge 11 ] || fail "no project quota inode"
# debugfs's write does not charge quota: let e2fsck count f first
e2fsck -fy "$img" >/dev/null 2>&1
e2fsck -fn "$img" >/dev/null 2>&1 || fail "quota not clean after e2fsck -fy"
dfs_read "$img" "dump <$pq> $T/pq.before"
printf 'sif <%s> links_count 0\nfreei <%s>\n' "$pq" "$pq" | dfs_write "$img"
# debugfs's freei leaves the group's free inodes count as it was: make it
# agree with the bitmap, or the count check (22) refuses first
ipg=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Inodes per group:/ {print $4}')
grp=$(( (pq - 1) / ipg ))
nfree=$(dumpe2fs "$img" 2>/dev/null |
	awk -v g="$grp" '$1 == "Group" && $2 == g":" {on = 1}
		on && /free inodes,/ {sub(/ free inodes,.*/, ""); sub(/.*, /, ""); print; exit}')
printf 'set_bg %s free_inodes_count %s\nset_bg %s checksum calc\n' \
	"$grp" $((nfree + 1)) "$grp" | dfs_write "$img"
cp --sparse=always "$img" "$T/pq.img"
free_blocks "$T/pq.img" "<$pq>"
run_e2trim -n "$T/pq.img"
assert_rc 19 "project quota, links 0, blocks free"
assert_grep "inode $pq (quota)" "$ERR" "names the quota inode"
rm -f "$T/pq.img"
# bitmap intact: its blocks stay out of the plan; e2fsck keeps them
kept "$img" f
dfs_read "$img" "dump <$pq> $T/pq.after"
cmp -s "$T/pq.before" "$T/pq.after" || fail "e2trim changed project quota data"
cp --sparse=always "$img" "$T/pq.img"
e2fsck -fy "$T/pq.img" >/dev/null 2>&1
dfs_read "$T/pq.img" "dump <$pq> $T/pq.after"
cmp -s "$T/pq.before" "$T/pq.after" || fail "e2fsck -fy: project quota data changed"
note "project quota inode $pq with links 0: owned, its data intact"
rm -f "$T/pq.img"

# --- rules e2trim follows without refusing ---------------------------------
base "$img" -t ext4
flags=$(dfs_read "$img" "stat f" | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
printf 'sif f flags 0x%x\n' $((flags | 0x40000)) | dfs_write "$img"
kept "$img" f
note "HUGE_FILE_FL on a file: its blocks kept"

base "$img" -t ext4
printf 'sif f flags 0x%x\n' $((flags | 0x1000)) | dfs_write "$img"
kept "$img" f
note "INDEX_FL on a file: its blocks kept"

# --- 2. a journal holding a committed transaction, needs_recovery clear ----
# The transaction holds the metadata that made f: replaying it after f was
# deleted brings f back, although the bitmap marks f's blocks free.
base "$img" -t ext4 -O metadata_csum
root=$(dfs_read "$img" "blocks /" | awk '{print $1}')
ib=$(dfs_read "$img" "imap f" | awk '/located at block/ {print $4+0}')
bb=$(dumpe2fs "$img" 2>/dev/null | awk '/Block bitmap at/ {print $4; exit}')
ibm=$(dumpe2fs "$img" 2>/dev/null | awk '/Inode bitmap at/ {print $4; exit}')
for b in 1 "$bb" "$ibm" "$ib" "$root"; do
	dd if="$img" bs=4096 skip="$b" count=1 status=none
done >"$T/txn"
printf 'rm f\njo -c\njw -b 1,%s,%s,%s,%s %s\njc\nfeature -needs_recovery\n' \
	"$bb" "$ibm" "$ib" "$root" "$T/txn" | dfs_write "$img"
dfs_read "$img" "logdump" | grep -q "commit block" || fail "no committed transaction"
e2fsck -fn "$img" 2>&1 | grep -q "journal has data" || fail "e2fsck sees no journal data"
restored "$img" f
refused "$img" 14 "its log starts at block"

# A clean journal with checksum v3 is accepted; a corrupt one is not.
base "$img" -t ext4
printf 'jo -c\njc\n' | dfs_write "$img"
dumpe2fs -h "$img" 2>/dev/null | grep -q "journal_checksum_v3" || fail "no csum v3"
kept "$img" f
note "clean journal, checksum v3: trimmed"
jb=$(dfs_read "$img" "bmap <8> 0")
printf '\001' | dd of="$img" bs=1 seek=$((jb * 4096 + 72)) conv=notrunc status=none
e2fsck -fn "$img" 2>&1 | grep -q "Journal superblock is corrupt" ||
	fail "e2fsck takes the corrupt journal superblock"
refused "$img" 14 "journal superblock checksum does not match"

# The journal superblock recorded an error: e2fsck marks the filesystem.
base "$img" -t ext4
jb=$(dfs_read "$img" "bmap <8> 0")
printf '\377\377\377\373' | dd of="$img" bs=1 seek=$((jb * 4096 + 32)) conv=notrunc status=none
e2fsck -fn "$img" >/dev/null 2>&1 && fail "e2fsck takes the journal's error"
run_e2trim -n "$img"
assert_rc 13 "journal s_errno"
assert_grep "the journal recorded error -5" "$ERR" "names the journal's error"
note "exit 13: the journal recorded an error"

# has_journal without a journal named; inode 8 left holding the old one
base "$img" -t ext4
printf 'ssv journal_inum 0\n' | dfs_write "$img"
refused "$img" 14 "has_journal is set but no journal is named"
printf 'feature -has_journal\n' | dfs_write "$img"
refused "$img" 16 "inode 8: not the superblock's journal, yet it holds blocks"

# Journal fields left behind without has_journal
base "$img" -t ext4
printf 'feature -has_journal\n' | dfs_write "$img"
refused "$img" 14 "journal fields are set but has_journal is clear"

# An external journal is read where libblkid finds it (loop device), and
# refused when it cannot be found.
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	truncate -s 8M "$T/jdev.img"
	mke2fs -q -F -O journal_dev -b 4096 "$T/jdev.img" || fail "mke2fs journal_dev"
	dev=$(loop_attach "$T/jdev.img")
	rm -f "$img"; truncate -s 128M "$img"
	mke2fs -q -F -t ext4 -J device="$dev" "$img" >/dev/null 2>&1 || fail "mke2fs -J device"
	run_e2trim -n "$img"
	assert_rc 0 "external journal, empty"
	losetup -d "$dev"; LOOPS=()
	run_e2trim -n "$img"
	assert_rc 14 "external journal missing"
	assert_grep "external journal UUID=.* not found" "$ERR" "names the missing journal"
	# one fix, the one that applies: e2fsck cannot replay what it cannot find
	assert_grep "; attach the journal device with that UUID, then run e2trim again" "$ERR" \
		"external journal missing: the fix"
	grep -q "replay" "$ERR" && { cat "$ERR"; fail "external journal missing: told to replay a journal that cannot be found"; }
	note "external journal: read through libblkid; refused when missing"
else
	left_out "the external journal (needs root and a loop device)"
fi
echo "every pass 1 rule case: ok"
finish
