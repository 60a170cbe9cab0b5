#!/bin/bash
# tests/e2e/run.sh [SUBSTRING] - run every end-to-end test (or those whose
# name has SUBSTRING), print one line each and the totals.  Under CI=true
# a skipped test counts as failed: CI runs as root with loop devices, so
# nothing there has a reason to skip.
#
# E2E_JOBS (default: the number of cores): tests run side by side, each
# in its own scratch folder.  A test that cannot share the machine says
# so itself, in a line of its own:
#   # e2e: serial (why)        runs alone, with no other test beside it
#   # e2e: no-sanitize (why)   never runs the sanitized build (E2TRIM under
#                              build-san/, make check SANITIZE=1): not run there
#   # e2e: slow (why)          started before the others, so that it does not
#                              run alone at the end
#   # e2e: sources (why)       checks the sources, scripts and fixtures'
#                              recipes, not what the build does: E2E_SOURCES=skip
#                              leaves it out, =only runs just those (.ci/run
#                              runs them beside the Ceph phase, at nice 19)
# E2E_CACHE: where a test keeps an input that is slow to make and the same
# in every pass (the 5 TiB image of t_slow_huge_fs), so that make check
# SANITIZE=1 copies what make check made; build/e2e-cache by default
# (make clean removes it), empty: nothing kept.
# E2E_TMPDIR: where the scratch folders go (/tmp; .ci/run: /dev/shm for
# one pass, tmpfs, /tmp for the other).
# E2E_TIMES=FILE: every test's wall and CPU seconds written there.
# TESTS_DIR: run the t_*.sh of that folder instead (tests/ceph/run.sh
# does, once its cluster is up); SHOW_NOTES=1: a passed test's notes too.
set -u
here=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
: "${E2TRIM:?E2TRIM must name the e2trim binary}"
export E2TRIM
export E2E_CACHE=${E2E_CACHE-$(cd "$here/../.." && pwd)/build/e2e-cache}
jobs=${E2E_JOBS:-$(nproc)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "E2E_JOBS=$jobs: not a number of jobs" >&2; exit 2; }
sanitized=
case $E2TRIM in */build-san/*) sanitized=1 ;; esac
only=${1:-}
R=$(mktemp -d /tmp/e2trim-run.XXXXXX)
trap 'rm -rf "$R"' EXIT

# declares FILE WORD: the test has a line "# e2e: WORD (...)"
declares() { grep -qE "^# e2e: $2( |\$)" "$1"; }

# shellcheck source-path=SCRIPTDIR/.. source=jobs.sh
. "$(cd "$(dirname "$0")" && pwd)/../jobs.sh"
SCRATCH=${E2E_TMPDIR:-/tmp}
JOB_NOTES=${SHOW_NOTES:+1} JOB_NOTES_PREFIX='  | '
job_done() { echo "$3 $4 $1" >>"$R/times"; }

parallel=() slow=() serial=() unsanitized=()
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -z "$only" ] || [[ "$name" == *$only* ]] || continue
	if declares "$t" sources; then
		[ "${E2E_SOURCES:-}" != skip ] || continue
	else
		[ "${E2E_SOURCES:-}" != only ] || continue
	fi
	if [ -n "$sanitized" ] && declares "$t" no-sanitize; then
		unsanitized+=("$name")
	elif [ "$jobs" -gt 1 ] && declares "$t" serial; then
		serial+=("$name")
	elif declares "$t" slow; then
		slow+=("$name")
	else
		parallel+=("$name")
	fi
done
[ ${#unsanitized[@]} = 0 ] ||
	echo "not run on the sanitized build (no-sanitize): ${unsanitized[*]}"

# the serial ones first, one at a time, then the others side by side,
# the slow ones first
for name in "${serial[@]}"; do
	job_start "$name"; job_reap
done
for name in "${slow[@]}" "${parallel[@]}"; do
	[ ${#running[@]} -lt "$jobs" ] || job_reap
	job_start "$name"
done
while [ ${#running[@]} -gt 0 ]; do job_reap; done

# where the time went, for the next cut: wall and CPU seconds (user +
# sys of the test's processes; less than wall: waiting for I/O, a
# server, a guard)
# E2E_TIMES=FILE keeps them all ("wall cpu name" a line)
[ -z "${E2E_TIMES:-}" ] || cp "$R/times" "$E2E_TIMES" 2>/dev/null
if [ -s "$R/times" ]; then
	echo "the longest: $(sort -rn "$R/times" | head -8 |
		awk '{printf "%s%s %ss (cpu %ss)", (NR > 1 ? ", " : ""), $3, $1, $2}')"
fi
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
