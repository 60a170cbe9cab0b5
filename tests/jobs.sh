# shellcheck shell=bash
# tests/jobs.sh - the test runners' jobs, for tests/e2e/run.sh and
# tests/boot/run.sh: each test a bash script run in the background with a
# scratch folder of its own ($T), its output, exit code, wall and CPU
# seconds kept in $R; the runner reaps them as they end.
#
# The runner sets here (the tests' folder), R (the results' folder),
# SCRATCH (where the scratch folders go), JOB_NOTES (1: a passed test's
# notes are printed, each line after JOB_NOTES_PREFIX) and JOB_TAIL (how
# many lines of a failed test's log),
# and may define job_done NAME RC SECS CPU, called as each test ends.
# JOB_GUARD (seconds, 1200 unless the runner or the caller sets it): a
# guard, not a timing: a test still running then (an e2trim blocked for
# ever, in a lock request or a server that never answers) is stopped,
# itself and every process it started (TERM, its EXIT trap cleans up,
# then KILL a minute later), and fails (exit 124 or 137) with a line
# that says so.
# shellcheck disable=SC2154,SC2034 # here, R, SCRATCH: the runner's; the counts: read there
declare -A running=()
pass=0 failed=0 skipped=0

# job_start NAME: run $here/NAME.sh in the background
job_start() {
	local name=$1
	(
		T=$(mktemp -d "$SCRATCH/e2trim-$name.XXXXXX")
		t0=$(date +%s)
		guard=${JOB_GUARD:-1200}
		# timeout signals the whole process group it leads: the test
		# and whatever it left running in the background
		T=$T timeout --kill-after=60 "$guard" bash "$here/$name.sh" \
			>"$R/$name.log" 2>&1
		rc=$?
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			# not "FAIL:", and its own exit: a hang is no
			# assertion (make mutate-code counts it stale)
			echo "GUARD: $name still ran after ${guard}s (JOB_GUARD), stopped (exit $rc): a hang, e2trim's or the test's" >>"$R/$name.log"
		fi
		rm -rf "$T"
		# the CPU seconds of its processes (times: children's user, sys)
		# (not in a pipe: a forked shell has no children)
		times >"$R/$name.times"
		cpu=$(tail -1 "$R/$name.times" | awk '{ for (i = 1; i <= 2; i++) {
			split($i, p, "m"); c += p[1] * 60 + p[2] } printf "%d", c }')
		echo "$rc $(($(date +%s) - t0)) $cpu" >"$R/$name.rc"
	) &
	running[$!]=$name
}

# job_report NAME: its line (PASS, SKIP or FAIL) and counts; a failure's
# log, a pass's notes with JOB_NOTES.  Exit 77 is a skip, and a failure
# under CI=true: CI runs as root with loop devices and QEMU, so nothing
# there has a reason to skip.
job_report() {
	local name=$1 rc secs cpu log=$R/$1.log
	read -r rc secs cpu <"$R/$name.rc"
	! declare -F job_done >/dev/null || job_done "$name" "$rc" "$secs" "$cpu"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
		[ "${JOB_NOTES:-}" != 1 ] || grep '^  ' "$log" | sed "s/^/${JOB_NOTES_PREFIX:-}/"
	elif [ "$rc" = 77 ] && [ "${CI:-}" != true ]; then
		skipped=$((skipped + 1)); echo "SKIP $name: $(grep SKIP "$log" | tail -1)"
	else
		failed=$((failed + 1)); echo "FAIL $name (exit $rc, ${secs}s)"
		[ "$rc" = 77 ] && echo "  skipped under CI=true, which counts as a failure"
		sed 's/^/  | /' "$log" | tail "-${JOB_TAIL:-25}"
	fi
}

# job_reap: wait for one running test to end and report it
job_reap() {
	local pid
	wait -n -p pid "${!running[@]}"
	job_report "${running[$pid]}"
	unset "running[$pid]"
}
