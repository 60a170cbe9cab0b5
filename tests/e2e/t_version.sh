#!/bin/bash
# One version everywhere: e2trim --version prints the version of the
# newest debian/changelog entry, the man page's header names it, and the
# library's soname is libe2trim.so.<its major>: the one built beside
# $E2TRIM.  The packaged one is tests/boot/t_package.sh's to check (make
# check-boot builds the package first), so it is not checked here only
# when a package happens to be lying around.
# e2e: no-sanitize (one version string in the changelog, the man page, --version and the soname: the same in either build)
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
# The soname's major is the ABI's, not the version's (0.2.0 is
# libe2trim.so.1): the Makefile's SO_VERSION, which the built library, the
# Debian package's name and symbols file and the ABI baseline all follow.
so=$(sed -n 's/^SO_VERSION := //p' "$top/Makefile")
[ -n "$so" ] || fail "no SO_VERSION in the Makefile"
lib=$(dirname "$E2TRIM")/libe2trim.so.$so
[ -f "$lib" ] || fail "no $lib beside $E2TRIM (make builds it)"
assert_eq "$(soname "$lib")" "libe2trim.so.$so" "$lib's soname vs SO_VERSION"
grep -qx "Package: libe2trim$so" "$top/debian/control" || fail "debian/control has no package libe2trim$so"
assert_eq "$(head -1 "$top/debian/libe2trim$so.symbols")" "libe2trim.so.$so libe2trim$so #MINVER#" \
	"debian/libe2trim$so.symbols' first line"
assert_eq "$(sed -n "s/.*soname='\([^']*\)'.*/\1/p" "$top/tests/abi/libe2trim.abi" | head -1)" \
	"libe2trim.so.$so" "the ABI baseline's soname (make abi-baseline)"
# the symbols file's node is the version's: LIBE2TRIM_<version> <version>
grep -q "^ (symver)LIBE2TRIM_[0-9.]* [0-9.]*$" "$top/debian/libe2trim$so.symbols" ||
	fail "debian/libe2trim$so.symbols: no (symver) line"
note "soname libe2trim.so.$so: library, Debian package, symbols file and ABI baseline agree"
exit 0
