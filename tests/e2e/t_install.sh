#!/bin/bash
# make install with DESTDIR (and PREFIX) puts every file in place with
# the right mode: the binary, the man pages e2trim(8) and libe2trim(3), the example config, the
# initramfs-tools hook and script, the dracut module, the systemd unit
# (its ExecStart names the installed binary), libe2trim (header, both
# libraries, e2trim.pc with the prefix); the installed man pages
# render (man --warnings -l: none); systemd-analyze verifies the unit, and a mount unit with the
# drop-in e2trim(8) documents, in the installed tree.  make uninstall
# removes every file again.  Once more with Debian's multiarch LIBDIR
# (what debian/rules passes): the libraries and e2trim.pc go there, and
# pkg-config reads the right directories off it.
# e2e: no-sanitize (make install of the plain build and the files it puts in place: runs no e2trim)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

# mode path...: each file is there, with that mode
installed() {
	local mode=$1 f; shift
	for f in "$@"; do
		[ -f "$f" ] || fail "not installed: $f"
		[ "$(stat -c %a "$f")" = "$mode" ] || fail "$f: mode $(stat -c %a "$f"), want $mode"
	done
}

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
[ -n "$multiarch" ] || fail "no multiarch triplet (dpkg-architecture, gcc -print-multiarch)"
for how in /usr/local /usr "/usr lib/$multiarch"; do
	read -r prefix libsub <<<"$how"
	libsub=${libsub:-lib}
	root="$T/root$prefix$libsub"
	make -s -C "$top" install DESTDIR="$root" PREFIX="$prefix" LIBDIR="$prefix/$libsub" \
		>"$T/make.out" 2>&1 || { cat "$T/make.out"; fail "make install PREFIX=$prefix"; }
	p=$root$prefix
	l=$p/$libsub
	installed 755 "$p/sbin/e2trim" \
		"$root/usr/share/initramfs-tools/hooks/e2trim" \
		"$root/usr/share/initramfs-tools/scripts/local-premount/e2trim" \
		"$root/usr/lib/dracut/modules.d/90e2trim/module-setup.sh" \
		"$root/usr/lib/dracut/modules.d/90e2trim/e2trim-pre-mount.sh"
	installed 644 "$p/share/man/man8/e2trim.8" "$p/share/man/man3/libe2trim.3" \
		"$p/share/doc/e2trim/e2trim.conf" \
		"$p/lib/systemd/system/e2trim@.service" \
		"$p/include/e2trim.h" "$p/include/e2trim_err.h" "$l/libe2trim.a" \
		"$l/pkgconfig/e2trim.pc"
	installed 755 "$l/libe2trim.so.1"
	[ "$(readlink "$l/libe2trim.so")" = libe2trim.so.1 ] || fail "libe2trim.so link"
	assert_grep "^prefix=$prefix$" "$l/pkgconfig/e2trim.pc" "e2trim.pc's prefix"
	assert_grep "^libdir=\\\${prefix}/$libsub$" "$l/pkgconfig/e2trim.pc" "e2trim.pc's libdir"
	if command -v pkg-config >/dev/null; then
		got=$(PKG_CONFIG_PATH="$l/pkgconfig" pkg-config --variable=libdir e2trim)
		[ "$got" = "$prefix/$libsub" ] || fail "pkg-config libdir: $got, want $prefix/$libsub"
		if [ "$libsub" = lib ]; then	# moved with the tree it lies in
			got=$(PKG_CONFIG_PATH="$l/pkgconfig" pkg-config --define-prefix \
				--variable=libdir e2trim)
			[ "$got" = "$l" ] || fail "pkg-config --define-prefix libdir: $got, want $l"
		fi
	else
		left_out "pkg-config's view of e2trim.pc (make deps installs pkg-config)"
	fi
	"$p/sbin/e2trim" --version | grep -q "^e2trim " || fail "installed e2trim does not run"
	assert_grep "^ExecStart=$prefix/sbin/e2trim " "$p/lib/systemd/system/e2trim@.service" \
		"unit's ExecStart, PREFIX=$prefix"
	cmp -s "$p/share/man/man8/e2trim.8" "$top/src/e2trim.8" || fail "man page differs"
	cmp -s "$p/share/man/man3/libe2trim.3" "$top/src/libe2trim.3" || fail "libe2trim(3) differs"
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$p/share/man/man8/e2trim.8" >"$T/man.txt" 2>"$T/man.err" ||
			fail "man -l failed"
		[ ! -s "$T/man.err" ] || { cat "$T/man.err"; fail "man -l warnings"; }
		assert_grep "EXIT STATUS" "$T/man.txt" "rendered man page"
		MANWIDTH=80 man --warnings -l "$p/share/man/man3/libe2trim.3" >"$T/man.txt" 2>"$T/man.err" ||
			fail "man -l libe2trim.3 failed"
		[ ! -s "$T/man.err" ] || { cat "$T/man.err"; fail "man -l libe2trim.3: warnings"; }
		assert_grep "THE HANDLE AND ITS STATES" "$T/man.txt" "rendered libe2trim(3)"
	else
		left_out "man -l (make deps installs man-db)"
	fi
	note "PREFIX=$prefix LIBDIR=$prefix/$libsub: every file in place; e2trim(8) and libe2trim(3) render"

	if command -v systemd-analyze >/dev/null; then
		d="$root/etc/systemd/system"
		mkdir -p "$d/mnt-data.mount.d"
		printf '[Mount]\nWhat=/dev/sdb1\nWhere=/mnt/data\nType=ext4\n' >"$d/mnt-data.mount"
		# the drop-in of e2trim(8), BOOT
		printf '[Unit]\nWants=e2trim@dev-sdb1.service\nAfter=e2trim@dev-sdb1.service\n' \
			>"$d/mnt-data.mount.d/e2trim.conf"
		[ "$(systemd-escape --path /dev/sdb1)" = dev-sdb1 ] || fail "systemd-escape"
		MANPATH="$p/share/man" systemd-analyze verify --root="$root" \
			e2trim@dev-sdb1.service mnt-data.mount >"$T/verify.out" 2>&1 ||
			{ cat "$T/verify.out"; fail "systemd-analyze verify, PREFIX=$prefix"; }
		[ ! -s "$T/verify.out" ] || { cat "$T/verify.out"; fail "systemd-analyze verify said something"; }
		rm -rf "$d"
		note "PREFIX=$prefix: systemd-analyze verify: unit, mount and drop-in clean"
	else
		left_out "systemd-analyze verify (make deps installs systemd)"
	fi

	make -s -C "$top" uninstall DESTDIR="$root" PREFIX="$prefix" LIBDIR="$prefix/$libsub" \
		>"$T/make.out" 2>&1 ||
		{ cat "$T/make.out"; fail "make uninstall PREFIX=$prefix"; }
	left=$(find "$root" -type f -o -type l)
	[ -z "$left" ] || fail "make uninstall left: $left"
	[ ! -e "$root/usr/lib/dracut/modules.d/90e2trim" ] || fail "90e2trim/ left behind"
	note "PREFIX=$prefix: make uninstall removed every file"
done
finish
