#!/bin/bash
# images/mkimages.sh makes the committed fixtures again, byte for byte
# (compared decompressed, with images/SHA256SUMS), without root: it runs
# here as an unprivileged user when there is one.  With another e2fsprogs
# than images/VERSIONS names, mke2fs may lay things out differently: then
# only that every fixture is still made is checked.
# e2e: no-sanitize (images/mkimages.sh makes the fixtures again: mke2fs and debugfs, no e2trim)
# e2e: sources (images/mkimages.sh against images/SHA256SUMS)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

run_as=()
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	# a copy of images/ and tests/mke2fs.conf that nobody can read
	mkdir -p "$T/repo/tests"
	cp -r "$IMAGES" "$T/repo/images"
	rm -f "$T/repo/images/"*.img
	cp "$IMAGES/../tests/mke2fs.conf" "$T/repo/tests/"
	chmod -R a+rX "$T"
	run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups -- env HOME=/tmp)
	dir=$T/repo/images
else
	dir=$IMAGES
fi

if [ "$(mke2fs -V 2>&1 | head -1)" = "$(head -1 "$IMAGES/VERSIONS")" ]; then
	TMPDIR=/tmp "${run_as[@]}" bash "$dir/mkimages.sh" --check >"$T/check" 2>&1 ||
		{ tail -20 "$T/check" >&2; fail "mkimages.sh --check: the images differ"; }
	note "$(tail -1 "$T/check")"
else
	note "e2fsprogs is $(mke2fs -V 2>&1 | head -1), images/VERSIONS: $(head -1 "$IMAGES/VERSIONS")"
	"${run_as[@]}" bash "$dir/mkimages.sh" --check >"$T/check" 2>&1
	grep -c ' -> ' "$T/check" | grep -qx "$(bash "$dir/mkimages.sh" --list | wc -l)" ||
		{ tail -20 "$T/check" >&2; fail "mkimages.sh could not make every fixture"; }
	left_out "the byte comparison: the fixtures were made with another e2fsprogs (every one was made again, not compared)"
fi
finish
