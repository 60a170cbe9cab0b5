#!/bin/bash
# tests/bench_ceph.sh - make bench-ceph: an aged 1 GiB ext4 in Ceph RBD,
# freed four ways on the same one-node cluster (tests/ceph/cluster.sh) in
# one run: e2trim on rbd:POOL/IMAGE, `rbd sparsify` (frees only chunks
# that are zero already), the in-guest route (Debian's kernel under QEMU
# with the image as a virtio disk through qemu's rbd driver,
# discard=unmap: mount, fstrim, umount, poweroff) and
# `virt-sparsify --in-place` when libguestfs is there and reaches RBD.
# Not a test: it prints numbers (and whether issue 28's targets are met).
# Each row is the median of three runs, with the fastest and the slowest,
# each on a fresh `rbd import` of the same image; what is freed is Ceph's
# own count (`rbd du --exact` before and after).  Needs root.
#
#   BENCH_DIR      where the aged image lives (default /var/tmp/e2trim-bench)
#   BENCH_AGED_MB  its size (1024; smaller only to try the output)
#   REPEAT         runs per row (3)
#   GUEST_TIMEOUT  seconds a guest gets to power off (300)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=bench_env.sh
. "$(dirname "$0")/bench_env.sh"
mb=$AGED_MB
aged=$dir/$AGED
# the system's python, qemu and ceph tools first (as tests/ceph/run.sh)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "bench-ceph: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (a Ceph cluster)"
for p in ceph-mon ceph-osd rbd qemu-nbd qemu-system-x86_64 busybox cpio; do
	command -v "$p" >/dev/null || die "$p is missing: make deps-ceph deps-boot"
done
mkdir -p "$dir"
mkaged "$aged" "$mb" 1 || die "tests/mkaged.sh"

T=$(mktemp -d /tmp/e2trim-bench-ceph.XXXXXX)
stop_all() { bash "$here/ceph/cluster.sh" stop "$T/c"; rm -rf "$T"; }
trap stop_all EXIT
CEPH_CONF=$(bash "$here/ceph/cluster.sh" start "$T/c" 2>"$T/start.log") ||
	{ tail -20 "$T/start.log"; die "the cluster did not start"; }
C=$CEPH_CONF
IMG=rbd/bench
SPEC="rbd:$IMG:conf=$C"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
du_exact() {
	rbd -c "$C" du --exact --format json "$IMG" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][-1]["used_size"])'
}
# "MEDIAN MIN MAX" of the numbers on stdin
spread() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
row() { printf '%-30s %24s %10s %10s %10s\n' "$@"; }

# --- the in-guest route: Debian's kernel, an initramfs of busybox and the
# modules a virtio disk with ext4 needs; /init mounts it, times fstrim
# (busybox's) with /proc/uptime, unmounts and powers off.
KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	grep -o 'linux-image-[^ ,]*' | head -1 | sed 's/^linux-image-//')
VMLINUZ=/boot/vmlinuz-$KVER
guest_initrd() {
	local d=$T/initrd m lib bb
	bb=$(command -v busybox)
	mkdir -p "$d"/{bin,dev,proc,sys,mnt,m}
	cp "$bb" "$d/bin/busybox"
	for lib in $(ldd "$bb" 2>/dev/null | grep -o '/[^ ]*'); do
		mkdir -p "$d${lib%/*}"
		cp -L "$lib" "$d$lib"
	done
	for m in virtio_pci virtio_blk ext4 crc32c_generic; do
		modprobe -S "$KVER" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		grep -v crc32c-intel >"$T/modules"	# no SSE 4.2 under TCG
	while read -r m; do
		cp "$m" "$d/m/" && echo "${m##*/}" >>"$d/m/order"
	done <"$T/modules"
	cat >"$d/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
for m in $(cat /m/order); do insmod "/m/$m"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
mount -t ext4 -o nodiscard /dev/vda /mnt || echo "GUEST mount failed"
t0=$(cut -d' ' -f1 /proc/uptime)
fstrim -v /mnt
t1=$(cut -d' ' -f1 /proc/uptime)
umount /mnt
t2=$(cut -d' ' -f1 /proc/uptime)
echo "GUEST fstrim $t0 $t1 umount $t2"
poweroff -f
EOF
	chmod 755 "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet) | gzip -1 >"$T/guest.img"
}
guest() {
	timeout -k 5 "${GUEST_TIMEOUT:-300}" qemu-system-x86_64 -machine q35 \
		-accel tcg -m 512 -smp 2 -nic none -display none -monitor none \
		-serial stdio -no-reboot -kernel "$VMLINUZ" -initrd "$T/guest.img" \
		-append "console=ttyS0 panic=-1 quiet" \
		-drive "file=$SPEC,format=raw,if=virtio,discard=unmap" \
		</dev/null >"$T/console" 2>&1
}

