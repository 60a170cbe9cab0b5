#!/bin/bash
# dracut, for real: dracut builds an initramfs from a copy of its base
# directory holding the package's module 90e2trim (never the machine's
# /usr/lib/dracut), Debian's kernel boots it under QEMU with the root
# filesystem on a virtio disk whose raw file passes discards through.
# From the host, after poweroff: the guest's log has e2trim's report
# line, the raw file shrank by what it reported, a file written before
# is intact and e2fsck -fn is clean.  "e2trim" on the command line and
# E2TRIM_ENABLE=yes in /etc/e2trim.conf turn it on, e2trim=off wins over
# the file; with rd.skipfsck a root whose journal needs recovery is
# refused, the reason logged, and the boot goes on.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"
need_boot
command -v dracut >/dev/null || skip "dracut-core not installed"
[ ! -e /etc/e2trim.conf ] || skip "/etc/e2trim.conf exists: the module would take it"

base=$T/dracut
cp -a /usr/lib/dracut "$base"
cp -a "$STAGE/usr/lib/dracut/modules.d/90e2trim" "$base/modules.d/"
mkdir -p "$T/confdir"

# mkinitrd NAME [dracut options]: an initramfs with the package's module;
# of fs-lib's fsck tools only e2fsck (the others, xfs_repair, btrfs, ...,
# are 1.8 MB of 12.5 the test disk never needs)
mkinitrd() {
	local name=$1
	shift
	# dracut's PATH is DRACUT_PATH: the package's e2trim first;
	# inst_binary brings libe2trim.so.1 (with_package)
	DRACUT_PATH="$STAGE/usr/sbin /sbin /bin /usr/sbin /usr/bin" dracutbasedir=$base \
		with_package dracut --conf /dev/null --confdir "$T/confdir" --no-hostonly --nostrip --force \
		-m "base rootfs-block e2trim" --fscks e2fsck --drivers "virtio_pci virtio_blk ext4" \
		"$@" --kver "$KVER" "$T/initrd-$name" >"$T/dracut.out" 2>&1 ||
		{ cat "$T/dracut.out"; fail "dracut"; }
	lsinitrd "$T/initrd-$name" >"$T/initrd-$name.list" 2>/dev/null
	grep -q 'usr/lib/dracut/hooks/pre-mount/50-e2trim-pre-mount.sh$' "$T/initrd-$name.list" ||
		fail "initrd-$name lacks the pre-mount hook"
	grep -q 'usr/sbin/e2trim$' "$T/initrd-$name.list" || fail "initrd-$name lacks e2trim"
	lsinitrd -f usr/sbin/e2trim "$T/initrd-$name" | cmp -s - "$STAGE/usr/sbin/e2trim" ||
		fail "initrd-$name: usr/sbin/e2trim is not the package's"
	has_lib "initrd-$name" "$T/initrd-$name.list"
}

busybox_root "$T/rootdir"
make_disk "$T/base.img" 160M "$T/rootdir"
fresh() {
	IMG=$T/$1.img
	cp --sparse=never "$T/base.img" "$IMG"
	ALLOC=$(data_bytes "$IMG")
}
logged() { assert_grep "$2" "$T/$1.log" "$1: the guest's log"; }
nolog() { [ ! -s "$T/$1.log" ] || { cat "$T/$1.log"; fail "$1: logged something"; }; }
root="root=/dev/vda rw"

mkinitrd plain

fresh cmdline
boot cmdline "$T/initrd-plain" "$root e2trim" "$IMG"
logged cmdline "--fsck -v /dev/vda$"
logged cmdline "^e2trim: exit 0$"
trimmed cmdline "$IMG" /dev/vda "$ALLOC"

fresh recover
journal_pending "$IMG"
boot recover "$T/initrd-plain" "$root e2trim rd.skipfsck" "$IMG"
logged recover "journal that needs recovery"
logged recover "^e2trim: exit 14$"
untouched recover "$IMG" "$ALLOC"
[ "$(debugfs -R "cat /data/j.txt" "$IMG" 2>/dev/null)" = "new-" ] ||
	fail "recover: the kernel did not replay the journal"
note "recover: refused with exit 14, the boot went on"

printf 'E2TRIM_ENABLE=force\nE2TRIM_OPTIONS="-v -m 64K"\n' >"$T/e2trim.conf"
mkinitrd conf --include "$T/e2trim.conf" /etc/e2trim.conf

fresh conf
boot conf "$T/initrd-conf" "$root" "$IMG"
logged conf "--fsck=force -v -m 64K /dev/vda$"
logged conf "^/dev/vda: [0-9]*/[0-9]* files"
trimmed conf "$IMG" /dev/vda "$ALLOC"

fresh conf-off
boot conf-off "$T/initrd-conf" "$root e2trim=off" "$IMG"
nolog conf-off
untouched conf-off "$IMG" "$ALLOC"
note "conf-off: E2TRIM_ENABLE=force, e2trim=off on the command line: nothing done"
exit 0
