#!/bin/bash
# The library guide's first program, built against the installed files: make
# install DESTDIR=… puts e2trim.h, e2trim_err.h, libe2trim.a,
# libe2trim.so.1 (soname libe2trim.so.1; it exports only e2trim_* and the
# error table with its two initializers) and e2trim.pc in place; the program between
# the library guide's ```c fence and the next ``` is compiled with
# `pkg-config --cflags --libs e2trim` (found through PKG_CONFIG_PATH and
# --define-prefix), linked with the shared library, and its figure on an
# aged filesystem equals dumpe2fs's free extents aligned to the host's
# block (and `e2trim -n -v`'s, but that is built on the same library, so
# it is no oracle); on a mounted one both say 10.  Then two threads work
# on two filesystems at once through the library: a dry run, and a real
# trim of an image whose free blocks are all allocated, so that the
# figure is dumpe2fs's and the file shrinks by exactly that.  Runs under $E2TRIM_WRAP
# (valgrind) too.  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
# the build whose e2trim is under test: build/ or build-san/ (SANITIZE=1)
san=
case $E2TRIM in */build-san/*) san=1 ;; esac
root=$T/root
make -s -C "$top" install DESTDIR="$root" PREFIX=/usr/local SANITIZE="$san" \
	>"$T/make.out" 2>&1 || { cat "$T/make.out"; fail "make install"; }
lib=$root/usr/local/lib
for f in "$root/usr/local/include/e2trim.h" "$root/usr/local/include/e2trim_err.h" \
	"$lib/libe2trim.a" "$lib/libe2trim.so.1" "$lib/pkgconfig/e2trim.pc"; do
	[ -f "$f" ] || fail "not installed: $f"
done
[ "$(readlink "$lib/libe2trim.so")" = libe2trim.so.1 ] || fail "libe2trim.so -> libe2trim.so.1"
readelf -d "$lib/libe2trim.so.1" | grep -q 'SONAME.*\[libe2trim\.so\.1\]' || fail "soname"
nm -D --defined-only "$lib/libe2trim.so.1" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
	sed 's/@.*//' | grep -v '^e2trim_' |
	grep -vxE 'initialize_e2tr_error_table(_r)?|et_e2tr_error_table' >"$T/extra" || true
[ ! -s "$T/extra" ] || { cat "$T/extra"; fail "libe2trim.so.1 exports more than e2trim_*"; }
note "installed: header, both libraries, e2trim.pc; exports: $(nm -D --defined-only "$lib/libe2trim.so.1" | grep -c ' T e2trim_') e2trim_* functions and the initializer"

# the library guide's program, word for word
awk '/^# libe2trim/ {lib = 1} lib && /^```c$/ {on = 1; next} on && /^```$/ {exit} on' \
	"$top/src/libe2trim.md" >"$T/trimmable.c"
[ -s "$T/trimmable.c" ] || fail "no C program in src/libe2trim.md"
grep -q 'e2trim_apply' "$T/trimmable.c" || fail "the library guide's program does not trim"
export PKG_CONFIG_PATH=$lib/pkgconfig
flags=$(pkg-config --define-prefix --cflags --libs e2trim) || fail "pkg-config e2trim"
sanflags=()
[ -z "$san" ] || sanflags=("-fsanitize=address,undefined")
# shellcheck disable=SC2086  # $flags is pkg-config's words
cc -std=c99 -Wall -Wextra -Werror "${sanflags[@]}" "$T/trimmable.c" $flags -o "$T/trimmable" \
	2>"$T/cc.out" || { cat "$T/cc.out"; fail "the library guide's program does not build: cc ... $flags"; }
ldd "$T/trimmable" 2>/dev/null | grep -q "libe2trim.so.1 => $lib/" ||
	LD_LIBRARY_PATH=$lib ldd "$T/trimmable" | grep -q "libe2trim.so.1 => $lib/" ||
	fail "the program does not use the installed libe2trim.so.1"
export LD_LIBRARY_PATH=$lib

# an aged filesystem: files written, some removed
img=$T/aged.img
mkfs "$img" 96M -t ext4 -b 4096
for i in 1 2 3 4 5 6; do head -c $((i * 700000)) /dev/urandom >"$T/f$i"; done
{ for i in 1 2 3 4 5 6; do echo "write $T/f$i f$i"; done; echo "rm f2"; echo "rm f5"; } |
	debugfs -w -f - "$img" >/dev/null 2>&1 || fail "debugfs"
# every free block allocated in the file: a dry run counts all of it
fill_free "$img"
sum_of() { awk '{s += $2} END {printf "%.0f\n", s}'; }
want=$(list_oracle "$img" "$img" | sum_of)
[ "$want" -gt 0 ] || fail "no free space in the aged image"
run_e2trim -n -v "$img"
assert_rc 0 "e2trim -n -v"
assert_eq "$(sed -n 's/.*(\([0-9]*\) bytes) trimmed (dry run)$/\1/p' "$OUT")" "$want" "e2trim -n -v vs dumpe2fs"
got=$(${E2TRIM_WRAP:-} "$T/trimmable" "$img" 2>"$T/err") || { cat "$T/err"; fail "the library guide's program failed"; }
[ ! -s "$T/err" ] || { cat "$T/err"; fail "the library guide's program wrote to stderr"; }
assert_eq "$got" "$want" "the library guide's program vs dumpe2fs's free extents"
note "the library guide's program: $got bytes, as dumpe2fs's free extents give"

