"""Run every documentation example and keep its output for the site.

Each ``docs/examples/<name>.py`` runs in its own process; its standard output is written to
``docs/examples/_output/<name>.txt``, which the example's page includes (pymdownx.snippets,
``check_paths``: a missing output fails ``mkdocs build``), and the SHA-256 of the script it came
from to ``docs/examples/_output/<name>.sha256`` (tests/test_docs.py checks that every output
belongs to the script as it is now). Standard error passes through. The exit code is 1 when any
example fails (its output file is then not written, and an old one is removed), else 0.

Usage: ``python scripts/run_doc_examples.py [NAME ...]`` (default: every example).
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
OUTPUT = EXAMPLES / "_output"
TIMEOUT_S = 600  # the gallery examples run their SBC (two programs × 50-60 fits): 1.5-5 min each on 2 cores


def script_digest(script: Path) -> str:
    """The SHA-256 of an example's source, recorded beside its output."""
    return hashlib.sha256(script.read_bytes()).hexdigest()


def run_example(script: Path) -> bool:
    """Run one example; write its output and digest when it succeeds. True on success."""
    out, digest = OUTPUT / f"{script.stem}.txt", OUTPUT / f"{script.stem}.sha256"
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        print(f"FAILED {script.name}: ran past {TIMEOUT_S} s", flush=True)
        ok = False
    else:
        ok = proc.returncode == 0
        if not ok:
            print(f"FAILED {script.name}: exit code {proc.returncode}", flush=True)
    if not ok:
        out.unlink(missing_ok=True)
        digest.unlink(missing_ok=True)
        return False
    out.write_text(proc.stdout)
    digest.write_text(script_digest(script) + "\n")
    print(f"ok     {script.name} ({time.perf_counter() - start:.1f} s)", flush=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="example names (file stems); default: all")
    args = parser.parse_args(argv)
    scripts = sorted(EXAMPLES.glob("*.py"))
    if args.names:
        known = {s.stem: s for s in scripts}
        unknown = sorted(set(args.names) - set(known))
        if unknown:
            parser.error(f"unknown example(s) {unknown}; known: {sorted(known)}")
        scripts = [known[name] for name in args.names]
    if not scripts:
        print(f"no examples found in {EXAMPLES}", file=sys.stderr)
        return 1
    OUTPUT.mkdir(exist_ok=True)
    start = time.perf_counter()
    failed = [s.name for s in scripts if not run_example(s)]
    print(
        f"documentation examples: {len(scripts) - len(failed)} of {len(scripts)} ran "
        f"({time.perf_counter() - start:.1f} s){'; failed: ' + ', '.join(failed) if failed else ''}",
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
