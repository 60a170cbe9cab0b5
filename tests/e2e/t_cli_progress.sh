#!/bin/bash
# Progress that fits (issue 26, point 4).  On a terminal of 80 columns
# (a pseudo-terminal, TIOCSWINSZ) every line drawn is at most 79 columns,
# so that none wraps and leaves a dead line behind: a long
# /dev/disk/by-id-like name keeps its end.  With -j 2 the progress is
# not dropped: one line shows the targets done and each running one's
# stage, on a terminal and with an explicit --progress on a pipe.
# E2TRIM_PROGRESS_DELAY_MS slows each report so that lines are drawn;
# nothing here rests on timing (only that some line is drawn at all, and
# the first report of each stage is always drawn).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)

cd "$T" || fail "cd"
mkfs big.img 256M -t ext4 -b 4096
age big.img 8
cp --sparse=always big.img other.img
long=usb-SAMSUNG_MZ7LH960HAJR-00005_S45NNA0N123456-0:0-part1-a-long-by-id-name.img
ln -s big.img "$long"
export E2TRIM_PROGRESS_DELAY_MS=100

on_pty() {	# e2trim args...: stdout to $T/out, the terminal's bytes to $T/tty
	RC=0
	PTY_COLS=80 python3 "$here/pty_run.py" "$T/out" "$T/tty" "$E2TRIM" "$@" || RC=$?
}
# drawn FILE: each line drawn, without the carriage returns and erasures
drawn() { tr '\r' '\n' <"$1" | sed 's/\x1b\[K//g' | grep -a '^e2trim: ' || true; }
# fits FILE WHAT: every line drawn is at most 79 columns
fits() {
	local widest
	widest=$(drawn "$1" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }')
	[ "$widest" -gt 0 ] || { cat -v "$1"; fail "$2: nothing drawn"; }
	[ "$widest" -le 79 ] || { drawn "$1" | head -3; fail "$2: a line of $widest columns on 80"; }
	note "$2: $(drawn "$1" | wc -l) lines drawn, the widest $widest columns"
}

on_pty -n -v "$T/$long"
assert_eq "$RC" 0 "a long name on 80 columns: exit"
fits "$T/tty" "a long name"
drawn "$T/tty" | grep -q -- 'by-id-name.img: verifying ' ||
	{ drawn "$T/tty" | head -3; fail "a long name: its end is not kept"; }
drawn "$T/tty" | grep -q -- 'by-id-name.img: trimming ' ||
	{ drawn "$T/tty" | head -3; fail "a long name: no trimming line"; }
[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] ||
	fail "a long name: the line is left on the terminal"

# -j 2: one line for both, on a terminal
on_pty -n -v -j 2 "$T/$long" other.img
assert_eq "$RC" 0 "-j 2 on a terminal: exit"
fits "$T/tty" "-j 2"
drawn "$T/tty" | grep -q '^e2trim: [0-2]/2 done; .*: \(verifying\|trimming\) [0-9]*%' ||
	{ cat -v "$T/tty" | head; fail "-j 2: no line for the targets"; }
drawn "$T/tty" | grep -q 'other.img: ' || fail "-j 2: other.img never shown"
[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] ||
	fail "-j 2: the line is left on the terminal"
# and their reports, in order, whole, after the line was erased
run_e2trim -n -v -j 2 "$T/$long" other.img
cmp -s "$OUT" "$T/out" || { diff "$OUT" "$T/out"; fail "-j 2: stdout differs with progress"; }

# -j 2 and one target: its own line, not nothing
run_e2trim -n -j 2 --progress big.img
assert_rc 0 "-j 2 --progress, one target"
drawn "$ERR" | grep -q '^e2trim: big.img: trimming .* of ' || { cat -v "$ERR" | head; fail "-j 2, one target: progress dropped"; }

# -j 2 --progress on a pipe: said, not dropped
run_e2trim -n -j 2 --progress big.img other.img
assert_rc 0 "-j 2 --progress on a pipe"
drawn "$ERR" | grep -q '^e2trim: [0-2]/2 done; ' || { cat -v "$ERR" | head; fail "-j 2 --progress: dropped"; }
exit 0
