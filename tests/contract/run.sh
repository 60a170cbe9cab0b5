#!/bin/bash
# tests/contract/run.sh [KIND...] - the target-contract conformance suite
# (src/target/README.md, "The target contract"): every scenario over every
# kind of target, one line each:
#   PASS kind scenario (Ns)      FAIL kind scenario (exit N) + its last lines
#   N/A kind scenario: reason    SKIP kind scenario: reason
# and the closing "N passed, N failed, N skipped" (N/A cases are counted
# on the line before).  Under CI=true a skip is a failure.
#
# The kinds are data: kinds/KIND.sh (the functions tests/contract/lib.sh
# lists), one file each; the scenarios scenarios/SCENARIO.sh.  A kind
# added later is a new file here, and must pass every scenario.
# CONTRACT_KINDS / CONTRACT_SCENARIOS: space-separated subsets (or the
# kinds as arguments); CONTRACT_KINDS=local: the kinds that need no Ceph,
# =ceph: those that do (a kind says "# kind-needs: ceph").  The RBD kinds need the Ceph cluster of
# tests/ceph/: with CEPH_CONF set (tests/ceph/run.sh) they use that one,
# otherwise run.sh starts its own (cluster.sh) and stops it at the end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${E2TRIM:?E2TRIM must name the e2trim binary}"
export E2TRIM PATH=/usr/sbin:/usr/bin:/sbin:/bin
SCENARIOS=${CONTRACT_SCENARIOS:-"writer comesgoes repoint bigger stale names unchanged second signals signature gpt4k paths_loop paths_qemu paths_link paths_fuse paths_proc"}
# every kinds/KIND.sh (not the *_lib.sh they share); "local": those
# without "# kind-needs: ceph", "ceph": those with
kinds_of() {
	local f k
	for f in "$here"/kinds/*.sh; do
		k=$(basename "$f" .sh)
		case $k in *_lib) continue ;; esac
		if grep -q '^# kind-needs: ceph' "$f"; then
			[ "$1" = local ] || echo "$k"
		else
			[ "$1" = ceph ] || echo "$k"
		fi
	done
}
kinds=${*:-${CONTRACT_KINDS:-all}}
case $kinds in
all | local | ceph) kinds=$(kinds_of "$kinds") ;;
esac

pass=0 failed=0 skipped=0 nas=0
CX_FIX=$(mktemp -d "${E2E_TMPDIR:-/tmp}/e2trim-contract.XXXXXX")
export CX_FIX
CLUSTER=
finish() {
	[ -z "$CLUSTER" ] || bash "$here/../ceph/cluster.sh" stop "$CLUSTER"
	rm -rf "$CX_FIX"
}
trap finish EXIT

skip_case() {	# kind scenario reason
	if [ "${CI:-}" = true ]; then
		failed=$((failed + 1)); echo "FAIL $1 $2: $3 (a skip under CI=true)"
	else
		skipped=$((skipped + 1)); echo "SKIP $1 $2: $3"
	fi
}

# what a kind needs that this machine may lack: the reason, or nothing
missing_for() {
	local p
	[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts, chown)"; return; }
	for p in qemu-img qemu-io qemu-nbd nbdkit sfdisk; do
		command -v $p >/dev/null || { echo "$p is missing: make deps"; return; }
	done
	if grep -q '^# kind-needs: ceph' "$here/kinds/$1.sh"; then
		[ -n "${CEPH_CONF:-}" ] || echo "no Ceph cluster: ${CEPH_WHY:-make deps-ceph}"
	fi
}

# the fixtures every case copies (tests/contract/lib.sh lists them)
make_fixtures() {
	T=$CX_FIX/mk bash -c '
		. "$0/lib.sh"
		mkfs "$CX_FIX/fs.raw" 32M -t ext4 -g 1024
		age "$CX_FIX/fs.raw" 33
		e2fsck -fn "$CX_FIX/fs.raw" >/dev/null 2>&1 || fail "e2fsck fs.raw"
		fs_files "$CX_FIX/fs.raw" >"$CX_FIX/fs.files"
		make_patch "$CX_FIX/fs.raw" "$CX_FIX/patch"
		cp --sparse=always "$CX_FIX/fs.raw" "$CX_FIX/mmp.raw"
		tune2fs -O mmp -E mmp_update_interval=1 "$CX_FIX/mmp.raw" >/dev/null 2>&1 || fail "tune2fs mmp"
		# the old whole-disk filesystem, then the table and the new one
		# (partition 1 at 8 MiB: the old metadata, in its first MiBs,
		# stays whole, and calls partition 1 free space)
		mkfs "$CX_FIX/stale.raw" 64M -t ext4 -O ^resize_inode
		age "$CX_FIX/stale.raw" 34
		printf "label: dos\nstart=16384, size=65536, type=83\n" |
			sfdisk -q "$CX_FIX/stale.raw" || fail "sfdisk"
		mke2fs -q -F -t ext4 -g 1024 -U "$UUID" -E hash_seed="$UUID",nodiscard,offset=8388608 \
			"$CX_FIX/stale.raw" 32M || fail "mke2fs in partition 1"
		age_part "$CX_FIX/stale.raw" 8388608 20 7 41
		e2fsck -fn "$CX_FIX/stale.raw" >/dev/null 2>&1 || fail "the old filesystem is not whole"
		dumpe2fs -h "$CX_FIX/stale.raw" >/dev/null 2>&1 || fail "the old superblock is gone"
	' "$here" || { echo "FAIL fixtures"; exit 1; }
}

# the Ceph cluster, once, if an RBD kind is asked for and none runs
need_ceph=
for k in $kinds; do
	! grep -q '^# kind-needs: ceph' "$here/kinds/$k.sh" || need_ceph=1
done
if [ -n "$need_ceph" ] && [ -z "${CEPH_CONF:-}" ]; then
	if [ "$(id -u)" != 0 ] || ! command -v ceph-mon >/dev/null; then
		CEPH_WHY="make deps-ceph (root; ceph-mon, ceph-osd, ceph-common)"
	else
		CLUSTER=$CX_FIX/ceph
		if CEPH_CONF=$(bash "$here/../ceph/cluster.sh" start "$CLUSTER" 2>"$CX_FIX/ceph.log"); then
			export CEPH_CONF CEPH_DIR=$CLUSTER
		else
			CEPH_WHY="the cluster did not start: $(tail -1 "$CX_FIX/ceph.log")"
		fi
	fi
fi
export CEPH_WHY=${CEPH_WHY:-}

# run_case KIND SCENARIO: one case in its own bash and folder; its exit
# code and seconds go to $R/KIND-SCENARIO.rc
run_case() {
	local k=$1 s=$2 t t0 rc
	t=$(mktemp -d "${E2E_TMPDIR:-/tmp}/e2trim-cx-$k-$s.XXXXXX")
	t0=$(date +%s)
	# a guard, not a timing (tests/jobs.sh's JOB_GUARD): a case that
	# hangs is stopped with all it started and fails, saying so
	T=$t timeout --kill-after=60 "${JOB_GUARD:-1200}" \
		bash "$here/case.sh" "$k" "$s" >"$R/$k-$s.log" 2>&1
	rc=$?
	[ "$rc" != 124 ] && [ "$rc" != 137 ] ||
		echo "GUARD: $k $s still ran after ${JOB_GUARD:-1200}s (JOB_GUARD), stopped (exit $rc)" >>"$R/$k-$s.log"
	rm -rf "$t"
	echo "$rc $(( $(date +%s) - t0 ))" >"$R/$k-$s.rc.new"
	mv "$R/$k-$s.rc.new" "$R/$k-$s.rc"
}

# report KIND SCENARIO: its line (and a failure's last lines)
report() {
	local k=$1 s=$2 rc secs log=$R/$1-$2.log
	read -r rc secs <"$R/$k-$s.rc"
	case $rc in
	0)	pass=$((pass + 1)); echo "PASS $k $s (${secs}s)"
		[ -z "${SHOW_NOTES:-}" ] || grep '^  ' "$log" | sed 's/^/  | /' ;;
	78)	nas=$((nas + 1)); echo "N/A $k $s: $(sed -n 's/^N\/A: //p' "$log")" ;;
	77)	skip_case "$k" "$s" "$(grep SKIP "$log" | tail -1)" ;;
	*)	failed=$((failed + 1)); echo "FAIL $k $s (exit $rc, ${secs}s)"
		sed 's/^/  | /' "$log" | tail -15 ;;
	esac
}

# CONTRACT_JOBS cases side by side (the cores): each has its own folder,
# fixtures copies, loop devices and sockets; RBD cases share the cluster
# but each makes its own images.  The lines come in the cases' order.
jobs=${CONTRACT_JOBS:-$(nproc)}
R=$CX_FIX/results
mkdir -p "$R"
start=$(date +%s)
make_fixtures
cases=()
for s in $SCENARIOS; do
	for k in $kinds; do cases+=("$k $s"); done
done
declare -A running=()
next=0
for c in "${cases[@]}"; do
	read -r k s <<<"$c"
	why=$(missing_for "$k")
	if [ -n "$why" ]; then echo "77 0" >"$R/$k-$s.rc"; echo "SKIP $why" >"$R/$k-$s.log"; continue; fi
	while [ ${#running[@]} -ge "$jobs" ]; do
		wait -n -p pid "${!running[@]}"
		unset "running[$pid]"
	done
	run_case "$k" "$s" &
	running[$!]=1
	# the lines of the cases that have ended, in order
	while [ "$next" -lt ${#cases[@]} ]; do
		read -r k s <<<"${cases[$next]}"
		[ -f "$R/$k-$s.rc" ] || break
		report "$k" "$s"; next=$((next + 1))
	done
done
wait
while [ "$next" -lt ${#cases[@]} ]; do
	read -r k s <<<"${cases[$next]}"
	report "$k" "$s"; next=$((next + 1))
done
echo "$nas not applicable (each with its reason above); $(( $(date +%s) - start )) s"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
