#!/bin/bash
# An LVM thin pool, which the host kernel (no device-mapper) cannot make:
# Debian's kernel boots under QEMU from a hand-made initramfs (busybox,
# lvm, dmsetup, thin_check, mke2fs, the packaged e2trim and the modules
# virtio, ext4 and dm-thin-pool need).  The guest makes a thin pool
# (64 KiB chunks) on a virtio disk and a thin LV "a" with an aged ext4
# (48 files written, every other one deleted, six more written, every
# remaining file's sha256 listed), unmounted; "b" is a thin snapshot of
# it: the same filesystem, mapping the same chunks.  Then: e2trim on
# "a" mounted (refused, exit 10, nothing unmapped), e2trim on "a"
# unmounted, "b" mounted and fstrim'd; each step prints the LV's mapped
# sectors (dmsetup status) and lvs' data_percent.  "a" is mounted again
# and its files' sha256 listed; the volume group is deactivated, which
# writes the pool's metadata out.  On the host, the pool is read back
# from the raw disk with thin-provisioning-tools alone (thin_check and
# thin_dump of the metadata LV; each LV's chunks copied from the data LV
# where the mappings say), and: e2trim unmapped at least as much as
# fstrim from the same start, the metadata maps what dm-thin reported,
# every file of both LVs has the sha256 it had before (listed by the
# guest, read back by debugfs), e2fsck -fn is clean on both, and no
# chunk of "a" that dumpe2fs calls wholly free is still mapped.
# A second disk holds a GPT with two ext4 partitions (the host kernel
# makes no partition devices; the guest's does): e2trim -j 2 on
# /dev/vdb1 and /dev/vdb2 must never run the two at once (they share a
# disk), and trims both, their files intact.
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
		src=$lib
		case $lib in
		"$STAGE_LIB"/*) lib=/lib/$MULTIARCH/${lib##*/} ;;
		esac
		[ -e "$d$lib" ] && continue
		mkdir -p "$d${lib%/*}"
		cp -L "$src" "$d$lib" || fail "copy $src"
	done
}

