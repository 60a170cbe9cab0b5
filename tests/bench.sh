#!/bin/bash
# make bench: e2trim beside fstrim (mount + FITRIM + umount) and
# e2fsck -fy -E discard, on the same images in the same run.  Not a test:
# it prints numbers, it asserts nothing.  Needs root and loop devices.
#
#   BENCH_DIR   where the (sparse) images live   (default /var/tmp/e2trim-bench)
#   BENCH_QUICK=1  skip the slow e2fsck rows on the 15 TiB image
#   BENCH_ONLY=SECTION  only that section: aged, multi, frag, big, verify,
#                 huge, zero-fill, vm or ceph (ceph: only when named;
#                 make bench-ceph is the same)
#   BENCH_AGED_MB size of the aged image (1024; smaller only to try the
#                 bench's output, not for README)
#   E2TRIM_BEFORE another e2trim (built at an older commit) for the
#                 zero-fill table's "before" column; none: that column is empty
#
# Every row is the median of three runs, with the fastest and the slowest
# beside it; every command (e2trim, fstrim, e2fsck, zerofree alike) runs
# on a fresh copy in the same cache state and has its writes flushed
# (sync) inside the clock; the ratio columns are computed here; each
# section prints the load average, since the machine may be shared.  At
# the end the figures are printed again as README's tables (markdown),
# so that README quotes what the bench printed and nothing else.
# The commands below are strings run later by bash -c, with $L and $F
# set then: single quotes are meant.
# shellcheck disable=SC2016
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=bench_env.sh
. "$(dirname "$0")/bench_env.sh"
mkdir -p "$dir" "$dir/mnt"
export PATH="$PATH:/sbin:/usr/sbin"

[ "$(id -u)" = 0 ] || { echo "make bench needs root (loop devices)" >&2; exit 1; }

disc() { awk '{print $12, $14}' "/sys/block/$(basename "$1")/stat"; }
alloc_mib() { echo $(( $(stat -c %b "$1") * 512 / 1048576 )); }
row() { printf '%-34s %22s %8s %10s %10s %11s %9s\n' "$@"; }
now() { date +%s.%N; }
secs() { printf %.3f "$(echo "$2 - $1" | bc)"; }
# "MEDIAN MIN MAX" of the numbers on stdin
spread() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# SECS (median) with MIN-MAX: "0.310 (0.290-0.350)"
shown() { printf '%s (%s-%s)' "$SECS" "$SMIN" "$SMAX"; }
# runs SECONDS...: set SECS, SMIN, SMAX from the runs' seconds
runs() { read -r SECS SMIN SMAX < <(printf '%s\n' "$@" | spread); }
# seconds as a multiple of the section's first row (e2trim on the device)
ratio() { printf 'x%.1f' "$(echo "$1 / $BASE" | bc -l)"; }
# A / B with two significant figures, as README's ratio columns
times() { echo "$1 $2" | awk '{ r = $1 / $2; printf (r >= 10 ? "%.0f" : "%.1f"), r }'; }
loadavg() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
# README's tables, filled in as the sections run and printed at the end
declare -A CELL=()
MD_ZERO=

