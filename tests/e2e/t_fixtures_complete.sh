#!/bin/bash
# images/ is complete and small: every fixture that images/mkimages.sh
# makes is there as NAME.img.xz, has its digest in images/SHA256SUMS and
# is checked by t_fixtures_good.sh or t_fixtures_unsafe.sh (the lists in
# tests/fixtures.sh), and nothing else is there; images/ stays under 5 MB.
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

# small: the committed files (not decompressed *.img left by hand)
total=$( (cd "$IMAGES" && stat -c %s ./*.xz ./*.sh ./*.py ./*.md SHA256SUMS VERSIONS) |
	awk '{s += $1} END {print s}')
[ "$total" -lt 5000000 ] || fail "images/ holds $total bytes, more than 5 MB"
note "$(wc -l <"$T/made") fixtures, $total bytes in images/"
exit 0
