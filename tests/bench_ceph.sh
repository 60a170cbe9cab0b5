#!/bin/bash
# tests/bench_ceph.sh - make bench-ceph: an aged 1 GiB ext4 in Ceph RBD,
# freed on the same one-node cluster (tests/ceph/cluster.sh) in one run:
#  - e2trim on rbd:POOL/IMAGE, the median of REPEAT runs;
#  - `rbd sparsify` (frees only chunks that are zero already), once;
#  - the in-guest route (Debian's kernel under QEMU with the image as a
#    virtio disk through qemu's rbd driver, discard=unmap: boot, mount,
#    fstrim, umount, poweroff), GUEST_RUNS times (once: 8-50 s a boot);
#  - a clone of a protected snapshot of the aged image, with writes of its
#    own (files written, half deleted, as a VM would): e2trim frees its own
#    layer's free space and the clone grows by 0 bytes (rbd du before and
#    after); and a fresh clone (nothing of its own: 0 -> 0);
#  - a fleet: FLEET aged images in one pool, one `e2trim -j 2` over all,
#    total time and bytes beside FLEET x the guest route's per-image time;
#  - `virt-sparsify --in-place`, when libguestfs is there and reaches RBD.
# How each run gets its free space back, outside the clock: the image is
# removed and `rbd import`ed again from the aged file (tests/mkaged.sh,
# the same bytes for the same arguments); a clone is removed, cloned again
# from the protected snapshot and its own writes written again.  What is
# freed is Ceph's own count, `rbd du --exact`, before and after.  Every
# figure has the load average (1 min) of its runs beside it: the machine
# may be shared.  Not a test: it prints numbers, and whether issue 33's
# targets are met.  Needs root.
#
#   BENCH_DIR      where the aged image lives (default /var/tmp/e2trim-bench)
#   BENCH_AGED_MB  its size (1024; smaller only to try the output)
#   REPEAT         e2trim's runs (5), and the clone's (3 at most)
#   GUEST_RUNS     the in-guest route's runs (1)
#   FLEET          images in the fleet row (20; 0 leaves it out)
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

REPEAT=${REPEAT:-5} GUEST_RUNS=${GUEST_RUNS:-1} FLEET=${FLEET:-20}
T=$(mktemp -d /tmp/e2trim-bench-ceph.XXXXXX)
stop_all() { bash "$here/ceph/cluster.sh" stop "$T/c"; rm -rf "$T"; }
trap stop_all EXIT
# room for the fleet's images (each as big as the aged image) and the rest
export CEPH_OSD_BYTES=$(( (FLEET * mb + 8192) << 20 ))
CEPH_CONF=$(bash "$here/ceph/cluster.sh" start "$T/c" 2>"$T/start.log") ||
	{ tail -20 "$T/start.log"; die "the cluster did not start"; }
C=$CEPH_CONF
IMG=rbd/bench
SPEC="rbd:$IMG:conf=$C"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
du_exact() {	# [IMAGE]
	rbd -c "$C" du --exact --format json "${1:-$IMG}" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][-1]["used_size"])'
}
# "MEDIAN MIN MAX" of the numbers on stdin
spread() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# "MIN-MAX" (or the one value) of the numbers on stdin
range() { sort -g | awk '{ v[NR] = $1 } END { print (v[1] == v[NR] ? v[1] : v[1] "-" v[NR]) }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }
row() { printf '%-32s %24s %10s %10s %10s %10s\n' "$@"; }

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
		-append "console=ttyS0 panic=-1 no_timer_check quiet" \
		-drive "file=$SPEC,format=raw,if=virtio,discard=unmap" \
		</dev/null >"$T/console" 2>&1
}

# --- the image put back for each run, outside the clock
fresh_import() {
	rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
	rbd -c "$C" import --no-progress "$aged" "$IMG" >/dev/null || die "rbd import"
}

