#!/bin/bash
# --zero-fill on a sparse image on ramfs.  ramfs keeps no holes on record
# (SEEK_DATA calls all of a file data), yet reading a hole there
# allocates a page for good: --zero-fill, which must read what it cannot
# punch, made the image grow by every hole it read.  Now a hole is a page
# ramfs does not hold (mincore), and is never read: the image's blocks
# never grow (beyond what checking the filesystem reads of its metadata,
# which a dry run before reads too), every free block reads zero after, the used blocks are
# byte-identical and e2fsck -fn is clean.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root

orig=$T/orig.img
mkfs "$orig" 64M -t ext4 -b 4096
# a deleted file leaves 6 MiB of free blocks that are not zero; the rest
# of the free space is holes
head -c $((6 << 20)) /dev/urandom >"$T/big"
debugfs -w -R "write $T/big big" "$orig" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm big" "$orig" >/dev/null 2>&1 || fail "debugfs rm"
used=$(used_blocks_digest "$orig")
read -r nz _ < <(free_stats "$orig")
[ "$nz" -ge $((6 << 20)) ] || fail "setup: only $nz free bytes not zero"

mkdir -p "$T/ram"
mount -t ramfs ramfs "$T/ram" || fail "mount ramfs"
MOUNTS+=("$T/ram")
img=$T/ram/img
cp --sparse=always "$orig" "$img"
a=$(alloc_bytes "$img")
# the checks read the metadata, holes of it too: the same in a dry run
# (the dry run of --zero-fill: a plain -n is refused on ramfs, as the
# real run is, 2: no hole can be punched there)
run_e2trim -n --zero-fill "$img"
assert_rc 0 "dry run on ramfs"
alloc0=$(alloc_bytes "$img")
[ "$alloc0" -lt $((32 << 20)) ] || fail "setup: the copy on ramfs is not sparse ($alloc0 bytes)"
note "ramfs: a dry run's reads of metadata holes: $a -> $alloc0 bytes"
run_e2trim -v --zero-fill "$img"
assert_rc 0 "--zero-fill on ramfs"
assert_eq "$(zeroed_of)" "$nz" "bytes zeroed"
alloc1=$(alloc_bytes "$img")
[ "$alloc1" -le "$alloc0" ] || fail "the image grew on ramfs: $alloc0 -> $alloc1 bytes"
read -r nz2 _ < <(free_stats "$img")
assert_eq "$nz2" 0 "free bytes not zero after"
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck -fn after"
note "ramfs: $nz bytes zeroed, allocated $alloc0 -> $alloc1 bytes"

# a plain trim there: ramfs cannot punch holes; the fix names what works
# (--zero-fill, followed here), not options that were never given
cp --sparse=never "$orig" "$img"
run_e2trim "$img"
assert_rc 2 "a plain trim on ramfs"
grep -q -- "--secure\|--zeroout" "$ERR" && { cat "$ERR"; fail "ramfs: names --secure or --zeroout, which were not given"; }
assert_grep "run e2trim again with --zero-fill" "$ERR" "ramfs: the fix"
assert_eq "$(wc -l <"$ERR")" 1 "ramfs: lines on stderr"
run_e2trim --zero-fill "$img"
assert_rc 0 "ramfs: the fix followed"
note "ramfs: a plain trim is refused (2) naming --zero-fill, which then works"
exit 0
