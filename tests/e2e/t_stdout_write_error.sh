#!/bin/bash
# Output that cannot be written is an error, as util-linux's close_stdout
# makes it: --list, -v, --help and --version into /dev/full exit 1 with
# "e2trim: write error: No space left on device".  The same runs into a
# file still exit 0 and say nothing on stderr.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

[ -w /dev/full ] || skip "no /dev/full"
img=$T/fs.img
mkfs "$img" 32M -t ext4

for args in "-n --list $img" "-n -v $img" "--help" "--version"; do
	# shellcheck disable=SC2086  # the words of $args are the arguments
	{ ${E2TRIM_WRAP:-} "$E2TRIM" $args >/dev/full 2>"$T/err"; } && rc=0 || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "e2trim $args >/dev/full: exit $rc, expected 1"; }
	assert_grep "^e2trim: write error: No space left on device$" "$T/err" \
		"e2trim $args >/dev/full: message"

	# shellcheck disable=SC2086
	run_e2trim $args
	assert_rc 0 "e2trim $args into a file"
	[ ! -s "$ERR" ] || { cat "$ERR" >&2; fail "e2trim $args into a file: stderr"; }
	[ -s "$OUT" ] || fail "e2trim $args into a file: no output"
done

note "write errors on stdout: exit 1 with a message; files: exit 0, silent"
exit 0
