#!/bin/bash
# The systemd unit, for real: a small Debian root (mmdebstrap from the
# machine's configured Debian mirror, cached in $E2TRIM_BOOT_CACHE keyed
# by suite, mirror and package list) with the package installed by dpkg
# -i inside it, a second virtio disk /dev/vdb mounted on /mnt/data by
# fstab, and the drop-in e2trim(8) documents for its mount unit.  After
# poweroff, from the host: the unit's journal has e2trim's report line
# for /dev/vdb, the disk's raw file shrank by what it reported, a file
# written before is intact and e2fsck -fn is clean.  With a journal to
# recover and no fsck (fstab pass 0) the unit refuses (exit 14, logged),
# and the mount goes on.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"
need_boot
command -v mmdebstrap >/dev/null || skip "mmdebstrap not installed"
command -v mkinitramfs >/dev/null || skip "initramfs-tools not installed"
CACHE=${E2TRIM_BOOT_CACHE:-/var/cache/e2trim-boot}

# The Debian mirror and suite this machine's apt uses.
suite=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -E '^[[:space:]]*(deb|URIs:)[[:space:]]' | grep -oE 'https?://[^ ]*/debian/?( |$)' |
	head -1 | tr -d ' ')
[ -n "$suite" ] || skip "no VERSION_CODENAME in /etc/os-release"
[ -n "$mirror" ] || skip "no Debian mirror in /etc/apt/sources.list*"

# The root: systemd, udev (device units), e2fsprogs (systemd-fsck) and
# what the packages depend on, but libe2trim1: dpkg -i brings that.
deps=$(dpkg-deb -f "$DEB" Depends; dpkg-deb -f "$LIBDEB" Depends)
deps=$(echo "$deps" | sed 's/([^)]*)//g; s/[ ,|]\+/\n/g' | sed '/^$/d' |
	grep -vx libe2trim1 | sort -u)
