#!/usr/bin/env python3
"""public_symbols.py HEADER — prints, one a line and sorted, the name of
every function the header declares (comments and preprocessor lines left
out; typedefs of function pointers are not functions). Read from the text,
not from the RF_API marks, so that a function declared without the mark
shows up as missing from the library."""

import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
text = re.sub(r"//[^\n]*", " ", text)
text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
names = set()
# each top-level statement ends with ';' (declarations) or '}' (struct,
# enum, extern "C" braces)
for stmt in re.split(r"[;{}]", text):
    stmt = " ".join(stmt.split())
    if not stmt or stmt.startswith("typedef"):
        continue
    m = re.match(r"^[A-Za-z_][\w\s\*]*?\b(rf_\w+)\s*\(", stmt)
    if m:
        names.add(m.group(1))
print("\n".join(sorted(names)))
