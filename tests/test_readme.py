"""The README's Python example runs as written and spends exactly its budget; the README names
no path outside the repository, and every file it links to exists (the operations and the
accounting example moved to the documentation site: tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_example_runs(beta_bernoulli_model, beta_bernoulli_ops_model, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks, "README has no Python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["budget"].remaining == (0.0, 0.0)
    assert namespace["posterior"].check() == []
    # the posterior carries the record of the release it was fitted on; the baseline says it has none
    assert namespace["posterior"].privacy == namespace["release"].record.to_dict()
    assert namespace["baseline"].privacy == "non-private"
    draw = namespace["draw"]
    assert draw.release is not None and draw.problems == []
    assert 0.2 <= float(draw.release.values[0]) <= 0.8  # the OPS support [a0, 1 - a0]
    assert "'mechanism': 'laplace'" in capsys.readouterr().out


def test_docs_name_no_path_outside_the_repository():
    for doc in (README, ROOT / "CONTRIBUTING.md", ROOT / "benchmarks" / "README.md", ROOT / "data" / "README.md"):
        text = doc.read_text()
        assert "../" not in text, f"{doc.name} points outside the repository"


def test_readme_imports_only_current_module_paths():
    from pystanprivacy._moved import MOVED

    # an old path may appear in the README's list of moved paths, never in an import
    imported = []
    for module, names in re.findall(
        r"^\s*from (pystanprivacy[\w.]*) import ([\w, ]+)", README.read_text(), flags=re.MULTILINE
    ):
        imported += [module] + [f"{module}.{name.strip()}" for name in names.split(",")]
    imported += re.findall(r"^\s*import (pystanprivacy[\w.]*)", README.read_text(), flags=re.MULTILINE)
    assert "pystanprivacy.models.foulds2016" in imported  # the example is seen
    assert not [path for path in imported if path in MOVED], "README imports an old path"


def test_readme_links_resolve():
    links = re.findall(r"\]\((?!https?:|#)([^)#]+)", README.read_text())
    assert "docs/reproduction.md" in links  # the operations moved there, and the README says where
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_readme_is_the_front_door():
    """Issue 50: about 200 lines; the first screen says what the library is and how to start."""
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines"
    assert "## Two commands" in lines[:40]
