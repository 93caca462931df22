"""What every benchmark script shares: the data folder, machine facts, load, and writing its
own section of BENCHMARKS.md.

BENCHMARKS.md is made of sections, one per script, each between ``<!-- begin:NAME -->`` and
``<!-- end:NAME -->`` lines; a script rewrites only its own (appending it if absent), so the
scripts can be run one at a time.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import re
import subprocess
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """``$BYTEPAIR_DATA``, else ``../shared/data`` beside the checkout."""
    env = os.environ.get("BYTEPAIR_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not path.is_dir():
        raise SystemExit(f"shared data not found at {path}; set BYTEPAIR_DATA")
    return path


def cpu_snapshot() -> tuple[float, float, float]:
    """(CPU seconds used by the whole machine, by this process and its reaped children, wall)."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait
    busy = sum(fields[:3]) + sum(fields[5:7])
    t = os.times()
    own = t.user + t.system + t.children_user + t.children_system
    return busy / os.sysconf("SC_CLK_TCK"), own, time.perf_counter()


def other_load(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """Average number of CPUs kept busy by other processes between two ``cpu_snapshot``s."""
    return max(0.0, ((b[0] - a[0]) - (b[1] - a[1])) / (b[2] - a[2]))


def versions(*packages: str) -> str:
    """``name version`` of each installed package (``not installed`` otherwise)."""
    out = []
    for p in packages:
        try:
            out.append(f"{p} {version(p)}")
        except PackageNotFoundError:
            out.append(f"{p} not installed")
    return ", ".join(out)


def machine_line() -> str:
    """One line: CPU, cores, memory, OS, Python, the bytepair build and git commit."""
    import bytepair._core

    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo", encoding="utf-8") as f:
        mem_kb = next(int(line.split()[1]) for line in f if line.startswith("MemTotal"))
    so = Path(bytepair._core.__file__)
    digest = hashlib.sha256(so.read_bytes()).hexdigest()[:12]
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {mem_kb / 2**20:.1f} GiB, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; "
        f"bytepair at git {commit} (`{so.name}` sha256 {digest}…)"
    )


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_section(path: Path, name: str, body: str) -> None:
    """Replaces the ``name`` section of the markdown file at ``path`` (appends it if absent)."""
    begin, end = f"<!-- begin:{name} -->", f"<!-- end:{name} -->"
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.S)
    if pattern.search(old):
        new = pattern.sub(lambda _: block, old, count=1)
    else:
        new = old.rstrip() + "\n\n" + block
    tmp = path.with_suffix(".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)


def fmt_ratio(ratio: float) -> str:
    """``2.31x``, in bold when below 1 (bytepair slower)."""
    return f"**{ratio:.2f}x**" if ratio < 1 else f"{ratio:.2f}x"
