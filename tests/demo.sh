#!/bin/bash
# make demo: build a sample 512 MiB ext4 image that has been used (written
# full once, files written and half of them deleted), then let e2trim give
# its free space back, and show what that did to the image file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${E2TRIM:=$here/../build/e2trim}"
E2TRIM=$(cd "$(dirname "$E2TRIM")" && pwd)/$(basename "$E2TRIM")
export E2TRIM
T=$(mktemp -d /tmp/e2trim-demo.XXXXXX)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
img="$T/sample.img"
mib() { echo "$(( $(alloc_bytes "$1") / 1048576 )) MiB"; }

echo "== Making a used ext4 image: $img"
mkfs "$img" 512M -t ext4
age "$img" 42
echo "   image size $(du -h --apparent-size "$img" | cut -f1), allocated on disk: $(mib "$img")"
echo
echo "== What would be trimmed:  e2trim --dry-run --verbose sample.img"
"$E2TRIM" --dry-run --verbose "$img"
echo
echo "== Trimming:  e2trim --verbose sample.img"
"$E2TRIM" --verbose "$img"
echo "   allocated on disk now: $(mib "$img")"
echo
echo "== Checking:  e2fsck -fn sample.img"
e2fsck -fn "$img" 2>&1 | tail -1
echo
echo "== A second run finds nothing left to do:"
"$E2TRIM" --verbose "$img"