# --- one row: KEY NAME RUNS PREP DU_IMAGE CMD...: PREP (outside the
# clock), then CMD timed, RUNS times; sets S_KEY (median seconds),
# SHOWN_KEY (median (min-max)), L_KEY (the load averages' range), and
# B_KEY, A_KEY, F_KEY: the medians of rbd du --exact of DU_IMAGE before
# and after, and their difference; EXTRA: what each run said
ROWS=()
S_e2trim='' F_e2trim='' S_guest='' F_guest=''
B_e2trim_clone=0 A_e2trim_clone=0 B_e2trim_fresh=0 A_e2trim_fresh=0
run_row() {
	local key=$1 name=$2 runs=$3 prep=$4 img=$5 i s b a all=() bs=() as=() ls=() t0
	shift 5
	EXTRA=()
	for ((i = 0; i < runs; i++)); do
		"$prep"
		b=$(du_exact "$img")
		sync
		ls+=("$(load1)")
		t0=$(now)
		"$@" >"$T/out" 2>&1 || { echo "  $name exited $?:"; tail -5 "$T/out" | sed 's/^/  | /'; }
		s=$(secs "$t0" "$(now)")
		a=$(du_exact "$img")
		all+=("$s") bs+=("$b") as+=("$a")
		[ "$key" != guest ] || EXTRA+=("$(tr -d '\r' <"$T/console" |
			awk '$1 == "GUEST" && $2 == "fstrim" { printf "%.2f", $4 - $3 }')")
		case $key in e2trim*) EXTRA+=("$(awk '/requests/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^requests/) print $i }' "$T/out")") ;; esac
	done
	read -r SECS SMIN SMAX < <(printf '%s\n' "${all[@]}" | spread)
	read -r BEFORE _ _ < <(printf '%s\n' "${bs[@]}" | spread)
	read -r AFTER _ _ < <(printf '%s\n' "${as[@]}" | spread)
	FREED=$((BEFORE - AFTER))
	declare -g "S_$key=$SECS" "F_$key=$FREED" "B_$key=$BEFORE" "A_$key=$AFTER"
	declare -g "SHOWN_$key=$SECS ($SMIN-$SMAX)"
	declare -g "L_$key=$(printf '%s\n' "${ls[@]}" | range)"
	ROWS+=("$key|$name")
	row "$name" "$SECS ($SMIN-$SMAX)" "$(printf '%s\n' "${ls[@]}" | range)" \
		"$(mib "$BEFORE")" "$(mib "$AFTER")" "$(mib "$FREED")"
	[ ${#EXTRA[@]} = 0 ] || echo "  each run: ${EXTRA[*]}"
}

# --- the clone: a protected snapshot of the aged image, and the writes
# of a layer of its own (48 files of 0.7-3.5 MiB written, every other one
# deleted again: a VM that used its disk), as the 64 KiB chunks where the
# filesystem so changed differs from the aged image
CBASE=rbd/cbase CLONE=rbd/clone
clone_setup() {
	local i
	cp --sparse=always "$aged" "$T/own.img"
	for ((i = 0; i < 48; i++)); do
		head -c $(( (i % 5 + 1) * 700 * 1024 )) /dev/zero | tr '\0' '\063' >"$T/n.$i"
		echo "write $T/n.$i n$i"
	done >"$T/cmds"
	for ((i = 0; i < 48; i += 2)); do echo "rm n$i"; done >>"$T/cmds"
	debugfs -w -f "$T/cmds" "$T/own.img" >/dev/null 2>&1 || die "debugfs writes"
	rm -f "$T"/n.*
	python3 - "$aged" "$T/own.img" "$T/chunks" <<'PY' || die "the clone's chunks"
import sys
old, new, out = sys.argv[1:]
with open(old, "rb") as a, open(new, "rb") as b, open(out, "w") as o:
    off = 0
    while True:
        x, y = a.read(65536), b.read(65536)
        if not y:
            break
        if x != y:
            print(off, file=o)
        off += len(y)
PY
	rbd -c "$C" import --no-progress "$aged" "$CBASE" >/dev/null || die "rbd import"
	rbd -c "$C" snap create --no-progress "$CBASE@base" >/dev/null || die "rbd snap create"
	rbd -c "$C" snap protect "$CBASE@base" || die "rbd snap protect"
}
# a fresh clone, and (own) the chunks written into it
fresh_clone() {
	rbd -c "$C" rm --no-progress "$CLONE" >/dev/null 2>&1
	rbd -c "$C" clone "$CBASE@base" "$CLONE" || die "rbd clone"
}
own_clone() {
	fresh_clone
	python3 - "$C" "$CLONE" "$T/own.img" "$T/chunks" <<'PY' || die "writing into the clone"
import sys, rados, rbd
conf, name, new, chunks = sys.argv[1:]
pool, img = name.split("/")
with rados.Rados(conffile=conf) as c, c.open_ioctx(pool) as io, \
     rbd.Image(io, img) as im, open(new, "rb") as b, open(chunks) as ch:
    for line in ch:
        off = int(line)
        b.seek(off)
        im.write(b.read(65536), off)
PY
}

# --- the fleet: FLEET aged images in one pool
fleet_names() {
	local i
	for ((i = 1; i <= FLEET; i++)); do printf 'rbd/fleet%02d\n' "$i"; done
}
fleet_du() {	# the sum of rbd du --exact over the fleet
	local n sum=0
	for n in $(fleet_names); do sum=$((sum + $(du_exact "$n"))); done
	echo "$sum"
}

echo "e2trim Ceph RBD bench, $(date -u +%F), $(nproc) cores, host kernel $(uname -r), guest kernel $KVER, ceph $(ceph --version | awk '{ print $3 }'), qemu $(qemu-img --version | awk 'NR == 1 { print $3 }'), e2trim $(git -C "$here/.." describe --always --dirty 2>/dev/null)"
echo "image: $aged ($mb MiB, aged by tests/mkaged.sh, seed 1); before each run it is removed and imported again (rbd import), outside the clock"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
row method "seconds (min-max)" "load" "MiB before" "MiB after" "MiB freed"

run_row e2trim "e2trim rbd:POOL/IMAGE" "$REPEAT" fresh_import "$IMG" "$E2TRIM" -v "$SPEC"
run_row sparsify "rbd sparsify" 1 fresh_import "$IMG" rbd -c "$C" sparsify --no-progress "$IMG"
if [ -r "$VMLINUZ" ] && [ -d "/lib/modules/$KVER" ]; then
	guest_initrd
	run_row guest "guest: boot, fstrim, poweroff" "$GUEST_RUNS" fresh_import "$IMG" guest
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

clone_setup
run_row e2trim_clone "e2trim on a clone, own writes" "$(( REPEAT < 3 ? REPEAT : 3 ))" \
	own_clone "$CLONE" "$E2TRIM" -v "rbd:$CLONE:conf=$C"
run_row e2trim_fresh "e2trim on a fresh clone" 1 fresh_clone "$CLONE" \
	"$E2TRIM" -v "rbd:$CLONE:conf=$C"
rbd -c "$C" rm --no-progress "$CLONE" >/dev/null 2>&1
CBASE_DU=$(du_exact "$CBASE@base")

if [ "$FLEET" -gt 0 ]; then
	for n in $(fleet_names); do
		rbd -c "$C" import --no-progress "$aged" "$n" >/dev/null || die "rbd import $n"
	done
	sync
	FB=$(fleet_du)
	FL=$(load1)
	t0=$(now)
	# shellcheck disable=SC2046  # one name a word
	"$E2TRIM" -j 2 $(fleet_names | sed "s|^|rbd:|; s|\$|:conf=$C|") >"$T/out" 2>&1 ||
		{ echo "  the fleet run exited $?:"; tail -5 "$T/out" | sed 's/^/  | /'; }
	S_fleet=$(secs "$t0" "$(now)")
	FA=$(fleet_du)
	FL="$FL-$(load1)"
	row "e2trim -j 2, $FLEET images" "$S_fleet (one run)" "$FL" "$(mib "$FB")" "$(mib "$FA")" "$(mib $((FB - FA)))"
fi

# --- the table again, in README's style, with the ratios and the targets
pct_of_guest() {	# FREED: % of what the guest's fstrim freed
	if [ -z "${F_guest:-}" ] || [ "${F_guest:-0}" = 0 ]; then echo –; return; fi
	awk -v a="$1" -v b="$F_guest" 'BEGIN { printf "%.1f %%", 100 * a / b }'
}
x_of_guest() {	# SECS: the ratio to the guest route's
	[ -n "${S_guest:-}" ] || { echo –; return; }
	awk -v a="$1" -v b="$S_guest" 'BEGIN { r = a / b; printf (r >= 10 ? "%.0f" : (r >= 0.1 ? "%.2f" : "%.3f")), r }'
}
echo
echo "== README's RBD table (aged $mb MiB ext4; median (min-max) of the runs; rbd du --exact; load: 1-min load average of the runs; % and x: of the in-guest fstrim route's)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| method | runs | seconds | load | rbd du before | after | freed | % of fstrim's freed | time / guest route's |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in "${ROWS[@]}"; do
	k=${r%%|*}
	s="S_$k" f="F_$k" b="B_$k" a="A_$k" sh="SHOWN_$k" l="L_$k"
	case $k in
	e2trim) n=$REPEAT ;; guest) n=$GUEST_RUNS ;; e2trim_clone) n=$(( REPEAT < 3 ? REPEAT : 3 )) ;; *) n=1 ;;
	esac
	pct=$(pct_of_guest "${!f}")
	case $k in e2trim_*) pct="– (its own layer: ${!b} -> ${!a} bytes)" ;; esac
	echo "| ${r#*|} | $n | ${!sh} | ${!l} | $(mib "${!b}") MiB | $(mib "${!a}") MiB | $(mib "${!f}") MiB | $pct | ×$(x_of_guest "${!s}") |"
