# shellcheck shell=bash
# tests/boot/bootlib.sh - helpers for the boot tests (t_*.sh here): Debian's
# kernel, a test disk, one boot under QEMU, and what the host checks after
# the guest has powered off.  run.sh gives a test DEB (the package), STAGE
# (the packages e2trim and libe2trim1 extracted: what they install,
# nowhere else), LIBDEB and DEVDEB (libe2trim1, libe2trim-dev), DEBDIR
# (where make deb left them, its build log too), E2TRIM (the packaged
# binary) and T (a scratch directory).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${STAGE:?STAGE must name the extracted package}"
: "${DEB:?DEB must name the package}"
: "${LIBDEB:?LIBDEB must name the libe2trim1 package}"

# The packaged e2trim links libe2trim.so.1, which lies in the staging root.
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
STAGE_LIB=$STAGE/usr/lib/$MULTIARCH

# lean_itools: $T/itools/usr/share/initramfs-tools, a copy of what
# initramfs-tools itself, udev, kmod, klibc-utils and busybox put there,
# without the hooks and boot scripts of the machine's other packages
# (lvm2, mdadm, btrfs-progs, ...): they make the initramfs twice the size
# and cost a boot 2-3 s (btrfs' raid6 benchmark, lvm and md scans) while
# the test disk needs none of them.
lean_itools() {
	local p f
	[ -d "$T/itools" ] && return 0
	mkdir -p "$T/itools"
	for p in initramfs-tools-core initramfs-tools udev kmod klibc-utils \
		busybox busybox-static; do
		dpkg-query -L "$p" 2>/dev/null
	done | grep '^/usr/share/initramfs-tools/' | sort -u | while read -r f; do
		[ -d "$f" ] || { mkdir -p "$T/itools${f%/*}" && cp -a "$f" "$T/itools$f"; } || exit 1
	done || fail "copy initramfs-tools' own files"
	[ -f "$T/itools/usr/share/initramfs-tools/init" ] || fail "no initramfs-tools in $T/itools"
}

# with_package CMD...: CMD in a mount namespace of its own where the
# library directory is an overlay of the package's over the machine's, so
# that libe2trim.so.1 lies where libe2trim1 installs it, for the
# generators' ldd (copy_exec, inst_binary) to find and copy: the
# package as dpkg -i would put it, and nothing of the machine changed.
# /usr/share/initramfs-tools is lean_itools' there.
# unshare -m copies every mount of the machine, the loop mounts other
# tests hold under /tmp and /dev/shm too, and a copy keeps such a
# filesystem alive after its test unmounts it: never shut down, its
# superblock and bitmaps not written back, the image that test checks is
# half a filesystem (e2fsck -fn: "Free blocks count wrong", a fresh
# superblock's file count).  The namespace drops those copies first.
with_package() {
	lean_itools
	# shellcheck disable=SC2016 # the inner bash expands them
	unshare -m -- bash -c 'findmnt -rn -o TARGET | grep -E "^(/tmp|/dev/shm|/var/tmp)/" |
		sort -r | while read -r m; do umount -l "$m"; done
		mount -t overlay overlay -o "lowerdir=$1:$2" "$2" &&
		mount --bind "$3/usr/share/initramfs-tools" /usr/share/initramfs-tools &&
		shift 3 && exec "$@"' with_package "$STAGE_LIB" "/usr/lib/$MULTIARCH" \
		"$T/itools" "$@"
}

# has_lib NAME LIST: the initramfs (its listing LIST) holds libe2trim.so.1
has_lib() {
	grep -q "lib/$MULTIARCH/libe2trim\.so\.1\$" "$2" ||
		fail "$1 lacks libe2trim.so.1, which its e2trim links"
}

# Each boot's time is printed (and logged to $BOOT_TIMES for run.sh's
# budget line); the budget is 90 s (8-21 s on an idle 2-core machine,
# 33-101 s when the machine was loaded by other work), said, not failed.
# BOOT_TIMEOUT is no assertion about speed: it is a guard that only turns
# a hung guest (no poweroff, ever) into a failure with its console's
# tail, and is generous so that a slow boot on a busy machine still
# passes; whether a boot did its work is decided by what the guest
# printed (BOOT-DONE, e2trim's log), not by a clock.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-600}	# seconds, each boot: the hang guard
BOOT_TIMES=${BOOT_TIMES:-/dev/null}

