#!/bin/bash
# The E2TRIM_OPTIONS drop-in that e2trim(8) and the unit's own comment
# show, copied as they show it, keeps every option: systemd-analyze
# verify on e2trim@dev-sdb1.service with that drop-in says nothing
# (systemd splits an unquoted Environment= value at its spaces and says
# "Invalid environment assignment, ignoring: -m": checked here too, so
# that the test can tell the two apart), and the lines shown carry more
# than one option.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

command -v systemd-analyze >/dev/null || skip "no systemd-analyze (make deps installs systemd)"
command -v man >/dev/null || skip "no man (make deps installs man-db)"

root=$T/root
unit=$root/etc/systemd/system
mkdir -p "$unit/e2trim@dev-sdb1.service.d" "$root/usr/sbin" "$T/man/man8"
cp "$top/src/systemd/e2trim@.service" "$unit/"
cp "$E2TRIM" "$root/usr/sbin/e2trim"
cp "$top/src/e2trim.8" "$T/man/man8/"

# verify LINE WHAT: the unit with LINE as its drop-in; systemd's words in $T/v
verify() {
	printf '[Service]\n%s\n' "$1" >"$unit/e2trim@dev-sdb1.service.d/options.conf"
	MANPATH=$T/man systemd-analyze verify --root="$root" e2trim@dev-sdb1.service \
		>"$T/v" 2>&1
}

# the documented lines, as a reader copies them: the man page rendered,
# and the unit's comment
MANWIDTH=250 man -l "$top/src/e2trim.8" 2>/dev/null |
	grep -o 'Environment=[^;)]*E2TRIM_OPTIONS[^;)]*' >"$T/lines"
grep '^#' "$top/src/systemd/e2trim@.service" |
	grep -o 'Environment=.*E2TRIM_OPTIONS.*' >>"$T/lines"
[ "$(wc -l <"$T/lines")" -ge 2 ] || { cat "$T/lines"; fail "the man page and the unit each show a drop-in line"; }

while IFS= read -r line; do
	line=${line%"${line##*[![:space:]]}"}
	case $line in *" "*) ;; *) fail "'$line': shows one option only, not what it is about" ;; esac
	verify "$line" || { cat "$T/v"; fail "systemd-analyze verify with '$line'"; }
	[ ! -s "$T/v" ] || { cat "$T/v"; fail "systemd-analyze verify with '$line' said something"; }
	note "'$line': systemd-analyze verify clean"
done <"$T/lines"

# the oracle tells: the unquoted form loses its options
verify 'Environment=E2TRIM_OPTIONS=-v -m 1M'
assert_grep "Invalid environment assignment, ignoring: -m" "$T/v" \
	"systemd-analyze verify catches the unquoted form"
finish