done
if [ "$FLEET" -gt 0 ]; then
	g20=–
	[ -z "${S_guest:-}" ] || g20=$(awk -v g="$S_guest" -v n="$FLEET" 'BEGIN { printf "%.1f", g * n }')
	echo "| e2trim -j 2 over $FLEET images (one run) | 1 | $S_fleet | $FL | $(mib "$FB") MiB | $(mib "$FA") MiB | $(mib $((FB - FA))) MiB | $(pct_of_guest $(( (FB - FA) / FLEET ))) per image | ×$(awk -v a="$S_fleet" -v g="${S_guest:-0}" -v n="$FLEET" 'BEGIN { if (g > 0) printf "%.3f", a / (g * n); else printf "–" }') of $FLEET guest routes ($g20 s) |"
fi
echo "| $VS | – | – | – | – | – | – | – | $VS_WHY |"
echo "the clone's parent snapshot: rbd du --exact $CBASE_DU bytes after every clone run"
if [ -n "${F_guest:-}" ]; then
	echo "fstrim inside the guest took ${GUEST_FSTRIM[*]} s; the route above is QEMU's start to its exit"
	awk -v e="$F_e2trim" -v g="$F_guest" -v se="$S_e2trim" -v sg="$S_guest" 'BEGIN {
		p = 100 * e / g; r = se / sg
		printf "target: e2trim frees >= 99 %% of what fstrim in the guest frees: %.1f %%: %s\n", p, (p >= 99 ? "met" : "NOT met")
		printf "target: in <= 0.05x the guest route'"'"'s time: %.3fx (%.3f s against %.2f s): %s\n", r, se, sg, (r <= 0.05 ? "met" : "NOT met")
	}'
fi
awk -v se="$S_e2trim" 'BEGIN { printf "target: e2trim median <= 0.5 s: %.3f s: %s\n", se, (se <= 0.5 ? "met" : "NOT met") }'
awk -v b="$B_e2trim_clone" -v a="$A_e2trim_clone" -v fb="$B_e2trim_fresh" -v fa="$A_e2trim_fresh" 'BEGIN {
	printf "target: a clone grows by 0 bytes: own writes %d -> %d, fresh %d -> %d: %s\n", b, a, fb, fa, (a <= b && fa <= fb ? "met" : "NOT met")
	printf "target: a clone frees its own layer'"'"'s free space: %.1f MiB freed: %s\n", (b - a) / 1048576, (a < b ? "met" : "NOT met")
}'
