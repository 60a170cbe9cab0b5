#!/bin/bash
# An LVM thin pool, which the host kernel (no device-mapper) cannot make:
# Debian's kernel boots under QEMU from a hand-made initramfs (busybox,
# lvm, dmsetup, thin_check, mke2fs, GNU dd, the packaged e2trim and the
# modules virtio, ext4 and dm-thin-pool need).  The guest makes a thin
# pool (64 KiB chunks) on the first virtio disk and three thin LVs: "src"
# gets an aged ext4 (48 files written, every other one deleted, six more
# written, every remaining file's sha256 listed) and is copied to "a"
# and "b" chunk by chunk, skipping chunks of zeros (dd conv=sparse), so
# that both map the same chunks of the same bytes; src is removed.
# Then: e2trim on the mounted "a" (refused, exit 10, nothing unmapped),
# e2trim on the unmounted "a", "b" mounted and fstrim'd; each step
# prints `dmsetup status` (the LV's mapped sectors, the pool's used data
# blocks) and `lvs -o data_percent,lv_size`.  "a" is mounted again and
# its files' sha256 listed, the volume group deactivated and activated
# again (lvm runs thin_check on the pool's metadata), and "a" copied to
# the second virtio disk.  On the host: e2trim exited 0 and freed at
# least as many chunks as fstrim did from the same start, every file
# has the sha256 it had before (in the guest and read back from the copy
# by debugfs), e2fsck -fn is clean on the copy, no chunk that dumpe2fs
# calls wholly free is still mapped (reads other than zero), and the
# mapped sectors dm-thin reports are exactly the copy's chunks that are
# not zero.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"
need_boot
command -v cpio >/dev/null || skip "cpio not installed"
for b in lvm dmsetup pdata_tools; do
	command -v "$b" >/dev/null || skip "no $b (make deps-boot installs lvm2 and thin-provisioning-tools)"
done

CHUNK=65536		# the pool's chunk: dm-thin's discard granularity
LV_MIB=256

# copy_exec DIR BIN [DEST]: BIN as DEST (BIN's own path) under DIR, and
# the libraries it links (the package's library from the staging root)
copy_exec() {
	local d=$1 bin=$2 dest=${3:-$2} lib src
	mkdir -p "$d${dest%/*}"
	cp -L "$bin" "$d$dest" || fail "copy $bin"
	for lib in $(LD_LIBRARY_PATH=$STAGE_LIB ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
		case $lib in
		"$STAGE_LIB"/*) lib=/lib/$MULTIARCH/${lib##*/} src=$STAGE_LIB/${lib##*/} ;;
		*) src=$lib ;;
		esac
		[ -e "$d$lib" ] && continue
		mkdir -p "$d${lib%/*}"
		cp -L "$src" "$d$lib" || fail "copy $src"
	done
}

# thin_initrd OUT: the guest (its /init below)
thin_initrd() {
	local d=$T/initrd m
	mkdir -p "$d"/{bin,sbin,dev,proc,sys,mnt,m,run/lock/lvm,etc/lvm,tmp}
	copy_exec "$d" "$(command -v busybox)" /bin/busybox
	copy_exec "$d" "$(command -v lvm)" /sbin/lvm
	copy_exec "$d" "$(command -v dmsetup)" /sbin/dmsetup
	copy_exec "$d" "$(command -v mke2fs)" /sbin/mke2fs
	cp /etc/mke2fs.conf "$d/etc/" || fail "copy mke2fs.conf"
	# GNU dd: busybox's has no conv=sparse
	copy_exec "$d" "$(command -v dd)" /sbin/gnu-dd
	copy_exec "$d" "$(command -v pdata_tools)" /sbin/pdata_tools
	copy_exec "$d" "$E2TRIM" /sbin/e2trim
	[ -e "$d/lib/$MULTIARCH/libe2trim.so.0" ] || fail "e2trim's libe2trim.so.0 not found in $STAGE_LIB"
	# lvm runs thin_check before it activates a pool; say that it did
	cat >"$d/sbin/thin_check" <<'EOF'
#!/bin/sh
/sbin/pdata_tools thin_check "$@"
rc=$?
echo "THIN thin_check $rc"
exit $rc
EOF
	chmod 755 "$d/sbin/thin_check"
	# no udev, no lvmetad/lvmpolld/dmeventd in the guest; no metadata
	# backups (nobody restores them)
	cat >"$d/etc/lvm/lvm.conf" <<'EOF'
devices { obtain_device_list_from_udev = 0 use_devicesfile = 0 }
activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
global { use_lvmpolld = 0 event_activation = 0 thin_check_executable = "/sbin/thin_check" }
backup { backup = 0 archive = 0 }
EOF
	mknod -m 600 "$d/dev/console" c 5 1
	for m in virtio_pci virtio_blk dm_thin_pool ext4 crc32c_generic; do
		modprobe -S "$KVER" --show-depends "$m" || fail "modprobe --show-depends $m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		grep -v crc32c-intel >"$T/modules"	# no SSE 4.2 under TCG
	while read -r m; do
		cp "$m" "$d/m/" || fail "copy $m"
		echo "${m##*/}" >>"$d/m/order"
	done <"$T/modules"
	guest_init >"$d/init"
	chmod 755 "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet) | gzip -1 >"$1" || fail "cpio"
}

