#!/bin/bash
# A casefolded filesystem the kernel wrote, where the host kernel cannot
# (tests/e2e/t_verify_kernel.sh runs this case on the host when its
# kernel has casefold): Debian's kernel (CONFIG_UNICODE) boots under QEMU
# from a tiny initramfs (busybox, e2fsprogs' chattr, the modules ext4
# and a virtio disk need) and, on an ext4 -O casefold filesystem made by
# mke2fs on the host, makes a directory casefolded (chattr +F, the
# kernel's ioctl), fills it with 3000 mixed-case names (an htree) and
# files of known content, looks names up in another case, deletes a
# third of the names by their lower-case spelling and a big file, writes
# more, lists every file's sha256 and unmounts.  On the
# host, as t_verify_kernel's kernel_fs: e2fsck -fn is clean (it checks
# the casefolded htree's hashes), e2trim's dry run and trim exit 0, the
# raw file shrank by what e2trim reported, e2fsck -fn is still clean,
# the directory still carries the casefold flag and every file read back
# by debugfs rdump has the sha256 the guest listed.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"
need_boot
command -v cpio >/dev/null || skip "cpio not installed"

# copy_bin DIR BIN: BIN and the libraries it links, under DIR
copy_bin() {
	local d=$1 bin=$2 lib
	mkdir -p "$d${bin%/*}"
	cp -L "$bin" "$d$bin"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
		mkdir -p "$d${lib%/*}"
		cp -L "$lib" "$d$lib"
	done
}

