#!/bin/bash
# The initramfs-tools hook and local-premount script, run as mkinitramfs
# and a boot would run them: the hook copies e2trim, e2fsck and the
# config into the image; the script, with ROOT on a loop device of an
# aged image, trims it (the backing file's allocated size drops) and logs
# to the log file when the kernel command line or the config enables it,
# and does nothing otherwise.  It exits 0 whatever happens: e2fsck
# failing, no e2trim, no root, a broken config.  The script runs under
# dash and under busybox sh, initramfs-tools' two shells.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
src=$(cd "$(dirname "$0")/../../src" && pwd)
hook=$src/initramfs-tools/hooks/e2trim
script=$src/initramfs-tools/scripts/local-premount/e2trim

# --- the hook, with hook-functions' copy_exec and copy_file stubbed
cat >"$T/hook-functions" <<'EOF'
copy_exec() { mkdir -p "$DESTDIR${2%/*}"; cp "$1" "$DESTDIR$2"; }
copy_file() { mkdir -p "$DESTDIR${3%/*}"; cp "$2" "$DESTDIR$3"; }
EOF
printf 'E2TRIM_ENABLE=yes\nE2TRIM_OPTIONS="-v -m 64K"\n' >"$T/e2trim.conf"
mkdir -p "$T/bin"
ln -s "$E2TRIM" "$T/bin/e2trim"
DESTDIR="$T/initrd" PATH="$T/bin:$PATH" E2TRIM_HOOK_FUNCTIONS="$T/hook-functions" \
	E2TRIM_CONF="$T/e2trim.conf" sh "$hook" >"$T/hook.out" 2>&1 ||
	{ cat "$T/hook.out"; fail "hook failed"; }
[ -x "$T/initrd/sbin/e2trim" ] || fail "hook: no /sbin/e2trim"
cmp -s "$T/initrd/sbin/e2trim" "$E2TRIM" || fail "hook: /sbin/e2trim is not e2trim"
[ -x "$T/initrd/sbin/e2fsck" ] || fail "hook: no /sbin/e2fsck"
cmp -s "$T/initrd/etc/e2trim.conf" "$T/e2trim.conf" || fail "hook: config not copied"
[ "$(sh "$hook" prereqs)" = "" ] || fail "hook prereqs"
note "hook: /sbin/e2trim, /sbin/e2fsck, /etc/e2trim.conf in the image"

# --- the boot script.  /scripts/functions stubbed: log_*_msg on a
# console file, get_fstype through blkid.
cat >"$T/functions" <<EOF
log_begin_msg() { echo "begin: \$*" >>"$T/console"; }
log_end_msg() { echo "end" >>"$T/console"; }
log_warning_msg() { echo "warning: \$*" >>"$T/console"; }
get_fstype() { blkid -o value -s TYPE "\$1"; }
EOF
export E2TRIM_BIN="$T/initrd/sbin/e2trim" E2TRIM_CMDLINE="$T/cmdline" \
	E2TRIM_CONF="$T/conf" E2TRIM_LOG="$T/run/initramfs/e2trim.log" \
	E2TRIM_FUNCTIONS="$T/functions" quiet=n
LOG=$E2TRIM_LOG

base="$T/base.img"
mkfs "$base" 64M -t ext4
age "$base" 7
n=0
fresh() {	# [debugfs command]: ROOT = a new loop device over a copy of base
	n=$((n + 1))
	IMG="$T/root$n.img"
	cp "$base" "$IMG"
	[ -z "${1:-}" ] || debugfs -w -f <(printf '%s\n' "$@") "$IMG" >/dev/null 2>&1 ||
		fail "debugfs $*"
	ROOT=$(loop_attach "$IMG")
	LOOPS+=("$ROOT")
	sync "$IMG"
	ALLOC=$(alloc_bytes "$IMG") SUM=$(sha_of "$IMG")
	export ROOT
	rm -rf "$T/run" "$T/console"
}
boot() {	# SHELL: run the script as init would; it must exit 0
	local rc=0
	$1 "$script" >"$T/script.out" 2>&1 || rc=$?
	[ $rc = 0 ] || { cat "$T/script.out"; fail "$1 $script: exit $rc"; }
	[ ! -s "$T/script.out" ] || { cat "$T/script.out"; fail "$1: printed to the console"; }
}
untouched() { hook_untouched "$@"; }
trimmed() { hook_trimmed "$1" "$ROOT"; }

