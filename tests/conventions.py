#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
The library's return convention (src/README.md, "Return values"), checked
over src/ minus src/cli/ (the command keeps its exit codes).

A function that can fail returns errcode_t: 0, an E2TRIM_ERR_* code, a
libext2fs EXT2_ET_* code passed through, or an errno value (positive, as
com_err and e2fsprogs take them).  "Stopped" is E2TRIM_ERR_INTERRUPTED.
It fails on
  - `return -1`, and a negated errno (`-errno`, `-EIO`, `-rc` ...) in a
    return, an assignment or an argument (a comparison with a -errno that
    liburing or the kernel returns is fine);
  - `(errcode_t)-1`, and EXT2_ET_CANCEL_REQUESTED (a second code for
    "stopped");
  - an errcode_t function that returns a literal other than 0;
  - an int function that returns an errno value (make it errcode_t).
A justified exception carries a comment `conventions: <why>` on the line
or the line above, or, for a whole function, in the comment above it.  Exit 0, or 1 with one line per finding.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "src"
MARK = "conventions:"


def strip(text):
    """Comments and string contents blanked, line breaks kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    text = re.sub(r"//[^\n]*", blank, text)
    return re.sub(r'"(\\.|[^"\\\n])*"', blank, text)


NEG = r"-\s*(errno\b|E[A-Z][A-Z0-9]+\b|[a-z_]\w*\b(?!\s*\())"
LINE_RULES = [
    (re.compile(r"\breturn\s+-\s*1\s*;"), "return -1: return an errcode_t"),
    (re.compile(r"(\breturn\s+|(?<![=!<>])=\s*|[?:(,]\s*)" + NEG),
     "a negated errno: errno values are returned as they are"),
    (re.compile(r"\(\s*errcode_t\s*\)\s*-\s*1\b"),
     "(errcode_t)-1: stopped is E2TRIM_ERR_INTERRUPTED"),
    (re.compile(r"\bEXT2_ET_CANCEL_REQUESTED\b"),
     "EXT2_ET_CANCEL_REQUESTED: stopped is E2TRIM_ERR_INTERRUPTED"),
]
FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?(int|errcode_t)\s+\**"
                  r"(\w+)\s*\([^;{]*?\)\s*\{", re.M | re.S)


def function_findings(code):
    """(line, message) for bodies that break the rule for their type."""
    out = []
    for m in FUNC.finditer(code):
        end = code.find("\n}", m.end())
        body = code[m.end():end if end >= 0 else len(code)]
        base = code.count("\n", 0, m.end())
        for r in re.finditer(r"\breturn\b([^;]*);", body):
            expr = r.group(1)
            line = base + body.count("\n", 0, r.start()) + 1
            if m.group(1) == "errcode_t" and \
               re.fullmatch(r"\s*\(?\s*[1-9]\d*\s*\)?\s*", expr):
                out.append((line, f"{m.group(2)}() is errcode_t but "
                            f"returns {expr.strip()}"))
            if m.group(1) == "int" and \
               re.search(r"(^|[?:(]\s*)(errno|E[A-Z][A-Z0-9]+)\s*($|[:)])",
                         expr.strip()):
                out.append((line, f"{m.group(2)}() returns an errno value "
                            "as int: make it errcode_t"))
    return out


def exempt_lines(raw, code):
    """Lines of functions whose comment above carries the marker."""
    lines = raw.splitlines()
    out = set()
    for m in re.finditer(r"^[A-Za-z_][\w \*]*?\b\w+\s*\([^;{]*?\)\s*\{",
                         code, re.M | re.S):
        first = code.count("\n", 0, m.start())
        end = code.find("\n}", m.end())
        last = code.count("\n", 0, end if end >= 0 else len(code))
        i = first - 1
        while i >= 0 and re.match(r"\s*(/\*|\*)", lines[i]):
            if MARK in lines[i]:
                out.update(range(first + 1, last + 2))
                break
            i -= 1
    return out


def main():
    bad = []
    nfiles = 0
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(x for x in dirs
                         if os.path.join(d, x) != os.path.join(ROOT, "cli"))
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            nfiles += 1
            raw = open(path).read()
            lines = raw.splitlines()
            code = strip(raw)
            found = []
            for no, text in enumerate(code.splitlines(), 1):
                for rx, msg in LINE_RULES:
                    if rx.search(text):
                        found.append((no, msg))
            found += function_findings(code)
            exempt = exempt_lines(raw, code)
            for no, msg in sorted(set(found)):
                if no in exempt:
                    continue
                near = lines[max(no - 2, 0):no]
                if any(MARK in x for x in near):
                    continue
                bad.append(f"{path}:{no}: {msg}")
    for line in bad:
        print(f"conventions: {line}")
    print(f"conventions: {nfiles} files, {len(bad)} findings")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
