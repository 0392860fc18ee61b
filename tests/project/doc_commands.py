#!/usr/bin/env python3
"""doc_commands.py — runs the commands that Markdown files show.

A block is run when the line just before its opening fence is the HTML
comment `<!-- runnable -->` (invisible on GitHub) and its info string is
`sh` or `console`:

  sh       the block is one shell script (bash -e -o pipefail); it passes
           when it exits 0.
  console  `$ command` lines, each followed by the output it must print
           (its stdout, then its stderr). A command whose quotes are not
           closed on its line goes on over the next lines. Each command
           (bash -o pipefail) must exit 0 and print what is shown:
           - whitespace runs compare as one space;
           - `...` stands for any text (the rest of a long vector, say);
           - a number printed with k decimals matches within half a unit
             of its k-th decimal plus float noise (NOISE below); integers
             match exactly; every other character is compared as it is.

Each block is one result line, naming the file and the line of its fence:
  ok FILE:LINE
  FAIL FILE:LINE: why
  SKIP FILE:LINE: why
A block that reads ../shared, or the tiny-*.gguf models converted from its
reference models, is skipped when ../shared is absent. Blocks
run in order, in the directory given by --dir, with a shell; files they
write stay there for the next blocks.

usage: doc_commands.py --dir DIR [--timeout S] FILE.md...
"""
import argparse
import math
import os
import re
import shlex
import subprocess
import sys

MARK = "<!-- runnable -->"
# Float noise: the numbers shown are float32 engine outputs whose last
# digits depend on the summation order of the CPU's kernels (AVX2,
# AVX-512, ARM64). Every build agrees with HuggingFace within the
# reference fixtures' atol 1e-4 for hidden states and logits
# (../shared/reference/README.md), and scores, cosines and probabilities
# move by no more than their inputs do, so a shown number is given 1e-4
# absolute, scaled by its magnitude above 1.
NOISE = 1e-4

NEEDS_SHARED = re.compile(r"\.\./shared|\btiny-[\w-]+")
NUMBER = re.compile(r"-?\d+(?:\.(\d+))?(?:[eE]([-+]?\d+))?")
TOKEN = re.compile(r"\.\.\.|\s+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|.", re.S)


def blocks(path):
    """Yields (line of the fence, info, body lines) of each marked block;
    a mark followed by anything else is yielded with info None."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARK:
            i += 1
            continue
        fence = i + 1
        m = re.match(r"^(`{3,})\s*(\S*)", lines[fence]) if fence < len(lines) else None
        if not m or m.group(2) not in ("sh", "console"):
            yield fence + 1, None, []
            i = fence
            continue
        ticks, body = m.group(1), []
        j = fence + 1
        while j < len(lines) and not lines[j].startswith(ticks):
            body.append(lines[j])
            j += 1
        yield fence + 1, m.group(2), body
        i = j + 1


def tokens(text):
    """The text as tokens: numbers, `...`, one " " per whitespace run, and
    single characters."""
    out = []
    for t in TOKEN.findall(text.strip()):
        out.append(" " if t.isspace() else t)
    return out


def number_matches(shown, got):
    """Whether the printed number `got` is `shown` within its precision."""
    m = NUMBER.fullmatch(shown)
    if not m or not NUMBER.fullmatch(got):
        return False
    if m.group(1) is None and m.group(2) is None:
        return shown == got
    decimals = len(m.group(1) or "")
    exponent = int(m.group(2) or 0)
    a, b = float(shown), float(got)
    half_unit = 0.5 * 10.0 ** (exponent - decimals)
    return math.isclose(a, b, rel_tol=0, abs_tol=half_unit + NOISE * max(1.0, abs(a)))


def output_matches(shown, got):
    """Matches token lists; `...` in `shown` takes any run of `got`. Walks
    `shown` once, keeping every position of `got` it can have reached."""
    reach = {0}
    for t in shown:
        if not reach:
            return False
        if t == "...":
            reach = set(range(min(reach), len(got) + 1))
        elif NUMBER.fullmatch(t):
            reach = {j + 1 for j in reach if j < len(got) and number_matches(t, got[j])}
        else:
            reach = {j + 1 for j in reach if j < len(got) and got[j] == t}
    return len(got) in reach


def console_steps(body):
    """(command, expected output) pairs of a console block."""
    steps, cmd, out, i = [], None, [], 0
    while i < len(body):
        line = body[i]
        if line.startswith("$ "):
            if cmd is not None:
                steps.append((cmd, "\n".join(out)))
            cmd, out = line[2:], []
            while not quotes_closed(cmd) and i + 1 < len(body):
                i += 1
                cmd += "\n" + body[i]
        else:
            out.append(line)
        i += 1
    if cmd is not None:
        steps.append((cmd, "\n".join(out)))
    return steps


def quotes_closed(cmd):
    try:
        shlex.split(cmd, comments=True)
        return True
    except ValueError:
        return False


def run(cmd, cwd, timeout, script=False):
    # pipefail: `roformer ... | head` fails when roformer does, not only
    # when the last command of the pipe does.
    args = ["bash", "-o", "pipefail"] + (["-e"] if script else []) + ["-c", cmd]
    p = subprocess.run(args, cwd=cwd, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_block(info, body, cwd, timeout):
    """None when the block passes, else why not."""
    if info == "sh":
        rc, out, err = run("\n".join(body), cwd, timeout, script=True)
        return None if rc == 0 else f"exit {rc}: {(err or out).strip()[-300:]}"
    steps = console_steps(body)
    if not steps:
        return "a console block with no `$ command` line"
    for cmd, shown in steps:
        rc, out, err = run(cmd, cwd, timeout)
        first = cmd.splitlines()[0]
        if rc != 0:
            return f"`{first}` exit {rc}: {err.strip()[-300:]}"
        got = out + ("\n" + err if err else "")
        if not output_matches(tokens(shown), tokens(got)):
            return f"`{first}` printed\n{got.strip()[:2000]}\n  which does not match\n{shown.strip()[:2000]}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    shared = os.path.isdir(os.path.join(a.dir, "..", "shared"))
    failed = 0
    for path in a.files:
        for line, info, body in blocks(path):
            where = f"{path}:{line}"
            if info is None:
                print(f"FAIL {where}: {MARK} is not followed by a sh or console block")
                failed += 1
                continue
            if NEEDS_SHARED.search("\n".join(body)) and not shared:
                print(f"SKIP {where}: needs ../shared (or a tiny-* model made from it), absent")
                continue
            try:
                why = check_block(info, body, a.dir, a.timeout)
            except subprocess.TimeoutExpired:
                why = f"ran past {a.timeout:g} s"
            if why is None:
                print(f"ok {where}")
            else:
                print(f"FAIL {where}: {why}")
                failed += 1
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
