"""The README's Python example runs as written and spends exactly its budget."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(beta_bernoulli_model, beta_bernoulli_ops_model, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no Python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["budget"].remaining == (0.0, 0.0)
    assert namespace["posterior"].check() == []
    assert 0.2 <= float(namespace["draw"].values[0]) <= 0.8  # the OPS support [a0, 1 - a0]
    assert "'mechanism': 'laplace'" in capsys.readouterr().out