# thin_initrd OUT: the guest (its /init below)
thin_initrd() {
	local d=$T/initrd
	mkdir -p "$d"/{bin,sbin,dev,proc,sys,mnt,m,run/lock/lvm,etc/lvm,tmp}
	copy_exec "$d" "$(command -v busybox)" /bin/busybox
	ln -s busybox "$d/bin/sh"
	copy_exec "$d" "$(command -v lvm)" /sbin/lvm
	copy_exec "$d" "$(command -v dmsetup)" /sbin/dmsetup
	copy_exec "$d" "$(command -v mke2fs)" /sbin/mke2fs
	cp "$MKE2FS_CONFIG" "$d/etc/mke2fs.conf" || fail "copy mke2fs.conf"
	copy_exec "$d" "$(command -v pdata_tools)" /sbin/pdata_tools
	copy_exec "$d" "$E2TRIM" /sbin/e2trim
	[ -e "$d/lib/$MULTIARCH/libe2trim.so.1" ] || fail "e2trim's libe2trim.so.1 not found in $STAGE_LIB"
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
	# (lvcreate -s wants dm-snapshot loaded, even for a thin snapshot)
	initrd_modules "$d" virtio_pci virtio_blk dm_thin_pool dm_snapshot ext4 \
		crc32c_generic
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
# virtio probes the disk asynchronously: wait for it to appear
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
# mapped NAME WHEN: the thin LV's mapped sectors (dmsetup status: mapped,
# highest mapped)
mapped() { say "$2 $1 mapped $(dmsetup status vg-$1 | cut -d' ' -f4)"; }
# state WHEN: that for a and b, and what lvs says of every LV (name,
# data_percent, lv_size, thin_id)
state() {
	mapped a "$1"
	mapped b "$1"
	lvm lvs --noheadings --nosuffix --units b -o lv_name,data_percent,lv_size,thin_id vg |
		while read -r lv rest; do say "$1 $lv lvs $rest"; done
}
mkpool() {
	lvm pvcreate -q /dev/vda && lvm vgcreate -q vg /dev/vda &&
		lvm lvcreate -q --type thin-pool -L 128M -c ${CHUNK_KIB}k \
			--poolmetadatasize 4M -Zn -n pool vg &&
		lvm lvcreate -q -V ${LV_MIB}M -T vg/pool -n a
}
mkpool || die "thin pool"
# (no udev: /dev/vg/a leads to /dev/mapper/vg-a, not to a dm-N)
say "granularity $(cat /sys/dev/block/$(dmsetup info -c --noheadings -o major,minor vg-a | tr -d ' ')/queue/discard_granularity)"

# the aged filesystem: 48 files of 64 KiB to 1 MiB, written out, every
# other one deleted, six more of 512 KiB written; each file begins with
# its own name, so no two are alike
mke2fs -q -t ext4 -N 2048 -g 8192 -J size=4 \
	-E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/vg/a || die "mke2fs"
mount -t ext4 /dev/vg/a /mnt || die "mount a"
head -c $((1 << 20)) /dev/urandom >/tmp/rand
i=1
while [ $i -le 48 ]; do
	{ echo "f$i"; head -c $(((64 + i * 37 % 11 * 96) * 1024)) /tmp/rand; } >/mnt/f$i
	i=$((i + 1))
done
sync
i=1
while [ $i -le 48 ]; do rm /mnt/f$i; i=$((i + 2)); done
sync
for i in 1 2 3 4 5 6; do { echo "g$i"; head -c $((512 << 10)) /tmp/rand; } >/mnt/g$i; done
sync
(cd /mnt && sha256sum f* g*) >/tmp/before
echo "THIN-SUMS-BEFORE"; cat /tmp/before; echo "THIN-SUMS-END"
umount /mnt || die "umount a"
lvm lvcreate -q -s -kn -n b vg/a || die "snapshot b"
state before

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
mapped a e2trim

mount -t ext4 /dev/vg/b /mnt || die "mount b"
mapped b mounted
say "fstrim out $(fstrim -v /mnt 2>&1)"
mapped b fstrim
umount /mnt || die "umount b"
state after

mount -t ext4 -o ro /dev/vg/a /mnt || die "mount a after e2trim"
(cd /mnt && sha256sum f* g*) >/tmp/after
echo "THIN-SUMS-AFTER"; cat /tmp/after; echo "THIN-SUMS-END"
umount /mnt || die "umount a after e2trim"
# where the pool's metadata and data lie on the disk, for the host
say "tmeta $(dmsetup table vg-pool_tmeta)"
say "tdata $(dmsetup table vg-pool_tdata)"
lvm vgchange -q -an vg || die "deactivate"

# two partitions of one disk, -j 2: one at a time (E2TRIM_TEST_DISK_JOBS
# prints the most that ran at once on one disk)
i=0
while [ ! -b /dev/vdb2 ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
say "parts granularity $(cat /sys/block/vdb/queue/discard_granularity)"
E2TRIM_TEST_DISK_JOBS=1 e2trim -v -j 2 /dev/vdb1 /dev/vdb2 >/tmp/out 2>&1
say "parts rc $?"
sed 's/^/THIN parts out /' /tmp/out
echo "BOOT-DONE"
poweroff -f
EOF
}

thin_initrd "$T/initrd.gz"
note "initramfs: $(($(stat -c %s "$T/initrd.gz") / 1024)) KiB"
pv=$T/pv.img
truncate -s 256M "$pv"
# the second disk: GPT, two 16 MiB ext4 partitions, a file in each and
# every free block written, so that a trim has bytes to give back
parts=$T/parts.img
truncate -s 40M "$parts"
printf 'label: gpt\nstart=2048, size=32768\nstart=34816, size=32768\n' |
	sfdisk -q "$parts" || fail "sfdisk"
head -c 2000000 /dev/urandom >"$T/pfile"
for off in $((2048 * 512)) $((34816 * 512)); do
	mke2fs -q -F -t ext4 -b 4096 -E nodiscard,offset=$off "$parts" 16M || fail "mke2fs at $off"
	debugfs -w -R "write $T/pfile pfile" "$parts?offset=$off" >/dev/null 2>&1 || fail "debugfs write"
	free_block_ranges "$parts?offset=$off" | python3 -c '
import sys
f = open(sys.argv[1], "r+b")
for line in sys.stdin:
    a, b = map(int, line.split())
    f.seek(int(sys.argv[2]) + a * 4096)
    f.write(b"\x5a" * ((b - a + 1) * 4096))' "$parts" "$off" || fail "filling the free space"
done
pdata0=$(data_bytes "$parts")
boot thin "$T/initrd.gz" "quiet" "$pv" "$parts"

c=$T/thin.console
tr -d '\r' <"$c" >"$c.txt"
if grep -q -e '^THIN FAILED' -e '^THIN insmod-failed' "$c.txt"; then
	grep '^THIN' "$c.txt"; fail "the guest: $(grep -m1 -e FAILED -e insmod-failed "$c.txt")"
fi
# val KEY: what the guest printed after "THIN KEY "
val() {
	local v
	v=$(sed -n "s/^THIN $1 //p" "$c.txt" | head -1)
	[ -n "$v" ] || { grep '^THIN' "$c.txt"; fail "the guest printed no 'THIN $1'"; }
	echo "$v"
}
sums() { sed -n "/^THIN-SUMS-$1\$/,/^THIN-SUMS-END\$/p" "$c.txt" | sed '1d;$d'; }
lvs_field() { val "$1 $2 lvs" | awk -v f="$3" '{ print $f }'; }	# WHEN LV N
assert_eq "$(val granularity)" "$CHUNK" "the thin LV's discard granularity"

# refused while mounted, nothing unmapped
assert_eq "$(val 'refused rc')" 10 "e2trim on the mounted thin LV: exit code"
assert_eq "$(val 'refused a mapped')" "$(val 'mounted a mapped')" "mapped sectors of a after the refusal"
assert_eq "$(val 'e2trim rc')" 0 "e2trim on the unmounted thin LV: exit code"

# a and b began alike; what each trim unmapped
assert_eq "$(val 'before a mapped')" "$(val 'before b mapped')" "mapped sectors of a and its snapshot b"
a0=$(val 'unmounted a mapped') a1=$(val 'e2trim a mapped')
b0=$(val 'mounted b mapped') b1=$(val 'fstrim b mapped')
assert_eq "$a0" "$b0" "mapped sectors of a and b as each trim began"
assert_eq "$(val 'after a mapped')" "$a1" "mapped sectors of a at the end"
assert_eq "$(val 'after b mapped')" "$b1" "mapped sectors of b at the end"
e2trim_freed=$((a0 - a1)) fstrim_freed=$((b0 - b1))
[ "$e2trim_freed" -gt 0 ] || fail "e2trim unmapped nothing ($a0 -> $a1 sectors)"
[ "$e2trim_freed" -ge "$fstrim_freed" ] ||
	fail "e2trim unmapped $e2trim_freed sectors, fstrim $fstrim_freed, from the same state"

# the pool as thin-provisioning-tools read it from the raw disk: the
# metadata LV checked and dumped, each LV put together from the data LV
# (LVM's linear segments: "0 LEN linear MAJ:MIN START", in sectors)
linear() {
	local t
	t=$(val "$1")
	[ "$(echo "$t" | awk '{ print $3 }')" = linear ] || fail "$1 is not one linear segment: $t"
	echo "$t" | awk '{ print $5, $2 }'
}
read -r moff mlen < <(linear tmeta)
read -r doff _ < <(linear tdata)
dd if="$pv" of="$T/tmeta" bs=512 skip="$moff" count="$mlen" status=none || fail "dd tmeta"
thin_check "$T/tmeta" >"$T/thin_check.out" 2>&1 || { cat "$T/thin_check.out"; fail "thin_check on the pool's metadata"; }
thin_dump "$T/tmeta" >"$T/tmeta.xml" || fail "thin_dump"
python3 - "$T/tmeta.xml" "$pv" "$((doff * 512))" "$CHUNK" "$((LV_MIB << 20))" \
	"$(lvs_field after a 3)" "$T/a" "$(lvs_field after b 3)" "$T/b" <<'PY' || fail "the pool's metadata"
import sys
import xml.etree.ElementTree as ET
xml, pv, doff, chunk, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sb = ET.parse(xml).getroot()
if int(sb.get("data_block_size")) * 512 != chunk:
    sys.exit("data_block_size %s sectors" % sb.get("data_block_size"))
devs = {d.get("dev_id"): d for d in sb.iter("device")}
with open(pv, "rb") as src:
    for dev_id, out in zip(sys.argv[6::2], sys.argv[7::2]):
        chunks = []
        for m in devs[dev_id]:
            if m.tag == "single_mapping":
                o, d, n = int(m.get("origin_block")), int(m.get("data_block")), 1
            else:
                o, d, n = int(m.get("origin_begin")), int(m.get("data_begin")), int(m.get("length"))
            chunks += [(o + i, d + i) for i in range(n)]
        with open(out + ".img", "wb") as img, open(out + ".map", "w") as mp:
            img.truncate(size)
            for o, d in chunks:
                src.seek(doff + d * chunk)
                img.seek(o * chunk)
                img.write(src.read(chunk))
                mp.write("%d\n" % o)
PY
for lv in a b; do
	assert_eq "$(($(wc -l <"$T/$lv.map") * CHUNK / 512))" "$(val "after $lv mapped")" \
		"sectors $lv maps in the metadata against dm-thin's count"
	e2fsck -fn "$T/$lv.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn on $lv"; }