# timed CMD: run it once, its writes flushed inside the clock (zerofree
# leaves them in the page cache, e2fsck and fstrim too, e2trim
# fdatasyncs: all are treated alike); set SECS and RSS_MIB
timed() {
	local t0 t1
	t0=$(now)
	/usr/bin/time -f %M -o "$dir/rss" bash -c "$*" >"$dir/out" 2>&1
	sync
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
# Every row: $REPEAT (3) runs, the median shown with the fastest and the
# slowest; requests, MiB and RSS of the last run.
run_dev() {
	local name=$1 src=$2 n=${REPEAT:-3} i all=() r0 s0 r1 s1; shift 2
	for ((i = 0; i < n; i++)); do
		fresh_copy "$src"
		L=$(losetup -f --show "${WORK:-$dir/work.img}")
		export L
		read -r r0 s0 < <(disc "$L")
		timed "$@"
		read -r r1 s1 < <(disc "$L")
		losetup -d "$L"
		all+=("$SECS")
	done
	runs "${all[@]}"
	REQS=$((r1 - r0))
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$(shown)" "$(ratio "$SECS")" "$REQS" \
		"$(((s1 - s0) / 2048))" "$(alloc_mib "${WORK:-$dir/work.img}")" "$RSS_MIB"
}
# run_file NAME IMG CMD...: on a fresh copy of the image file; CMD gets $F
run_file() {
	local name=$1 src=$2 n=${REPEAT:-3} i all=(); shift 2
	F=${WORK:-$dir/work.img}
	export F
	for ((i = 0; i < n; i++)); do
		fresh_copy "$src"
		timed "$@"
		all+=("$SECS")
	done
	runs "${all[@]}"
	REQS=
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$(shown)" "$(ratio "$SECS")" - - "$(alloc_mib "$F")" "$RSS_MIB"
}
export -f disc
header() {
	echo
	echo "== $1"
	loadavg
	row method "seconds (min-max)" ratio requests "disc MiB" "alloc MiB" "RSS MiB"
	BASE=
}
# cell KEY: README's speed-table cell for the row just run
cell() {
	local c="$SECS s ($SMIN-$SMAX)"
	[ -z "$REQS" ] || c="$c, $REQS requests"
	CELL[$1]="$c, $RSS_MIB MiB"
}
# us_per_request: what the row just run took a request
us_per_request() {
	[ -n "$REQS" ] && [ "$REQS" -gt 0 ] &&
		echo "  $(echo "$SECS $REQS" | awk '{ printf "%.1f", $1 / $2 * 1e6 }') us a request (median run)"
}

# Floor for the device path: a bare loop of BLKDISCARD ioctls over the
# exact extents e2trim plans, no planning at all.
raw_floor() {
	local img=$1 i all=() n
	"$E2TRIM" -n --list "$img" >"$dir/extents"
	n=$(wc -l <"$dir/extents")
	for ((i = 0; i < ${REPEAT:-3}; i++)); do
		fresh_copy "$img"
		L=$(losetup -f --show "$dir/work.img")
		all+=("$(python3 - "$L" "$dir/extents" <<'PY'
import fcntl, os, struct, sys, time
BLKDISCARD = 0x1277
fd = os.open(sys.argv[1], os.O_WRONLY)
ext = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
t = time.monotonic()
for s, n in ext:
    a = -(-s // 4096) * 4096; b = (s + n) // 4096 * 4096
    if b > a: fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", a, b - a))
os.fsync(fd)
print(f"{time.monotonic() - t:.3f}")
PY
)")
		losetup -d "$L"
	done
	runs "${all[@]}"
	echo "raw BLKDISCARD loop: $n requests in $(shown) s = $(echo "$SECS $n" | awk '{ printf "%.1f", $1 / $2 * 1e6 }') us each (median run)"
}

# witness_cost: what the row just run (its last run) spent on the
# witness of a writer that came and went (issue 41.2: the superblock,
# descriptors and MMP block read again before each batch), from
# E2TRIM_TIME_WITNESS's line
witness_cost() {
	local w
	w=$(sed -n 's/^[^ ]*: witness reads: //p' "$dir/out")
	[ -z "$w" ] || echo "  witness reads: $w (last run)"
}

anchors() {	# KEY IMG: README's speed-table cells under KEY.dev.*, KEY.file.*
	local key=$1 img=$2
	run_dev "e2trim (loop device)" "$img" 'E2TRIM_TIME_WITNESS=1 "$E2TRIM" -v $L'
	cell "$key.dev.e2trim"; us_per_request; witness_cost
	run_file "e2trim (image file)" "$img" 'E2TRIM_TIME_WITNESS=1 "$E2TRIM" -v $F'
	cell "$key.file.e2trim"; witness_cost
	# e2trim's own work: open, every bitmap read and checked, verification
	run_dev "e2trim -n (no discard)" "$img" '"$E2TRIM" -n -v $L'
	run_dev "fstrim (mount+FITRIM+umount)" "$img" \
		'mount -o nodiscard $L '"$dir/mnt"' && fstrim -v '"$dir/mnt"'; umount '"$dir/mnt"
	cell "$key.dev.fstrim"
	if [ -z "${SKIP_FSCK:-}" ]; then
		run_dev "e2fsck -fy -E discard (dev)" "$img" 'e2fsck -fy -E discard $L'
		cell "$key.dev.e2fsck"
		run_file "e2fsck -fy -E discard (img)" "$img" 'e2fsck -fy -E discard $F'
		cell "$key.file.e2fsck"
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
	local e z d bf ec zc dc
	for cache in ${CACHES:-warm cold}; do
		cold=
		[ "$cache" = cold ] && cold=1
		COLD=$cold run_file "e2trim --zero-fill (img, $cache)" "$img" '"$E2TRIM" -v --zero-fill $F'
		e=$SECS ec=$(shown)
		COLD=$cold run_file "zerofree (img, $cache)" "$img" 'zerofree $F'
		z=$SECS zc=$(shown)
		# the same result as e2trim's: zerofree's zeros made holes
		COLD=$cold run_file "  + fallocate --dig-holes" "$img" 'zerofree $F; fallocate --dig-holes $F'
		d=$SECS dc=$(shown)
		bf=
		if [ -n "${E2TRIM_BEFORE:-}" ]; then
			COLD=$cold run_file "e2trim before (img, $cache)" "$img" '"$E2TRIM_BEFORE" -v --zero-fill $F'
			bf="$(shown), $(times "$z" "$SECS")"
		fi
		md_zero file "$cache" "$e" "$ec" "$z" "$zc" "$d" "$dc" "$bf"
		COLD=$cold run_dev "e2trim --zero-fill (loop, $cache)" "$img" '"$E2TRIM" -v --zero-fill $L'
		e=$SECS ec=$(shown)
		COLD=$cold run_dev "zerofree (loop, $cache)" "$img" 'zerofree $L'
		z=$SECS zc=$(shown)
		bf=
		if [ -n "${E2TRIM_BEFORE:-}" ]; then
			COLD=$cold run_dev "e2trim before (loop, $cache)" "$img" '"$E2TRIM_BEFORE" -v --zero-fill $L'
			bf="$(shown), $(times "$z" "$SECS")"
		fi
		md_zero loop "$cache" "$e" "$ec" "$z" "$zc" "" "" "$bf"
	done
}
# md_zero TARGET CACHE E EC Z ZC D DC BEFORE: a row of README's
# zero-fill table: e2trim's, zerofree's and zerofree + dig-holes' median
# seconds E, Z, D (shown as EC, ZC, DC: with min-max), each x the ratio
# of the other tool's median to e2trim's; the first row of a group under
# $ZF_TITLE
md_zero() {
	local dig=" | "
	[ -z "$7" ] || dig="$8 | $(times "$7" "$3")"
	MD_ZERO+="| ${ZF_TITLE:-} | $1 | $2 | $4 | $6 | $(times "$5" "$3") | $dig | $9 |"$'\n'
	ZF_TITLE=
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
	ZF_TITLE=$6
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
	host_rows "the aged $AGED_MB MiB on an ext4 host without -o discard" "$1" \
		"mkfs.ext4 -q -F" "cp --sparse=always" "warm cold" \
		"the same on an ext4 host without \`-o discard\`"
	command -v mkfs.xfs >/dev/null || { echo "(no mkfs.xfs: make deps)"; return; }
	host_rows "the aged $AGED_MB MiB as a reflink copy on XFS" "$1" \
		"mkfs.xfs -q -f -m reflink=1" "cp --reflink=always" cold \
		"the same as a reflink copy on XFS"
}
zero_fill_section() {
	local aged=$dir/$AGED frag=$dir/frag64g.img zeroed=$dir/$AGED.zeroed
	local host todo
	host=$(findmnt -n -o FSTYPE,OPTIONS -T "$dir" | awk '{ print $1 (index($2, "discard") ? ", -o discard" : "") }')
	mkaged "$aged" "$AGED_MB" 1
	todo=$("$E2TRIM" -n -v --zero-fill "$aged" | sed -n 's/.*: \(.*\) zeroed (dry run), \(.*\) already zero/\1 to zero, \2 zero/p')
	header "--zero-fill beside zerofree: aged $AGED_MB MiB ext4, on $dir ($host) ($todo)"
	ZF_TITLE="aged $AGED_MB MiB ($todo), on $dir ($host)"
	zero_fill_rows "$aged"
	# the same once zero-filled: what a second run (or zerofree) finds
	cp --sparse=always "$aged" "$zeroed"
	"$E2TRIM" -q --zero-fill "$zeroed"
	header "--zero-fill beside zerofree: the same, zero-filled already (nothing to write)"
	ZF_TITLE="the same, zero-filled already (sparse), on $dir"
	zero_fill_rows "$zeroed"
	rm -f "$zeroed"
	[ -n "${BENCH_ZERO_HOSTS-1}" ] && more_hosts "$aged"
	if [ -z "${BENCH_QUICK:-}" ]; then
		[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
		header "--zero-fill beside zerofree: 64 GiB ext4, fragmented, sparse"
		ZF_TITLE="64 GiB fragmented, sparse, on $dir"
		zero_fill_rows "$frag"
	fi
	echo
	echo "== README's zero-fill table (seconds, median of 3 (min-max); x: the other tool's median over e2trim's)"
	loadavg
	echo "| image, host | target | cache | e2trim | zerofree | × | + dig-holes | × | before, × |"
	echo "|---|---|---|---|---|---|---|---|---|"
	printf '%s' "$MD_ZERO"
}
# speed_table: README's table of the trims, from the cells the sections set
speed_table() {
	local k
	echo
	echo "== README's speed table (median of 3 (min-max), requests the loop device saw, peak RSS)"
	loadavg
	echo "| image | e2trim | fstrim | e2fsck -fy -E discard |"
	echo "|---|---|---|---|"
	for k in "big.dev|15 TiB fresh, loop device" "big.file|15 TiB fresh, image file" \
		 "frag.dev|64 GiB, ${FRAG_EXTENTS:-?} free extents, loop device" \
		 "frag.file|the same, image file (already sparse)" \
		 "aged.dev|aged $AGED_MB MiB, ${AGED_EXTENTS:-?} free extents, loop device" \
		 "huge.dev|5 TiB, 1 KiB blocks (> 2^32 blocks), loop device"; do
		local key=${k%%|*}
		local e=${CELL[$key.e2trim]:-–}
		[ "$key" != frag.file ] || [ -z "${CELL[frag.second]:-}" ] ||
			e="$e; a second run ${CELL[frag.second]}"
		echo "| ${k#*|} | $e | ${CELL[$key.fstrim]:-–} | ${CELL[$key.e2fsck]:-–} |"
	done
}
only() { [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = "$1" ]; }
if [ "${BENCH_ONLY:-}" = zero-fill ]; then
	zero_fill_section
	rm -f "$dir/work.img"
	exit 0
fi

echo "e2trim bench, $(date -u +%F), $(nproc) cores, kernel $(uname -r), e2trim $(git -C "$here/.." describe --always --dirty 2>/dev/null)"

# 1. An aged ext4 (1 GiB): written full once, half the files deleted
# (tests/mkaged.sh, seed 1: the same image, so the same counts, each run).
aged=$dir/$AGED
if only aged; then
	mkaged "$aged" "$AGED_MB" 1
	AGED_EXTENTS=$("$E2TRIM" -n --list "$aged" | wc -l)
	header "aged $AGED_MB MiB ext4 ($AGED_EXTENTS free extents; tests/mkaged.sh seed 1, sha256 $(sha256sum "$aged" | cut -c1-16))"
	anchors aged "$aged"
fi

# 1b. Four filesystems in one run: four loop devices over four distinct
# files (aged 256 MiB ext4, seeds 1-4), trimmed by e2trim -j 4 beside
# the same four one after another (e2trim -j 1 with the same four
# arguments); requests, discarded and allocated MiB summed over the four.
multi_row() {	# NAME CMD (gets $L1..$L4)
	local name=$1 n=${REPEAT:-3} i k all=() r0 s0 r1 s1 req disc alloc; shift
	for ((k = 0; k < n; k++)); do
		req=0 disc=0 alloc=0
		for i in 1 2 3 4; do
			cp --sparse=always "$dir/aged256m-$i-$AGED_TAG.img" "$dir/multi-$i.img"
		done
		sync
		for i in 1 2 3 4; do
			export "L$i=$(losetup -f --show "$dir/multi-$i.img")"
		done
		read -r r0 s0 < <(for i in 1 2 3 4; do v="L$i"; disc "${!v}"; done |
			awk '{r += $1; s += $2} END {printf "%.0f %.0f\n", r, s}')
		timed "$@"
		read -r r1 s1 < <(for i in 1 2 3 4; do v="L$i"; disc "${!v}"; done |
			awk '{r += $1; s += $2} END {printf "%.0f %.0f\n", r, s}')
		for i in 1 2 3 4; do
			v="L$i"
			losetup -d "${!v}"
			alloc=$((alloc + $(alloc_mib "$dir/multi-$i.img")))
		done
		req=$((r1 - r0)) disc=$(((s1 - s0) / 2048))
		all+=("$SECS")
	done
	runs "${all[@]}"
	[ -n "$BASE" ] || BASE=$SECS
	row "$name" "$(shown)" "$(ratio "$SECS")" "$req" "$disc" "$alloc" "$RSS_MIB"
	rm -f "$dir"/multi-?.img
}
multi_bench() {
	local i
	for i in 1 2 3 4; do
		mkaged "$dir/aged256m-$i-$AGED_TAG.img" 256 "$i"
	done
	header "four aged 256 MiB ext4, four loop devices over distinct files"
	REPEAT=3 multi_row "e2trim, one after another" '"$E2TRIM" -v $L1 $L2 $L3 $L4'
	REPEAT=3 multi_row "e2trim -j 4, at once" '"$E2TRIM" -v -j 4 $L1 $L2 $L3 $L4'
}
if only multi; then multi_bench; fi

# 2. 64 GiB, heavily fragmented: a 64 KiB hole every 256 KiB.
frag=$dir/frag64g.img
if only frag; then
	[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
	FRAG_EXTENTS=$("$E2TRIM" -n --list "$frag" | wc -l)
	header "64 GiB ext4, fragmented ($FRAG_EXTENTS free extents)"
	raw_floor "$frag"
	anchors frag "$frag"
	# the same image file trimmed a second time: all of it is sparse already
	fresh_copy "$frag"
	"$E2TRIM" -q "$dir/work.img"
	cp --sparse=always "$dir/work.img" "$dir/trimmed.img"
	run_file "e2trim, 2nd run (image file)" "$dir/trimmed.img" '"$E2TRIM" -v $F'
	CELL[frag.second]="$SECS s ($SMIN-$SMAX)"
	rm -f "$dir/trimmed.img"
fi

# 3. 15 TiB fresh ext4 on a sparse file.
big=$dir/fresh15t.img
if only big; then
	if [ ! -f "$big" ]; then
		truncate -s 15T "$big"
		MKE2FS_CONFIG=$here/mke2fs.conf mke2fs -q -F -t ext4 -E lazy_itable_init=1,nodiscard "$big"
	fi
	header "15 TiB fresh ext4 ($("$E2TRIM" -n --list "$big" | wc -l) free extents)"
	[ -n "${BENCH_QUICK:-}" ] && SKIP_FSCK=1
	raw_floor "$big"
	anchors big "$big"
	SKIP_FSCK=
fi

# 4. Verification at the speed of the device: a 2 TiB
# ext4 whose groups are all initialized, 2 Mi inodes in 16 384 tables.
# Three figures side by side, cold (caches dropped before each) and warm:
# e2trim's verification alone (E2TRIM_TIME_VERIFY), e2fsck -fn, and the
# floor: exactly the inode-table byte ranges read with large sequential
# reads (tests/tools/itable_floor.py).  Read-only: no copy needed.
# The ratio line is the cold row's verification / floor, of this run; the
# reads line counts the loop device's read requests, which unlike the
# seconds do not move with the machine's load (e2trim -n: the whole run,
# block bitmaps included).  Where verification's time went before the
# inode bitmaps were read with the tables (src/verify/verify_imap.c): a
# third of it in 1 024 separate 64 KiB bitmap reads, 4 117 requests in
# all for e2trim -n where it now makes 2 073.
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
# reads, MiB: what the loop device $1 was asked to read by CMD..., cold
dev_reads() {
	local st r0 s0 r1 s1
	st=/sys/block/$(basename "$1")/stat
	shift
	cold
	read -r r0 s0 < <(awk '{ print $1, $3 }' "$st")
	"$@" >/dev/null 2>&1
	read -r r1 s1 < <(awk '{ print $1, $3 }' "$st")
	echo "$((r1 - r0)) reads, $(((s1 - s0) / 2048)) MiB"
}

verify_bench() {
	local img=$dir/init2t.img runs=3 i L mode vs fs fls ratio_cold=
	if [ ! -f "$img" ]; then
		truncate -s 2T "$img"
		mke2fs -q -F -t ext4 -O ^metadata_csum,^uninit_bg -i 1048576 "$img"
	fi
	echo
	echo "== 2 TiB ext4, every group initialized: verification (seconds, median of $runs (min-max))"
	loadavg
	echo "| cache | verification | \`e2fsck -fn\` | floor | verification / floor | verification / e2fsck |"
	echo "|---|---|---|---|---|---|"
	# read-write, though nothing here writes: e2trim -n asks the device
	# whether it could trim, and a read-only one is refused (25)
	L=$(losetup -f --show "$img")
	for mode in cold warm; do
		[ "$mode" = warm ] && { verify_secs "$L" >/dev/null; floor_secs "$L" >/dev/null; }
		vs=() fs=() fls=()
		for ((i = 1; i <= runs; i++)); do
			[ "$mode" = cold ] && cold
			vs+=("$(verify_secs "$L")")
			[ "$mode" = cold ] && cold
			fs+=("$(fsck_secs "$L")")
			[ "$mode" = cold ] && cold
			fls+=("$(floor_secs "$L")")
		done
		runs "${vs[@]}"; local v=$SECS vc; vc=$(shown)
		runs "${fs[@]}"; local f=$SECS fc; fc=$(shown)
		runs "${fls[@]}"; local fl=$SECS flc; flc=$(shown)
		echo "| $mode | $vc | $fc | $flc | $(echo "$v $fl" | awk '{ printf "%.2f", $1 / $2 }') | $(echo "$v $f" | awk '{ printf "%.3f", $1 / $2 }') |"
		[ "$mode" = cold ] && ratio_cold=$(echo "$v $fl" | awk '{ printf "%.2f", $1 / $2 }')
	done
	echo "verification / floor, cold: $ratio_cold (the target: <= 1.2)"
	# what each asked of the device, cold (e2trim -n: open, bitmaps and
	# descriptors checked, then verification)
	echo "device reads, cold: e2trim -n $(dev_reads "$L" "$E2TRIM" -n "$L"); floor $(dev_reads "$L" python3 "$here/tools/itable_floor.py" "$L")"
	losetup -d "$L"
}
if only verify; then verify_bench; fi

# 5. More than 2^32 blocks: 5 TiB of 1 KiB blocks, fresh.  Peak RSS is
# the number to watch (tests/e2e/t_slow_huge_fs.sh holds it under 200 MB).
huge=$dir/huge5t-1k.img
if only huge; then
	if [ ! -f "$huge" ]; then
		truncate -s 5T "$huge"
		MKE2FS_CONFIG=$here/mke2fs.conf mke2fs -q -F -t ext4 -b 1024 -O 64bit \
			-E lazy_itable_init=1,lazy_journal_init=1,nodiscard "$huge"
	fi
	header "5 TiB ext4, 1 KiB blocks, > 2^32 blocks ($("$E2TRIM" -n --list "$huge" | wc -l) free extents)"
	run_dev "e2trim (loop device)" "$huge" '"$E2TRIM" -v $L'
	cell huge.dev.e2trim
	run_file "e2trim (image file)" "$huge" '"$E2TRIM" -v $F'
fi

[ ${#CELL[@]} = 0 ] || speed_table

if only zero-fill; then zero_fill_section; fi
rm -f "$dir/work.img"

# 6. VM images in place through NBD, beside qemu-img convert and
# virt-sparsify (tests/bench_vm.sh).
if only vm; then
	E2TRIM=$E2TRIM BENCH_DIR=$dir BENCH_SHARED=$shared BENCH_AGED_MB=$AGED_MB \
		bash "$here/bench_vm.sh"
fi

# 7. Ceph RBD (tests/bench_ceph.sh, make bench-ceph): only when asked for,
# since it starts a cluster and boots guests.
if [ "${BENCH_ONLY:-}" = ceph ]; then
	E2TRIM=$E2TRIM BENCH_DIR=$dir BENCH_SHARED=$shared BENCH_AGED_MB=$AGED_MB \
		bash "$here/bench_ceph.sh"
fi
