#!/bin/bash
# Progress: with stderr on a terminal (a pseudo-terminal here) one line is
# drawn and redrawn in place (carriage return, erase to end of line) for
# verification and for trimming (and zero-filling), with the bytes done of
# the total, and erased before anything else is said; stdout is left
# alone.  Nothing when stderr is not a terminal, unless --progress;
# nothing with --no-progress or -q.  E2TRIM_PROGRESS_DELAY_MS slows each
# report so that a small image shows several lines (no timing is
# asserted).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)

img=$T/fs.img
mkfs "$img" 256M -t ext4 -b 4096
age "$img" 5
export E2TRIM_PROGRESS_DELAY_MS=250

on_pty() {	# e2trim args...: stdout to $T/out, the terminal's bytes to $T/tty
	RC=0
	python3 "$here/pty_run.py" "$T/out" "$T/tty" "$E2TRIM" "$@" || RC=$?
}
# lines STAGE FILE: how many times a STAGE line was drawn
lines() { tr '\r' '\n' <"$2" | grep -c "^e2trim: .*: $1 .* of .* (" || true; }

run_e2trim -n -v "$img"
cp "$OUT" "$T/plain.out"

for stage in "trimming:" "zero-filling:--zero-fill"; do
	name=${stage%%:*} opt=${stage#*:}
	# shellcheck disable=SC2086
	on_pty -n -v $opt "$img"
	assert_eq "$RC" 0 "$name on a terminal: exit"
	v=$(lines verifying "$T/tty"); n=$(lines "$name" "$T/tty")
	[ "$v" -ge 2 ] || { cat -v "$T/tty" >&2; fail "$name: verifying drawn $v times"; }
	[ "$n" -ge 2 ] || { cat -v "$T/tty" >&2; fail "$name: $name drawn $n times"; }
	grep -q $'\r\033\[K' "$T/tty" || fail "$name: the line is never erased"
	# the last thing on the terminal erases the line: nothing left over
	[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] || { tail -c 80 "$T/tty" | cat -v >&2; fail "$name: the line is left on the terminal"; }
	# rate and time left come once half a second has gone by
	grep -q "/s, [0-9]*:[0-9][0-9] left" "$T/tty" || fail "$name: no rate and time left"
	# a line counts up: the first drawn is 0 B
	tr '\r' '\n' <"$T/tty" | grep -q "$name 0 B of " || fail "$name: no line at 0 B"
	if [ -z "$opt" ]; then
		cmp -s "$T/out" "$T/plain.out" || fail "stdout differs with stderr on a terminal"
	fi
	note "$name: verifying drawn $v times, $name $n times"
done

# not a terminal: nothing, unless --progress
run_e2trim -n -v "$img"
! grep -q $'\r' "$ERR" || fail "progress on a pipe without --progress"
[ ! -s "$ERR" ] || fail "something on stderr without a terminal"
run_e2trim -n -v --progress "$img"
assert_rc 0 "--progress on a pipe"
[ "$(lines trimming "$ERR")" -ge 2 ] || fail "--progress on a pipe: no trimming line"
cmp -s "$OUT" "$T/plain.out" || fail "--progress changed stdout"

# off: --no-progress, -q
for opt in --no-progress -q; do
	on_pty -n "$opt" "$img"
	assert_eq "$RC" 0 "$opt on a terminal"
	[ ! -s "$T/tty" ] || { cat -v "$T/tty" >&2; fail "$opt: something drawn"; }
done
# the last of --progress and --no-progress wins
run_e2trim -n --progress --no-progress "$img"
[ ! -s "$ERR" ] || fail "--progress --no-progress drew"
exit 0