done

# every file as before: in the guest after e2trim, and in both LVs read
# back by debugfs
sums BEFORE >"$T/before"
sums AFTER >"$T/after"
assert_eq "$(wc -l <"$T/before")" 30 "files listed before the trims"
cmp -s "$T/before" "$T/after" || { diff "$T/before" "$T/after" | head; fail "a's files differ after e2trim (in the guest)"; }
for lv in a b; do
	mkdir -p "$T/dump.$lv"
	awk -v d="$T/dump.$lv" '{ print "dump /" $2 " " d "/" $2 }' "$T/before" |
		debugfs -f - "$T/$lv.img" >"$T/dump.out" 2>&1 || { cat "$T/dump.out"; fail "debugfs dump from $lv"; }
	(cd "$T/dump.$lv" && sha256sum f* g*) >"$T/host.$lv"
	cmp -s "$T/before" "$T/host.$lv" || { diff "$T/before" "$T/host.$lv" | head; fail "$lv: files differ from the guest's list"; }
done

# wholly free chunks (dumpe2fs' free blocks, merged, trimmed inward to
# the chunk) still mapped: none in a; what fstrim left in b
left() {
	oracle_extents "$T/$1.img" | aligned_extents "$CHUNK" |
		awk -v c="$CHUNK" -v map="$T/$1.map" '
		BEGIN { while ((getline o < map) > 0) m[o] = 1 }
		{ for (i = $1 / c; i < ($1 + $2) / c; i++) n += (i in m) }
		END { print n + 0 }'
}
assert_eq "$(left a)" 0 "wholly free chunks a maps after e2trim"
# and e2trim's report is those chunks, every one
assert_eq "$(val 'e2trim out' | sed -n 's/.*(\([0-9]*\) bytes) trimmed$/\1/p')" \
	"$(oracle_extents "$T/a.img" | aligned_extents "$CHUNK" | awk '{ n += $2 } END { printf "%.0f", n }')" \
	"bytes e2trim reported against dumpe2fs' free chunks"