# need_boot: root, qemu and Debian's kernel (make deps-boot installs
# them); sets KVER and VMLINUZ.
need_boot() {
	[ "$(id -u)" = 0 ] || skip "needs root (the kernel image and modules are root's)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86 not installed"
	KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		grep -o 'linux-image-[^ ,]*' | head -1 | sed 's/^linux-image-//')
	[ -n "$KVER" ] || skip "linux-image-amd64 not installed"
	VMLINUZ=/boot/vmlinuz-$KVER
	if [ ! -r "$VMLINUZ" ] || [ ! -d "/lib/modules/$KVER" ]; then
		skip "no $VMLINUZ or /lib/modules/$KVER"
	fi
}

# initrd_modules DIR MODULE...: the guest kernel's modules for MODULE...
# and what they depend on, copied into DIR/m and named in DIR/m/order in
# the order modprobe would load them (a hand-made initramfs' /init insmods
# them in that order)
initrd_modules() {
	local d=$1 m; shift
	for m in "$@"; do
		modprobe -S "$KVER" --show-depends "$m" || fail "modprobe --show-depends $m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		grep -v crc32c-intel >"$T/modules"	# no SSE 4.2 under TCG
	while read -r m; do
		cp "$m" "$d/m/" || fail "copy $m"
		echo "${m##*/}" >>"$d/m/order"
	done <"$T/modules"
}

# busybox_root DIR: a root filesystem of busybox alone whose /sbin/init
# prints the initramfs' e2trim log between markers, puts the root back
# read-only and powers off.  /run must exist: both generators move their
# /run (and the log in it) onto the new root.
busybox_root() {
	local d=$1 bb lib
	bb=$(command -v busybox) || fail "busybox not installed"
	mkdir -p "$d"/{bin,sbin,etc,proc,sys,dev,run,tmp,data}
	cp "$bb" "$d/bin/busybox"
	# a dynamic busybox brings its libraries
	for lib in $(ldd "$bb" 2>/dev/null | grep -o '/[^ ]*'); do
		mkdir -p "$d${lib%/*}"
		cp -L "$lib" "$d$lib"
	done
	ln -s busybox "$d/bin/sh"
	cat >"$d/sbin/init" <<'INIT'
#!/bin/sh
export PATH=/bin
b=/bin/busybox
$b mount -t proc proc /proc
echo "BOOT-ROOT-INIT"
echo "E2TRIM-LOG-BEGIN"
$b cat /run/initramfs/e2trim.log 2>/dev/null
echo "E2TRIM-LOG-END"
echo "CMDLINE: $($b cat /proc/cmdline)"
$b sync
$b mount -o remount,ro /
echo "BOOT-DONE"
$b poweroff -f
INIT
	chmod 755 "$d/sbin/init"
}

# make_disk IMG SIZE DIR: an ext4 filesystem of DIR's files plus
# /data/keep.bin (KEEP_SUM), a 48 MiB file written and deleted (its
# blocks hold data), and /data/j.txt.  Then every block of the raw file
# is allocated, so what a trim frees shows in its allocated size.
make_disk() {
	local img=$1 size=$2 dir=$3
	mkdir -p "$dir/data"
	head -c $((4 << 20)) /dev/urandom >"$dir/data/keep.bin"
	KEEP_SUM=$(sha_of "$dir/data/keep.bin")
	head -c $((48 << 20)) /dev/zero | tr '\0' '\132' >"$dir/big.bin"
	printf 'old\n' >"$dir/data/j.txt"
	rm -f "$img"
	truncate -s "$size" "$img"
	# inode tables and journal zeroed now: the kernel's lazy init would
	# zero them at mount time with write-zeroes, which frees blocks too
	mke2fs -q -F -t ext4 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 \
		-d "$dir" "$img" || fail "mke2fs -d $dir"
	rm -f "$dir/big.bin"
	debugfs -w -R "rm /big.bin" "$img" >/dev/null 2>&1 || fail "debugfs rm big.bin"
	fallocate -l "$size" "$img" || fail "fallocate $img"
	e2fsck -fn "$img" >"$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$img: not clean"; }
}

# journal_pending IMG: leave one committed transaction in the journal (it
# writes "new-from-journal" over /data/j.txt's block) and needs_recovery
# set, as after a crash.
journal_pending() {
	local img=$1 blk
	blk=$(debugfs -R "bmap /data/j.txt 0" "$img" 2>/dev/null) || fail "bmap j.txt"
	{ printf 'new-from-journal\n'; head -c 4079 /dev/zero; } >"$T/jblock"
	printf 'jo\njw -b %s %s\njc\n' "$blk" "$T/jblock" |
		debugfs -w -f - "$img" >/dev/null 2>&1 || fail "debugfs journal write"
	dumpe2fs -h "$img" 2>/dev/null | grep -q 'features:.*needs_recovery' ||
		fail "$img: needs_recovery not set"
}

