"""Cheap invariants of the documentation site (mkdocs.yml, docs/) that a real mistake breaks.

The site itself is built by CI (`mkdocs build --strict` after `scripts/run_doc_examples.py`), never
here: these tests only read files, import the API reference's targets and run the one example
whose output the accounting page compares against.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
OUTPUT = EXAMPLES / "_output"
SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$', flags=re.MULTILINE)
TARGET = re.compile(r"^:::\s+([\w.]+)\s*$", flags=re.MULTILINE)


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _nav_pages(nav) -> list[str]:
    """Every page path in a nav tree (lists of {title: page or sub-nav})."""
    pages: list[str] = []
    for item in nav or []:
        values = item.values() if isinstance(item, dict) else [item]
        for value in values:
            if isinstance(value, str):
                pages.append(value)
            else:
                pages += _nav_pages(value)
    return pages


def _pages() -> dict[str, str]:
    """Every Markdown page under docs/, by its path relative to docs/."""
    return {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}


def _snippets() -> set[str]:
    return {path for text in _pages().values() for path in SNIPPET.findall(text)}


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    nav = _nav_pages(_config()["nav"])
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    pages = set(_pages())
    assert not pages - set(nav), f"pages under docs/ missing from the nav of mkdocs.yml: {sorted(pages - set(nav))}"
    assert not set(nav) - pages, f"nav entries with no page under docs/: {sorted(set(nav) - pages)}"


def test_every_example_and_its_output_is_on_a_page():
    scripts = sorted(EXAMPLES.glob("*.py"))
    assert scripts, "docs/examples holds no example"
    included = _snippets()
    for script in scripts:
        assert f"docs/examples/{script.name}" in included, f"no page includes {script.name}"
        assert f"docs/examples/_output/{script.stem}.txt" in included, f"no page includes the output of {script.name}"


def test_every_snippet_exists():
    missing = sorted(
        path for path in _snippets() if not (ROOT / path).is_file() and not path.startswith("docs/examples/_output/")
    )
    assert not missing, f"pages include files that do not exist: {missing}"


def test_recorded_outputs_belong_to_the_examples_as_they_are():
    """scripts/run_doc_examples.py records each script's SHA-256 beside its output: an example
    edited without rerunning it (or an output left behind by a deleted example) is caught."""
    scripts = {p.stem: p for p in EXAMPLES.glob("*.py")}
    recorded = {p.stem for p in OUTPUT.glob("*.sha256")}
    assert recorded == set(scripts), (
        "outputs recorded for other examples than docs/examples holds; run python scripts/run_doc_examples.py"
    )
    for name, script in scripts.items():
        digest = (OUTPUT / f"{name}.sha256").read_text().strip()
        assert digest == hashlib.sha256(script.read_bytes()).hexdigest(), (
            f"docs/examples/_output/{name}.txt is not the output of {script.name} as it is now; "
            "run python scripts/run_doc_examples.py"
        )
        assert (OUTPUT / f"{name}.txt").read_text().strip(), f"{name}.txt is empty"


def test_every_stan_program_is_on_its_family_page():
    """posteriordb style: each model's facts and program beside it, on its paper's page."""
    for stan in sorted((ROOT / "stan").glob("*/*.stan")):
        if stan.parent.name == "functions":
            continue
        page = DOCS / "models" / f"{stan.parent.name}.md"
        assert page.is_file(), f"no model page for {stan.parent.name}"
        assert f'--8<-- "stan/{stan.parent.name}/{stan.name}"' in page.read_text(encoding="utf-8"), (
            f"{page.name} does not show {stan.parent.name}/{stan.name}"
        )


def test_every_api_reference_target_imports():
    targets = [(page, target) for page, text in _pages().items() for target in TARGET.findall(text)]
    assert len(targets) >= 10, "the API reference documents (almost) nothing"
    for page, target in targets:
        module, _, attribute = target, "", None
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            module, _, attribute = target.rpartition(".")
            obj = importlib.import_module(module)
            assert hasattr(obj, attribute), f"{page}: ::: {target} names nothing"


def test_the_site_builds_offline():
    """No plugin or theme feature that fetches from the network at build time (Google Fonts,
    social cards, the privacy plugin's downloads); broken links and omitted pages are warnings,
    so `mkdocs build --strict` fails on them."""
    config = _config()
    assert config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False
    plugins = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert plugins <= {"search", "mkdocstrings"}, f"plugins beyond search and mkdocstrings: {plugins}"
    assert config["markdown_extensions"][-1]["pymdownx.snippets"]["check_paths"] is True
    assert {config["validation"][k] for k in ("omitted_files", "unrecognized_links", "anchors")} == {"warn"}


def test_accounting_example_prints_what_the_page_shows():
    """The accounting page shows docs/examples/accounting.py and its recorded output (moved from
    the README, whose test it replaces); the composed epsilons do not depend on the noise, so a
    fresh run prints exactly the recorded text."""
    page = (DOCS / "guide" / "accounting.md").read_text(encoding="utf-8")
    assert '--8<-- "docs/examples/accounting.py"' in page
    assert '--8<-- "docs/examples/_output/accounting.txt"' in page
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "accounting.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=True,
    )
    assert run.stdout == (OUTPUT / "accounting.txt").read_text()
    # and what it prints is the composition it claims: basic composition adds 100 x 0.5
    assert re.search(r"^basic\s+epsilon = 50\.00 at delta = 1e-06$", run.stdout, flags=re.MULTILINE)


def test_accounting_page_hmm_numbers():
    """The accounting page's HMM sentence: 10 features at ε = 0.1 compose to 1.0 (basic) or
    0.9994 (pld), as the accountant computes them (moved from the README, whose test it replaces)."""
    from pystanprivacy import PrivacyAccountant
    from pystanprivacy.privacy.mechanisms import Laplace

    text = (DOCS / "guide" / "accounting.md").read_text(encoding="utf-8")
    basic, pld = re.search(r"10 features at ε = 0\.1 compose to ([\d.]+) \(basic\) or ([\d.]+)\s+\(pld", text).groups()
    records = [Laplace(epsilon=0.1, sensitivity=2.0).record() for _ in range(10)]
    for rule, shown in (("basic", basic), ("pld", pld)):
        acc = PrivacyAccountant(1.0, 1e-6, composition=rule)
        acc.spend(1.0, record=records)
        assert f"{acc.spent[0]:.{len(shown.split('.')[1])}f}" == shown
