#!/bin/bash
# One version everywhere: e2trim --version prints the version of the
# newest debian/changelog entry, the man page's header names it, and the
# library's soname is libe2trim.so.<its major>: the one built beside
# $E2TRIM, and the packaged one when make deb has left libe2trim0 in
# build/deb/ (tests/boot/t_package.sh asserts that one always).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

# "e2trim (0.1.0) unstable; ...": the first line of the changelog
want=$(sed -n '1s/^e2trim (\([^)]*\)).*/\1/p' "$top/debian/changelog")
[ -n "$want" ] || fail "no version in debian/changelog's first line"
# a native package: no Debian revision to strip
case "$want" in *-*) fail "debian/changelog: $want is not a native version" ;; esac
assert_eq "$("$E2TRIM" --version)" "e2trim $want" "e2trim --version"
grep -q "^\.TH E2TRIM 8 \"[^\"]*\" \"e2trim $want\"" "$top/src/e2trim.8" ||
	fail "e2trim.8's .TH does not name e2trim $want: $(grep '^\.TH' "$top/src/e2trim.8")"
note "e2trim --version, debian/changelog and e2trim.8: $want"

# soname LIB: what the dynamic section of LIB says
soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p'; }
lib=$(dirname "$E2TRIM")/libe2trim.so.0
[ -f "$lib" ] || fail "no $lib beside $E2TRIM (make builds it)"
assert_eq "$(soname "$lib")" "libe2trim.so.${want%%.*}" "$lib's soname vs version $want"
debs=("$top"/build/deb/libe2trim0_"$want"_*.deb)
if [ -f "${debs[0]}" ]; then
	dpkg-deb -x "${debs[0]}" "$T/pkg"
	pkglib=$(find "$T/pkg" -name 'libe2trim.so.*' -type f | head -1)
	[ -n "$pkglib" ] || fail "${debs[0]} holds no libe2trim.so.*"
	assert_eq "$(soname "$pkglib")" "libe2trim.so.${want%%.*}" \
		"the packaged library's soname vs version $want"
	note "soname libe2trim.so.${want%%.*}: built and packaged ($(basename "${debs[0]}"))"
else
	note "soname libe2trim.so.${want%%.*} (no libe2trim0_${want}_*.deb in build/deb: make deb)"
fi
exit 0
