#!/bin/bash
# The package holds what e2trim(8) and `make install` promise, where
# Debian wants it: the binary, the man page, /etc/e2trim.conf as a
# conffile, the initramfs-tools hook and script, the dracut module and the
# systemd unit; its e2trim runs, prints the package's version and carries
# dpkg-buildflags' hardening.
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
	-rw-r--r--:./lib/systemd/system/e2trim@.service \
	-rw-r--r--:./usr/share/doc/e2trim/copyright; do
	grep -qxF -- "${f%%:*} ${f#*:}" "$T/contents" || fail "the package lacks ${f#*:} (${f%%:*})"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$T/conffiles"
assert_eq "$(cat "$T/conffiles")" /etc/e2trim.conf "conffiles"
ver=$(dpkg-deb -f "$DEB" Version)
assert_eq "$("$STAGE/usr/sbin/e2trim" --version)" "e2trim $ver" "the packaged e2trim --version"
cmp -s "$STAGE/etc/e2trim.conf" "$(dirname "$0")/../../src/e2trim.conf" || fail "/etc/e2trim.conf"
grep -q '^ExecStart=/usr/sbin/e2trim ' "$STAGE/lib/systemd/system/e2trim@.service" ||
	fail "the unit's ExecStart is not /usr/sbin/e2trim"
# the hardening flags took: PIE, full RELRO, bind-now, the stack
# protector and _FORTIFY_SOURCE's checked functions
bin=$STAGE/usr/sbin/e2trim
readelf -h "$bin" | grep -q 'Type:.*DYN' || fail "e2trim is not PIE"
readelf -l "$bin" | grep -q GNU_RELRO || fail "e2trim has no RELRO"
readelf -d "$bin" | grep -q 'FLAGS.*BIND_NOW' || fail "e2trim is not bind-now"
readelf -W --dyn-syms "$bin" | grep -q __stack_chk_fail || fail "e2trim: no stack protector"
readelf -W --dyn-syms "$bin" | grep -q '__[a-z]*_chk@' || fail "e2trim: no fortified calls"
note "$(basename "$DEB"): every file in place, /etc/e2trim.conf a conffile, version $ver"
exit 0
