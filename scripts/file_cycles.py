#!/usr/bin/env python3
"""file_cycles.py SRC_DIR OBJ_DIR — finds cycles between the files of the
library. File A depends on file B when A includes B (a header), or when A
is a .c file whose object uses a function or variable that B's object
defines (nm: U in A, T/D/B/R in B). A cycle is a strongly connected set of
more than one file: headers that include each other, or .c files that call
each other. Prints each cycle with its edges and exits 1 if there is one;
prints "no cycles between N files" and exits 0 otherwise."""

import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files(src):
    """Paths under src of every .c and .h file."""
    out = []
    for root, _, files in os.walk(src):
        out += [os.path.relpath(os.path.join(root, f), src) for f in files
                if f.endswith((".c", ".h"))]
    return set(out)


def include_edges(src, files):
    edges = set()
    for name in files:
        with open(os.path.join(src, name), encoding="utf-8") as f:
            for inc in INCLUDE.findall(f.read()):
                for cand in (inc, os.path.normpath(os.path.join(os.path.dirname(name), inc))):
                    if cand in files:
                        edges.add((name, cand))
                        break
    return edges


def symbol_edges(obj, files):
    defined, used = {}, {}
    for mod in files:
        if not mod.endswith(".c"):
            continue
        o = os.path.join(obj, mod[:-2] + ".o")
        if not os.path.exists(o):
            continue
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                used.setdefault(mod, set()).add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = mod
    return {(mod, defined[s]) for mod, syms in used.items() for s in syms
            if s in defined and defined[s] != mod}


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    succ = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n")[0])
    src, obj = sys.argv[1], sys.argv[2]
    mods = source_files(src)
    inc, calls = include_edges(src, mods), symbol_edges(obj, mods)
    found = cycles(set(mods), inc | calls)
    for comp in found:
        inside = sorted((a, b, "includes" if (a, b) in inc else "calls")
                        for a, b in inc | calls if a in comp and b in comp)
        print("cycle: " + ", ".join(comp))
        for a, b, how in inside:
            print("  %s %s %s" % (a, how, b))
    if not found:
        print("no cycles between %d files" % len(mods))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