# guest_init: the guest's /init.  Each result is a line "THIN ..." on
# the console; the lists of sha256 are between markers.
guest_init() {
	cat <<EOF
#!/bin/sh
LV_MIB=$LV_MIB CHUNK_KIB=$((CHUNK / 1024))
EOF
	cat <<'EOF'
/bin/busybox mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
for m in $(cat /m/order); do insmod "/m/$m" || echo "THIN insmod-failed $m"; done
say() { echo "THIN $*"; }
die() { say "FAILED $*"; poweroff -f; }
# virtio probes the disks asynchronously: wait for them to appear
i=0
while { [ ! -b /dev/vda ] || [ ! -b /dev/vdb ]; } && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
# mapped NAME WHEN: the thin LV's mapped sectors (dmsetup status: mapped,
# highest mapped) and the pool's used/total data blocks
mapped() {
	say "$2 $1 mapped $(dmsetup status vg-$1 | cut -d' ' -f4)"
	say "$2 $1 pool used $(dmsetup status vg-pool-tpool | cut -d' ' -f6)"
}
# state NAME WHEN: that and what lvs says (data_percent, lv_size)
state() {
	mapped "$1" "$2"
	say "$2 $1 lvs $(lvm lvs --noheadings --nosuffix --units b -o data_percent,lv_size vg/$1)"
	say "$2 $1 pool lvs $(lvm lvs --noheadings --nosuffix --units b -o data_percent,lv_size vg/pool)"
}
mkpool() {
	lvm pvcreate -q /dev/vda && lvm vgcreate -q vg /dev/vda &&
		lvm lvcreate -q --type thin-pool -L 320M -c ${CHUNK_KIB}k --poolmetadatasize 4M -Zn -n pool vg &&
		lvm lvcreate -q -V ${LV_MIB}M -T vg/pool -n src &&
		lvm lvcreate -q -V ${LV_MIB}M -T vg/pool -n a &&
		lvm lvcreate -q -V ${LV_MIB}M -T vg/pool -n b
}
mkpool || die "thin pool"
# the aged filesystem: 48 files of 256 KiB to 2.1 MiB, written out,
# every other one deleted, six more of 1 MiB written; each file begins
# with its own name, so no two are alike
mke2fs -q -t ext4 -N 2048 -g 8192 -J size=4 \
	-E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/vg/src || die "mke2fs"
mount -t ext4 /dev/vg/src /mnt || die "mount src"
head -c $((4 << 20)) /dev/urandom >/tmp/rand
i=1
while [ $i -le 48 ]; do
	{ echo "f$i"; head -c $(((256 + i * 37 % 11 * 192) * 1024)) /tmp/rand; } >/mnt/f$i
	i=$((i + 1))
done
sync
i=1
while [ $i -le 48 ]; do rm /mnt/f$i; i=$((i + 2)); done
sync
for i in 1 2 3 4 5 6; do { echo "g$i"; head -c $((1 << 20)) /tmp/rand; } >/mnt/g$i; done
sync
(cd /mnt && sha256sum f* g*) >/tmp/before
echo "THIN-SUMS-BEFORE"; cat /tmp/before; echo "THIN-SUMS-END"
umount /mnt || die "umount src"
for lv in a b; do
	gnu-dd if=/dev/vg/src of=/dev/vg/$lv bs=${CHUNK_KIB}K conv=sparse,fsync 2>/dev/null ||
		die "copy to $lv"
done
lvm lvremove -q -y vg/src || die "lvremove src"
state a before
state b before

# mounted: refused before anything is trimmed
mount -t ext4 /dev/vg/a /mnt || die "mount a"
mapped a mounted
e2trim -v /dev/vg/a >/tmp/out 2>&1
say "refused rc $?"
sed 's/^/THIN refused out /' /tmp/out
mapped a refused
umount /mnt || die "umount a"

mapped a unmounted
e2trim -v /dev/vg/a >/tmp/out 2>&1
say "e2trim rc $?"
sed 's/^/THIN e2trim out /' /tmp/out
state a e2trim

mount -t ext4 /dev/vg/b /mnt || die "mount b"
mapped b mounted
say "fstrim out $(fstrim -v /mnt 2>&1)"
state b fstrim
umount /mnt || die "umount b"

mount -t ext4 -o ro /dev/vg/a /mnt || die "mount a after e2trim"
(cd /mnt && sha256sum f* g*) >/tmp/after
echo "THIN-SUMS-AFTER"; cat /tmp/after; echo "THIN-SUMS-END"
umount /mnt || die "umount a after e2trim"

lvm vgchange -q -an vg || die "deactivate"
lvm vgchange -q -ay vg || die "activate"
state a activated
gnu-dd if=/dev/vg/a of=/dev/vdb bs=${CHUNK_KIB}K conv=sparse,fsync 2>/dev/null || die "copy a to vdb"
lvm vgchange -q -an vg || die "deactivate at the end"
echo "BOOT-DONE"
poweroff -f
EOF
}

