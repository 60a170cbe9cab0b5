#!/bin/bash
# C++ callers: the library guide's first program, word for word, built as C++
# (g++ -std=c++20 -Wall -Wextra -pedantic -Werror) against the files make
# install puts in a DESTDIR, found through pkg-config, and linked with the
# installed libe2trim.so.1.  Without e2trim.h's extern "C" guard it
# compiles and fails to link (e2trim_new(e2trim**) and com_err's
# error_message(long) are looked for under C++ names).  Its figure on an
# aged image is dumpe2fs's free extents (list_oracle), and it runs under
# valgrind (errors and definite leaks fail it).  And a caller of the API
# that grows (issue 25 point 1), built as C99 and as C++ from the same
# source: options through setters, a disk image's partitions through
# e2trim_partition() one at a time with their struct_size, and
# E2TRIM_HAS on them and on the result; its lines are sfdisk's table and
# blkid's types.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
command -v g++ >/dev/null || skip "g++ not installed"
command -v valgrind >/dev/null || skip "valgrind not installed (make deps installs it)"
lib_install

awk '/^# libe2trim/ {lib = 1} lib && /^```c$/ {on = 1; next} on && /^```$/ {exit} on' \
	"$top/src/libe2trim.md" >"$T/trimmable.cc"
[ -s "$T/trimmable.cc" ] || fail "no C program in src/libe2trim.md"
# g++ 12's -Wextra wants every member named in a designated initializer
# (GCC bug 96868), which C does not: that one warning is off
# shellcheck disable=SC2086  # $flags is pkg-config's words
g++ -std=c++20 -Wall -Wextra -Wno-missing-field-initializers -pedantic -Werror \
	"${sanflags[@]}" "$T/trimmable.cc" $flags -o "$T/trimmable" \
	>"$T/cxx.out" 2>&1 || { cat "$T/cxx.out"; fail "the library guide's program does not build as C++: g++ ... $flags"; }
LD_LIBRARY_PATH=$lib ldd "$T/trimmable" | grep -q "libe2trim.so.1 => $lib/" ||
	fail "the C++ program does not use the installed libe2trim.so.1"

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
assert_eq "$got" "$want" "the library guide's program as C++ vs dumpe2fs's free extents"

# a refusal through the C++ program: the exit code and the fix
debugfs -w -R "ssv state 0" "$img" >/dev/null 2>&1 || fail "debugfs ssv"
rc=0; "${vg[@]}" "$T/trimmable" "$img" >/dev/null 2>"$T/err" || rc=$?
assert_eq "$rc" 13 "the library guide's program as C++ on an unclean filesystem: exit code"
assert_grep "run e2fsck -f first" "$T/err" "the library guide's program as C++: the fix"
# a caller of 0.2.0's API, as C and as C++
cat >"$T/parts.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include <e2trim.h>

int main(int argc, char **argv)
{
	const struct e2trim_partition *p;
	const struct e2trim_result *r;
	struct e2trim *t = NULL;
	unsigned int i, n = 0;
	errcode_t err;

	if (argc != 2)
		return 3;
	err = e2trim_new(&t);
	if (!err)
		err = e2trim_partitions(t, argv[1], &n);
	for (i = 0; !err && (p = e2trim_partition(t, i)); i++) {
		if (p->struct_size != sizeof(*p) ||
		    !E2TRIM_HAS(p, struct e2trim_partition, device))
			return 98;
		printf("%u %" PRIu64 " %" PRIu64 " %s\n", (unsigned)p->partno,
		       p->start_bytes / 512, p->size_bytes / 512,
		       p->fs_type[0] ? p->fs_type : "-");
	}
	if (!err && i != n)
		return 97;
	/* the last ext partition, a dry run through the setters */
	if (!err)
		err = e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN);
	if (!err)
		err = e2trim_set_partition(t, 2);
	if (!err)
		err = e2trim_set_mode(t, E2TRIM_ZERO_FILL);
	if (!err)
		err = e2trim_open(t, argv[1]);
	if (!err)
		err = e2trim_apply(t, NULL, NULL);
	r = e2trim_result(t);
	/* a member the library may not have: asked before it is read */
	if (!err && E2TRIM_HAS(r, struct e2trim_result, seconds))
		printf("fs %" PRIu64 " %" PRIu64 "\n", r->fs_offset_bytes / 512,
		       r->extent_bytes);
	if (err)
		fprintf(stderr, "%s: %s\n", argv[1], e2trim_detail(t));
	e2trim_free(t);
	return e2trim_exit_code(err);
}
C
cp "$T/parts.c" "$T/parts.cc"
# shellcheck disable=SC2086  # $flags is pkg-config's words
cc -std=c99 -Wall -Wextra -pedantic -Werror "${sanflags[@]}" "$T/parts.c" $flags -o "$T/parts" \
	2>"$T/cc.out" || { cat "$T/cc.out"; fail "the partition lister does not build as C"; }
# shellcheck disable=SC2086
g++ -std=c++20 -Wall -Wextra -pedantic -Werror "${sanflags[@]}" "$T/parts.cc" $flags -o "$T/parts++" \
	2>"$T/cc.out" || { cat "$T/cc.out"; fail "the partition lister does not build as C++"; }
disk=$T/disk.img
truncate -s 48M "$disk"
printf 'label: dos\nstart=2048, size=20480, type=83\nstart=22528, size=30720, type=83\nstart=53248, size=8192, type=83\n' |
	sfdisk -q "$disk" || fail "sfdisk"
mke2fs -q -F -t ext2 -E nodiscard,offset=$((2048 * 512)) "$disk" 10M || fail "mke2fs 1"
mke2fs -q -F -t ext4 -E nodiscard,offset=$((22528 * 512)) "$disk" 15M || fail "mke2fs 2"
# the oracle: sfdisk's table and blkid's type of each partition
sfdisk -d "$disk" | sed -n 's/.*start= *\([0-9]*\), size= *\([0-9]*\).*/\1 \2/p' >"$T/table"
: >"$T/want"
i=0
while read -r start size; do
	i=$((i + 1))
	ty=$(blkid -p -o value -s TYPE -O $((start * 512)) "$disk" 2>/dev/null) || ty=-
	echo "$i $start $size ${ty:--}" >>"$T/want"
done <"$T/table"
free2=$(dumpe2fs "$disk?offset=$((22528 * 512))" 2>/dev/null |
	awk '/^Block size:/ {bs = $3} /^Free blocks:/ {n = $3} END {printf "%.0f\n", n * bs}')
echo "fs 22528 $free2" >>"$T/want"
for prog in parts parts++; do
	"${vg[@]}" "$T/$prog" "$disk" >"$T/got" 2>"$T/err" || { cat "$T/err"; fail "$prog failed (valgrind: 99)"; }
	cmp -s "$T/got" "$T/want" || { diff "$T/got" "$T/want"; fail "$prog: partitions and partition 2's free bytes vs sfdisk, blkid, dumpe2fs"; }
done
note "a 0.2.0 caller as C and C++ under ${vg[0]:-ASan}: 3 partitions as sfdisk and blkid say, partition 2's $free2 free bytes as dumpe2fs"
note "the library guide's program as C++ under ${vg[0]:-ASan}: $got bytes, as dumpe2fs's free extents give; 13 when unclean"
exit 0
