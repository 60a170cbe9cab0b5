#!/bin/bash
# images/ is complete and small: every fixture that images/mkimages.sh
# makes is there as NAME.img.xz, has its digest in images/SHA256SUMS and
# is checked by t_fixtures_good.sh or t_fixtures_unsafe.sh (the lists in
# tests/fixtures.sh), and nothing else is there; images/README.md has a
# row for each of them, for every images/verify/ image and every fuzz-*
# regression image, and no other rows; images/ stays under 5 MB.
# e2e: no-sanitize (reads images/, its lists and README: runs no e2trim)
# e2e: sources (images/, its lists and README)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source-path=SCRIPTDIR/.. source=fixtures.sh
. "$(dirname "$0")/../fixtures.sh"

bash "$IMAGES/mkimages.sh" --list | sort >"$T/made"
[ -s "$T/made" ] || fail "mkimages.sh --list printed nothing"
# fuzz-*: regression images of make fuzz, tests/e2e/t_fuzz_regressions.sh
(cd "$IMAGES" && ls ./*.img.xz) | sed 's|^\./||; s|\.img\.xz$||' | grep -v '^fuzz-' |
	sort >"$T/there"
awk '{sub(/\.img$/, "", $2); print $2}' "$IMAGES/SHA256SUMS" | sort >"$T/sums"
{ printf '%s\n' "${GOOD_FIXTURES[@]}"
  for e in "${UNSAFE_FIXTURES[@]}"; do echo "${e%% *}"; done; } | sort >"$T/tested"

diff "$T/made" "$T/there" >&2 || fail "images/*.img.xz differ from what mkimages.sh makes"
diff "$T/made" "$T/sums" >&2 || fail "images/SHA256SUMS differs from what mkimages.sh makes"
diff "$T/made" "$T/tested" >&2 || fail "the fixture lists in tests/fixtures.sh differ from mkimages.sh"
[ -z "$(sort "$T/tested" | uniq -d)" ] || fail "a fixture is listed twice"
for c in "${CROSSING_FIXTURES[@]}"; do
	printf '%s\n' "${GOOD_FIXTURES[@]}" | grep -qx -- "$c" || fail "crossing fixture $c is not a good one"
done

# every fixture is in the README's table
while read -r n; do
	grep -q "^| \`$n\` " "$IMAGES/README.md" || fail "images/README.md has no row for $n"
done <"$T/made"

# ... and so is every image of images/verify/ and every fuzz-* regression
# image; every row of the README names an image that is there
(cd "$IMAGES" && ls verify/*.img.xz fuzz-*.img.xz) |
	sed 's|^verify/||; s|\.img\.xz$||' | sort >"$T/others"
[ -s "$T/others" ] || fail "no images/verify/ or fuzz-* images"
while read -r n; do
	grep -q "^| \`$n\` " "$IMAGES/README.md" || fail "images/README.md has no row for $n"
done <"$T/others"
# shellcheck disable=SC2016 # the backquotes are Markdown, not a command
sed -n 's/^| `\([^`]*\)` .*/\1/p' "$IMAGES/README.md" | sort >"$T/rows"
sort -u "$T/made" "$T/others" >"$T/all"
comm -23 "$T/rows" "$T/all" >"$T/stale"
[ ! -s "$T/stale" ] || { cat "$T/stale" >&2; fail "images/README.md has rows for images that are not there"; }

# small: the committed files (not decompressed *.img left by hand)
total=$( (cd "$IMAGES" && stat -c %s ./*.xz ./*.sh ./*.py ./*.md SHA256SUMS VERSIONS) |
	awk '{s += $1} END {print s}')
[ "$total" -lt 5000000 ] || fail "images/ holds $total bytes, more than 5 MB"
note "$(wc -l <"$T/made") fixtures, $total bytes in images/"
exit 0
