# shellcheck shell=bash
# tests/lib.sh - helpers for e2trim's end-to-end tests
#
# A test is a bash script tests/e2e/t_*.sh that sources this file, runs
# like a person's session (make an image, age it, run e2trim, look at the
# result) and exits 0 (pass), 77 (skip) or anything else (fail).
# run.sh gives it E2TRIM (the binary) and T (a scratch directory).

set -u
export PATH="$PATH:/sbin:/usr/sbin"
# Debian's python3 (make deps installs it), not a version manager's shim
# in front of it: pyenv's is a shell script that costs 0.1 s of CPU a
# call, and the tests call python3 hundreds of times
if [ -x /usr/bin/python3 ] && [[ $PATH == */.pyenv/* ]]; then
	PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/\.pyenv/' | paste -sd:)
	export PATH
fi
: "${E2TRIM:?E2TRIM must name the e2trim binary}"
: "${T:=$(mktemp -d /tmp/e2trim-test.XXXXXX)}"
mkdir -p "$T"

# E2E_SAMPLE: set where e2trim runs many times slower under a checker
# (valgrind through E2TRIM_WRAP, or the sanitized build of make check
# SANITIZE=1).  A test that runs one code path over a large matrix then
# takes a sample of it: the checker needs each path once, and the plain
# pass of make check runs the whole matrix.
E2E_SAMPLE=
[ -z "${E2TRIM_WRAP:-}" ] || E2E_SAMPLE=1
case $E2TRIM in */build-san/*) E2E_SAMPLE=1 ;; esac
export E2E_SAMPLE
# in_sample I N R: whether case I (counted from 1) of such a matrix runs:
# always in the plain pass, under a checker only where I % N is R
in_sample() { [ -z "$E2E_SAMPLE" ] || [ $(($1 % $2)) = "$3" ]; }

# Reproducible mke2fs: fixed time, config, UUID and hash seed.
export E2FSPROGS_FAKE_TIME=1700000000
export SOURCE_DATE_EPOCH=1700000000
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MKE2FS_CONFIG=$TESTS/mke2fs.conf
export MKE2FS_CONFIG
UUID=5b3c4e0a-6f1d-4f0e-9a51-3c2d7e8f9a10

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "  $*"; }

# debugfs, the two ways the tests use it: dfs_read IMG REQUEST prints the
# answer to one request; dfs_write IMG runs the commands on stdin, read
# and write, and fails the test if debugfs does
dfs_read() { debugfs -R "$2" "$1" 2>/dev/null; }
dfs_write() { debugfs -w -f - "$1" >/dev/null 2>&1 || fail "debugfs -w on $1"; }
# sha_of FILE: its SHA-256 (hex).  An image is hashed by
# tools/sha256_sparse.py (its data extents read, holes hashed as zeros,
# OpenSSL's SHA-256: a third of sha256sum's time); a small file by
# sha256sum, which starts faster.  The same digest either way.
sha_of() {
	if [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge 4194304 ]; then
		python3 "$TESTS/tools/sha256_sparse.py" "$1"
	else
		sha256sum "$1" | cut -d' ' -f1
	fi
}

# lib_install: the library as a caller gets it.  make install into
# $T/root (for the build under test: build/, or build-san/ with
# SANITIZE=1), then set lib (its library folder), flags (pkg-config's
# cflags and libs for e2trim, through PKG_CONFIG_PATH), LD_LIBRARY_PATH,
# and for a program of the test's own: sanflags (the sanitizers, or
# none) and vg (valgrind's command, or none on build-san/: the two do
# not run together, and ASan and UBSan check instead)
# shellcheck disable=SC2034  # lib, flags, sanflags, vg: for the caller
lib_install() {
	local top san=''
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	sanflags=()
	vg=(valgrind -q --error-exitcode=99 --leak-check=full
	    "--show-leak-kinds=definite,indirect"
	    "--errors-for-leak-kinds=definite,indirect" --sim-hints=lax-ioctls)
	case $E2TRIM in */build-san/*)
		san=1 sanflags=("-fsanitize=address,undefined") vg=() ;;
	esac
	make -s -C "$top" install DESTDIR="$T/root" PREFIX=/usr/local SANITIZE="$san" \
		>"$T/make.out" 2>&1 || { cat "$T/make.out"; fail "make install"; }
	lib=$T/root/usr/local/lib
	export PKG_CONFIG_PATH=$lib/pkgconfig LD_LIBRARY_PATH=$lib
	flags=$(pkg-config --define-prefix --cflags --libs e2trim) || fail "pkg-config e2trim"
}

# recount_free IMG: the free block and inode counts (per group and in the
# superblock) set to what e2fsck -fn counts, so that after a damage made
# by hand only what the case damages disagrees
recount_free() {
	e2fsck -fn "$1" 2>/dev/null | sed -n \
	  -e 's/^Free blocks count wrong for group #\([0-9]*\) ([0-9]*, counted=\([0-9]*\)).*/set_bg \1 free_blocks_count \2\nset_bg \1 checksum calc/p' \
	  -e 's/^Free blocks count wrong ([0-9]*, counted=\([0-9]*\)).*/ssv free_blocks_count \1/p' \
	  -e 's/^Free inodes count wrong for group #\([0-9]*\) ([0-9]*, counted=\([0-9]*\)).*/set_bg \1 free_inodes_count \2\nset_bg \1 checksum calc/p' \
	  -e 's/^Free inodes count wrong ([0-9]*, counted=\([0-9]*\)).*/ssv free_inodes_count \1/p' |
		dfs_write "$1"
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices)"
	losetup -f >/dev/null 2>&1 || skip "no free loop device"
}

