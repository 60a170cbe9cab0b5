#!/bin/bash
# initramfs-tools, for real: mkinitramfs builds an initramfs from a
# configuration directory holding the package's hook and local-premount
# script (never /etc/initramfs-tools), Debian's kernel boots it under
# QEMU with the root filesystem on a virtio disk whose raw file passes
# discards through.  From the host, after poweroff: the guest's log has
# e2trim's report line, the raw file shrank by what it reported, a file
# written before is intact and e2fsck -fn is clean.  The kernel command
# line (e2trim, e2trim=force, e2trim=off, nothing) and /etc/e2trim.conf
# do what e2trim(8) says; a root whose journal needs recovery, with
# fsck.mode=skip, is refused with the reason logged, and the boot goes on.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"
need_boot
command -v mkinitramfs >/dev/null || skip "initramfs-tools not installed"

# mkinitrd NAME CONF: an initramfs with the package's hook and script,
# CONF as /etc/e2trim.conf (none if CONF does not exist), and only the
# modules a virtio disk needs.
mkinitrd() {
	local c=$T/conf-$1
	mkdir -p "$c/hooks" "$c/scripts/local-premount" "$c/conf.d"
	printf 'MODULES=list\nBUSYBOX=auto\nCOMPRESS=gzip\nRUNSIZE=10%%\nFSTYPE=auto\n' \
		>"$c/initramfs.conf"
	printf 'virtio_pci\nvirtio_blk\next4\n' >"$c/modules"
	cp "$STAGE/usr/share/initramfs-tools/hooks/e2trim" "$c/hooks/"
	cp "$STAGE/usr/share/initramfs-tools/scripts/local-premount/e2trim" \
		"$c/scripts/local-premount/"
	# mkinitramfs sets its own PATH: E2TRIM_BIN points the hook at the
	# package's e2trim; copy_exec brings libe2trim.so.1 (with_package)
	E2TRIM_BIN=$STAGE/usr/sbin/e2trim E2TRIM_CONF=$2 \
		with_package mkinitramfs -d "$c" -o "$T/initrd-$1" "$KVER" \
		>"$T/mkinitramfs.out" 2>&1 || { cat "$T/mkinitramfs.out"; fail "mkinitramfs"; }
	lsinitramfs "$T/initrd-$1" >"$T/initrd-$1.list"
	for f in usr/sbin/e2trim scripts/local-premount/e2trim; do
		grep -qx "$f" "$T/initrd-$1.list" || fail "initrd-$1 lacks $f"
	done
	has_lib "initrd-$1" "$T/initrd-$1.list"
}

busybox_root "$T/rootdir"
make_disk "$T/base.img" 160M "$T/rootdir"

# fresh NAME: the disk for one boot, as it was made; ALLOC its size
fresh() {
	IMG=$T/$1.img
	cp --sparse=never "$T/base.img" "$IMG"
	ALLOC=$(data_bytes "$IMG")
}
# logged NAME PATTERN: the guest's e2trim log has PATTERN
logged() { assert_grep "$2" "$T/$1.log" "$1: the guest's log"; }
# nolog NAME: the guest's e2trim log is empty: the script did nothing
nolog() { [ ! -s "$T/$1.log" ] || { cat "$T/$1.log"; fail "$1: logged something"; }; }

mkinitrd plain /nonexistent
grep -qx etc/e2trim.conf "$T/initrd-plain.list" && fail "initrd-plain has a config"
root="root=/dev/vda rw"

fresh cmdline
boot cmdline "$T/initrd-plain" "$root e2trim" "$IMG"
logged cmdline "--fsck -v /dev/vda$"
logged cmdline "^e2trim: exit 0$"
trimmed cmdline "$IMG" /dev/vda "$ALLOC"

fresh force
boot force "$T/initrd-plain" "$root e2trim=force" "$IMG"
logged force "--fsck=force -v /dev/vda$"
# e2fsck -f -p prints its summary without "clean"
logged force "^/dev/vda: [0-9]*/[0-9]* files"
trimmed force "$IMG" /dev/vda "$ALLOC"

fresh off
boot off "$T/initrd-plain" "$root" "$IMG"
nolog off
untouched off "$IMG" "$ALLOC"
note "off: no e2trim on the command line, no config: nothing done"

# a crash left a transaction in the journal; with fsck.mode=skip nobody
# replays it before e2trim, which must refuse (14); the kernel then
# replays it when it mounts the root
fresh recover
journal_pending "$IMG"
boot recover "$T/initrd-plain" "$root e2trim fsck.mode=skip" "$IMG"
logged recover " -v /dev/vda$"
logged recover "journal that needs recovery"
logged recover "^e2trim: exit 14$"
untouched recover "$IMG" "$ALLOC"
[ "$(debugfs -R "cat /data/j.txt" "$IMG" 2>/dev/null)" = "new-" ] ||
	fail "recover: the kernel did not replay the journal"
note "recover: refused with exit 14 ($(grep -m1 "journal that" "$T/recover.log")), the boot went on"

# the same root with e2fsck -p in front: it replays the journal, then
# e2trim trims, and the replayed block is kept
fresh replay
journal_pending "$IMG"
boot replay "$T/initrd-plain" "$root e2trim" "$IMG"
trimmed replay "$IMG" /dev/vda "$ALLOC"
[ "$(debugfs -R "cat /data/j.txt" "$IMG" 2>/dev/null)" = "new-" ] ||
	fail "replay: the journal's block was lost"

# /etc/e2trim.conf in the initramfs: on at every boot, with its options;
# e2trim=off wins over it
printf 'E2TRIM_ENABLE=yes\nE2TRIM_OPTIONS="-v -m 64K"\n' >"$T/e2trim.conf"
mkinitrd conf "$T/e2trim.conf"
grep -qx etc/e2trim.conf "$T/initrd-conf.list" || fail "initrd-conf has no config"

fresh conf
boot conf "$T/initrd-conf" "$root" "$IMG"
logged conf "--fsck -v -m 64K /dev/vda$"
trimmed conf "$IMG" /dev/vda "$ALLOC"

fresh conf-off
boot conf-off "$T/initrd-conf" "$root e2trim=off" "$IMG"
nolog conf-off
untouched conf-off "$IMG" "$ALLOC"
note "conf-off: E2TRIM_ENABLE=yes, e2trim=off on the command line: nothing done"
exit 0
