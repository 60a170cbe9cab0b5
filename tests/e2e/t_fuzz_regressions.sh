#!/bin/bash
# Every image with which make fuzz found a crash, a hang, a leak or a gate
# that let a damaged filesystem through is kept as images/fuzz-NAME.img.xz
# (made with E2TRIM_FUZZ_SAVE, see tests/fuzz/run.sh).  On each, e2trim -n
# and a real trim must end with the exit code listed here: no signal, no
# sanitizer or valgrind report, no 0 on a damaged image, and the image
# left as it was.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
IMAGES=$(cd "$(dirname "$0")/../../images" && pwd)

# name, exit code, what the fuzzer found
FUZZ_REGRESSIONS=(
	"fuzz-desc-at-superblock 16 inode bitmap and table of group 7 at block 0 (the superblock's) on 4 KiB blocks passed the layout gate"
)

(cd "$IMAGES" && ls ./fuzz-*.img.xz 2>/dev/null) | sed 's|^\./||; s|\.img\.xz$||' |
	sort >"$T/there"
for e in "${FUZZ_REGRESSIONS[@]}"; do echo "${e%% *}"; done | sort >"$T/listed"
diff "$T/listed" "$T/there" >&2 || fail "images/fuzz-*.img.xz and the list here differ"

for e in "${FUZZ_REGRESSIONS[@]}"; do
	read -r name code _ <<<"$e"
	img=$T/$name.img
	xz -dc "$IMAGES/$name.img.xz" >"$img" || fail "$name: cannot decompress"
	sum=$(sha_of "$img")
	for opt in -n -v; do
		# shellcheck disable=SC2086
		E2TRIM_WRAP="timeout 60 ${E2TRIM_WRAP:-}" run_e2trim $opt "$img"
		[ "$RC" != 124 ] || fail "$name ($opt): hangs"
		[ "$RC" -lt 128 ] || { cat "$ERR" >&2; fail "$name ($opt): killed by signal $((RC - 128))"; }
		assert_rc "$code" "$name ($opt)"
		grep -q 'Sanitizer\|runtime error' "$ERR" && { cat "$ERR" >&2; fail "$name ($opt): sanitizer report"; }
		assert_eq "$(sha_of "$img")" "$sum" "$name ($opt): image changed"
	done
	note "$name: exit $code ($(head -c 120 "$ERR"))"
	rm -f "$img"
done
exit 0