# e2trim, under $E2TRIM_WRAP (valgrind) when set.  Sets RC, OUT, ERR files.
run_e2trim() {
	RC=0
	# shellcheck disable=SC2086
	${E2TRIM_WRAP:-} "$E2TRIM" "$@" >"$T/out" 2>"$T/err" || RC=$?
	# shellcheck disable=SC2034  # for the tests that source this file
	OUT="$T/out"; ERR="$T/err"
	if [ "$RC" = 99 ] && [ -n "${E2TRIM_WRAP:-}" ]; then
		cat "$ERR" >&2
		fail "valgrind reported errors: e2trim $*"
	fi
}

assert_rc() {	# expected, then what for
	[ "$RC" = "$1" ] || { cat "$ERR" >&2; fail "$2: exit $RC, expected $1"; }
}
assert_eq() {	# got expected what
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}
assert_grep() {	# pattern file what
	grep -q -- "$1" "$2" || { cat "$2" >&2; fail "$3: no '$1'"; }
}

# mkfs IMG SIZE [mke2fs options...]: a fresh, reproducible filesystem.
mkfs() {
	local img=$1 size=$2; shift 2
	rm -f "$img"; truncate -s "$size" "$img"
	mke2fs -q -F -U "$UUID" -E hash_seed="$UUID",nodiscard "$@" "$img" \
		|| fail "mke2fs $* failed"
}

# age IMG SEED: write files of many sizes with debugfs, then delete every
# other one, so free space is fragmented; no root needed.  Every free
# block is first written once with 0x5a so the image holds real bytes.
age() {
	local img=$1 seed=${2:-1} n i sz
	local cmds="$T/age.cmds" blob="$T/age.blob"
	fill_free "$img"
	: >"$cmds"
	RANDOM=$seed
	n=60
	for ((i = 0; i < n; i++)); do
		sz=$(( (RANDOM % 64 + 1) * (RANDOM % 7 == 0 ? 97 : 3) * 1024 ))
		head -c "$sz" /dev/zero | tr '\0' '\245' >"$blob.$i"
		echo "write $blob.$i f$i" >>"$cmds"
	done
	for ((i = 0; i < n; i += 2)); do echo "rm f$i" >>"$cmds"; done
	debugfs -w -f "$cmds" "$img" >/dev/null 2>&1 || fail "debugfs age failed"
	rm -f "$blob".*
}