thin_initrd "$T/initrd.gz"
note "initramfs: $(($(stat -c %s "$T/initrd.gz") / 1024)) KiB"
truncate -s 384M "$T/pv.img"
truncate -s "${LV_MIB}M" "$T/a.img"
boot thin "$T/initrd.gz" "quiet" "$T/pv.img" "$T/a.img"

c=$T/thin.console
tr -d '\r' <"$c" >"$c.txt"
if grep -q -e '^THIN FAILED' -e '^THIN insmod-failed' "$c.txt"; then
	grep '^THIN' "$c.txt"; tail -30 "$c.txt"; fail "the guest: $(grep -m1 -e FAILED -e insmod-failed "$c.txt")"
fi
# val KEY: what the guest printed after "THIN KEY "
val() {
	local v
	v=$(sed -n "s/^THIN $1 //p" "$c.txt" | head -1)
	[ -n "$v" ] || { grep '^THIN' "$c.txt"; fail "the guest printed no 'THIN $1'"; }
	echo "$v"
}
sums() { sed -n "/^THIN-SUMS-$1\$/,/^THIN-SUMS-END\$/p" "$c.txt" | sed '1d;$d'; }
assert_eq "$(val granularity)" "$CHUNK" "the thin LV's discard granularity"

# refused while mounted, nothing unmapped
assert_eq "$(val 'refused rc')" 10 "e2trim on the mounted thin LV: exit code"
assert_eq "$(val 'refused a mapped')" "$(val 'mounted a mapped')" "mapped sectors of a after the refusal"
assert_eq "$(val 'e2trim rc')" 0 "e2trim on the unmounted thin LV: exit code"