hook_shells
for sh in $SHELLS; do
	# not enabled: nothing happens, nothing is logged
	fresh
	echo "BOOT_IMAGE=/vmlinuz root=UUID=$UUID ro quiet" >"$T/cmdline"
	rm -f "$T/conf"
	boot "$sh"
	untouched "$sh: no e2trim on the command line"

	# "e2trim" on the command line: e2fsck -p, trim, log
	fresh
	echo "root=UUID=$UUID ro e2trim quiet" >"$T/cmdline"
	boot "$sh"
	trimmed "$sh: e2trim"
	assert_grep "e2trim: .*$E2TRIM_BIN --quiet-unsupported --fsck -v $ROOT" "$LOG" "$sh: command in the log"
	assert_grep "$ROOT: clean" "$LOG" "$sh: e2fsck's output in the log"
	assert_grep "begin: Trimming the free space of $ROOT" "$T/console" "$sh: console"

	# the config file alone; its options are used
	fresh
	echo "root=/dev/sda1 ro" >"$T/cmdline"
	cp "$T/initrd/etc/e2trim.conf" "$T/conf"
	boot "$sh"
	trimmed "$sh: E2TRIM_ENABLE=yes"
	assert_grep " --fsck -v -m 64K $ROOT" "$LOG" "$sh: E2TRIM_OPTIONS used"
	assert_grep "$ROOT: .* trimmed" "$LOG" "$sh: e2trim -v's report"

	# e2trim=off wins over the file
	fresh
	echo "ro e2trim=off" >"$T/cmdline"
	boot "$sh"
	untouched "$sh: e2trim=off"

	# e2trim=force: e2fsck -f -p (a full check reports its passes' totals)
	fresh
	echo "ro e2trim=force" >"$T/cmdline"
	boot "$sh"
	trimmed "$sh: e2trim=force"
	assert_grep " --fsck=force -v -m 64K $ROOT" "$LOG" "$sh: --fsck=force"
	assert_grep "non-contiguous" "$LOG" "$sh: e2fsck -f output"

	# fsck.mode=skip (fastboot): no e2fsck, e2trim alone
	fresh
	fastboot=y boot "$sh"
	trimmed "$sh: fastboot"
	grep -q -- "--fsck" "$LOG" && fail "$sh: fastboot still ran e2fsck"

	# e2fsck -p cannot repair it: e2trim exits 21, the boot goes on
	fresh "clri <2>" "ssv state 3"
	boot "$sh"
	[ "$(alloc_bytes "$IMG")" -ge "$ALLOC" ] || fail "$sh: trimmed after e2fsck exit 4"
	assert_grep "UNEXPECTED INCONSISTENCY" "$LOG" "$sh: e2fsck's output"
	assert_grep "e2trim: exit 21" "$LOG" "$sh: exit 21 logged"
	assert_grep "warning: e2trim $ROOT: exit 21" "$T/console" "$sh: console warning"

	# no e2trim, no root device, a broken config, prereqs: still exit 0
	rm -rf "$T/run"
	E2TRIM_BIN="$T/nowhere/e2trim" boot "$sh"
	assert_grep "is missing" "$LOG" "$sh: missing e2trim logged"
	ROOT='' boot "$sh"
	ROOT="$T/no-such-device" boot "$sh"
	printf 'E2TRIM_ENABLE=yes\nif then fi\n' >"$T/conf"
	fresh
	echo "ro" >"$T/cmdline"
	boot "$sh"
	untouched "$sh: broken config"
	[ "$("$sh" "$script" prereqs)" = "" ] || fail "$sh: prereqs"
	rm -f "$T/conf"
	note "$sh: off by default; e2trim, E2TRIM_ENABLE, =off, =force, fastboot; exit 0 on failures"
done

# not ext: get_fstype says so and nothing runs
fresh
mkswap "$ROOT" >/dev/null 2>&1 || fail "mkswap"
echo "e2trim" >"$T/cmdline"
boot dash
assert_grep "holds swap, not ext2/ext3/ext4" "$LOG" "swap root"
note "a root that is not ext: skipped, logged"
exit 0