# fill_free IMG: write 0x5a over every free block (allocated in the file).
fill_free() {
	local img=$1 bs
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ {print $3}')
	free_block_ranges "$img" | while read -r a b; do
		python3 - "$img" "$bs" "$a" "$b" <<'PY'
import sys
img, bs, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(img, "r+b") as f:
    f.seek(a * bs)
    left = (b - a + 1) * bs
    chunk = b"\x5a" * (1 << 20)
    while left > 0:
        n = min(left, len(chunk)); f.write(chunk[:n]); left -= n
PY
	done
}

# free_block_ranges IMG: "first last" block pairs from dumpe2fs, per group,
# widened to whole clusters on bigalloc (dumpe2fs prints the first block
# of the last free cluster).
free_block_ranges() {
	dumpe2fs "$1" 2>/dev/null | awk '
	/^Block count:/ { count = $3 }
	/^Block size:/ { bs = $3 }
	/^Cluster size:/ { ratio = $3 / bs }
	/^  Free blocks: / {
		sub(/^  Free blocks: /, "")
		n = split($0, r, /, */)
		for (i = 1; i <= n; i++) {
			if (r[i] == "") continue
			m = split(r[i], ab, "-")
			a = ab[1]; b = (m == 2) ? ab[2] : ab[1]
			if (ratio > 1) b = b + ratio - 1
			if (b > count - 1) b = count - 1
			# %.0f: mawk prints big numbers as 5.36871e+09 and
			# caps %d at 2^31 - 1
			printf "%.0f %.0f\n", a, b
		}
	}'
}

# oracle_extents IMG [MINLEN [START [LEN]]]: the free extents as e2trim
# --list prints them ("start length" in bytes), from dumpe2fs alone:
# merged across groups, clipped to the blocks wholly inside [START,
# START+LEN), then those shorter than MINLEN dropped.
oracle_extents() {
	local img=$1 minlen=${2:-0} start=${3:-0} len=${4:-} bs count
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ {print $3}')
	count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
	[ -n "$len" ] || len=$((count * bs))
	free_block_ranges "$img" | awk -v bs="$bs" -v minlen="$minlen" \
		-v start="$start" -v len="$len" -v count="$count" '
	BEGIN {
		lo = int(start / bs); if (lo * bs < start) lo++
		hi = int((start + len) / bs) - 1
		if (hi > count - 1) hi = count - 1
	}
	function flush(  a, b) {
		if (!have) return
		a = (s < lo) ? lo : s; b = (e > hi) ? hi : e
		if (a <= b && (b - a + 1) * bs >= minlen)
			printf "%.0f %.0f\n", a * bs, (b - a + 1) * bs
	}
	{
		if (have && $1 == e + 1) { e = $2; next }
		flush(); s = $1; e = $2; have = 1
	}
	END { flush() }'
}

# aligned_extents GRAN [BASE [OFF]]: "start length" lines on stdin (bytes
# of the filesystem, as oracle_extents prints them) as e2trim --list
# prints them: shifted by BASE (where the filesystem starts in the file
# named: a partition's start), then trimmed inward to boundaries at
# OFF + k * GRAN of that file or device; those that leave nothing dropped.
aligned_extents() {
	awk -v g="$1" -v base="${2:-0}" -v off="${3:-0}" '{
		s = $1 + base - off; e = s + $2
		a = s - s % g; if (a < s) a += g
		b = e - e % g
		if (b > a) printf "%.0f %.0f\n", a + off, b - a
	}'
}