# e2trim_plan() with a range: the extents e2trim -n --list gives
cat >"$T/plan.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <e2trim.h>

static int print(void *priv, uint64_t start, uint64_t len)
{
	(void)priv;
	printf("%" PRIu64 " %" PRIu64 "\n", start, len);
	return 0;
}

int main(int argc, char **argv)
{
	struct e2trim *t;
	errcode_t err;

	(void)argc;
	err = e2trim_new(&t);
	if (!err)
		err = e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN);
	if (!err)
		err = e2trim_open(t, argv[1]);
	if (!err)
		err = e2trim_set_range(t, strtoull(argv[2], NULL, 0),
				       strtoull(argv[3], NULL, 0),
				       strtoull(argv[4], NULL, 0));
	if (!err)
		err = e2trim_plan(t, print, NULL);
	e2trim_free(t);
	return e2trim_exit_code(err);
}
C
# shellcheck disable=SC2086
cc -std=gnu99 -Wall -Werror "${sanflags[@]}" "$T/plan.c" $flags -o "$T/plan" ||
	fail "the plan program does not build"
range=(1048576 33554432 65536)
${E2TRIM_WRAP:-} "$T/plan" "$img" "${range[@]}" >"$T/plan.out" 2>"$T/err" || { cat "$T/err"; fail "e2trim_plan()"; }
run_e2trim -n --list -o "${range[0]}" -l "${range[1]}" -m "${range[2]}" "$img"
assert_rc 0 "e2trim -n --list -o -l -m"
[ -s "$OUT" ] || fail "no extents in the range"
cmp -s "$T/plan.out" "$OUT" || { diff "$T/plan.out" "$OUT" | head; fail "e2trim_plan() vs e2trim -n --list"; }
# e2trim_plan() gives the filesystem's extents, before any alignment
oracle_extents "$img" "${range[2]}" "${range[0]}" "${range[1]}" >"$T/plan.want"
cmp -s "$T/plan.out" "$T/plan.want" || { diff "$T/plan.out" "$T/plan.want" | head; fail "e2trim_plan() vs dumpe2fs"; }
note "e2trim_plan() over a range: the $(wc -l <"$OUT") extents of e2trim -n --list"

# a refusal: same exit code, the message names the fix
debugfs -w -R "ssv state 0" "$img" >/dev/null 2>&1 || fail "debugfs ssv"
rc=0; ${E2TRIM_WRAP:-} "$T/trimmable" "$img" >/dev/null 2>"$T/err" || rc=$?
assert_eq "$rc" 13 "the library guide's program on an unclean filesystem: exit code"
assert_grep "run e2fsck -f first" "$T/err" "the library guide's program: the fix"

# two filesystems, two threads, at once
img2=$T/other.img
mkfs "$img2" 48M -t ext2 -b 1024
echo "write $T/f3 f3" | debugfs -w -f - "$img2" >/dev/null 2>&1 || fail "debugfs"
fill_free "$img2"
debugfs -w -R "ssv state 1" "$img" >/dev/null 2>&1 || fail "debugfs ssv"
want2=$(list_oracle "$img2" "$img2" | sum_of)
used2=$(used_blocks_digest "$img2")
sync
alloc2=$(alloc_bytes "$img2")
cat >"$T/two.c" <<'C'
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <e2trim.h>

struct job { const char *path; int dryrun; uint64_t bytes; errcode_t err; };

static void *run(void *arg)
{
	struct job *j = arg;
	struct e2trim *t;

	j->err = e2trim_new(&t);
	if (!j->err)
		j->err = e2trim_set_flags(t, j->dryrun ? E2TRIM_FLAG_DRYRUN : 0);
	if (!j->err)
		j->err = e2trim_open(t, j->path);
	if (!j->err)
		j->err = e2trim_apply(t, NULL, NULL);
	if (!j->err)
		j->bytes = e2trim_result(t)->bytes_trimmed;
	e2trim_free(t);
	return NULL;
}

int main(int argc, char **argv)
{
	struct job j[2] = { { argv[1], 1, 0, 0 }, { argv[2], 0, 0, 0 } };
	pthread_t th[2];
	int i;

	if (argc != 3)
		return 3;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, run, &j[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++)
		printf("%" PRIu64 " %ld\n", j[i].bytes, (long)j[i].err);
	return 0;
}
C
# shellcheck disable=SC2086
cc -std=gnu99 -Wall -Werror "${sanflags[@]}" "$T/two.c" $flags -lpthread -o "$T/two" ||
	fail "the two-thread program does not build"
${E2TRIM_WRAP:-} "$T/two" "$img" "$img2" >"$T/two.out" 2>"$T/err" || { cat "$T/err"; fail "two threads"; }
printf '%s 0\n%s 0\n' "$want" "$want2" >"$T/two.want"
cmp -s "$T/two.out" "$T/two.want" || { diff "$T/two.out" "$T/two.want"; fail "two threads: figures differ from dumpe2fs's"; }
sync
assert_eq "$((alloc2 - $(alloc_bytes "$img2")))" "$want2" "two threads: the trimmed image shrank by its figure"
assert_eq "$(used_blocks_digest "$img2")" "$used2" "two threads: used blocks of the trimmed image"
e2fsck -fn "$img2" >/dev/null 2>&1 || fail "two threads: e2fsck -fn of the trimmed image"
note "two threads, two filesystems: $want bytes (dry run) and $want2 bytes trimmed, as dumpe2fs gives"
exit 0
