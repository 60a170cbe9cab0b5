#!/bin/bash
# C++ callers: the README's library program, word for word, built as C++
# (g++ -std=c++20 -Wall -Wextra -pedantic -Werror) against the files make
# install puts in a DESTDIR, found through pkg-config, and linked with the
# installed libe2trim.so.0.  Without e2trim.h's extern "C" guard it
# compiles and fails to link (e2trim_new(e2trim**) and com_err's
# error_message(long) are looked for under C++ names).  Its figure on an
# aged image is dumpe2fs's free extents (list_oracle), and it runs under
# valgrind (errors and definite leaks fail it).  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
command -v g++ >/dev/null || skip "g++ not installed"
command -v valgrind >/dev/null || skip "valgrind not installed (make deps installs it)"
lib_install

awk '/^## Library/ {lib = 1} lib && /^```c$/ {on = 1; next} on && /^```$/ {exit} on' \
	"$top/README.md" >"$T/trimmable.cc"
[ -s "$T/trimmable.cc" ] || fail "no C program in README's Library section"
# g++ 12's -Wextra wants every member named in a designated initializer
# (GCC bug 96868), which C does not: that one warning is off
# shellcheck disable=SC2086  # $flags is pkg-config's words
g++ -std=c++20 -Wall -Wextra -Wno-missing-field-initializers -pedantic -Werror \
	"${sanflags[@]}" "$T/trimmable.cc" $flags -o "$T/trimmable" \
	>"$T/cxx.out" 2>&1 || { cat "$T/cxx.out"; fail "README's program does not build as C++: g++ ... $flags"; }
LD_LIBRARY_PATH=$lib ldd "$T/trimmable" | grep -q "libe2trim.so.0 => $lib/" ||
	fail "the C++ program does not use the installed libe2trim.so.0"

img=$T/aged.img
mkfs "$img" 64M -t ext4 -b 4096
for i in 1 2 3 4; do head -c $((i * 600000)) /dev/urandom >"$T/f$i"; done
{ for i in 1 2 3 4; do echo "write $T/f$i f$i"; done; echo "rm f2"; } |
	debugfs -w -f - "$img" >/dev/null 2>&1 || fail "debugfs"
fill_free "$img"
want=$(list_oracle "$img" "$img" | awk '{s += $2} END {printf "%.0f\n", s}')
[ "$want" -gt 0 ] || fail "no free space in the aged image"
got=$("${vg[@]}" "$T/trimmable" "$img" 2>"$T/err") || { cat "$T/err"; fail "the C++ program failed (valgrind: 99)"; }
[ ! -s "$T/err" ] || { cat "$T/err"; fail "the C++ program wrote to stderr"; }
assert_eq "$got" "$want" "README's program as C++ vs dumpe2fs's free extents"

# a refusal through the C++ program: the exit code and the fix
debugfs -w -R "ssv state 0" "$img" >/dev/null 2>&1 || fail "debugfs ssv"
rc=0; "${vg[@]}" "$T/trimmable" "$img" >/dev/null 2>"$T/err" || rc=$?
assert_eq "$rc" 13 "README's program as C++ on an unclean filesystem: exit code"
assert_grep "run e2fsck -f first" "$T/err" "README's program as C++: the fix"
note "README's program as C++ under ${vg[0]:-ASan}: $got bytes, as dumpe2fs's free extents give; 13 when unclean"
exit 0
