#!/bin/bash
# images/mkverify.sh makes the fixtures of images/verify/ again byte for
# byte (compared decompressed, with images/verify/SHA256SUMS), and every
# one of them is listed with what e2trim must answer.  With another
# e2fsprogs than images/VERSIONS names, mke2fs may lay things out
# differently: then only that every fixture is still made is checked.
# e2e: no-sanitize (images/mkverify.sh makes the fixtures again: no e2trim)
# e2e: sources (images/mkverify.sh against its sums)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
IMAGES=$(cd "$(dirname "$0")/../../images" && pwd)

bash "$IMAGES/mkverify.sh" --list | awk '{print $1}' | sort >"$T/listed"
(cd "$IMAGES/verify" && ls ./*.img.xz) | sed 's|^\./||; s|\.img\.xz$||' | sort >"$T/there"
awk '{sub(/\.img$/, "", $2); print $2}' "$IMAGES/verify/SHA256SUMS" | sort >"$T/sums"
diff "$T/listed" "$T/there" >&2 || fail "images/verify/*.img.xz differ from mkverify.sh --list"
diff "$T/listed" "$T/sums" >&2 || fail "images/verify/SHA256SUMS differs from mkverify.sh --list"

if [ "$(mke2fs -V 2>&1 | head -1)" = "$(head -1 "$IMAGES/VERSIONS")" ]; then
	bash "$IMAGES/mkverify.sh" --check >"$T/check" 2>&1 ||
		{ cat "$T/check" >&2; fail "mkverify.sh --check: the images differ"; }
	note "$(grep -c ': same$' "$T/check") fixtures made again, byte for byte"
else
	note "e2fsprogs is $(mke2fs -V 2>&1 | head -1), images/VERSIONS: $(head -1 "$IMAGES/VERSIONS")"
	bash "$IMAGES/mkverify.sh" --check >"$T/check" 2>&1
	[ "$(grep -c ': ' "$T/check")" = "$(wc -l <"$T/listed")" ] ||
		{ cat "$T/check" >&2; fail "mkverify.sh could not make every fixture"; }
	left_out "the byte comparison: the fixtures were made with another e2fsprogs (every one was made again, not compared)"
fi
finish
