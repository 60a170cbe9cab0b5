#!/bin/bash
# The command on an older libe2trim.so.1, whose struct e2trim_result is
# shorter than the header the command was built with: what the library
# did not fill must read as 0 (JSON 0, -v silent), never as whatever lies
# past its struct.  The older library is this tree's with struct_size cut
# at bytes_zeroed (0.1-style: no zero-fill counts), built in a copy and
# loaded by the command linked with E2TRIM_LINK=shared.  The oracle: the
# same run through the whole library, which counts every byte.
# e2e: no-sanitize (it builds and runs its own copy of the tree, the plain build)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || fail "python3 is missing (make deps)"

# a copy of the tracked tree; the older library reports a shorter struct
mkdir "$T/old"
# the files git tracks; in a copy that is no git checkout (make
# mutate-code's), every file but the builds
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top" ls-files -z | tar -C "$top" --null -T - -cf -
else
	tar -C "$top" --exclude=./build --exclude=./build-san --exclude=./build-fuzz \
		--exclude=./mutate-cases -cf - .
fi | tar -C "$T/old" -xf - || fail "copy of the tree"
opts=$T/old/src/options.c
grep -q 't->res.struct_size = sizeof(t->res);' "$opts" || fail "options.c: no struct_size line"
sed -i 's|t->res.struct_size = sizeof(t->res);|t->res.struct_size = offsetof(struct e2trim_result, bytes_zeroed);|' "$opts"
sed -i 's|#include <stdlib.h>|#include <stddef.h>\n#include <stdlib.h>|' "$opts"
env -u MAKEFLAGS -u MFLAGS make -s -C "$T/old" -j2 SANITIZE= E2TRIM_LINK=shared CFLAGS=-O0 build/e2trim build/libe2trim.so.1 \
	>"$T/make.out" 2>&1 || { cat "$T/make.out"; fail "building the older library"; }
old_e2trim() { LD_LIBRARY_PATH=$T/old/build "$T/old/build/e2trim" "$@"; }
old_e2trim --version >/dev/null || fail "the shared command does not run"
LD_LIBRARY_PATH=$T/old/build ldd "$T/old/build/e2trim" | grep -q "libe2trim.so.1 => $T/old/build/" ||
	fail "the command does not load the older library"

img=$T/fs.img
mkfs "$img" 32M -t ext4 -b 4096
age "$img" 3

json() {	# PROGRAM: its --json of a zero-fill dry run, one member a line
	"$@" -n --zero-fill --json "$img" | python3 -c '
import json, sys
r = json.load(sys.stdin)["targets"][0]["result"]
for k in ("bytes_trimmed", "bytes_zeroed", "bytes_already_zero", "extents"):
    print(k, r[k])'
}
json "$E2TRIM" >"$T/new" || fail "e2trim --json"
json old_e2trim >"$T/old.out" || fail "e2trim --json on the older library"
val() { sed -n "s/^$1 //p" "$2"; }
# the whole library counts the zero-fill bytes...
[ "$(val bytes_zeroed "$T/new")" -gt 0 ] || fail "the whole library counted nothing zeroed"
# ...the older one does not know them: 0, not what lies past its struct
assert_eq "$(val bytes_zeroed "$T/old.out")" 0 "bytes_zeroed past the older library's struct"
assert_eq "$(val bytes_already_zero "$T/old.out")" 0 "bytes_already_zero past the older library's struct"
# and what it does know is the same
for k in bytes_trimmed extents; do
	assert_eq "$(val "$k" "$T/old.out")" "$(val "$k" "$T/new")" "$k through the older library"
done
note "older libe2trim.so.1 (struct cut at bytes_zeroed): bytes_zeroed 0 (whole library: $(val bytes_zeroed "$T/new")), bytes_trimmed $(val bytes_trimmed "$T/new") alike"
exit 0