# granularity TARGET: what e2trim trims extents inward to: the host
# filesystem's block for an image file; for a block device its queue's
# discard granularity (a partition's is its disk's), at least a sector.
granularity() {
	local q g lbs
	if [ -b "$1" ]; then
		q=/sys/class/block/$(basename "$(readlink -f "$1")")
		[ ! -e "$q/partition" ] || q=$q/..
		g=$(cat "$q/queue/discard_granularity")
		lbs=$(cat "$q/queue/logical_block_size")
		[ "$g" -ge "$lbs" ] || g=$lbs
		echo "$g"
	else
		stat -f -c %S "$1"
	fi
}

# list_oracle TARGET IMG [MINLEN [START [LEN]]]: what e2trim -n --list
# TARGET prints when TARGET (IMG itself, or a loop device over it) holds
# the filesystem of IMG: dumpe2fs's free extents, trimmed inward to
# TARGET's granularity.
list_oracle() {
	local target=$1; shift
	oracle_extents "$@" | aligned_extents "$(granularity "$target")"
}

# used_blocks_digest IMG: md5 of every block the bitmap marks in use.
used_blocks_digest() {
	local img=$1 bs count
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ {print $3}')
	count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
	free_block_ranges "$img" | python3 -c '
import sys, hashlib
img, bs, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
free = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
h = hashlib.md5(); pos = 0
with open(img, "rb") as f:
    def take(a, b):
        f.seek(a * bs); left = (b - a) * bs
        while left > 0:
            d = f.read(min(left, 1 << 20)); h.update(d); left -= len(d)
    for a, b in free:
        if a > pos: take(pos, a)
        pos = b + 1
    if pos < count: take(pos, count)
print(h.hexdigest())' "$img" "$bs" "$count"
}

# --zero-fill -v's counts: bytes zeroed, bytes read and found zero.
zeroed_of() { sed -n 's/.*(\([0-9]*\) bytes) zeroed.*/\1/p' "$OUT"; }
already_of() { sed -n 's/.*(\([0-9]*\) bytes) already zero.*/\1/p' "$OUT"; }

# zero_filled NAME IMG TARGET ZEROED ALREADY USED: e2trim -v --zero-fill
# TARGET (IMG, or a device over it) counts ZEROED and ALREADY bytes, and
# afterwards every free block of IMG reads zero, its used blocks still
# have the digest USED, and e2fsck -fn is clean.
zero_filled() {
	local name=$1 img=$2 target=$3 nz2
	run_e2trim -v --zero-fill "$target"
	assert_rc 0 "$name: --zero-fill"
	assert_eq "$(zeroed_of)" "$4" "$name: bytes zeroed"
	assert_eq "$(already_of)" "$5" "$name: bytes already zero"
	sync
	read -r nz2 _ < <(free_stats "$img")
	assert_eq "$nz2" 0 "$name: free bytes not zero after"
	assert_eq "$(used_blocks_digest "$img")" "$6" "$name: used blocks"
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "$name: e2fsck -fn after"
}

# free_stats IMG: "nonzero_bytes zero_bytes" of the free blocks, per block.
free_stats() {
	local bs
	bs=$(dumpe2fs -h "$1" 2>/dev/null | awk '/^Block size:/ {print $3}')
	free_block_ranges "$1" | python3 -c '
import sys
img, bs = sys.argv[1], int(sys.argv[2])
nz = z = 0
zero = bytes(bs)
with open(img, "rb") as f:
    for line in sys.stdin:
        a, b = map(int, line.split())
        f.seek(a * bs)
        for _ in range(a, b + 1):
            if f.read(bs) == zero: z += bs
            else: nz += bs
print(nz, z)' "$1" "$bs"
}

