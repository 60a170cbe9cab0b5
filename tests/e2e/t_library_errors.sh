#!/bin/bash
# A library caller's errors, from the installed files only: the library guide's
# second program (a real trim that its progress callback cancels, the
# error worded by e2trim_error_desc(), e2trim_detail() and
# e2trim_error_fix(code, E2TRIM_FIX_CALLER)) built as C and as C++, run
# under valgrind: exit 130, the caller's words (no command-line option),
# and nothing trimmed (the image file's allocated bytes, its used blocks
# and e2fsck).  And compile_et's table and initializer, which the
# installed e2trim_err.h declares, link from libe2trim.so.1 alone: a
# program reads the table's size through them and finds every code of
# src/e2trim_err.et.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
command -v g++ >/dev/null || skip "g++ not installed"
command -v valgrind >/dev/null || skip "valgrind not installed (make deps installs it)"
lib_install

# the error table through the shared library
cat >"$T/table.c" <<'C'
#include <stdio.h>
#include <e2trim.h>

int main(void)
{
	struct et_list *list = NULL;

	initialize_e2tr_error_table_r(&list);
	if (!list)
		return 1;
	printf("%d\n", et_e2tr_error_table.n_msgs);
	return 0;
}
C
# shellcheck disable=SC2086  # $flags is pkg-config's words
cc -std=c99 -Wall -Wextra -Werror "${sanflags[@]}" "$T/table.c" $flags -o "$T/table" 2>"$T/cc.out" ||
	{ cat "$T/cc.out"; fail "et_e2tr_error_table / initialize_e2tr_error_table_r do not link from libe2trim.so.1"; }
"$T/table" >"$T/n" || fail "initialize_e2tr_error_table_r() did not put the table in the list"
assert_eq "$(cat "$T/n")" "$(grep -c '^ec' "$top/src/e2trim_err.et")" "codes in the exported table vs e2trim_err.et"

# the library guide's second program, word for word
awk '/^# libe2trim/ {lib = 1} lib && /^```c$/ {n++; on = n == 2; next} on && /^```$/ {exit} on' \
	"$top/src/libe2trim.md" >"$T/cancel.c"
grep -q e2trim_set_cancel "$T/cancel.c" || fail "no second (cancelling) program in src/libe2trim.md"
cp "$T/cancel.c" "$T/cancel.cc"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -pedantic -Werror "${sanflags[@]}" "$T/cancel.c" $flags -o "$T/cancel" 2>"$T/cc.out" ||
	{ cat "$T/cc.out"; fail "the library guide's second program does not build as C"; }
# shellcheck disable=SC2086
g++ -std=c++20 -Wall -Wextra -pedantic -Werror "${sanflags[@]}" "$T/cancel.cc" $flags -o "$T/cancel++" 2>"$T/cc.out" ||
	{ cat "$T/cc.out"; fail "the library guide's second program does not build as C++"; }

img=$T/aged.img
mkfs "$img" 64M -t ext4 -b 4096
head -c 3000000 /dev/urandom >"$T/f1"
echo "write $T/f1 f1" | debugfs -w -f - "$img" >/dev/null 2>&1 || fail "debugfs"
fill_free "$img"
used=$(used_blocks_digest "$img")
sync
alloc=$(alloc_bytes "$img")
for prog in cancel cancel++; do
	rc=0; "${vg[@]}" "$T/$prog" "$img" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" != 99 ] || { cat "$T/err"; fail "$prog: valgrind reported errors"; }
	assert_eq "$rc" 130 "$prog: exit code"
	assert_eq "$(cat "$T/err")" "$img: interrupted; call e2trim_apply() again (the flag cleared) to trim the rest" "$prog: the caller's message"
	sync
	assert_eq "$(alloc_bytes "$img")" "$alloc" "$prog: allocated bytes (nothing trimmed)"
done
assert_eq "$(used_blocks_digest "$img")" "$used" "used blocks"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "e2fsck -fn after the cancelled trims"
note "the library guide's cancelling program as C and C++ under ${vg[0]:-ASan}: exit 130, the caller's words, nothing trimmed; the error table links from the .so ($(cat "$T/n") codes)"
exit 0
