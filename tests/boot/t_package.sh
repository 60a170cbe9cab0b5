#!/bin/bash
# The package holds what e2trim(8) and `make install` promise, where
# Debian wants it: the binary, the man page, /etc/e2trim.conf as a
# conffile, the initramfs-tools hook and script, the dracut module and the
# systemd unit; its e2trim runs, prints the package's version and carries
# dpkg-buildflags' hardening.  libe2trim1 holds libe2trim.so.1 in the
# multiarch directory (soname libe2trim.so.<the version's major>, a
# symbols file, the ldconfig trigger), which the packaged e2trim links;
# libe2trim-dev the headers, libe2trim.a, the .so link, e2trim.pc and libe2trim(3).
# lintian finds no error and no warning in the three, and blhc no missing
# hardening flag in make deb's build log.
# shellcheck source-path=SCRIPTDIR source=bootlib.sh
. "$(dirname "$0")/bootlib.sh"

dpkg-deb -c "$DEB" | awk '{print $1, $NF}' >"$T/contents"
for f in -rwxr-xr-x:./usr/sbin/e2trim \
	-rw-r--r--:./usr/share/man/man8/e2trim.8.gz \
	-rw-r--r--:./etc/e2trim.conf \
	-rwxr-xr-x:./usr/share/initramfs-tools/hooks/e2trim \
	-rwxr-xr-x:./usr/share/initramfs-tools/scripts/local-premount/e2trim \
	-rwxr-xr-x:./usr/lib/dracut/modules.d/90e2trim/module-setup.sh \
	-rwxr-xr-x:./usr/lib/dracut/modules.d/90e2trim/e2trim-pre-mount.sh \
	-rw-r--r--:./usr/lib/systemd/system/e2trim@.service \
	-rw-r--r--:./usr/share/doc/e2trim/copyright; do
	grep -qxF -- "${f%%:*} ${f#*:}" "$T/contents" || fail "the package lacks ${f#*:} (${f%%:*})"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$T/conffiles"
assert_eq "$(cat "$T/conffiles")" /etc/e2trim.conf "conffiles"
ver=$(dpkg-deb -f "$DEB" Version)
assert_eq "$(LD_LIBRARY_PATH=$STAGE_LIB "$STAGE/usr/sbin/e2trim" --version)" "e2trim $ver" \
	"the packaged e2trim --version"
cmp -s "$STAGE/etc/e2trim.conf" "$(dirname "$0")/../../src/e2trim.conf" || fail "/etc/e2trim.conf"
grep -q '^ExecStart=/usr/sbin/e2trim ' "$STAGE/usr/lib/systemd/system/e2trim@.service" ||
	fail "the unit's ExecStart is not /usr/sbin/e2trim"
# the hardening flags took: PIE, full RELRO, bind-now, the stack
# protector and _FORTIFY_SOURCE's checked functions
bin=$STAGE/usr/sbin/e2trim
readelf -h "$bin" | grep -q 'Type:.*DYN' || fail "e2trim is not PIE"
readelf -l "$bin" | grep -q GNU_RELRO || fail "e2trim has no RELRO"
readelf -d "$bin" | grep -q 'FLAGS.*BIND_NOW' || fail "e2trim is not bind-now"
readelf -W --dyn-syms "$bin" | grep -q __stack_chk_fail || fail "e2trim: no stack protector"
readelf -W --dyn-syms "$bin" | grep -q '__[a-z]*_chk@' || fail "e2trim: no fortified calls"
readelf -d "$bin" | grep -q 'NEEDED.*\[libe2trim\.so\.1\]' || fail "e2trim does not link libe2trim.so.1"
dpkg-deb -f "$DEB" Depends | grep -q 'libe2trim1 (>= ' || fail "e2trim does not depend on libe2trim1"
note "$(basename "$DEB"): every file in place, /etc/e2trim.conf a conffile, version $ver"

# libe2trim1: the library, its soname the one the package is named for
# (Debian's rule: libe2trim<N> holds libe2trim.so.<N>), the ldconfig
# trigger, a symbols file
ma=$MULTIARCH
dpkg-deb -c "$LIBDEB" | awk '{print $1, $NF}' >"$T/lib.contents"
grep -qxF -- "-rw-r--r-- ./usr/lib/$ma/libe2trim.so.1" "$T/lib.contents" ||
	fail "libe2trim1 lacks usr/lib/$ma/libe2trim.so.1"
