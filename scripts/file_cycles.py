#!/usr/bin/env python3
"""file_cycles.py [options] OBJ_DIR DIR... — finds cycles between the
modules of the given source trees, and dependencies that reach up a layer
or across from one folder of a layer to another.

A module is a .c file and the .h file of the same name (model.c and
model.h are one module; a header with no .c, or a .c with no header, is a
module alone). Module A depends on module B when a file of A includes a
header of B, or when A's object (OBJ_DIR/<path>.o) uses a function or
variable that B's object defines (nm: U in A, T/D/B/R in B). Includes are
looked up beside the file, then under each DIR, as the Makefile's -I does.

A cycle is a strongly connected set of more than one module: two modules
that need each other, even through others. With --layer options (lowest
first), every module must be in a layer (its path starts with one of the
layer's prefixes; the longest prefix wins) and may depend on its own layer
(without a cycle) and those below, never on one above. The prefixes of one
layer are siblings: a module under one of them never depends on a module
under another, so no two folders need each other.

Options:
  --layer NAME=PREFIX[,PREFIX...]  one layer, lowest first
  --nm NM                         the nm to read the objects with (a cross nm)

Prints each cycle with its edges, each upward and each sideways
dependency, then "no cycles, upward or sideways dependencies between N
modules" (or the count found); exits 1 if any was found."""

import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files(dirs):
    """Paths (as given, joined with their DIR) of every .c and .h file."""
    out = set()
    for d in dirs:
        for root, _, files in os.walk(d):
            out |= {os.path.normpath(os.path.join(root, f)) for f in files
                    if f.endswith((".c", ".h"))}
    return out


def module(path):
    return path[:-2]


def include_edges(files, dirs):
    """(includer, included) pairs of files."""
    edges = set()
    for name in files:
        with open(name, encoding="utf-8") as f:
            for inc in INCLUDE.findall(f.read()):
                for base in [os.path.dirname(name)] + list(dirs):
                    cand = os.path.normpath(os.path.join(base, inc))
                    if cand in files:
                        edges.add((name, cand))
                        break
    return edges


def symbol_edges(obj, files, nm):
    """(user, definer) pairs of .c files, from their objects' symbols."""
    defined, used = {}, {}
    for name in files:
        if not name.endswith(".c"):
            continue
        o = os.path.join(obj, name[:-2] + ".o")
        if not os.path.exists(o):
            continue
        out = subprocess.run([nm, o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                used.setdefault(name, set()).add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = name
    return {(name, defined[s]) for name, syms in used.items() for s in syms
            if s in defined and defined[s] != name}


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    succ = {n: sorted({b for a, b in edges if a == n}) for n in nodes}
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


def place_of(mod, layers):
    """(layer index, prefix) of the longest prefix that starts mod, or
    (None, None)."""
    best, prefix = None, None
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if mod.startswith(p) and (prefix is None or len(p) > len(prefix)):
                best, prefix = i, p
    return best, prefix


def parse_args(argv):
    layers, nm, rest = [], "nm", []
    it = iter(argv)
    for a in it:
        if a in ("--layer", "--nm"):
            v = next(it, None)
            if v is None:
                sys.exit("file_cycles.py: %s needs a value" % a)
            if a == "--layer":
                name, _, prefixes = v.partition("=")
                layers.append((name, [p for p in prefixes.split(",") if p]))
            else:
                nm = v
        else:
            rest.append(a)
    if len(rest) < 2:
        sys.exit(__doc__.split("\n")[0])
    return layers, nm, rest[0], rest[1:]


def main():
    layers, nm, obj, dirs = parse_args(sys.argv[1:])
    files = source_files(dirs)
    inc, calls = include_edges(files, dirs), symbol_edges(obj, files, nm)
    file_edges = {(a, b, "includes") for a, b in inc} | {(a, b, "calls") for a, b in calls}
    mods = {module(f) for f in files}
    mod_edges = {(module(a), module(b)) for a, b, _ in file_edges if module(a) != module(b)}

    found = 0
    for comp in cycles(mods, mod_edges):
        print("cycle: %s" % ", ".join(comp))
        for a, b, how in sorted(file_edges):
            if module(a) in comp and module(b) in comp and module(a) != module(b):
                print("  %s %s %s" % (a, how, b))
        found += 1
    if layers:
        where = {m: place_of(m, layers) for m in mods}
        for m in sorted(m for m in mods if where[m][0] is None):
            print("no layer: %s" % m)
            found += 1
        for a, b, how in sorted(file_edges):
            (la, pa), (lb, pb) = where[module(a)], where[module(b)]
            if la is None or lb is None or la > lb:
                continue
            if la < lb:
                print("upward: %s (%s) %s %s (%s)" % (a, layers[la][0], how, b, layers[lb][0]))
                found += 1
            elif pa != pb:
                print("sideways: %s (%s) %s %s (%s)" % (a, pa, how, b, pb))
                found += 1
    if found:
        print("%d faults (cycles, upward or sideways dependencies) between %d modules"
              % (found, len(mods)))
    else:
        print("no cycles, upward or sideways dependencies between %d modules" % len(mods))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
