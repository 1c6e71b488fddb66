"""Whether the dashboard's code still lies where link/dashboard.order put it.

    resident.py BIN

runs BIN's dashboard in-process against BIN's own demo-cluster in a pseudo-terminal of 120x36,
lets it draw the list and sit idle a few seconds, then reads which pages of BIN's code are
resident (/proc/PID/pagemap's present bit, readable without privilege) and how many lie away
from the span the order's functions were laid out over. A function the dashboard runs that the
order does not name (a new one, or one a changed dependency or signature renamed) lies among the
code nobody runs, and the kernel maps the pages around each page touched there (fault-around),
so a few such functions cost the dashboard most of a MiB that no other check sees. This fails
when more than LIMIT_KIB lie away from the span: make the order again with link/order.sh
(docs/install.md, "The link order, and a build that links with any linker"). .ci/run runs it
on the release build.
"""
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import order  # noqa: E402

PAGE = 4096
# The kernel's fault-around (fault_around_bytes): pages this near the span are its spill.
SLACK = 64 * 1024
# Code resident away from the span that fails the check (docs/performance.md says what an
# order made for the tree leaves there, and what a stale one does).
LIMIT_KIB = 320
IDLE_S = 8


def exec_shift(binary):
    """Link-time address minus file offset of BIN's executable segment."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["LOAD"] and "E" in parts[6:-1]:
            return int(parts[2], 16) - int(parts[1], 16)
    raise SystemExit(f"{binary}: no executable segment")


def start_demo(binary, home):
    kc = os.path.join(home, "kc")
    demo = subprocess.Popen(
        [binary, "demo-cluster", "--listen", "127.0.0.1:0", "--kubeconfig-out", kc,
         "--log-file", os.path.join(home, "demo.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until = time.monotonic() + 60
    while not os.path.exists(kc):
        if time.monotonic() > until or demo.poll() is not None:
            demo.kill()
            raise SystemExit("resident.py: demo-cluster wrote no kubeconfig")
        time.sleep(0.1)
    return demo, kc


def start_dashboard(binary, home, kc):
    """The dashboard in a pty of 120x36: its pid and the pty's end."""
    env = {"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TERM": "xterm-256color", "LANG": "en_US.UTF-8", "TZ": "UTC"}
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(binary, [binary, "--kubeconfig", kc, "--backend", "in-process",
                               "--log-file", os.path.join(home, "dashboard.log")], env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    return pid, fd


def drain(fd, seconds):
    """What the dashboard writes in `seconds`."""
    seen = b""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def resident_code(pid, binary):
    """The link-time address of each resident page of BIN's executable mappings in PID."""
    name, shift, pages = os.path.realpath(binary), exec_shift(binary), []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            parts = line.split()
            if len(parts) < 6 or parts[5] != name or "x" not in parts[1]:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            for va in range(start, end, PAGE):
                pagemap.seek(va // PAGE * 8)
                if struct.unpack("<Q", pagemap.read(8))[0] >> 63 & 1:
                    pages.append(int(parts[2], 16) + va - start + shift)
    return pages


def main(binary):
    binary = os.path.realpath(binary)
    found, named = order.held(binary)
    if len(found) < named // 2:
        raise SystemExit(f"resident.py: {binary} holds {len(found)} of the order's {named} "
                         "names: make the order again with link/order.sh")
    lo = min(a for a, _ in found) - SLACK
    hi = max(a + s for a, s in found) + SLACK
    if hi - lo - 2 * SLACK > 2 * sum(s for _, s in found):
        # The order's functions lie scattered: this build's linker did not take the order
        # (build.rs says so when it leaves it out), and there is no layout to check.
        print(f"resident.py: {binary} was linked without the order; nothing to check")
        return
    with tempfile.TemporaryDirectory() as home:
        demo, kc = start_demo(binary, home)
        try:
            pid, fd = start_dashboard(binary, home, kc)
            screen = drain(fd, IDLE_S)
            pages = resident_code(pid, binary)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        finally:
            demo.kill()
    if b"Operations" not in screen:
        raise SystemExit(f"resident.py: the dashboard never drew its list: {screen[-400:]!r}")
    away = [p for p in pages if not lo <= p < hi]
    print(f"resident code: {len(pages) * PAGE // 1024} KiB, of it {len(away) * PAGE // 1024} KiB "
          f"away from the {(hi - lo - 2 * SLACK) // 1024} KiB the order lays out "
          f"({len(found)} of its {named} names found)")
    if len(away) * PAGE // 1024 > LIMIT_KIB:
        print(f"over {LIMIT_KIB} KiB: the dashboard runs code link/dashboard.order does not name; "
              "make the order again with link/order.sh", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