fleft=$(left b)

# -j 2 over two partition devices of one disk: one at a time, both
# trimmed, the disk smaller by what they report, files and fsck intact
assert_eq "$(val 'parts rc')" 0 "e2trim -j 2 on two partitions of one disk: exit code"
assert_eq "$(val 'parts out e2trim: most jobs at once on one disk:')" 1 \
	"most jobs at once on /dev/vdb's two partitions"
ptrim=$(sed -n 's/^THIN parts out .*(\([0-9]*\) bytes) trimmed$/\1/p' "$c.txt" |
	awk '{ n += $1; c++ } END { print c + 0, n + 0 }')
assert_eq "${ptrim%% *}" 2 "partitions e2trim reported trimmed"
[ "${ptrim#* }" -gt 0 ] || fail "nothing trimmed on the two partitions"
# what they report is dumpe2fs' free space of both, trimmed inward to
# the disk's discard granularity
pgran=$(val 'parts granularity')
pwant=0
for off in $((2048 * 512)) $((34816 * 512)); do
	pwant=$((pwant + $(oracle_extents "$parts?offset=$off" | aligned_extents "$pgran" |
		awk '{ n += $2 } END { printf "%.0f", n }')))
done
assert_eq "${ptrim#* }" "$pwant" "bytes trimmed on the two partitions against dumpe2fs' free extents"
pdrop=$((pdata0 - $(data_bytes "$parts")))
[ "$pdrop" -gt 0 ] || fail "the disk's data did not shrink"
for off in $((2048 * 512)) $((34816 * 512)); do
	e2fsck -fn "$parts?offset=$off" >/dev/null 2>&1 || fail "e2fsck -fn partition at $off"
	debugfs -R "dump pfile $T/pback" "$parts?offset=$off" >/dev/null 2>&1
	cmp -s "$T/pback" "$T/pfile" || fail "the file of the partition at $off changed"
done
note "-j 2 on /dev/vdb1 and /dev/vdb2: one at a time, ${ptrim#* } bytes trimmed, the disk $pdrop bytes smaller"

pct() { lvs_field "$1" "$2" 1; }
note "a, e2trim: data_percent $(pct before a) -> $(pct after a), $((e2trim_freed * 512)) bytes unmapped ($(val 'e2trim out' | head -1))"
note "b, fstrim: data_percent $(pct before b) -> $(pct after b), $((fstrim_freed * 512)) bytes unmapped, $fleft wholly free chunks left mapped ($(val 'fstrim out'))"
note "pool: data_percent $(pct before pool) -> $(pct after pool) once both were trimmed (a chunk either still maps stays allocated)"
exit 0
