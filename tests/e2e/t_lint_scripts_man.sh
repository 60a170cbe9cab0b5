#!/bin/bash
# Every shell script git tracks (the shipped initramfs-tools hook and
# script, the dracut module, the tests, images/, CI) passes shellcheck;
# the man page has no groff warnings; and the places that list options
# and exit codes agree: every long option of e2trim --help is in
# e2trim(8); every exit code of src/e2trim.h is in the table that maps
# error codes to exit codes (src/errors.c), in e2trim --help, in
# e2trim(8)'s EXIT STATUS and in README's table, which list no others.
# e2e: no-sanitize (shellcheck, groff and the documented lists: the sources, not the build)
# e2e: sources (shellcheck, groff and the documented lists)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
man=$top/src/e2trim.8

command -v shellcheck >/dev/null || skip "shellcheck not installed (make deps installs it)"
command -v groff >/dev/null || skip "groff not installed (make deps installs it)"

# Every shell script git tracks, wherever it is, so that a new folder
# cannot escape: a name ending in .sh, or a first line #!.../sh, bash,
# dash (tests/ceph/, .ci/run, the boot hooks have no .sh).  Sources are
# followed (-x) from each script's own folder (-P SCRIPTDIR).
git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	skip "not a git checkout: git ls-files names the scripts"
scripts=()
while IFS= read -r -d '' f; do
	[ -f "$top/$f" ] || continue
	case $f in
	*.sh) scripts+=("$top/$f") ;;
	*) head -n1 "$top/$f" | grep -qE '^#! *(/usr)?/bin/(env +)?(ba|da)?sh( |$)' &&
		scripts+=("$top/$f") ;;
	esac
done < <(git -C "$top" ls-files -z)
for f in src/initramfs-tools/hooks/e2trim src/initramfs-tools/scripts/local-premount/e2trim \
	 src/dracut/90e2trim/module-setup.sh src/dracut/90e2trim/e2trim-pre-mount.sh \
	 .ci/run tests/ceph/run.sh tests/e2e/run.sh; do
	printf '%s\n' "${scripts[@]}" | grep -qxF "$top/$f" || fail "the script list misses $f"
done
shellcheck -x -P SCRIPTDIR "${scripts[@]}" >"$T/sc.out" 2>&1 || { cat "$T/sc.out"; fail "shellcheck"; }
# the boot scripts run under dash and busybox sh: POSIX only
for f in src/initramfs-tools/hooks/e2trim src/initramfs-tools/scripts/local-premount/e2trim \
	 src/dracut/90e2trim/e2trim-pre-mount.sh; do
	head -1 "$top/$f" | grep -qx '#!/bin/sh' || fail "$f: not #!/bin/sh"
done
note "shellcheck: ${#scripts[@]} scripts clean"

groff -man -ww -z "$man" >"$T/groff.out" 2>&1 || { cat "$T/groff.out"; fail "groff"; }
[ ! -s "$T/groff.out" ] || { cat "$T/groff.out"; fail "groff warnings"; }
note "e2trim.8: no groff warnings"

# libe2trim(3): no groff warnings; both pages render through man -l
# without one; every name libe2trim.map exports is in it; its EXAMPLES
# program compiles against the header, warning-free
lib3=$top/src/libe2trim.3
command -v man >/dev/null || skip "man not installed (make deps installs man-db)"
groff -man -ww -z "$lib3" >"$T/groff.out" 2>&1 || { cat "$T/groff.out"; fail "groff libe2trim.3"; }
[ ! -s "$T/groff.out" ] || { cat "$T/groff.out"; fail "libe2trim.3: groff warnings"; }
for page in "$man" "$lib3"; do
	MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$T/man.err" || fail "man -l $page"
	[ ! -s "$T/man.err" ] || { cat "$T/man.err"; fail "man -l $page: warnings"; }
done
syms=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$top/src/libe2trim.map")
[ -n "$syms" ] || fail "no symbols in libe2trim.map"
for s in $syms; do
	grep -qw -- "$s" "$lib3" || fail "libe2trim.3 does not name $s (libe2trim.map)"
done
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$lib3" | sed -n '/^\.nf$/,/^\.fi$/p' |
	sed -e '/^\.[nf][fi]$/d' -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$T/example.c"
grep -q 'int main' "$T/example.c" || fail "no program in libe2trim.3's EXAMPLES"
cc -std=c99 -Wall -Wextra -Werror -fsyntax-only -I"$top/src" -I"$(dirname "$E2TRIM")" \
	"$T/example.c" 2>"$T/cc.out" || { cat "$T/cc.out"; fail "libe2trim.3's example does not compile"; }
note "libe2trim.3: no groff or man warnings, names the $(echo "$syms" | wc -w) exported symbols, its example compiles"

# every long option of --help in the man page (as \-\-name)
"$E2TRIM" --help >"$T/help"
opts=$(grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' "$T/help" | sed 's/.*--//')
[ -n "$opts" ] || fail "no options in --help"
for o in $opts; do
	grep -qF -- "\\-\\-${o//-/\\-}" "$man" || fail "e2trim.8 does not document --$o"
done
# The exit codes: enum e2trim_exit in the public header names them; the
# one table from error codes to exit codes (src/errors.c) uses every one
# (but 0); --help, e2trim(8)'s EXIT STATUS and README's table list exactly
# these, no more and no fewer.
hdr=$top/src/e2trim.h
codes=$(grep -oE '^\s+E2TRIM_EXIT_[A-Z_]+ = [0-9]+' "$hdr" | awk '{print $3}')
[ -n "$codes" ] || fail "no exit codes in e2trim.h"
names=$(grep -oE '^\s+E2TRIM_EXIT_[A-Z_]+' "$hdr")
for name in $names; do
	[ "$name" = E2TRIM_EXIT_OK ] && continue
	grep -qE "^\s+\{ E2TRIM_ERR_[A-Z_]+,\s+$name," "$top/src/errors.c" ||
		fail "$name: no error code maps to it in src/errors.c"
done
sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$man" >"$T/exit.8"
sed -n '/^Exit status:/,/^$/p' "$T/help" >"$T/exit.help"
sed -n '/^## Exit status/,/^## /p' "$top/README.md" >"$T/exit.md"
for c in $codes; do
	grep -qx "\\.B $c" "$T/exit.8" || fail "e2trim.8 EXIT STATUS lacks $c"
	grep -qE "(^| )$c  " "$T/exit.help" || fail "e2trim --help lacks exit status $c"
	grep -q "^| $c |" "$T/exit.md" || fail "README's exit status table lacks $c"
done
for c in $(sed -n 's/^\.B \([0-9][0-9]*\)$/\1/p' "$T/exit.8") \
	 $(sed -n 's/^| \([0-9][0-9]*\) |.*/\1/p' "$T/exit.md"); do
	echo "$codes" | grep -qx "$c" || fail "exit status $c is documented but not in e2trim.h"
done
note "--help options ($(echo "$opts" | wc -w)) in e2trim.8; exit codes ($(echo "$codes" | wc -w)) in src/errors.c, --help, e2trim.8 and README"
exit 0
