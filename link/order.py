"""The dashboard's functions, for the linker to lay out together (see build.rs).

    order.py BIN FIRST... [--then THEN...]
                                    prints the functions of BIN that the callgrind profiles ran,
                                    those of the FIRST profiles (start and idle), then those only
                                    the THEN profiles ran (browsing), each part in BIN's address
                                    order (a crate's stay near each other), one mangled name a
                                    line; says on stderr how much code each part is
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


def order_names():
    """The names of link/dashboard.order, in its order."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboard.order")) as f:
        return [line.strip() for line in f if line.strip()]


def held(binary):
    """(address, size) of each of the order's functions BIN holds, and how many the order names."""
    symbols = functions(binary)
    names = order_names()
    return [symbols[n] for n in names if n in symbols], len(names)


def check(binary):
    found, named = held(binary)
    span = max(a + s for a, s in found) - min(a for a, _ in found) if found else 0
    print(f"{len(found)} of {named} ordered functions found, {kib(sum(s for _, s in found))}, "
          f"laid out over {kib(span)}")


def make(binary, profiles):
    symbols = functions(binary)
    first, then = (profiles[:profiles.index("--then")], profiles[profiles.index("--then") + 1:]) \
        if "--then" in profiles else (profiles, [])
    # What a dashboard runs to start and sit idle first, together (each of its pages faults in
    # the pages around it: the fewer pages that code spans, the less of the binary is resident),
    # then what browsing runs besides.
    early = sorted((symbols[n][0], symbols[n][1], n) for n in ran(first) if n in symbols)
    seen = {n for _, _, n in early}
    later = sorted((symbols[n][0], symbols[n][1], n) for n in ran(then) if n in symbols and n not in seen)
    code = sum(size for _, size in symbols.values())
    for what, part in (("start and idle", early), ("browsing besides", later)):
        print(f"{what}: {len(part)} of {len(symbols)} functions, {kib(sum(h[1] for h in part))} of "
              f"{kib(code)}", file=sys.stderr)
    for _, _, name in early + later:
        print(name)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        make(sys.argv[1], sys.argv[2:])