soname=$(readelf -d "$STAGE_LIB/libe2trim.so.1" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
pkg=$(dpkg-deb -f "$LIBDEB" Package)
assert_eq "$soname" "libe2trim.so.${pkg#libe2trim}" "the packaged library's soname vs its package's name ($pkg)"
assert_eq "$(dpkg-deb -f "$LIBDEB" Multi-Arch)" same "libe2trim1's Multi-Arch"
dpkg-deb --ctrl-tarfile "$LIBDEB" | tar -xO ./triggers | grep -qx 'activate-noawait ldconfig' ||
	fail "libe2trim1 has no ldconfig trigger"
dpkg-deb --ctrl-tarfile "$LIBDEB" | tar -xO ./symbols >"$T/symbols" || fail "libe2trim1 has no symbols file"
assert_grep "^libe2trim.so.1 libe2trim1 #MINVER#" "$T/symbols" "libe2trim1's symbols"
assert_grep "^ e2trim_apply@LIBE2TRIM_0.2.0 " "$T/symbols" "libe2trim1's symbols"
note "$(basename "$LIBDEB"): libe2trim.so.1 (soname $soname), symbols, ldconfig trigger"

# libe2trim-dev: what a program needs to build against the library
dpkg-deb -c "$DEVDEB" | awk '{print $1, $NF}' >"$T/dev.contents"
for f in -rw-r--r--:./usr/include/e2trim.h -rw-r--r--:./usr/include/e2trim_err.h \
	"-rw-r--r--:./usr/lib/$ma/libe2trim.a" "-rw-r--r--:./usr/lib/$ma/pkgconfig/e2trim.pc" \
	-rw-r--r--:./usr/share/man/man3/libe2trim.3.gz lrwxrwxrwx:libe2trim.so.1; do
	grep -qxF -- "${f%%:*} ${f#*:}" "$T/dev.contents" || fail "libe2trim-dev lacks ${f#*:} (${f%%:*})"
done
dpkg-deb -c "$DEVDEB" | grep -q " ./usr/lib/$ma/libe2trim.so -> libe2trim.so.1$" ||
	fail "libe2trim-dev: no libe2trim.so -> libe2trim.so.1"
dpkg-deb -f "$DEVDEB" Depends | grep -q "libe2trim1 (= $ver)" ||
	fail "libe2trim-dev does not depend on libe2trim1 (= $ver)"
mkdir -p "$T/dev"
dpkg-deb -x "$DEVDEB" "$T/dev"
assert_grep "^libdir=\\\${prefix}/lib/$ma$" "$T/dev/usr/lib/$ma/pkgconfig/e2trim.pc" "e2trim.pc's libdir"
assert_grep "^Version: $ver$" "$T/dev/usr/lib/$ma/pkgconfig/e2trim.pc" "e2trim.pc's version"
note "$(basename "$DEVDEB"): e2trim.h, e2trim_err.h, libe2trim.a, the .so link, e2trim.pc, libe2trim(3)"

# lintian and blhc, asserted (make deb runs them too)
changes=("$DEBDIR"/*.changes)
[ -f "${changes[0]}" ] || fail "no .changes in $DEBDIR"
if command -v lintian >/dev/null; then
	lintian --fail-on error,warning "${changes[0]}" >"$T/lintian.out" 2>&1 ||
		{ cat "$T/lintian.out"; fail "lintian: errors or warnings"; }
	if grep -E '^[EW]: ' "$T/lintian.out"; then fail "lintian: errors or warnings"; fi
	note "lintian $(basename "${changes[0]}"): no error, no warning"
else
	fail "lintian not installed (make deps-deb installs it)"
fi
if command -v blhc >/dev/null; then
	blhc "$DEBDIR/build.log" >"$T/blhc.out" 2>&1 || { cat "$T/blhc.out"; fail "blhc"; }
	[ ! -s "$T/blhc.out" ] || { cat "$T/blhc.out"; fail "blhc said something"; }
	note "blhc build.log: every hardening flag in effect"
else
	fail "blhc not installed (make deps-deb installs it)"
fi
exit 0
