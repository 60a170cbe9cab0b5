#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
The layer rule of src/README.md, checked over the code.

The graph: an edge from file A to B for each `#include "b.h"` in A, and
for each call in A of a function that one other file alone defines
(a .c file and its header are one node).  It fails when
  - a file is in no layer of src/README.md's table, or in the wrong folder;
  - an edge points to a higher layer;
  - the graph has a circle (a layer's files must be ordered too);
  - a library file includes a header of src/cli/;
  - a family's *_int.h is included from outside its folder.
With -v it prints the layers and every edge.  Exit 0, or 1 with one line
per finding.
"""
import collections
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-v" else "src"
VERBOSE = "-v" in sys.argv


def strip(text):
    """The code without comments and string contents."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def read_layers():
    """{module: (layer, folder)}, and the folders whose files are all in."""
    table = open(os.path.join(ROOT, "README.md")).read()
    layers, whole = {}, {}
    for line in table.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|([^|]*)\|", line)
        if not m:
            continue
        # folders as the table names them (src/...), relative to ROOT
        layer = int(m.group(1))
        folder = m.group(2).rstrip("/").split("/", 1)[1:] or [""]
        folder = folder[0]
        names = m.group(3).strip()
        if names == "all of it":
            whole[folder] = layer
            continue
        for name in names.split(","):
            layers[name.strip()] = (layer, folder)
    return layers, whole


def sources():
    out = []
    for d, _, files in os.walk(ROOT):
        out += [os.path.join(d, f) for f in files if f.endswith((".c", ".h"))]
    return sorted(out)


def module(path):
    return os.path.splitext(os.path.relpath(path, ROOT))[0]


def main():
    layers, whole = read_layers()
    files = sources()
    code = {f: strip(open(f).read()) for f in files}
    raw = {f: open(f).read() for f in files}
    by_name = {os.path.basename(f): f for f in files}
    bad = []

    where = {}
    for f in files:
        mod, base = module(f), os.path.basename(module(f))
        folder = os.path.dirname(mod)
        if folder in whole:
            where[mod] = whole[folder]
        elif base in layers and layers[base][1] == folder:
            where[mod] = layers[base][0]
        elif base in layers:
            bad.append(f"{f}: src/README.md puts it in src/"
                       f"{layers[base][1]}")
        else:
            bad.append(f"{f}: in no layer of src/README.md")

    defined = collections.defaultdict(set)
    for f in files:
        if not f.endswith(".c"):
            continue
        for m in re.finditer(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\s*"
                             r"\([^;{]*\)\s*\{", code[f], re.M):
            defined[m.group(1)].add(module(f))

    edges = collections.defaultdict(dict)
    for f in files:
        a = module(f)
        for inc in re.findall(r'^#\s*include\s+"([^"]+)"', raw[f], re.M):
            t = by_name.get(os.path.basename(inc))
            if not t:
                continue
            edges[a].setdefault(module(t), f"#include \"{inc}\"")
            if not a.startswith("cli/") and module(t).startswith("cli/"):
                bad.append(f"{f}: the library includes {inc} of the "
                           "command")
            if t.endswith("_int.h") and os.path.dirname(t) != ROOT and \
               os.path.dirname(t) != os.path.dirname(f):
                bad.append(f"{f}: includes {inc}, internal to "
                           f"{os.path.dirname(t)}/")
        if f.endswith(".c"):
            for name in set(re.findall(r"\b(\w+)\s*\(", code[f])):
                owners = defined.get(name, ())
                if len(owners) == 1:
                    t = next(iter(owners))
                    edges[a].setdefault(t, f"calls {name}()")
    for a in edges:
        edges[a].pop(a, None)

    for a, outs in sorted(edges.items()):
        for b, why in sorted(outs.items()):
            if a in where and b in where and where[b] > where[a]:
                bad.append(f"src/{a}: {why}, of layer {where[b]} above "
                           f"its own {where[a]}")

    # circles: Tarjan's strongly connected components
    index, low, stack, on, circles = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted({module(f) for f in files}):
        if v not in index:
            visit(v)
    for comp in circles:
        bad.append("a circle: " + " -> ".join(comp))

    if VERBOSE:
        for layer in sorted(set(where.values())):
            mods = sorted(m for m in where if where[m] == layer)
            print(f"layer {layer}: {' '.join(mods)}")
        for a, outs in sorted(edges.items()):
            print(f"{a} -> {' '.join(sorted(outs))}")
    for line in bad:
        print(f"layers: {line}")
    print(f"layers: {len(files)} files, "
          f"{sum(len(o) for o in edges.values())} edges, "
          f"{len(circles)} circles, {len(bad)} findings")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
