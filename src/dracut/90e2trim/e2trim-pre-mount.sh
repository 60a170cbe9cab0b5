#!/bin/sh
# e2trim-pre-mount.sh - dracut pre-mount hook: e2fsck -p, then discard
# the free space of the root filesystem, before it is mounted.
#
# On when the kernel command line has "e2trim" (or e2trim=yes), or
# /etc/e2trim.conf says E2TRIM_ENABLE=yes; "e2trim=force" or
# E2TRIM_ENABLE=force runs e2fsck -f -p first; "e2trim=off" wins over
# the file.  Everything e2trim and e2fsck print goes to
# /run/initramfs/e2trim.log.  A failed check or trim never stops the
# boot: dracut's own fsck runs next and decides as it always does.
#
# dracut sources this file: it must not exit, so the work is done in a
# subshell.  dracut provides getarg and $root ("block:/dev/...").  Only
# for tests, the environment may move E2TRIM_BIN (e2trim on PATH),
# E2TRIM_CONF (/etc/e2trim.conf) and E2TRIM_LOG
# (/run/initramfs/e2trim.log).

# shellcheck source=/dev/null
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

e2trim_pre_mount() (
	bin=${E2TRIM_BIN:-$(command -v e2trim)}
	bin=${bin:-/usr/sbin/e2trim}
	conf=${E2TRIM_CONF:-/etc/e2trim.conf}
	logf=${E2TRIM_LOG:-/run/initramfs/e2trim.log}

	E2TRIM_ENABLE=no
	E2TRIM_OPTIONS=-v
	# a broken file must not stop the boot: try it in a subshell first
	# shellcheck source=/dev/null
	if [ -r "$conf" ] && (. "$conf") >/dev/null 2>&1; then
		. "$conf"
	fi
	mode=$E2TRIM_ENABLE
	if val=$(getarg e2trim); then
		case "$val" in
		"" | 1 | yes | on) mode=yes ;;
		force) mode=force ;;
		0 | no | off) mode=no ;;
		esac
	fi
	case "$mode" in
	yes | force) ;;
	*) exit 0 ;;
	esac

	mkdir -p "${logf%/*}" 2>/dev/null
	# shellcheck disable=SC2154 # root is dracut's
	dev=${root#block:}
	case "$dev" in
	/*) ;;
	*)
		echo "e2trim: root=$root is not a block device; nothing to trim" >>"$logf"
		exit 0
		;;
	esac
	if [ ! -e "$dev" ]; then
		echo "e2trim: $dev does not exist; nothing to trim" >>"$logf"
		exit 0
	fi
	if [ ! -x "$bin" ]; then
		echo "e2trim: $bin is missing; rebuild the initramfs" >>"$logf"
		warn "e2trim: $bin is missing from the initramfs"
		exit 0
	fi

	# rd.skipfsck, fsck.mode=skip: no e2fsck; e2trim still refuses
	# anything that is not clean
	fsck=--fsck
	[ "$mode" = force ] && fsck=--fsck=force
	if getargbool 0 rd.skipfsck || getarg fsck.mode=skip >/dev/null; then
		fsck=
	fi

	info "e2trim: trimming the free space of $dev"
	# a dracut initramfs may have no date(1)
	now=$(date 2>/dev/null)
	echo "e2trim: ${now:+$now: }$bin --quiet-unsupported $fsck $E2TRIM_OPTIONS $dev" >>"$logf"
	# --quiet-unsupported: a disk that cannot discard is no warning at boot
	# shellcheck disable=SC2086 # fsck and E2TRIM_OPTIONS are option lists
	"$bin" --quiet-unsupported $fsck $E2TRIM_OPTIONS "$dev" >>"$logf" 2>&1
	rc=$?
	echo "e2trim: exit $rc" >>"$logf"
	if [ "$rc" != 0 ]; then
		warn "e2trim $dev: exit $rc, see e2trim(8) and $logf"
	fi
	exit 0
)

e2trim_pre_mount || :
