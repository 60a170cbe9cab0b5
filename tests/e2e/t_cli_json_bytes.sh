#!/bin/bash
# --json is always a document a strict parser reads (issue 26, point 1):
# valid UTF-8 whatever the names and labels hold.  A byte that is not
# part of well-formed UTF-8 is written as U+FFFD, and "<key>_raw" gives
# the exact bytes in hex.  Names with quotes, backslashes and newlines
# come back byte for byte.  Each target records the gates --force let
# pass ("forced") and the library's warnings ("warnings").  Image files:
# no root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

# strict FILE WHAT: the bytes decode as UTF-8 (strictly) and parse
strict() {
	python3 -c 'import json, sys
json.loads(sys.stdin.buffer.read().decode("utf-8"))' <"$1" ||
		{ od -c "$1" | head -20; fail "$2: not strict JSON"; }
}

cd "$T" || fail "cd"
mkfs base.img 16M -t ext4
# quotes, a backslash, a newline; invalid UTF-8: a lone 0xff, an
# overlong '/', a UTF-16 surrogate; valid UTF-8 (e acute) as it is
names=("q\"uo\\te.img" $'new\nline.img' $'bad\xff.img' $'over\xc0\xaf.img'
       $'sur\xed\xa0\x80.img' $'caf\xc3\xa9.img')
for n in "${names[@]}"; do cp base.img "$n"; done

ln -s $'bad\xff.img' twin.img
run_e2trim -n --json "${names[@]}" $'missing\xfe.img' twin.img
assert_rc 64 "six images, a missing one and one given twice"
strict "$OUT" "names"
python3 - "$OUT" "${names[@]}" $'missing\xfe.img' twin.img <<'PY' || fail "names: not the exact bytes"
import json, os, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
want = [os.fsencode(a) for a in sys.argv[2:]]
for t, w in zip(d["targets"], want, strict=True):
    try:
        valid = w.decode("utf-8")
    except UnicodeDecodeError:
        valid = None
    if valid is not None:
        # valid UTF-8: as it is, and no _raw
        assert t["target"] == valid and "target_raw" not in t, t
    else:
        assert bytes.fromhex(t["target_raw"]) == w, (t["target_raw"], w)
        assert "\ufffd" in t["target"], t["target"]
# the twin's error names the first: the message's bytes too
m = d["targets"][-1]
assert m["status"] == "refused" and b"bad\xff.img" in bytes.fromhex(m["error_raw"]), m
PY

# a label that is not UTF-8
cp base.img label.img
tune2fs -L $'l\xffab\xc3' label.img >/dev/null || fail "tune2fs -L"
run_e2trim -n --json label.img
assert_rc 0 "a label that is not UTF-8"
strict "$OUT" "label"
python3 - "$OUT" <<'PY' || fail "label: not the exact bytes"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
fs = d["targets"][0]["filesystem"]
assert bytes.fromhex(fs["label_raw"]) == b"l\xffab\xc3", fs
assert fs["label"] == "l\ufffdab\ufffd", fs
PY

# -f: the gate it overrode is in the document; none without it
cp base.img dirty.img
debugfs -w -R "ssv state 0" dirty.img >/dev/null 2>&1 || fail "debugfs ssv state"
run_e2trim -n -f --json dirty.img
assert_rc 0 "-f on a filesystem not cleanly unmounted"
python3 - "$OUT" <<'PY' || fail "-f: not recorded"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
f = d["targets"][0]["forced"]
assert len(f) == 1 and "not cleanly unmounted" in f[0], f
PY
run_e2trim -n --json base.img
assert_eq "$(python3 -c 'import json,sys; t=json.load(sys.stdin)["targets"][0]; print(t["forced"], t["warnings"])' <"$OUT")" \
	"[] []" "a clean filesystem: nothing forced, no warning"

# a library warning: a GPT whose primary header is damaged (its CRC),
# read from the backup
gpt_disk gpt.img
python3 - gpt.img <<'PY' || fail "cannot damage the GPT header"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(512 + 16)
    b = f.read(1)
    f.seek(512 + 16)
    f.write(bytes([b[0] ^ 0xff]))
PY
run_e2trim -n --json -p 2 gpt.img
assert_rc 0 "GPT read from its backup"
assert_grep "warning: the primary GPT header is damaged" "$ERR" "the warning on stderr"
python3 - "$OUT" <<'PY' || fail "the warning is not in the document"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
w = d["targets"][0]["warnings"]
assert len(w) == 1 and w[0].startswith("the primary GPT header is damaged"), w
PY
exit 0
