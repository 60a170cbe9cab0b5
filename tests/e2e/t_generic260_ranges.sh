#!/bin/bash
# FITRIM's argument rules, as xfstests generic/260 checks them for fstrim,
# on an image (dry runs: the plan is what is being checked).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

img="$T/g.img"
mkfs "$img" 1G -t ext4 -b 4096 -g 32768
# every free block allocated in the file, so a dry run counts it all
fill_free "$img"
bs=4096
count=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ {print $3}')
fs=$((bs * count))
free=$(( $(dumpe2fs -h "$img" 2>/dev/null | awk '/^Free blocks:/ {print $3}') * bs ))
trimmed() { sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$OUT"; }

run_e2trim -n -v -o "$fs" "$img"
assert_rc 3 "start at the end of the filesystem"
assert_grep "not inside the filesystem" "$ERR" "start past the end message"
run_e2trim -n -v -o $((fs + 1048576)) "$img"
assert_rc 3 "start beyond the end"
run_e2trim -n -v -o 18446744073709551615 "$img"
assert_rc 3 "start = 2^64-1"
run_e2trim -n -v -o 18446744073709551615 -l 1M "$img"
assert_rc 3 "start = 2^64-1 with a length"
run_e2trim -n -v -l 4095 "$img"
assert_rc 3 "length shorter than a block"

run_e2trim -n -v "$img"
assert_rc 0 "default length"
all=$(trimmed)
assert_eq "$all" "$free" "default length trims every free byte (dumpe2fs Free blocks)"
run_e2trim -n -v -o 10M "$img"
assert_rc 0 "-o 10M"
# generic/260 only asks for "between half and all"; an offline tool can
# be exact: dumpe2fs's free ranges clipped to [10M, end), summed (the
# image file's granularity is 4 KiB here, the filesystem block)
want=$(oracle_extents "$img" 0 $((10 << 20)) | awk '{s += $2} END {printf "%.0f\n", s}')
assert_eq "$(trimmed)" "$want" "-o 10M: dumpe2fs's free bytes from 10 MiB on"
# the first 10 MiB of this filesystem hold no free block, so the same for
# a window with free space on both sides, unaligned at both ends
# (the window starts 1000 bytes past a block boundary inside the first
# free extent of the second half, so that a start rounded down shows)
o=$(oracle_extents "$img" | awk -v h=$((fs / 2)) \
	'$1 >= h && $2 >= 65536 {printf "%.0f\n", $1 + 32768 + 1000; exit}')
l=$((fs / 4))
want=$(oracle_extents "$img" 0 "$o" "$l" | awk '{s += $2} END {printf "%.0f\n", s}')
if [ "$want" = 0 ] || [ "$want" -ge "$all" ]; then fail "no free space around the window"; fi
run_e2trim -n -v -o "$o" -l "$l" "$img"
assert_rc 0 "-o $o -l fs/4"
assert_eq "$(trimmed)" "$want" "-o $o -l fs/4: dumpe2fs's free bytes of the window"
run_e2trim -n -v -l $((fs * 4)) "$img"
assert_rc 0 "length beyond the end"
assert_eq "$(trimmed)" "$all" "a length past the end is cut to the end"
run_e2trim -n -v -o 1M -l 18446744073709551615 "$img"
assert_rc 0 "start + length overflowing 64 bits"

# no 32-bit overflow: (2^32 + 1) * 32768 * 4096 wraps to 32768 * 4096 in
# 32 bits, which would be inside this filesystem
big=$(( (4294967296 + 1) * 32768 * 4096 ))
run_e2trim -n -v -o "$big" "$img"
assert_rc 3 "start = (2^32+1)*32768*4096"
run_e2trim -n -v -l "$big" "$img"
assert_rc 0 "length = (2^32+1)*32768*4096"
assert_eq "$(trimmed)" "$all" "length (2^32+1)*32768*4096: every free byte"
exit 0
