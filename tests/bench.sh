#!/bin/bash
# make bench: e2trim beside fstrim (mount + FITRIM + umount) and
# e2fsck -fy -E discard, on the same images in the same run.  Not a test:
# it prints numbers, it asserts nothing.  Needs root and loop devices.
#
#   BENCH_DIR   where the (sparse) images live   (default /var/tmp/e2trim-bench)
#   BENCH_QUICK=1  skip the slow e2fsck rows on the 15 TiB image
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
row() { printf '%-34s %9s %10s %10s %11s %9s\n' "$@"; }
now() { date +%s.%N; }
secs() { printf %.3f "$(echo "$2 - $1" | bc)"; }

# run_dev NAME IMG CMD...: fresh sparse copy on a loop device; CMD gets $L
run_dev() {
	local name=$1 src=$2; shift 2
	cp --sparse=always "$src" "$dir/work.img"
	L=$(losetup -f --show "$dir/work.img")
	export L
	local r0 s0 r1 s1 t0 t1 rss
	read -r r0 s0 < <(disc "$L")
	t0=$(now)
	/usr/bin/time -f %M -o "$dir/rss" bash -c "$*" >"$dir/out" 2>&1
	t1=$(now)
	read -r r1 s1 < <(disc "$L")
	losetup -d "$L"
	rss=$(tail -1 "$dir/rss")
	row "$name" "$(secs "$t0" "$t1")" "$((r1 - r0))" "$(((s1 - s0) / 2048))" \
		"$(alloc_mib "$dir/work.img")" "$((rss / 1024))"
}
# run_file NAME IMG CMD...: on a sparse copy of the image file; CMD gets $F
run_file() {
	local name=$1 src=$2; shift 2
	cp --sparse=always "$src" "$dir/work.img"
	F=$dir/work.img
	export F
	local t0 t1 rss
	t0=$(now)
	/usr/bin/time -f %M -o "$dir/rss" bash -c "$*" >"$dir/out" 2>&1
	t1=$(now)
	rss=$(tail -1 "$dir/rss")
	row "$name" "$(secs "$t0" "$t1")" - - "$(alloc_mib "$F")" "$((rss / 1024))"
}
export -f disc
header() {
	echo
	echo "== $1"
	row method seconds requests "disc MiB" "alloc MiB" "RSS MiB"
}

# Floor for the device path: a bare loop of BLKDISCARD ioctls over the
# exact extents e2trim plans, no planning at all.
raw_floor() {
	local img=$1
	"$E2TRIM" -n --list "$img" >"$dir/extents"
	cp --sparse=always "$img" "$dir/work.img"
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
	run_dev "e2trim (loop device)" "$img" '"$E2TRIM" -v $L'
	run_file "e2trim (image file)" "$img" '"$E2TRIM" -v $F'
	run_dev "fstrim (mount+FITRIM+umount)" "$img" \
		'mount -o nodiscard $L '"$dir/mnt"' && fstrim -v '"$dir/mnt"'; umount '"$dir/mnt"
	if [ -z "${SKIP_FSCK:-}" ]; then
		run_dev "e2fsck -fy -E discard (dev)" "$img" 'e2fsck -fy -E discard $L'
		run_file "e2fsck -fy -E discard (img)" "$img" 'e2fsck -fy -E discard $F'
	fi
	run_dev "e2fsck -fn (check only)" "$img" 'e2fsck -fn $L'
}
export E2TRIM dir

echo "e2trim bench, $(date -u +%F), $(nproc) cores, kernel $(uname -r)"

# 1. An aged 1 GiB ext4: written full once, half the files deleted.
aged=$dir/aged1g.img
[ -f "$aged" ] || bash "$shared/mkaged.sh" "$aged" 1024 1 >/dev/null
header "aged 1 GiB ext4 ($("$E2TRIM" -n --list "$aged" | wc -l) free extents)"
anchors "$aged"

# 2. 64 GiB, heavily fragmented: a 64 KiB hole every 256 KiB.
frag=$dir/frag64g.img
[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
header "64 GiB ext4, fragmented ($("$E2TRIM" -n --list "$frag" | wc -l) free extents)"
raw_floor "$frag"
anchors "$frag"
# the same image file trimmed a second time: all of it is sparse already
run_file "e2trim, 2nd run (image file)" "$frag" '"$E2TRIM" -v $F >/dev/null; "$E2TRIM" -v $F'

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

# 4. More than 2^32 blocks: 5 TiB of 1 KiB blocks, fresh.  Peak RSS is
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
rm -f "$dir/work.img"