# a and b began alike; what each trim unmapped, in sectors and in the
# pool's data blocks
sect() { val "$1" | cut -d/ -f1; }
assert_eq "$(sect 'before a mapped')" "$(sect 'before b mapped')" "mapped sectors of a and b after the copies"
a0=$(sect 'unmounted a mapped') a1=$(sect 'e2trim a mapped')
b0=$(sect 'mounted b mapped') b1=$(sect 'fstrim b mapped')
assert_eq "$a0" "$b0" "mapped sectors of a and b as each trim began"
e2trim_freed=$((a0 - a1)) fstrim_freed=$((b0 - b1))
[ "$e2trim_freed" -gt 0 ] || fail "e2trim unmapped nothing ($a0 -> $a1 sectors)"
[ "$e2trim_freed" -ge "$fstrim_freed" ] ||
	fail "e2trim unmapped $e2trim_freed sectors, fstrim $fstrim_freed from the same state"
assert_eq "$(($(sect 'unmounted a pool used') - $(sect 'e2trim a pool used')))" \
	"$((e2trim_freed * 512 / CHUNK))" "pool data blocks e2trim freed"
assert_eq "$(($(sect 'mounted b pool used') - $(sect 'fstrim b pool used')))" \
	"$((fstrim_freed * 512 / CHUNK))" "pool data blocks fstrim freed"
pct() { val "$1" | awk '{ print $1 }'; }
note "a, e2trim: data_percent $(pct 'before a lvs') -> $(pct 'e2trim a lvs'), mapped $a0 -> $a1 sectors"
note "b, fstrim: data_percent $(pct 'before b lvs') -> $(pct 'fstrim b lvs'), mapped $b0 -> $b1 sectors"
note "pool: data_percent $(pct 'before a pool lvs') before, $(pct 'e2trim a pool lvs') after e2trim, $(pct 'fstrim b pool lvs') after fstrim too"
note "e2trim unmapped $((e2trim_freed * 512)) bytes, fstrim $((fstrim_freed * 512)) ($(val 'fstrim out'))"
grep -q '^THIN thin_check 0$' "$c.txt" || { grep '^THIN' "$c.txt"; fail "no clean thin_check on activation"; }
assert_eq "$(val 'activated a mapped')" "$a1" "mapped sectors of a after thin_check and activation"

# every file as before, in the guest and in the copy
sums BEFORE >"$T/before"
sums AFTER >"$T/after"
assert_eq "$(wc -l <"$T/before")" 30 "files listed before the trims"
cmp -s "$T/before" "$T/after" || { diff "$T/before" "$T/after" | head; fail "a's files differ after e2trim (in the guest)"; }
img=$T/a.img
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn on the copy of a"; }
mkdir -p "$T/dump"
awk -v d="$T/dump" '{ print "dump /" $2 " " d "/" $2 }' "$T/before" |
	debugfs -f - "$img" >"$T/dump.out" 2>&1 || { cat "$T/dump.out"; fail "debugfs dump"; }
(cd "$T/dump/" && sha256sum f* g*) >"$T/host"
cmp -s "$T/before" "$T/host" || { diff "$T/before" "$T/host" | head; fail "the copy of a: files differ from the guest's list"; }

# no chunk wholly free by dumpe2fs is left mapped, and dm-thin's count is
# the copy's chunks that hold anything (a's chunks all held data: dd
# skipped those of zeros)
oracle_extents "$img" | aligned_extents "$CHUNK" >"$T/free-chunks"
read -r left nonzero < <(python3 - "$img" "$CHUNK" "$T/free-chunks" <<'PY'
import sys
img, chunk, free = sys.argv[1], int(sys.argv[2]), sys.argv[3]
zero = bytes(chunk)
with open(img, "rb") as f:
    data = f.read()
nonzero = {i for i in range(0, len(data), chunk) if data[i:i + chunk] != zero}
left = 0
for line in open(free):
    s, n = map(int, line.split())
    left += sum(1 for i in range(s, s + n, chunk) if i in nonzero)
print(left, len(nonzero))
PY
)
assert_eq "$left" 0 "wholly free chunks still mapped after e2trim"
assert_eq "$((nonzero * CHUNK / 512))" "$a1" "non-zero chunks of the copy against dm-thin's mapped sectors"
note "$(wc -l <"$T/before") files intact; $nonzero chunks mapped after e2trim, none of them wholly free"
exit 0