# extent_bytes IMG: "mapped unwritten" bytes of IMG's extents (FIEMAP),
# or "- -" where the host filesystem has no FIEMAP.
extent_bytes() {
	python3 - "$1" <<'PY'
import fcntl, os, struct, sys
FS_IOC_FIEMAP, UNWRITTEN, LAST, N = 0xC020660B, 0x800, 0x1, 512
fd = os.open(sys.argv[1], os.O_RDONLY)
start = mapped = unwritten = 0
while True:
    buf = bytearray(struct.pack("=QQIIII", start, 2**64 - 1 - start, 1, 0, N, 0) + bytes(56 * N))
    try:
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
    except OSError:
        print("- -"); sys.exit(0)
    n = struct.unpack_from("=I", buf, 20)[0]
    last = False
    for i in range(n):
        log, phys, ln, _, _, flags = struct.unpack_from("=QQQQQI", buf, 32 + 56 * i)
        mapped += ln
        if flags & UNWRITTEN: unwritten += ln
        start = log + ln
        last = last or flags & LAST
    if n == 0 or last: break
print(mapped, unwritten)
PY
}
alloc_bytes() { echo $(( $(stat -c %b "$1") * 512 )); }

# Loop devices made by a test are detached when it exits.
LOOPS=()
MOUNTS=()
# servers a test started in the background: cleanup() stops them
PIDS=()
cleanup() {
	local m l p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	# a test that failed while e2trim waited at its pause point
	[ ! -s "${PAUSE:-/nonexistent}.pid" ] || kill -9 "$(cat "$PAUSE.pid")" 2>/dev/null
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	# loop_attach runs in $(...), so LOOPS misses those: find them by file
	losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v t="$T/" \
		'index($2, t) == 1 {print $1}' | while read -r l; do
		umount "$l" 2>/dev/null
		losetup -d "$l" 2>/dev/null
	done
	[ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
loop_attach() {	# IMG [losetup options] -> prints the loop device
	local l
	l=$(losetup -f --show "${@:2}" "$1") || fail "losetup $*"
	LOOPS+=("$l")
	echo "$l"
}

# Boot-hook tests (t_hooks_*.sh).  hook_shells: put a busybox_sh command
# in $T/bin, $T/bin first in PATH, and set SHELLS to the shells a boot
# script must run under: dash, and busybox sh where busybox is installed.
hook_shells() {
	mkdir -p "$T/bin"
	printf '#!/bin/sh\nexec busybox sh "$@"\n' >"$T/bin/busybox_sh"
	chmod +x "$T/bin/busybox_sh"
	export PATH="$T/bin:$PATH"
	# shellcheck disable=SC2034  # for the caller
	if command -v busybox >/dev/null; then
		SHELLS="dash busybox_sh"
	else
		SHELLS=dash
	fi
}
# hook_untouched WHAT: the hook left $IMG as it was ($SUM) and logged
# nothing to $LOG.
hook_untouched() {
	[ "$(sha_of "$IMG")" = "$SUM" ] || fail "$1: the image changed"
	[ ! -e "$LOG" ] || { cat "$LOG"; fail "$1: wrote a log"; }
}
# hook_trimmed WHAT DEV: the hook trimmed DEV (the image $IMG behind it
# now holds less than $ALLOC bytes), logged e2trim's report and exit 0
# to $LOG, and the filesystem is still clean.
hook_trimmed() {
	[ "$(alloc_bytes "$IMG")" -lt "$ALLOC" ] || fail "$1: not trimmed"
	assert_grep "e2trim: exit 0" "$LOG" "$1: log"
	assert_grep "$2: .* trimmed" "$LOG" "$1: e2trim -v's report"
	e2fsck -fn "$2" >/dev/null 2>&1 || fail "$1: e2fsck -fn after"
}

# Pause points (src/cli/test_hooks.c).  pause_arm STAGE: make the FIFOs
# and export E2TRIM_TEST_PAUSE so that e2trim holds each target at its
# first progress report of STAGE (verifying, trimming, zero-filling) with
# bytes done.  pause_wait: until one target is held there (its line in
# $PAUSED; a five-minute guard against a hang, never a timing).
# pause_release [N]: let N held targets (1) go on.  pause_disarm: done.
pause_arm() {
	rm -f "$T/pause" "$T/pause.go"
	mkfifo "$T/pause" "$T/pause.go" || fail "mkfifo"
	exec 7<>"$T/pause" 8<>"$T/pause.go"
	export E2TRIM_TEST_PAUSE="$1:$T/pause"
}
pause_wait() {
	PAUSED=
	# shellcheck disable=SC2034  # for the caller
	read -r -t 300 -u 7 PAUSED || fail "e2trim never reached the pause point"
}
pause_release() {	# N (1)
	local i n=${1:-1}
	for ((i = 0; i < n; i++)); do printf x >&8; done
}
pause_disarm() {
	unset E2TRIM_TEST_PAUSE
	exec 7>&- 8>&-
}

# mmp_no_wait: from here on, libext2fs's MMP wait (11 s at each open of
# an MMP filesystem for writing, e2trim's and e2fsck's) is skipped, for a
# test that opens one many times and is not about another node using it
# (tests/inject/mmp_no_wait.c says what is kept).  t_gate_mmp_live never.
mmp_no_wait() {
	local so=$T/mmp_no_wait.so
	${CC:-cc} -shared -fPIC -o "$so" "$TESTS/inject/mmp_no_wait.c" ||
		fail "cannot build tests/inject/mmp_no_wait.c"
	export LD_PRELOAD=$so
	# a sanitized e2trim wants its runtime first; this shim is harmless
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
}

# signal_taken PID: until the signal just sent to PID has been handled:
# none pending for the process, and none of its threads running (the one
# that took it is back asleep).  With -j the main thread takes it while
# the workers are held: released at once, they could send every request
# before the handler has recorded the stop.  A five-minute guard.
signal_taken() {
	local i t busy
	for ((i = 0; i < 3000; i++)); do
		busy=
		grep -qE '^ShdPnd:[[:space:]]*0+$' "/proc/$1/status" 2>/dev/null || busy=1
		for t in /proc/"$1"/task/*/stat; do
			[ "$(cut -d' ' -f3 "$t" 2>/dev/null)" != R ] || busy=1
		done
		[ -n "$busy" ] || return 0
		sleep 0.1	# a poll of the event, not a wait for it
	done
	fail "a signal sent to $1 was never taken"
}

# wait_exit PID WHAT: until a process that is not the test's child (a
# server started with --fork or --daemonize) has exited, after the test
# signalled it: its /proc entry gone, or a zombie (its files, locks and
# watches are released).  The event decides, not a clock: the ten-minute
# guard only turns a server that ignores the signal into a failure that
# says so.
wait_exit() {
	local state i
	for ((i = 0; i < 12000; i++)); do
		read -r _ _ state _ 2>/dev/null <"/proc/$1/stat" || return 0
		[ "$state" != Z ] || return 0
		sleep 0.05
	done
	fail "$2 (pid $1) still runs 10 minutes after its signal (guard)"
}

# unmount_loop MNT DEV: unmount MNT, detach DEV, and wait until the
# filesystem is really shut down: the loop device goes only when the last
# reference to the filesystem does.  A copy of the mount in another mount
# namespace (unshare -m while it was mounted) keeps it alive and unwritten
# after umount; the image would be read half written.  The wait is a guard
# that only turns that into a failure with its reason.
unmount_loop() {
	local mnt=$1 dev=$2 i back sys=/sys/block/${2##*/}/loop/backing_file
	back=$(cat "$sys")
	umount "$mnt" || fail "umount $mnt"
	MOUNTS=()
	losetup -d "$dev" || fail "losetup -d $dev"
	LOOPS=()
	# gone, or already another test's (losetup -f took it again)
	for ((i = 0; i < 6000; i++)); do
		[ "$(cat "$sys" 2>/dev/null)" = "$back" ] || return 0
		sleep 0.05
	done
	fail "$dev is still attached 5 minutes after umount and losetup -d (guard): its filesystem is still mounted elsewhere, in another mount namespace"
}

# A part of a test that cannot run here (no root, a kernel without a
# feature, another e2fsprogs) is not passed over with a note: left_out
# WHAT records it, and finish ends the test with a skip (77, which CI
# counts as a failure) when anything was left out, else with a pass.
LEFT_OUT=()
left_out() { LEFT_OUT+=("$*"); note "left out: $*"; }
finish() {
	local IFS=';'
	[ ${#LEFT_OUT[@]} = 0 ] || skip "left out: ${LEFT_OUT[*]}"
	exit 0
}

# pause_e2trim ARGS...: e2trim ARGS in the background, held by the pause
# point at the trim's start (trimming@start: every gate and the
# verification have passed, no discard has gone out); returns once it is
# held there (the FIFO handshake above, no sleep).  With
# E2TRIM_TEST_PAUSE_AT=mid set, held at its first report with bytes
# trimmed instead; PAUSE_STAGE=STAGE: held at that pause point
# (src/cli/test_hooks.c).  resume_e2trim lets it go on and sets RC, OUT,
# ERR; $PAUSE.pid holds e2trim's pid meanwhile.
pause_e2trim() {
	local stage=trimming@start
	[ "${E2TRIM_TEST_PAUSE_AT:-}" != mid ] || stage=trimming
	stage=${PAUSE_STAGE:-$stage}
	pause_arm "$stage"
	PAUSE=$T/pause
	rm -f "$PAUSE.pid" "$PAUSE.rc"
	(
		RC=0
		# SIGHUP as a terminal session gives it: under nohup (make
		# check from a nohup'ed shell) it arrives ignored, bash cannot
		# trap an ignored signal back, and e2trim rightly keeps it so
		# shellcheck disable=SC2086
		env --default-signal=HUP ${E2TRIM_WRAP:-} "$E2TRIM" "$@" >"$T/out" 2>"$T/err" &
		echo "$!" >"$PAUSE.pid"
		wait "$!" || RC=$?
		echo "$RC" >"$PAUSE.rc"
		# a run that ends before its pause says so through the FIFO
		echo "exited" >&7
	) &
	PAUSE_PID=$!
	# only that run is held: what the test runs meanwhile is not
	unset E2TRIM_TEST_PAUSE
	pause_wait
	if [ "$PAUSED" = exited ]; then
		wait "$PAUSE_PID"
		pause_disarm
		rm -f "$PAUSE.pid"
		cat "$T/err" >&2
		fail "e2trim $* ended (exit $(cat "$PAUSE.rc")) before its pause"
	fi
}
resume_e2trim() {
	pause_release 1
	wait "$PAUSE_PID"
	pause_disarm
	rm -f "$PAUSE.pid"	# it has exited: the number is no longer its
	RC=$(cat "$PAUSE.rc")
	# shellcheck disable=SC2034  # for the tests that source this file
	OUT="$T/out"; ERR="$T/err"
}

# pause_mid IMG: a fresh aged 128 MiB ext4 in IMG, and e2trim -v IMG held
# between two of its discard batches (E2TRIM_TEST_PAUSE_AT=mid), after
# it discarded something already; resume_e2trim lets it go on
pause_mid() {
	local before
	mkfs "$1" 128M -t ext4
	age "$1" 5
	before=$(alloc_bytes "$1")
	export E2TRIM_TEST_PAUSE_AT=mid
	pause_e2trim -v "$1"
	unset E2TRIM_TEST_PAUSE_AT
	[ "$(alloc_bytes "$1")" -lt "$before" ] || fail "nothing discarded before the pause"
}

# whole-disk images and devices: age_part, gpt_disk, lvm_label, hold_excl
# shellcheck source-path=SCRIPTDIR source=wholedisk_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/wholedisk_lib.sh"
