#!/bin/bash
# tests/bench_vm.sh - VM images: e2trim on a qcow2 in place, beside
# `qemu-img convert -S 4k -O qcow2` (a new, sparse copy) and
# `virt-sparsify --in-place` (libguestfs: boots an appliance VM), on the
# same images in one run.  Part of `make bench` (tests/bench.sh runs it);
# not a test: it prints numbers.  Needs root (mkaged.sh mounts).  Each
# row: the median of three runs on fresh copies, with the fastest and the
# slowest, writes flushed inside the clock.
#
#   BENCH_DIR     where the images live (default /var/tmp/e2trim-bench)
#   BENCH_VM_BIG=1  also the 64 GiB fragmented image (mkfrag.sh)
#   VIRT_SPARSIFY_TIMEOUT  seconds virt-sparsify gets (default 600)
#   LIBGUESTFS_BACKEND_SETTINGS  default force_tcg: on the machine this was
#       measured on /dev/kvm exists, libguestfs picks it, and the appliance's
#       kernel never prints a line (7 minutes after SeaBIOS' "Booting from
#       ROM"); under TCG virt-sparsify works
# PREP strings are run later by eval: single quotes are meant.
# shellcheck disable=SC2016
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=bench_env.sh
. "$(dirname "$0")/bench_env.sh"
mkdir -p "$dir"
export PATH="$PATH:/sbin:/usr/sbin"
export LIBGUESTFS_BACKEND_SETTINGS=${LIBGUESTFS_BACKEND_SETTINGS-force_tcg}

alloc_mib() { printf %.1f "$(echo "$(stat -c %b "$1") * 512 / 1048576" | bc -l)"; }
row() { printf '%-38s %24s %12s %12s\n' "$@"; }
now() { date +%s.%N; }
secs() { printf %.3f "$(echo "$2 - $1" | bc)"; }

# timed CMD...: run it, its writes flushed inside the clock; set SECS
# and RC; its output in $dir/vm.out
timed() {
	local t0
	t0=$(now)
	RC=0
	"$@" >"$dir/vm.out" 2>&1 || RC=$?
	sync
	SECS=$(secs "$t0" "$(now)")
}
# thrice PREP CMD...: PREP (a fresh copy), then CMD timed, three times
# ($REPEAT); SHOWN is the median with the fastest and the slowest; RC
# the worst exit
thrice() {
	local prep=$1 i all=() rc=0; shift
	for ((i = 0; i < ${REPEAT:-3}; i++)); do
		eval "$prep"
		timed "$@"
		[ "$RC" = 0 ] || rc=$RC
		all+=("$SECS")
	done
	RC=$rc
	SHOWN=$(printf '%s\n' "${all[@]}" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }')
}

# bench_qcow2 NAME RAW [novs]: the rows for one filesystem image (novs:
# without virt-sparsify, which needs minutes per GiB under TCG)
bench_qcow2() {
	local name=$1 raw=$2 novs=${3:-} base=$dir/vm-base.qcow2 w=$dir/vm-work.qcow2
	local to=${VIRT_SPARSIFY_TIMEOUT:-600}
	qemu-img convert -O qcow2 "$raw" "$base" || return
	echo
	echo "== $name as qcow2 ($(alloc_mib "$base") MiB allocated)"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	row method "seconds (min-max)" "result MiB" "saved MiB"

	thrice 'cp --sparse=always "$base" "$w"; sync' "$E2TRIM" -v "$w"
	row "e2trim (in place, qemu-nbd)" "$SHOWN" "$(alloc_mib "$w")" \
		"$(echo "$(alloc_mib "$base") - $(alloc_mib "$w")" | bc)"
	[ "$RC" = 0 ] || { echo "  e2trim exited $RC:"; sed 's/^/  | /' "$dir/vm.out"; }
	qemu-img check -q "$w" || echo "  qemu-img check: not clean"

	thrice 'rm -f "$dir/vm-conv.qcow2"; sync' \
		qemu-img convert -S 4k -O qcow2 "$base" "$dir/vm-conv.qcow2"
	row "qemu-img convert -S 4k -O qcow2" "$SHOWN" \
		"$(alloc_mib "$dir/vm-conv.qcow2")" \
		"$(echo "$(alloc_mib "$base") - $(alloc_mib "$dir/vm-conv.qcow2")" | bc)"
	rm -f "$dir/vm-conv.qcow2"

	# the image e2trim trimmed, converted: what a pipeline that wants a
	# compact copy gets after e2trim
	thrice 'rm -f "$dir/vm-conv.qcow2"; sync' \
		qemu-img convert -S 4k -O qcow2 "$w" "$dir/vm-conv.qcow2"
	row "e2trim, then qemu-img convert" "$SHOWN" \
		"$(alloc_mib "$dir/vm-conv.qcow2")" "-"
	rm -f "$dir/vm-conv.qcow2"

	if [ -n "$novs" ]; then
		:
	elif command -v virt-sparsify >/dev/null; then
		thrice 'cp --sparse=always "$base" "$w"; sync' \
			timeout -k 30 "$to" virt-sparsify --in-place "$w"
		if [ "$RC" = 0 ]; then
			row "virt-sparsify --in-place" "$SHOWN" "$(alloc_mib "$w")" \
				"$(echo "$(alloc_mib "$base") - $(alloc_mib "$w")" | bc)"
		else
			row "virt-sparsify --in-place" "failed" "-" "-"
			echo "  exit $RC after ${SECS}s; its last words:"
			tail -5 "$dir/vm.out" | sed 's/^/  | /'
		fi
	else
		row "virt-sparsify --in-place" "-" "-" "-"
		echo "  not installed (Debian libguestfs-tools)"
	fi
	rm -f "$w" "$base"
}

echo "e2trim VM image bench, $(date -u +%F), $(nproc) cores, qemu $(qemu-img --version | awk 'NR == 1 {print $3}')"
# BENCH_AGED_MB: as in tests/bench.sh, only to try the output
mb=$AGED_MB
aged=$dir/$AGED
mkaged "$aged" "$mb" 1
bench_qcow2 "aged $mb MiB ext4" "$aged"

if [ -n "${BENCH_VM_BIG:-}" ]; then
	frag=$dir/frag64g.img
	[ -f "$frag" ] || bash "$shared/mkfrag.sh" "$frag" 64 >/dev/null
	bench_qcow2 "64 GiB ext4, fragmented" "$frag" novs
fi
