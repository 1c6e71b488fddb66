"""The dashboard's functions, for the linker to lay out together (see build.rs).

    order.py BIN CALLGRIND_OUT...   prints the functions of BIN that the callgrind profiles ran,
                                    in BIN's address order (a crate's stay near each other), one
                                    mangled name a line; says on stderr how much code they are
    order.py --check BIN            says how many of dashboard.order's names BIN holds and how
                                    much code lies between the first and the last of them: a
                                    stale order (after a toolchain or dependency update) finds
                                    few, and should be made again with order.sh
"""
import os
import re
import subprocess
import sys


def functions(binary):
    """Each function symbol of BIN: its name, address and size."""
    nm = subprocess.run(["nm", "--defined-only", "-S", binary], capture_output=True, text=True, check=True)
    found = {}
    for line in nm.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            found.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    return found


def ran(profiles):
    names = set()
    for profile in profiles:
        with open(profile, errors="replace") as f:
            for line in f:
                if line.startswith(("fn=", "cfn=")):
                    names.add(re.sub(r"^\(\d+\) ", "", line.split("=", 1)[1].strip()))
    return names


def kib(n):
    return f"{n // 1024} KiB"


if sys.argv[1] == "--check":
    symbols = functions(sys.argv[2])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboard.order")) as f:
        order = [line.strip() for line in f if line.strip()]
    held = [symbols[n] for n in order if n in symbols]
    span = max(a + s for a, s in held) - min(a for a, _ in held) if held else 0
    print(f"{len(held)} of {len(order)} ordered functions found, {kib(sum(s for _, s in held))}, "
          f"laid out over {kib(span)}")
else:
    symbols = functions(sys.argv[1])
    hot = sorted((symbols[n][0], symbols[n][1], n) for n in ran(sys.argv[2:]) if n in symbols)
    code = sum(size for _, size in symbols.values())
    print(f"{len(hot)} of {len(symbols)} functions, {kib(sum(h[1] for h in hot))} of {kib(code)}",
          file=sys.stderr)
    for _, _, name in hot:
        print(name)