# --- one row: NAME then the command, REPEAT times on a fresh import;
# sets S_KEY (median seconds), SHOWN_KEY, and B_KEY, A_KEY, F_KEY: the
# medians of rbd du --exact before and after, and their difference
ROWS=()
# set by run_row (declare -g)
S_e2trim='' F_e2trim='' S_guest='' F_guest=''
run_row() {	# KEY NAME CMD...
	local key=$1 name=$2 i s b a all=() bs=() as=() t0; shift 2
	EXTRA=()
	for ((i = 0; i < ${REPEAT:-3}; i++)); do
		rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
		rbd -c "$C" import --no-progress "$aged" "$IMG" >/dev/null || die "rbd import"
		b=$(du_exact)
		sync
		t0=$(now)
		"$@" >"$T/out" 2>&1 || { echo "  $name exited $?:"; tail -5 "$T/out" | sed 's/^/  | /'; }
		s=$(secs "$t0" "$(now)")
		a=$(du_exact)
		all+=("$s") bs+=("$b") as+=("$a")
		[ "$key" != guest ] || EXTRA+=("$(tr -d '\r' <"$T/console" |
			awk '$1 == "GUEST" && $2 == "fstrim" { printf "%.2f", $4 - $3 }')")
		[ "$key" != e2trim ] || EXTRA+=("$(awk '/requests/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^requests/) print $i }' "$T/out")")
	done
	read -r SECS SMIN SMAX < <(printf '%s\n' "${all[@]}" | spread)
	read -r BEFORE _ _ < <(printf '%s\n' "${bs[@]}" | spread)
	read -r AFTER _ _ < <(printf '%s\n' "${as[@]}" | spread)
	FREED=$((BEFORE - AFTER))
	declare -g "S_$key=$SECS" "F_$key=$FREED" "B_$key=$BEFORE" "A_$key=$AFTER"
	declare -g "SHOWN_$key=$SECS ($SMIN-$SMAX)"
	ROWS+=("$key|$name")
	row "$name" "$SECS ($SMIN-$SMAX)" "$(mib "$BEFORE")" "$(mib "$AFTER")" \
		"$(mib "$FREED")"
	[ ${#EXTRA[@]} = 0 ] || echo "  each run: ${EXTRA[*]}"
}

echo "e2trim Ceph RBD bench, $(date -u +%F), $(nproc) cores, host kernel $(uname -r), guest kernel $KVER, ceph $(ceph --version | awk '{ print $3 }'), qemu $(qemu-img --version | awk 'NR == 1 { print $3 }'), e2trim $(git -C "$here/.." describe --always --dirty 2>/dev/null)"
echo "image: $aged ($mb MiB, aged by tests/mkaged.sh, seed 1), imported fresh into $IMG for each run"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
row method "seconds (min-max)" "MiB before" "MiB after" "MiB freed"

run_row e2trim "e2trim rbd:POOL/IMAGE" "$E2TRIM" -v "$SPEC"
run_row sparsify "rbd sparsify" rbd -c "$C" sparsify --no-progress "$IMG"
if [ -r "$VMLINUZ" ] && [ -d "/lib/modules/$KVER" ]; then
	guest_initrd
	run_row guest "guest: boot, fstrim, poweroff" guest
	GUEST_FSTRIM=("${EXTRA[@]}")
else
	echo "(no Debian kernel: make deps-boot; the in-guest rows are left out)"
fi
VS="virt-sparsify --in-place"
if ! command -v virt-sparsify >/dev/null; then
	VS_WHY="not installed (Debian libguestfs-tools); it takes a file or a device, not an rbd: name"
else
	VS_WHY="not run: it takes a local file or device (no rbd: URI); only through a kernel mapping (rbd map), which the host kernel here lacks"
fi
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1

# --- the table again, in README's style, with the ratios and the targets
echo
echo "== README's RBD table (aged $mb MiB ext4, median of ${REPEAT:-3} (min-max); rbd du --exact; % and x: of the in-guest fstrim's)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| method | seconds | rbd du before | after | freed | % of fstrim's freed | time / e2trim's |"
echo "|---|---|---|---|---|---|---|"
for r in "${ROWS[@]}"; do
	k=${r%%|*}
	s="S_$k" f="F_$k" b="B_$k" a="A_$k" sh="SHOWN_$k"
	pct=–
	[ -z "${F_guest:-}" ] || [ "${F_guest:-0}" = 0 ] ||
		pct=$(awk -v a="${!f}" -v b="$F_guest" 'BEGIN { printf "%.1f %%", 100 * a / b }')
	x=$(awk -v a="${!s}" -v b="$S_e2trim" 'BEGIN { r = a / b; printf (r >= 10 ? "%.0f" : "%.1f"), r }')
	echo "| ${r#*|} | ${!sh} | $(mib "${!b}") MiB | $(mib "${!a}") MiB | $(mib "${!f}") MiB | $pct | ×$x |"
done
echo "| $VS | – | – | – | – | – | $VS_WHY |"
if [ -n "${F_guest:-}" ]; then
	echo "fstrim inside the guest took ${GUEST_FSTRIM[*]} s (its runs); the route above is QEMU start to exit"
	awk -v e="$F_e2trim" -v g="$F_guest" -v se="$S_e2trim" -v sg="$S_guest" 'BEGIN {
		p = 100 * e / g; r = se / sg
		printf "target: e2trim frees >= 90 %% of what fstrim in the guest frees: %.1f %%: %s\n", p, (p >= 90 ? "met" : "NOT met")
		printf "target: in <= 0.1x its time: %.3fx (%.2f s against %.2f s): %s\n", r, se, sg, (r <= 0.1 ? "met" : "NOT met")
	}'
fi
