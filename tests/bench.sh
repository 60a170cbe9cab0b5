#!/bin/bash
# make bench: e2trim beside fstrim (mount + FITRIM + umount) and
# e2fsck -fy -E discard, on the same images in the same run.  Not a test:
# it prints numbers, it asserts nothing.  Needs root and loop devices.
#
#   BENCH_DIR   where the (sparse) images live   (default /var/tmp/e2trim-bench)
#   BENCH_QUICK=1  skip the slow e2fsck rows on the 15 TiB image
#   BENCH_ONLY=zero-fill  only section 6: --zero-fill beside zerofree
# The commands below are strings run later by bash -c, with $L and $F
# set then: single quotes are meant.
# shellcheck disable=SC2016
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "$here/../../shared/bench" 2>/dev/null && pwd) || shared=
: "${E2TRIM:=$here/../build/e2trim}"
E2TRIM=$(cd "$(dirname "$E2TRIM")" && pwd)/$(basename "$E2TRIM")
dir=${BENCH_DIR:-/var/tmp/e2trim-bench}
mkdir -p "$dir" "$dir/mnt"
export PATH="$PATH:/sbin:/usr/sbin"

[ "$(id -u)" = 0 ] || { echo "make bench needs root (loop devices)" >&2; exit 1; }

disc() { awk '{print $12, $14}' "/sys/block/$(basename "$1")/stat"; }
alloc_mib() { echo $(( $(stat -c %b "$1") * 512 / 1048576 )); }
row() { printf '%-34s %9s %8s %10s %10s %11s %9s\n' "$@"; }
now() { date +%s.%N; }
secs() { printf %.3f "$(echo "$2 - $1" | bc)"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# seconds as a multiple of the section's first row (e2trim on the device)
ratio() { printf 'x%.1f' "$(echo "$1 / $BASE" | bc -l)"; }

# timed CMD: run it once, set SECS and RSS_MIB
timed() {
	local t0 t1
	t0=$(now)
	/usr/bin/time -f %M -o "$dir/rss" bash -c "$*" >"$dir/out" 2>&1
	t1=$(now)
	SECS=$(secs "$t0" "$t1")
	RSS_MIB=$(( $(tail -1 "$dir/rss") / 1024 ))
}

# A fresh sparse copy of IMG, written back before the clock starts so
# that no tool pays for the copy's writeback.  $WORK and $COPY put it
# elsewhere, made another way (a reflink copy on XFS).
fresh_copy() {
	${COPY:-cp --sparse=always} "$1" "${WORK:-$dir/work.img}"
	sync
	[ -z "${COLD:-}" ] || echo 3 >/proc/sys/vm/drop_caches
}

# run_dev NAME IMG CMD...: on a loop device over a fresh copy; CMD gets $L.
# e2trim rows take the median of $REPEAT runs (the others are minutes).
run_dev() {
	local name=$1 src=$2 n=${REPEAT:-1} i all="" r0 s0 r1 s1; shift 2
	for ((i = 0; i < n; i++)); do
		fresh_copy "$src"
		L=$(losetup -f --show "${WORK:-$dir/work.img}")
		export L
		read -r r0 s0 < <(disc "$L")
		timed "$@"
		read -r r1 s1 < <(disc "$L")
		losetup -d "$L"
		all="$all $SECS"
	done
	SECS=$(echo "$all" | tr ' ' '\n' | grep . | median)
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$SECS" "$(ratio "$SECS")" "$((r1 - r0))" \
		"$(((s1 - s0) / 2048))" "$(alloc_mib "${WORK:-$dir/work.img}")" "$RSS_MIB"
}
# run_file NAME IMG CMD...: on a fresh copy of the image file; CMD gets $F
run_file() {
	local name=$1 src=$2 n=${REPEAT:-1} i all=""; shift 2
	F=${WORK:-$dir/work.img}
	export F
	for ((i = 0; i < n; i++)); do
		fresh_copy "$src"
		timed "$@"
		all="$all $SECS"
	done
	SECS=$(echo "$all" | tr ' ' '\n' | grep . | median)
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$SECS" "$(ratio "$SECS")" - - "$(alloc_mib "$F")" "$RSS_MIB"
}
export -f disc
header() {
	echo
	echo "== $1"
	row method seconds ratio requests "disc MiB" "alloc MiB" "RSS MiB"
	BASE=
}

# Floor for the device path: a bare loop of BLKDISCARD ioctls over the
# exact extents e2trim plans, no planning at all.
raw_floor() {
	local img=$1
	"$E2TRIM" -n --list "$img" >"$dir/extents"
	fresh_copy "$img"
	L=$(losetup -f --show "$dir/work.img")
	python3 - "$L" "$dir/extents" <<'PY'
import fcntl, os, struct, sys, time
BLKDISCARD = 0x1277
fd = os.open(sys.argv[1], os.O_WRONLY)
ext = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
t = time.monotonic()
for s, n in ext:
    a = -(-s // 4096) * 4096; b = (s + n) // 4096 * 4096
    if b > a: fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", a, b - a))
dt = time.monotonic() - t
print(f"raw BLKDISCARD loop: {len(ext)} requests in {dt:.3f} s = {dt / max(len(ext), 1) * 1e6:.1f} us each")
PY
	losetup -d "$L"
}

anchors() {	# IMG
	local img=$1
	REPEAT=3 run_dev "e2trim (loop device)" "$img" '"$E2TRIM" -v $L'
	REPEAT=3 run_file "e2trim (image file)" "$img" '"$E2TRIM" -v $F'
	run_dev "fstrim (mount+FITRIM+umount)" "$img" \
		'mount -o nodiscard $L '"$dir/mnt"' && fstrim -v '"$dir/mnt"'; umount '"$dir/mnt"
	if [ -z "${SKIP_FSCK:-}" ]; then
		run_dev "e2fsck -fy -E discard (dev)" "$img" 'e2fsck -fy -E discard $L'
		run_file "e2fsck -fy -E discard (img)" "$img" 'e2fsck -fy -E discard $F'
	fi
	run_dev "e2fsck -fn (check only)" "$img" 'e2fsck -fn $L'
}
export E2TRIM dir

# 6. --zero-fill beside zerofree (the same job: every free block zero
# after, zero blocks not written), on the image file and on a loop device,
# each on a fresh copy; warm: the copy is in the page cache, as the cp
# left it; cold: caches dropped before the clock starts.  The "alloc MiB"
# column is the image's allocated size after.
zero_fill_rows() {	# IMG
	local img=$1 cache cold
	command -v zerofree >/dev/null || { echo "(no zerofree: make deps)"; return; }
	# zerofree leaves its writes in the page cache (e2trim fdatasyncs):
	# both rows end with sync, so that both count writing them out
	for cache in ${CACHES:-warm cold}; do
		cold=
		[ "$cache" = cold ] && cold=1
		COLD=$cold REPEAT=3 run_file "e2trim --zero-fill (img, $cache)" "$img" '"$E2TRIM" -v --zero-fill $F; sync'
		COLD=$cold REPEAT=3 run_file "zerofree (img, $cache)" "$img" 'zerofree $F; sync'
		# the same result as e2trim's: zerofree's zeros made holes
		COLD=$cold REPEAT=3 run_file "  + fallocate --dig-holes" "$img" 'zerofree $F; fallocate --dig-holes $F; sync'
		COLD=$cold REPEAT=3 run_dev "e2trim --zero-fill (loop, $cache)" "$img" '"$E2TRIM" -v --zero-fill $L; sync'
		COLD=$cold REPEAT=3 run_dev "zerofree (loop, $cache)" "$img" 'zerofree $L; sync'
	done
}
# host_rows TITLE IMG MKFS COPY CACHES: zero_fill_rows with the copies on
# a scratch filesystem of their own (3 GiB, made by MKFS, mounted with no
# options), made by COPY: the host's habits, not the tools', set part of
# the cost.  "alloc MiB": the copy's.
host_rows() {
	local title=$1 img=$2 mkfs=$3 copy=$4 caches=$5 hl h=$dir/host
	truncate -s 3G "$dir/host.img"
	$mkfs "$dir/host.img" >/dev/null 2>&1 || { echo "($mkfs failed)"; return; }
	hl=$(losetup -f --show "$dir/host.img")
	mkdir -p "$h"
	mount "$hl" "$h" || { losetup -d "$hl"; return; }
	cp --sparse=always "$img" "$h/base.img"
	header "--zero-fill beside zerofree: $title"
	WORK=$h/work.img COPY=$copy CACHES=$caches zero_fill_rows "$h/base.img"
	umount "$h"
	losetup -d "$hl"
	rm -f "$dir/host.img"
}
# This machine's / is ext4 mounted with -o discard, which makes every hole
# punched cost a discard to the disk below at the next journal commit;
# most distributions mount without it (and run fstrim weekly).  On XFS a
# `cp` makes a reflink copy: punched, its blocks stay the other file's and
# the host spends no new one; zerofree's writes unshare what they write
# (cold only: a reflink copy shares blocks, not page cache).
more_hosts() {	# IMG
	host_rows "the aged 1 GiB on an ext4 host without -o discard" "$1" \
		"mkfs.ext4 -q -F" "cp --sparse=always" "warm cold"
	command -v mkfs.xfs >/dev/null || { echo "(no mkfs.xfs: make deps)"; return; }
	host_rows "the aged 1 GiB as a reflink copy on XFS" "$1" \
		"mkfs.xfs -q -f -m reflink=1" "cp --reflink=always" cold
}
zero_fill_section() {
	local aged=$dir/aged1g.img frag=$dir/frag64g.img zeroed=$dir/aged1g-zeroed.img
	[ -f "$aged" ] || bash "$shared/mkaged.sh" "$aged" 1024 1 >/dev/null
	header "--zero-fill beside zerofree: aged 1 GiB ext4, on / (ext4, -o discard) ($("$E2TRIM" -n -v --zero-fill "$aged" | sed -n 's/.*: \(.*\) zeroed (dry run), \(.*\) already zero/\1 to zero, \2 zero/p'))"
	zero_fill_rows "$aged"
	# the same once zero-filled: what a second run (or zerofree) finds
	cp --sparse=always "$aged" "$zeroed"
	"$E2TRIM" -q --zero-fill "$zeroed"
	header "--zero-fill beside zerofree: the same, zero-filled already (nothing to write)"
	zero_fill_rows "$zeroed"
	rm -f "$zeroed"
	more_hosts "$aged"
	[ -n "${BENCH_QUICK:-}" ] && return
	[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
	header "--zero-fill beside zerofree: 64 GiB ext4, fragmented, sparse"
	zero_fill_rows "$frag"
}
if [ "${BENCH_ONLY:-}" = zero-fill ]; then
	zero_fill_section
	rm -f "$dir/work.img"
	exit 0
fi

echo "e2trim bench, $(date -u +%F), $(nproc) cores, kernel $(uname -r)"

# 1. An aged 1 GiB ext4: written full once, half the files deleted.
aged=$dir/aged1g.img
[ -f "$aged" ] || bash "$shared/mkaged.sh" "$aged" 1024 1 >/dev/null
header "aged 1 GiB ext4 ($("$E2TRIM" -n --list "$aged" | wc -l) free extents)"
anchors "$aged"

# 1b. Four filesystems in one run: four loop devices over four distinct
# files (aged 256 MiB ext4, seeds 1-4), trimmed by e2trim -j 4 beside
# the same four one after another (e2trim -j 1 with the same four
# arguments); requests, discarded and allocated MiB summed over the four.
multi_row() {	# NAME CMD (gets $L1..$L4)
	local name=$1 n=${REPEAT:-1} i k all="" r0 s0 r1 s1 req disc alloc; shift
	for ((k = 0; k < n; k++)); do
		req=0 disc=0 alloc=0
		for i in 1 2 3 4; do
			cp --sparse=always "$dir/aged256m-$i.img" "$dir/multi-$i.img"
		done
		sync
		for i in 1 2 3 4; do
			export "L$i=$(losetup -f --show "$dir/multi-$i.img")"
		done
		read -r r0 s0 < <(for i in 1 2 3 4; do v="L$i"; disc "${!v}"; done |
			awk '{r += $1; s += $2} END {print r, s}')
		timed "$@"
		read -r r1 s1 < <(for i in 1 2 3 4; do v="L$i"; disc "${!v}"; done |
			awk '{r += $1; s += $2} END {print r, s}')
		for i in 1 2 3 4; do
			v="L$i"
			losetup -d "${!v}"
			alloc=$((alloc + $(alloc_mib "$dir/multi-$i.img")))
		done
		req=$((r1 - r0)) disc=$(((s1 - s0) / 2048))
		all="$all $SECS"
	done
	SECS=$(echo "$all" | tr ' ' '\n' | grep . | median)
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$SECS" "$(ratio "$SECS")" "$req" "$disc" "$alloc" "$RSS_MIB"
	rm -f "$dir"/multi-?.img
}
multi_bench() {
	local i
	for i in 1 2 3 4; do
		[ -f "$dir/aged256m-$i.img" ] ||
			bash "$shared/mkaged.sh" "$dir/aged256m-$i.img" 256 "$i" >/dev/null
	done
	header "four aged 256 MiB ext4, four loop devices over distinct files"
	REPEAT=3 multi_row "e2trim, one after another" '"$E2TRIM" -v $L1 $L2 $L3 $L4'
	REPEAT=3 multi_row "e2trim -j 4, at once" '"$E2TRIM" -v -j 4 $L1 $L2 $L3 $L4'
}
multi_bench

# 2. 64 GiB, heavily fragmented: a 64 KiB hole every 256 KiB.
frag=$dir/frag64g.img
[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
header "64 GiB ext4, fragmented ($("$E2TRIM" -n --list "$frag" | wc -l) free extents)"
raw_floor "$frag"
anchors "$frag"
# the same image file trimmed a second time: all of it is sparse already
fresh_copy "$frag"
"$E2TRIM" -q "$dir/work.img"
cp --sparse=always "$dir/work.img" "$dir/trimmed.img"
REPEAT=3 run_file "e2trim, 2nd run (image file)" "$dir/trimmed.img" '"$E2TRIM" -v $F'
rm -f "$dir/trimmed.img"

# 3. 15 TiB fresh ext4 on a sparse file.
big=$dir/fresh15t.img
if [ ! -f "$big" ]; then
	truncate -s 15T "$big"
	MKE2FS_CONFIG=$here/mke2fs.conf mke2fs -q -F -t ext4 -E lazy_itable_init=1,nodiscard "$big"
fi
header "15 TiB fresh ext4 ($("$E2TRIM" -n --list "$big" | wc -l) free extents)"
[ -n "${BENCH_QUICK:-}" ] && SKIP_FSCK=1
raw_floor "$big"
anchors "$big"

# 4. Verification at the speed of the device: a 2 TiB
# ext4 whose groups are all initialized, 2 Mi inodes in 16 384 tables.
# Three figures side by side, cold (caches dropped before each) and warm:
# e2trim's verification alone (E2TRIM_TIME_VERIFY), e2fsck -fn, and the
# floor: exactly the inode-table byte ranges read with large sequential
# reads (tests/tools/itable_floor.py).  Read-only: no copy needed.
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
verify_secs() { E2TRIM_TIME_VERIFY=1 "$E2TRIM" -n "$1" 2>&1 >/dev/null |
	awk '$2 == "verify:" { print $3 }'; }
fsck_secs() {
	local t0
	t0=$(now)
	e2fsck -fn "$1" >/dev/null 2>&1
	secs "$t0" "$(now)"
}
floor_secs() { python3 "$here/tools/itable_floor.py" "$1" | awk '{ print $1 }'; }
ratios() { printf 'x%.2f of the floor, x%.3f of e2fsck' \
	"$(echo "$1 / $2" | bc -l)" "$(echo "$1 / $3" | bc -l)"; }

verify_bench() {
	local img=$dir/init2t.img runs=3 i v f fl L mode
	if [ ! -f "$img" ]; then
		truncate -s 2T "$img"
		mke2fs -q -F -t ext4 -O ^metadata_csum,^uninit_bg -i 1048576 "$img"
	fi
	[ -n "${BENCH_QUICK:-}" ] && runs=1
	echo
	echo "== 2 TiB ext4, every group initialized: verification (seconds)"
	printf '%-6s %3s %9s %9s %9s   %s\n' cache run verify "e2fsck" floor \
		"verify as a multiple"
	L=$(losetup -f --show -r "$img")
	for mode in cold warm; do
		[ "$mode" = warm ] && { verify_secs "$L" >/dev/null; floor_secs "$L" >/dev/null; }
		for ((i = 1; i <= runs; i++)); do
			[ "$mode" = cold ] && cold
			v=$(verify_secs "$L")
			[ "$mode" = cold ] && cold
			f=$(fsck_secs "$L")
			[ "$mode" = cold ] && cold
			fl=$(floor_secs "$L")
			printf '%-6s %3s %9s %9s %9s   %s\n' "$mode" "$i" "$v" "$f" \
				"$fl" "$(ratios "$v" "$fl" "$f")"
		done
	done
	losetup -d "$L"
}
verify_bench

# 5. More than 2^32 blocks: 5 TiB of 1 KiB blocks, fresh.  Peak RSS is
# the number to watch (tests/e2e/t_slow_huge_fs.sh holds it under 200 MB).
huge=$dir/huge5t-1k.img
if [ ! -f "$huge" ]; then
	truncate -s 5T "$huge"
	MKE2FS_CONFIG=$here/mke2fs.conf mke2fs -q -F -t ext4 -b 1024 -O 64bit \
		-E lazy_itable_init=1,lazy_journal_init=1,nodiscard "$huge"
fi
header "5 TiB ext4, 1 KiB blocks, > 2^32 blocks ($("$E2TRIM" -n --list "$huge" | wc -l) free extents)"
run_dev "e2trim (loop device)" "$huge" '"$E2TRIM" -v $L'
run_file "e2trim (image file)" "$huge" '"$E2TRIM" -v $F'

zero_fill_section
rm -f "$dir/work.img"

# 6. VM images in place through NBD, beside qemu-img convert and
# virt-sparsify (tests/bench_vm.sh).
E2TRIM=$E2TRIM BENCH_DIR=$dir bash "$here/bench_vm.sh"
