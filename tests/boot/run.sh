#!/bin/bash
# tests/boot/run.sh DEBDIR - boot Debian's kernel under QEMU with each of
# e2trim's boot integrations, installed from the package built in DEBDIR
# (make deb), and print one line per test and the totals.  Like
# tests/e2e/run.sh: exit 77 is a skip, and a failure under CI=true.
# ONLY=substring runs only the tests whose name has it.  Last, the
# budget: each boot at most 90 s, the whole of make check-boot (from
# BOOT_START, which the Makefile sets before make deb) at most 15 min.
# Over budget is said, not failed: on a machine loaded by other work a
# boot takes longer, and only a hung one (BOOT_TIMEOUT) fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
debdir=${1:?usage: run.sh DEBDIR}
debs=("$debdir"/e2trim_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || { echo "no e2trim_*.deb in $debdir (make deb)" >&2; exit 1; }
debs=("$debdir"/libe2trim1_*.deb)
libdeb=${debs[0]}
[ -f "$libdeb" ] || { echo "no libe2trim1_*.deb in $debdir (make deb)" >&2; exit 1; }
debs=("$debdir"/libe2trim-dev_*.deb)
devdeb=${debs[0]}
[ -f "$devdeb" ] || { echo "no libe2trim-dev_*.deb in $debdir (make deb)" >&2; exit 1; }

# The staging root: what the packages e2trim and libe2trim1 install,
# nowhere else.
STAGE=$(mktemp -d /tmp/e2trim-boot-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
dpkg-deb -x "$deb" "$STAGE" || exit 1
dpkg-deb -x "$libdeb" "$STAGE" || exit 1
export DEB=$deb LIBDEB=$libdeb DEVDEB=$devdeb DEBDIR=$debdir STAGE \
	E2TRIM=$STAGE/usr/sbin/e2trim

all_start=$(date +%s)
BOOT_TIMES=$STAGE/boot-times
: >"$BOOT_TIMES"
export BOOT_TIMES
R=$STAGE/results
mkdir -p "$R"
# shellcheck source-path=SCRIPTDIR/.. source=jobs.sh
. "$here/../jobs.sh"
SCRATCH=/tmp JOB_NOTES=1 JOB_TAIL=40
# a test boots up to 7 guests, each guarded by BOOT_TIMEOUT: the whole
# test by a wider guard than the end-to-end tests'
JOB_GUARD=${JOB_GUARD:-3600}

# BOOT_JOBS guests side by side (default: the cores).  A guest is mostly
# one busy vCPU (the kernel and init start on one), so two fill two
# cores; each test has its own disks, consoles and scratch folder, and
# only t_systemd uses the Debian root's cache.  The longest first (their
# boots: dracut 4, initramfs-tools 7, systemd 2 and a Debian root).
jobs=${BOOT_JOBS:-$(nproc)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "BOOT_JOBS=$jobs: not a number of jobs" >&2; exit 2; }
names=()
for t in "$here"/t_dracut.sh "$here"/t_initramfs_tools.sh "$here"/t_systemd.sh \
	"$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -z "${ONLY:-}" ] || [[ "$name" == *$ONLY* ]] || continue
	[[ " ${names[*]} " == *" $name "* ]] || names+=("$name")
done
for name in "${names[@]}"; do
	[ ${#running[@]} -lt "$jobs" ] || job_reap
	job_start "$name"
done
while [ ${#running[@]} -gt 0 ]; do job_reap; done
echo "$pass passed, $failed failed, $skipped skipped ($(($(date +%s) - all_start))s)"
total=$(($(date +%s) - ${BOOT_START:-$all_start}))
awk -v total="$total" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" '
	{ n++; ms += $2; if ($2 > max) { max = $2; who = $1 } if ($2 > 90000) over++ }
	END {
		printf "budget: %d boots, %.1f s in all, longest %.1f s (%s): %s; " \
		       "make check-boot %d s: %s (load average %s)\n",
		       n, ms / 1000, max / 1000, n ? who : "-",
		       over ? over " over 90 s" : "each <= 90 s",
		       total, total <= 900 ? "<= 15 min" : "OVER 15 min", la
	}' "$BOOT_TIMES"
[ "$failed" = 0 ]
