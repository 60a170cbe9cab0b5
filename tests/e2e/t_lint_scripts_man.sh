#!/bin/bash
# The shipped shell scripts (initramfs-tools hook and script, dracut
# module) and every script of the tests, images/ and CI pass shellcheck;
# the man page has no groff warnings; and the three
# places that list options and exit codes agree: every long option of
# e2trim --help is in e2trim(8), every exit code of src/e2trim.h is in
# e2trim --help and in e2trim(8)'s EXIT STATUS.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
man=$top/src/e2trim.8

command -v shellcheck >/dev/null || skip "shellcheck not installed (make deps installs it)"
command -v groff >/dev/null || skip "groff not installed (make deps installs it)"

scripts=(
	"$top/src/initramfs-tools/hooks/e2trim"
	"$top/src/initramfs-tools/scripts/local-premount/e2trim"
	"$top/src/dracut/90e2trim/module-setup.sh"
	"$top/src/dracut/90e2trim/e2trim-pre-mount.sh"
	"$top"/tests/e2e/*.sh "$top"/tests/*.sh "$top"/tests/fuzz/*.sh
	"$top"/tests/boot/*.sh
	"$top"/images/*.sh "$top/.ci/run"
)
shellcheck -x "${scripts[@]}" >"$T/sc.out" 2>&1 || { cat "$T/sc.out"; fail "shellcheck"; }
# the boot scripts run under dash and busybox sh: POSIX only
for f in "${scripts[@]:0:2}" "${scripts[3]}"; do
	head -1 "$f" | grep -qx '#!/bin/sh' || fail "$f: not #!/bin/sh"
done
note "shellcheck: ${#scripts[@]} scripts clean"

groff -man -ww -z "$man" >"$T/groff.out" 2>&1 || { cat "$T/groff.out"; fail "groff"; }
[ ! -s "$T/groff.out" ] || { cat "$T/groff.out"; fail "groff warnings"; }
note "e2trim.8: no groff warnings"

# every long option of --help in the man page (as \-\-name)
"$E2TRIM" --help >"$T/help"
opts=$(grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' "$T/help" | sed 's/.*--//')
[ -n "$opts" ] || fail "no options in --help"
for o in $opts; do
	grep -qF -- "\\-\\-${o//-/\\-}" "$man" || fail "e2trim.8 does not document --$o"
done
# every exit code of e2trim.h in --help and in EXIT STATUS
codes=$(grep -oE '^\s+EXIT_[A-Z_]+ = [0-9]+' "$top/src/e2trim.h" | awk '{print $3}')
[ -n "$codes" ] || fail "no exit codes in e2trim.h"
sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$man" >"$T/exit.8"
sed -n '/^Exit status:/,/^$/p' "$T/help" >"$T/exit.help"
for c in $codes; do
	grep -qx "\\.B $c" "$T/exit.8" || fail "e2trim.8 EXIT STATUS lacks $c"
	grep -qE "(^| )$c  " "$T/exit.help" || fail "e2trim --help lacks exit status $c"
done
note "--help options ($(echo "$opts" | wc -w)) and exit codes ($(echo "$codes" | wc -w)) all in e2trim.8"
exit 0
