#!/bin/bash
# The dracut module 90e2trim, run as dracut would run it: module-setup.sh
# installs e2trim, e2fsck, the config and the pre-mount hook (and, in a
# host-only image, only when a filesystem is ext); the hook, sourced with
# $root on a loop device of an aged image, trims it and logs when the
# kernel command line or the config enables it.  Being sourced, it must
# never exit the shell that sources it nor leave variables behind, and
# it returns normally whatever e2trim does.  dracut's getarg & co are
# stubbed; the hook runs under dash and busybox sh.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
moddir=$(cd "$(dirname "$0")/../../src/dracut/90e2trim" && pwd)
hook=$moddir/e2trim-pre-mount.sh

# --- module-setup.sh, with dracut's inst_* functions recording calls
mkdir -p "$T/bin"
ln -s "$E2TRIM" "$T/bin/e2trim"
PATH="$T/bin:$PATH" moddir="$moddir" bash -c '
	inst_binary() { echo "inst_binary $*"; }
	inst_simple() { echo "inst_simple $*"; }
	inst_hook() { echo "inst_hook $*"; }
	. "$moddir/module-setup.sh"
	check; echo "check $?"
	hostonly=1
	declare -A host_fs_types=([/dev/sda1]=ext4 [/dev/sda2]=vfat)
	check; echo "check hostonly ext4 $?"
	host_fs_types=([/dev/sda1]=xfs)
	check; echo "check hostonly xfs $?"
	depends; echo "depends $?"
	install
' >"$T/setup.out" 2>&1 || { cat "$T/setup.out"; fail "module-setup.sh"; }
for want in "check 0" "check hostonly ext4 0" "check hostonly xfs 255" \
	"depends 0" "inst_binary $T/bin/e2trim /usr/sbin/e2trim" \
	"inst_binary $(command -v e2fsck) /usr/sbin/e2fsck" \
	"inst_hook pre-mount 50 $hook"; do
	grep -qxF "$want" "$T/setup.out" || { cat "$T/setup.out"; fail "module-setup.sh: no '$want'"; }
done
note "module-setup.sh: check, install e2trim, e2fsck, the pre-mount hook"

# --- the pre-mount hook.  dracut-lib stubbed: getarg as dracut's
# (a bare key prints nothing and succeeds), info/warn on a console file.
cat >"$T/dracut-lib.sh" <<'EOF'
getarg() {
	_found=1 _val=
	for _o in $CMDLINE; do
		case "$1" in
		*=*) [ "$_o" = "$1" ] && _found=0 ;;
		*)
			case "$_o" in
			"$1") _found=0 _val= ;;
			"$1"=*) _found=0 _val=${_o#*=} ;;
			esac
			;;
		esac
	done
	[ -z "$_val" ] || echo "$_val"
	return $_found
}
getargbool() {
	_b=$(getarg "$2") || _b=$1
	case "$_b" in 0 | no | off) return 1 ;; esac
	return 0
}
info() { echo "info: $*" >>"$CONSOLE"; }
warn() { echo "warn: $*" >>"$CONSOLE"; }
EOF
export E2TRIM_BIN="$E2TRIM" E2TRIM_CONF="$T/conf" \
	E2TRIM_LOG="$T/run/initramfs/e2trim.log" CONSOLE="$T/console"
LOG=$E2TRIM_LOG

base="$T/base.img"
mkfs "$base" 64M -t ext4
age "$base" 9
n=0
fresh() {	# [debugfs commands...]: DEV = a new loop device over a copy
	n=$((n + 1))
	IMG="$T/root$n.img"
	cp "$base" "$IMG"
	[ -z "${1:-}" ] || debugfs -w -f <(printf '%s\n' "$@") "$IMG" >/dev/null 2>&1 ||
		fail "debugfs $*"
	DEV=$(loop_attach "$IMG")
	LOOPS+=("$DEV")
	sync "$IMG"
	ALLOC=$(alloc_bytes "$IMG") SUM=$(sha_of "$IMG")
	rm -rf "$T/run" "$CONSOLE"
}
# premount SHELL CMDLINE [root]: source the hook as dracut does; the
# sourcing shell must go on after it, with no new variables
premount() {
	local out
	# shellcheck disable=SC2016 # expanded by the shell the hook runs in
	out=$(CMDLINE=$2 root=${3-block:$DEV} $1 -c '
		. "$0"
		. "$1"
		echo "returned"
		for v in mode dev bin conf logf fsck rc val; do
			eval "[ -z \"\${$v+x}\" ]" || echo "leaked $v"
		done' "$T/dracut-lib.sh" "$hook" 2>&1)
	[ "$out" = returned ] || fail "$1, $2: the hook said: $out"
}
untouched() { hook_untouched "$@"; }
trimmed() { hook_trimmed "$1" "$DEV"; }

hook_shells
for sh in $SHELLS; do
	rm -f "$T/conf"
	fresh
	premount "$sh" "root=UUID=$UUID ro quiet"
	untouched "$sh: not enabled"

	fresh
	premount "$sh" "root=UUID=$UUID ro e2trim quiet"
	trimmed "$sh: e2trim"
	assert_grep " --fsck -v $DEV" "$LOG" "$sh: command in the log"
	assert_grep "$DEV: clean" "$LOG" "$sh: e2fsck's output"
	assert_grep "info: e2trim: trimming the free space of $DEV" "$CONSOLE" "$sh: console"

	printf 'E2TRIM_ENABLE=force\nE2TRIM_OPTIONS="-v -m 64K"\n' >"$T/conf"
	fresh
	premount "$sh" "ro"
	trimmed "$sh: E2TRIM_ENABLE=force"
	assert_grep " --fsck=force -v -m 64K $DEV" "$LOG" "$sh: config's options"

	fresh
	premount "$sh" "ro e2trim=off"
	untouched "$sh: e2trim=off"

	fresh
	premount "$sh" "ro e2trim=yes rd.skipfsck"
	trimmed "$sh: rd.skipfsck"
	grep -q -- "--fsck" "$LOG" && fail "$sh: rd.skipfsck still ran e2fsck"
	rm -f "$T/conf"

	# e2fsck -p cannot repair it: 21 logged, a warning, the boot goes on
	fresh "clri <2>" "ssv state 3"
	premount "$sh" "e2trim"
	[ "$(alloc_bytes "$IMG")" -ge "$ALLOC" ] || fail "$sh: trimmed after e2fsck exit 4"
	assert_grep "e2trim: exit 21" "$LOG" "$sh: exit 21 logged"
	assert_grep "warn: e2trim $DEV: exit 21" "$CONSOLE" "$sh: warning"

	# no e2trim, a root that is no block device, a broken config
	rm -rf "$T/run"
	E2TRIM_BIN="$T/nowhere/e2trim" premount "$sh" "e2trim"
	assert_grep "is missing" "$LOG" "$sh: missing e2trim logged"
	premount "$sh" "e2trim" "nfs:10.0.0.1:/srv/root"
	assert_grep "is not a block device" "$LOG" "$sh: nfs root"
	premount "$sh" "e2trim" "block:$T/no-such-device"
	printf 'E2TRIM_ENABLE=yes\nif then fi\n' >"$T/conf"
	fresh
	premount "$sh" "ro"
	untouched "$sh: broken config"
	note "$sh: off by default; e2trim, config, =off, rd.skipfsck; returns on failures"
done
exit 0