# casefold_initrd OUT: busybox as /init's shell, chattr and lsattr, and
# the modules in the order modprobe would load them
casefold_initrd() {
	local d=$T/initrd
	mkdir -p "$d"/{bin,dev,proc,sys,mnt,m}
	copy_bin "$d" "$(command -v busybox)"
	mv "$d$(command -v busybox)" "$d/bin/busybox" 2>/dev/null || true
	copy_bin "$d" /usr/bin/chattr
	copy_bin "$d" /usr/bin/lsattr
	ln -sf busybox "$d/bin/sh"
	mknod -m 600 "$d/dev/console" c 5 1
	initrd_modules "$d" ext4 virtio_blk virtio_pci
	cp "$T/payload"/* "$d/" || fail "payload"
	cat >"$d/init" <<'INIT'
#!/bin/sh
b=/bin/busybox
$b mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
export PATH=/bin:/usr/bin
$b mount -t proc proc /proc
$b mount -t sysfs sys /sys
for m in $($b cat /m/order); do $b insmod "/m/$m" || echo "insmod $m failed"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do $b usleep 100000; i=$((i + 1)); done
$b mount -t ext4 /dev/vda /mnt && cd /mnt || { echo "CF-MOUNT-FAILED"; $b poweroff -f; }
$b mkdir cf
/usr/bin/chattr +F cf || echo "CF-CHATTR-FAILED"
echo "CF-LSATTR $(/usr/bin/lsattr -d cf)"
# names 10000..12999, made by the shell alone: a fork costs much under TCG
n=10000
while [ $n -lt 13000 ]; do
	if [ $((n % 10)) = 0 ]; then
		echo "content of $n" >"cf/Entry-With-A-Long-Name-$n"
	else
		: >"cf/Entry-With-A-Long-Name-$n"
	fi
	n=$((n + 1))
done
# a lookup in another case finds the file: the kernel casefolds
echo "CF-LOOKUP $($b cat cf/ENTRY-WITH-A-LONG-NAME-10420)"
echo "CF-LOOKUP-MISSING $($b cat cf/entry-with-a-long-name-13000 2>&1 | $b wc -l)"
$b cp /keep1.bin /keep2.bin cf/
$b cp /big.bin ./
$b dd if=/dev/urandom of=cf/Rand.bin bs=65536 count=64 2>/dev/null
$b sync
# delete a third of the names and one big file: their blocks held data
# by their lower-case names, in one rm
n=10000 del=
while [ $n -lt 13000 ]; do
	del="$del cf/entry-with-a-long-name-$n"
	n=$((n + 3))
done
# shellcheck disable=SC2086 # one word a name
$b rm $del big.bin
$b dd if=/dev/urandom of=cf/after.bin bs=65536 count=16 2>/dev/null
echo "CF-FILES $($b find . -type f | $b wc -l)"
echo "E2TRIM-LOG-BEGIN"
$b find . -type f | $b sort | $b xargs $b sha256sum
echo "E2TRIM-LOG-END"
cd /
$b umount /mnt && echo "CF-UMOUNTED"
echo "BOOT-DONE"
$b poweroff -f
INIT
	chmod 755 "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet) | gzip -1 >"$1" || fail "cpio"
}

mkdir -p "$T/payload"
head -c $((3 << 20)) /dev/urandom >"$T/payload/keep1.bin"
head -c 70000 /dev/urandom >"$T/payload/keep2.bin"
head -c $((24 << 20)) /dev/urandom >"$T/payload/big.bin"
casefold_initrd "$T/initrd.gz"

# the disk: every block of the raw file allocated, the free ones holding
# 0x5a, so that what a trim frees shows in its allocated size
img=$T/cf.img
# (inode tables and journal zeroed now: the kernel's lazy init would zero
# them with write-zeroes, which frees blocks of the raw file too)
truncate -s 160M "$img"
mke2fs -q -F -t ext4 -O casefold -U "$UUID" \
	-E hash_seed="$UUID",nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$img" ||
	fail "mke2fs -O casefold"
fill_free "$img"
fallocate -l 160M "$img" || fail "fallocate $img"
boot casefold "$T/initrd.gz" "quiet" "$img"

c=$T/casefold.console
tr -d '\r' <"$c" >"$c.txt"
if grep -q -e CF-MOUNT-FAILED -e CF-CHATTR-FAILED -e 'insmod .* failed' "$c.txt"; then
	tail -40 "$c.txt"; fail "the guest could not mount or chattr +F"
fi
# guest LINE WHAT: the guest printed LINE (a pattern)
guest() { grep -q -- "$1" "$c.txt" || { grep '^CF-' "$c.txt"; fail "the guest's $2: no '$1'"; }; }
guest '^CF-LSATTR .*F.* cf$' "lsattr -d cf"
guest '^CF-LOOKUP content of 10420$' "lookup in another case"
guest '^CF-LOOKUP-MISSING 1$' "lookup of a name never made"
guest '^CF-UMOUNTED$' "umount"
man=$T/casefold.log
assert_eq "$(wc -l <"$man")" "$(sed -n 's/^CF-FILES //p' "$c.txt")" "the guest's manifest"
for f in keep1.bin keep2.bin; do
	grep -qx "$(sha256sum <"$T/payload/$f" | cut -d' ' -f1)  ./cf/$f" "$man" ||
		fail "the guest's manifest has not the host's sha256 of cf/$f"
done

e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after the kernel"; }
# the kernel made the directory casefolded and indexed it
flags=$(debugfs -R "stat /cf" "$img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
[ $((flags & 0x40000000)) != 0 ] || fail "/cf has no casefold flag (flags $flags)"
[ $((flags & 0x1000)) != 0 ] || fail "/cf is not an htree (flags $flags)"

# the packaged e2trim, with the packaged libe2trim.so.1
LD_LIBRARY_PATH=$STAGE_LIB run_e2trim -n -v "$img"
assert_rc 0 "casefold: dry run"
# the data after the dry run: on an ext4 host, blocks the guest zeroed
# with write-zeroes are unwritten extents, holes to SEEK_DATA until a read
# brings their pages in; e2trim's probes (libblkid's signatures) read some
# of them and then count them as data it punched (16 KiB of them in one
# CI run), and the dry run reads the same
alloc=$(data_bytes "$img")
LD_LIBRARY_PATH=$STAGE_LIB run_e2trim -v "$img"
assert_rc 0 "casefold: trim"
bytes=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT")
drop=$((alloc - $(data_bytes "$img")))
if [ -z "$bytes" ] || [ "$bytes" -le $((40 << 20)) ]; then
	cat "$OUT"; fail "casefold: only '$bytes' bytes trimmed"
fi
if [ "$drop" -gt "$bytes" ] || [ $((bytes - drop)) -ge 4096 ]; then
	fail "casefold: $bytes bytes trimmed, but the file shrank by $drop"
fi
e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after the trim"; }
flags=$(debugfs -R "stat /cf" "$img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
[ $((flags & 0x40001000)) = $((0x40001000)) ] || fail "/cf lost its casefold or htree flag (flags $flags)"

# every file, read back by debugfs, has the sha256 the guest listed
# (the guest wrote every file it kept under /cf)
mkdir -p "$T/dump"
debugfs -R "rdump /cf $T/dump" "$img" >"$T/rdump.out" 2>&1 || { cat "$T/rdump.out"; fail "debugfs rdump"; }
(cd "$T/dump" && find . -type f | LC_ALL=C sort | xargs sha256sum) >"$T/after"
cmp -s "$man" "$T/after" || { diff "$man" "$T/after" | head; fail "casefold: files differ after the trim"; }
note "casefold: $(wc -l <"$man") files in the casefolded htree, $bytes bytes trimmed, the raw file shrank by $drop"
exit 0
