#!/bin/bash
# libe2trim.a links into a program that has names of its own: the
# archive defines nothing global but e2trim_* and compile_et's error
# table with its two initializers, exactly the symbols libe2trim.so.1
# exports (libe2trim.map), so a caller that defines lib_warn(),
# open_close(), journal_check(), range_read() and other names the
# library uses inside links with `pkg-config --static --libs e2trim` and
# no "multiple definition".  The program, linked against the installed
# archive (libe2trim.so* removed, so -le2trim can only be the archive),
# then fully static (-static, not under the sanitizers), does a dry run
# of an aged ext4 image through the public API: its figure is dumpe2fs's
# free extents aligned to the host's block, its own functions are called
# by it alone (the library keeps calling its own), and a refusal of an
# unclean filesystem is worded through the error table (error_message()
# and e2trim_message()).  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
lib_install

# what the archive defines globally: the shared library's exports, no more
nm -g --defined-only "$lib/libe2trim.a" | awk 'NF == 3 {print $3}' | sort >"$T/a.syms"
nm -D --defined-only "$lib/libe2trim.so.1" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
	sed 's/@.*//' | sort >"$T/so.syms"
grep -v '^e2trim_' "$T/a.syms" |
	grep -vxE 'initialize_e2tr_error_table(_r)?|et_e2tr_error_table' >"$T/extra" || true
[ ! -s "$T/extra" ] || { head -20 "$T/extra"; fail "libe2trim.a defines $(wc -l <"$T/extra") global symbols besides e2trim_* and the error table"; }
cmp -s "$T/a.syms" "$T/so.syms" ||
	{ diff "$T/a.syms" "$T/so.syms"; fail "libe2trim.a's globals differ from libe2trim.so.1's exports"; }
note "libe2trim.a defines $(wc -l <"$T/a.syms") global symbols, libe2trim.so.1's exports"

# a static-only install: -le2trim finds the archive
rm -f "$lib"/libe2trim.so*
sflags=$(pkg-config --define-prefix --static --cflags --libs e2trim) || fail "pkg-config --static e2trim"

cat >"$T/caller.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <e2trim.h>

/* names libe2trim uses inside, this program's own */
static int mine;
void lib_warn(void) { mine++; }
int open_close(int x) { mine++; return x; }
int journal_check(void) { mine++; return 0; }
long range_read(long x) { mine++; return x; }
void lib_fail(void) { mine++; }
void target_trim(void) { mine++; }
void verify_ref(void) { mine++; }
void plan_run(void) { mine++; }
void partition_list(void) { mine++; }
void sysfs_line(void) { mine++; }
void bitmap_read_open(void) { mine++; }
void image_lock_take(void) { mine++; }
void errors_known(void) { mine++; }
int nbd_dl = 7;

int main(int argc, char **argv)
{
	struct e2trim *t;
	char msg[512];
	errcode_t err;
	int n;

	if (argc != 3)
		return 3;
	lib_warn();
	err = e2trim_new(&t);
	if (!err)
		err = e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN);
	if (!err)
		err = e2trim_open(t, argv[1]);
	if (!err)
		err = e2trim_check(t);
	if (!err)
		err = e2trim_apply(t, NULL, NULL);
	if (err) {
		fprintf(stderr, "%s\n", e2trim_message(t, err, msg, sizeof(msg)));
		return e2trim_exit_code(err);
	}
	printf("%" PRIu64 "\n", e2trim_result(t)->bytes_trimmed);
	e2trim_free(t);

	/* a refusal, worded through the error table */
	err = e2trim_new(&t);
	if (!err)
		err = e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN);
	if (!err)
		err = e2trim_open(t, argv[2]);
	printf("%d\n%s\n%s\n", e2trim_exit_code(err), error_message(err),
	       e2trim_message(t, err, msg, sizeof(msg)));
	e2trim_free(t);
	/* the library called none of these: mine is 1, lib_warn()'s */
	n = mine;
	printf("%d %d %d\n", n, open_close(1) + (int)range_read(1), nbd_dl);
	return 0;
}
C

img=$T/aged.img
mkfs "$img" 64M -t ext4 -b 4096
age "$img" 3
want=$(list_oracle "$img" "$img" | awk '{s += $2} END {printf "%.0f\n", s}')
[ "$want" -gt 0 ] || fail "no free space in the aged image"
unclean=$T/unclean.img
mkfs "$unclean" 16M -t ext4 -b 1024
dfs_write "$unclean" <<<"ssv state 0"

# check BIN WHAT: the program's output
check() {
	local out
	out=$("$1" "$img" "$unclean" 2>"$T/err") || { cat "$T/err"; fail "$2: exit $?"; }
	[ ! -s "$T/err" ] || { cat "$T/err"; fail "$2: wrote to stderr"; }
	mapfile -t got <<<"$out"
	assert_eq "${got[0]}" "$want" "$2: dry run vs dumpe2fs's free extents"
	assert_eq "${got[1]}" 13 "$2: the unclean filesystem's exit code"
	case ${got[2]} in ""|"Unknown code "*)
		fail "$2: error_message() does not know the code: ${got[2]}" ;;
	esac
	case ${got[3]} in *"e2fsck -f"*) ;; *) fail "$2: e2trim_message(): ${got[3]}" ;; esac
	assert_eq "${got[4]}" "1 2 7" "$2: the program's own functions, called by it alone"
}

# shellcheck disable=SC2086  # $sflags is pkg-config's words
cc -std=c99 -Wall -Wextra "${sanflags[@]}" "$T/caller.c" $sflags -o "$T/caller" \
	2>"$T/cc.out" || { cat "$T/cc.out"; fail "the caller does not link against libe2trim.a: cc ... $sflags"; }
! ldd "$T/caller" 2>/dev/null | grep -q libe2trim || fail "the caller needs a shared libe2trim"
check "$T/caller" "libe2trim.a"
note "linked with pkg-config --static --libs e2trim: $want bytes (dry run), as dumpe2fs gives; exit 13 worded"

if [ ${#sanflags[@]} = 0 ]; then
	# shellcheck disable=SC2086
	cc -static -std=c99 -Wall -Wextra "$T/caller.c" $sflags -o "$T/caller-static" \
		2>"$T/cc.out" || { cat "$T/cc.out"; fail "the caller does not link with -static: cc -static ... $sflags"; }
	! readelf -d "$T/caller-static" | grep -q NEEDED || fail "-static: the program needs shared libraries"
	check "$T/caller-static" "-static"
	note "linked with -static: the same figures"
else
	note "-static not tried under the sanitizers"
fi
exit 0
