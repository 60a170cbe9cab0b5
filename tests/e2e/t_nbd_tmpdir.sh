#!/bin/bash
# A VM image needs a temporary file for qemu-nbd's messages, in $TMPDIR.
# A TMPDIR that is missing, or that the user may not write, is said as it
# is: exit 1, the message names the directory and TMPDIR, not "ran out of
# memory"; with TMPDIR fixed the same run trims.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v qemu-img >/dev/null || skip "no qemu-img (make deps installs qemu-utils)"

mkfs "$T/fs.img" 32M -t ext4
qemu-img convert -O qcow2 "$T/fs.img" "$T/fs.qcow2" || fail "qemu-img convert"

# told TMPDIR WHAT [runner...]: refused, naming TMPDIR
told() {
	local dir=$1 what=$2; shift 2
	RC=0
	env TMPDIR="$dir" "$@" "$E2TRIM" -n "$T/fs.qcow2" >"$T/out" 2>"$T/err" || RC=$?
	assert_rc 1 "$what"
	grep -q "out of memory" "$T/err" && { cat "$T/err"; fail "$what: said to be out of memory"; }
	assert_grep "cannot make a temporary file in $dir (TMPDIR)" "$T/err" "$what: names the directory"
	assert_grep "set TMPDIR to a directory that exists and may be written" "$T/err" "$what: the fix"
	note "$what: $(cat "$T/err")"
}

told "$T/missing" "TMPDIR missing"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T/ro"; chmod 555 "$T/ro"; chmod 755 "$T"; chmod 644 "$T/fs.qcow2"
	told "$T/ro" "TMPDIR read-only" setpriv --reuid=65534 --regid=65534 --clear-groups
else
	left_out "a read-only TMPDIR as another user (root)"
fi
RC=0
TMPDIR=$T "$E2TRIM" -n "$T/fs.qcow2" >"$T/out" 2>"$T/err" || RC=$?
assert_rc 0 "TMPDIR fixed"
finish