# boot NAME INITRD CMDLINE DISK...: boot the kernel to poweroff, each DISK
# a virtio disk (vda, vdb, ...) on a raw file with discard passed
# through.  The console goes to $T/NAME.console; the initramfs log that
# init printed to $T/NAME.log.  Fails if the guest does not reach
# BOOT-DONE within BOOT_TIMEOUT seconds.
boot() {
	local name=$1 initrd=$2 cmdline=$3 i=0 d start rc=0
	local args=()
	shift 3
	for d in "$@"; do
		args+=(-drive "file=$d,format=raw,if=none,id=d$i,discard=unmap"
			-device "virtio-blk-pci,drive=d$i")
		i=$((i + 1))
	done
	# no_timer_check: Linux's early check that the IO-APIC timer ticks
	# counts ticks against a delay loop; a TCG guest on a loaded host
	# misses it and panics ("IO-APIC + timer doesn't work!"): the
	# guest's command line must not depend on the host's speed
	CONSOLE=$T/$name.console
	start=$(date +%s%N)
	timeout -k 5 "$BOOT_TIMEOUT" qemu-system-x86_64 -machine q35 -accel tcg \
		-m 1024 -smp 2 -nic none -display none -monitor none -serial stdio -no-reboot \
		-kernel "$VMLINUZ" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 no_timer_check $cmdline" "${args[@]}" \
		</dev/null >"$CONSOLE" 2>&1 || rc=$?
	BOOT_MS=$((($(date +%s%N) - start) / 1000000))
	[ "$rc" != 124 ] || { tail -30 "$CONSOLE"; fail "$name: hung: no poweroff within ${BOOT_TIMEOUT}s (the guard BOOT_TIMEOUT)"; }
	grep -q BOOT-DONE "$CONSOLE" || { tail -40 "$CONSOLE"; fail "$name: the boot did not go on (qemu exit $rc)"; }
	sed -n '/^E2TRIM-LOG-BEGIN/,/^E2TRIM-LOG-END/p' "$CONSOLE" | tr -d '\r' |
		sed '1d;$d' >"$T/$name.log"
	printf '  %-28s boot %d.%d s\n' "$name:" $((BOOT_MS / 1000)) $((BOOT_MS % 1000 / 100))
	printf '%s %s\n' "$(basename "$0" .sh)/$name" "$BOOT_MS" >>"$BOOT_TIMES"
}

# data_bytes IMG: the bytes of IMG that are data, not holes (SEEK_DATA,
# SEEK_HOLE); unlike st_blocks it leaves out the host's extent-tree blocks,
# which grow by a block now and then as the guest writes.
data_bytes() {
	python3 - "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
end, pos, total = os.fstat(fd).st_size, 0, 0
while pos < end:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:             # ENXIO: only a hole up to the end
        break
    pos = os.lseek(fd, d, os.SEEK_HOLE)
    total += pos - d
print(total)
PY
}

# trimmed NAME IMG DEV ALLOC: the guest's log has e2trim's report line for
# DEV; IMG's data (data_bytes) dropped from ALLOC by what it
# reported, to the host's 4 KiB block; keep.bin is intact and e2fsck -fn
# is clean.
trimmed() {
	local name=$1 img=$2 dev=$3 alloc=$4 log=$T/$1.log bytes drop
	bytes=$(sed -n "s|^$dev: .* (\([0-9]*\) bytes) trimmed$|\1|p" "$log")
	[ -n "$bytes" ] || { cat "$log"; fail "$name: no report line for $dev in the guest's log"; }
	drop=$((alloc - $(data_bytes "$img")))
	[ "$bytes" -gt $((40 << 20)) ] || fail "$name: only $bytes bytes trimmed"
	if [ "$drop" -gt "$bytes" ] || [ $((bytes - drop)) -ge 4096 ]; then
		fail "$name: $bytes bytes trimmed, but the file shrank by $drop"
	fi
	intact "$name" "$img"
	note "$name: $dev: $bytes bytes trimmed, the raw file shrank by $drop"
}

# untouched NAME IMG ALLOC: no trim: the raw file keeps every block.
untouched() {
	local drop=$(($3 - $(data_bytes "$2")))
	[ "$drop" = 0 ] || fail "$1: the raw file shrank by $drop bytes"
	intact "$1" "$2"
}

# intact NAME IMG: keep.bin is what was written before the boot, and
# e2fsck -fn finds nothing to fix.
intact() {
	debugfs -R "dump /data/keep.bin $T/keep.out" "$2" >/dev/null 2>&1
	[ "$(sha_of "$T/keep.out")" = "$KEEP_SUM" ] || fail "$1: keep.bin changed"
	e2fsck -fn "$2" >"$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$1: e2fsck -fn after the boot"; }
}