# shellcheck disable=SC2086 # one name a word
pkgs=$(printf '%s\n' systemd-sysv udev e2fsprogs $deps | sort -u | paste -sd, -)
key=$(printf '%s %s %s minbase\n' "$suite" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
tarball=$CACHE/root-$key.tar
if [ ! -f "$tarball" ]; then
	mkdir -p "$CACHE"
	start=$(date +%s)
	# the name ends in .tar: mmdebstrap picks its output format by it
	partial=$CACHE/partial-$key.tar
	mmdebstrap --variant=minbase --include="$pkgs" "$suite" "$partial" \
		"$mirror" >"$T/mmdebstrap.out" 2>&1 ||
		{ tail -30 "$T/mmdebstrap.out"; rm -f "$partial"; fail "mmdebstrap"; }
	mv "$partial" "$tarball"
	note "mmdebstrap $suite from $mirror: $(($(date +%s) - start)) s (cached as $tarball)"
else
	note "Debian root from the cache: $tarball"
fi

# sysroot PASSNO: the root, the package installed with dpkg -i, vdb in
# fstab with that fsck pass, the drop-in, and a unit that reports on the
# console and powers off once the mount is done.
sysroot() {
	local r=$T/sysroot
	rm -rf "$r"
	mkdir -p "$r"
	tar -C "$r" -xf "$tarball" || fail "untar the root"
	cp "$DEB" "$r/tmp/e2trim.deb"
	cp "$LIBDEB" "$r/tmp/libe2trim1.deb"
	chroot "$r" dpkg -i /tmp/libe2trim1.deb /tmp/e2trim.deb >"$T/dpkg.out" 2>&1 ||
		{ cat "$T/dpkg.out"; fail "dpkg -i in the guest root"; }
	rm "$r/tmp/e2trim.deb" "$r/tmp/libe2trim1.deb"
	[ -f "$r/lib/systemd/system/e2trim@.service" ] || fail "the package has no unit"
	printf '/dev/vda / ext4 rw 0 0\n/dev/vdb /mnt/data ext4 defaults 0 %s\n' "$1" \
		>"$r/etc/fstab"
	mkdir -p "$r/mnt/data" "$r/etc/systemd/system/mnt-data.mount.d"
	# the drop-in of e2trim(8), BOOT, for /dev/vdb
	printf '[Unit]\nWants=e2trim@dev-vdb.service\nAfter=e2trim@dev-vdb.service\n' \
		>"$r/etc/systemd/system/mnt-data.mount.d/e2trim.conf"
	cat >"$r/usr/local/sbin/boot-report" <<'SH'
#!/bin/sh
u=e2trim@dev-vdb.service
{
	echo BOOT-ROOT-INIT
	echo E2TRIM-LOG-BEGIN
	journalctl -b -u "$u" -o cat --no-pager
	echo "unit: $(systemctl show -P Result "$u") status $(systemctl show -P ExecMainStatus "$u")"
	echo "mount: $(systemctl is-active mnt-data.mount)"
	echo E2TRIM-LOG-END
	# systemd-analyze says nothing until the boot has finished: the
	# manager's own timestamps instead
	us=$(systemctl show -P UserspaceTimestampMonotonic)
	echo "TIMES: systemd started ${us%??????}.$(echo "$us" | cut -c$((${#us} - 5))) s," \
		"this report at $(cut -d' ' -f1 /proc/uptime) s after the kernel"
	echo BOOT-DONE
} >/dev/ttyS0 2>&1
systemctl --no-block poweroff
SH
	chmod 755 "$r/usr/local/sbin/boot-report"
	cat >"$r/etc/systemd/system/boot-report.service" <<'UNIT'
[Unit]
After=mnt-data.mount e2trim@dev-vdb.service multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/boot-report
[Install]
WantedBy=multi-user.target
UNIT
	ln -s /etc/systemd/system/boot-report.service \
		"$r/etc/systemd/system/multi-user.target.wants/boot-report.service"
	truncate -s 1G "$T/root.img"
	mke2fs -q -F -t ext4 -d "$r" "$T/root.img" || fail "mke2fs -d the root"
	rm -rf "$r"
}

# an initramfs that only mounts the root (no e2trim in it)
c=$T/conf
mkdir -p "$c/conf.d" "$c/hooks" "$c/scripts"
printf 'MODULES=list\nBUSYBOX=auto\nCOMPRESS=gzip\nRUNSIZE=10%%\nFSTYPE=auto\n' >"$c/initramfs.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >"$c/modules"
with_package mkinitramfs -d "$c" -o "$T/initrd" "$KVER" >"$T/mkinitramfs.out" 2>&1 ||
	{ cat "$T/mkinitramfs.out"; fail "mkinitramfs"; }

mkdir -p "$T/datadir"
make_disk "$T/base.img" 160M "$T/datadir"
cmdline="root=/dev/vda rw systemd.mask=serial-getty@ttyS0.service"

sysroot 2
IMG=$T/data.img
cp --sparse=never "$T/base.img" "$IMG"
ALLOC=$(data_bytes "$IMG")
boot unit "$T/initrd" "$cmdline" "$T/root.img" "$IMG"
assert_grep "^unit: success status 0" "$T/unit.log" "unit: the unit's result"
assert_grep "^mount: active" "$T/unit.log" "unit: the mount"
trimmed unit "$IMG" /dev/vdb "$ALLOC"
# where a systemd boot spends its time, for the budget
note "unit: $(sed -n 's/^TIMES: //p' "$CONSOLE" | tr -d '\r')"

# a crash left a transaction in vdb's journal, and fstab says no fsck:
# e2trim refuses, the mount goes on (the kernel replays the journal)
sysroot 0
cp --sparse=never "$T/base.img" "$IMG"
journal_pending "$IMG"
ALLOC=$(data_bytes "$IMG")
boot recover "$T/initrd" "$cmdline" "$T/root.img" "$IMG"
assert_grep "journal that needs recovery" "$T/recover.log" "recover: the reason"
assert_grep "^unit: exit-code status 14" "$T/recover.log" "recover: the unit's result"
assert_grep "^mount: active" "$T/recover.log" "recover: the mount"
untouched recover "$IMG" "$ALLOC"
[ "$(debugfs -R "cat /data/j.txt" "$IMG" 2>/dev/null)" = "new-" ] ||
	fail "recover: the kernel did not replay the journal"
note "recover: the unit refused with exit 14 and the mount went on"
exit 0
