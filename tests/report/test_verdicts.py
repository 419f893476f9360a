"""The verdict rule (pystanprivacy.report.rule) against independent computations, the verdict
table's rendering and command, and the committed report: REPRODUCTION.md's verdict block and
results/verdict_cells.csv must be what ``pystanprivacy report`` computes from results/.

No test here is statistical: the rule is deterministic given the cells, and the random p-values
of the Holm comparisons are fixed by seeds."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.cli import main
from pystanprivacy.report import command as command_module
from pystanprivacy.report.claims import PAPER_ORDER, Claim, all_claims
from pystanprivacy.report.command import compute
from pystanprivacy.report.render import (
    BEGIN,
    END,
    ClaimError,
    cells_csv,
    evaluate,
    extract_block,
    render_block,
    replace_block,
)
from pystanprivacy.report.rule import (
    AGREEMENT,
    DIRECTION,
    NO_WORSE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PARTLY,
    REPRODUCED,
    Cell,
    Part,
    holm_reject,
    judge_claim,
    judge_part,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
REPORT = ROOT / "REPRODUCTION.md"
CELLS = RESULTS / "verdict_cells.csv"
DETAILS = RESULTS / "verdict_parts.md"

#: Φ(−2), written from the error function rather than scipy's normal distribution
PHI_MINUS_2 = 0.5 * math.erfc(2.0 / math.sqrt(2.0))


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _cells(*zs: float) -> tuple[Cell, ...]:
    return tuple(Cell(label=f"c{i}", estimate=z, se=1.0) for i, z in enumerate(zs))


# ------------------------------------------------------------------ Holm against brute force


def _holm_closed_testing(p: list[float], alpha: float) -> list[bool]:
    """Holm's procedure as the closed test of Bonferroni tests (Marcus, Peritz & Gabriel 1976;
    Holm 1979, Sec. 3): H_i is rejected iff every intersection hypothesis H_S with i in S is
    rejected by Bonferroni, min_{j in S} p_j <= alpha / |S|. Brute force over all subsets."""
    m = len(p)
    out = []
    for i in range(m):
        others = [j for j in range(m) if j != i]
        ok = True
        for k in range(m):
            for rest in itertools.combinations(others, k):
                subset = (i, *rest)
                if min(p[j] for j in subset) > alpha / len(subset):
                    ok = False
                    break
            if not ok:
                break
        out.append(ok)
    return out


def _holm_adjusted(p: list[float], alpha: float) -> list[bool]:
    """Holm's adjusted p-values: p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)); reject at <= alpha."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return [a <= alpha for a in adjusted]


@pytest.mark.parametrize("seed", range(40))
def test_holm_matches_the_closed_test_and_the_adjusted_p_values(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 8))
    # a mix of small and large p-values, with ties, so that the step-down's stopping rule matters
    p = list(np.where(rng.random(m) < 0.5, rng.random(m) * 0.03, rng.random(m)))
    if m > 2:
        p[1] = p[0]
    for alpha in (0.05, PHI_MINUS_2):
        got = holm_reject(p, alpha=alpha).tolist()
        assert got == _holm_closed_testing(p, alpha) == _holm_adjusted(p, alpha), (p, alpha)


def test_holm_stops_at_the_first_acceptance():
    # p_(2) = 0.03 > 0.05 / 2 stops the procedure even though p_(3) = 0.04 <= 0.05 / 1
    assert holm_reject([0.01, 0.03, 0.04], alpha=0.05).tolist() == [True, False, False]
    assert holm_reject([0.04, 0.01, 0.02], alpha=0.05).tolist() == [True, True, True]
    with pytest.raises(ValueError, match="alpha"):
        holm_reject([0.1], alpha=0.0)
    with pytest.raises(ValueError, match="p_values"):
        holm_reject([0.1, float("nan")], alpha=0.05)


# ------------------------------------------------------------------ direction parts


def test_direction_every_cell_beyond_2_se_is_reproduced_even_when_holm_rejects_none():
    # intersection-union: three cells at z = 2.1 each reject at one-sided 2.28 %, Holm's first step
    # needs p <= 0.0228 / 3 = 0.0076 and p(2.1) = 0.018 does not pass it
    j = judge_part(Part(text="A better", kind=DIRECTION, cells=_cells(2.1, 2.1, 2.1)))
    assert 1 - _phi(2.1) > PHI_MINUS_2 / 3
    assert (j.verdict, j.n_support, j.holm_support, j.n_contradict) == (REPRODUCED, 3, 0, 0)
    assert j.chance_expected == pytest.approx(3 * PHI_MINUS_2, rel=1e-12)


def test_direction_one_cell_beyond_2_se_is_not_enough_among_many():
    # one cell at z = 2.1 among three: more than chance explains? Holm says no
    j = judge_part(Part(text="A better", kind=DIRECTION, cells=_cells(2.1, 0.3, -0.4)))
    assert (j.verdict, j.n_support, j.holm_support) == (NOT_REPRODUCED, 1, 0)
    # a strong cell survives Holm: Partly
    j = judge_part(Part(text="A better", kind=DIRECTION, cells=_cells(3.5, 0.3, -2.5)))
    assert (j.verdict, j.n_support, j.holm_support, j.n_contradict) == (PARTLY, 1, 1, 1)
    assert j.summary == "1 of 3 cells beyond 2 SE (3 × 0.0228 = 0.068 expected by chance), 1 against"


def test_direction_thresholds_are_2_se_and_phi_minus_2():
    assert judge_part(Part(text="t", kind=DIRECTION, cells=_cells(2.0))).verdict == REPRODUCED
    assert judge_part(Part(text="t", kind=DIRECTION, cells=_cells(1.999))).verdict == NOT_REPRODUCED
    just_in = Cell(label="ks", estimate=0.3, p_value=PHI_MINUS_2 * 0.999)
    just_out = Cell(label="ks", estimate=0.3, p_value=PHI_MINUS_2 * 1.001)
    assert judge_part(Part(text="t", kind=DIRECTION, cells=(just_in,))).verdict == REPRODUCED
    assert judge_part(Part(text="t", kind=DIRECTION, cells=(just_out,))).verdict == NOT_REPRODUCED
    # a p-value cell's shown z is the normal quantile of 1 - p
    j = judge_part(Part(text="t", kind=DIRECTION, cells=(Cell(label="ks", estimate=0.1, p_value=1 - _phi(3.0)),)))
    assert j.decisions[0].z == pytest.approx(3.0, abs=1e-9)
    # against the claim beyond 2 SE, and a p-value cell near 1
    j = judge_part(
        Part(
            text="t", kind=DIRECTION, cells=(*_cells(-2.0), Cell(label="p", estimate=0.0, p_value=1 - PHI_MINUS_2 / 2))
        )
    )
    assert (j.verdict, j.n_contradict) == (NOT_REPRODUCED, 2)


def test_se_zero_is_an_exact_statistic():
    exact = Part(text="t", kind=DIRECTION, cells=(Cell(label="exact", estimate=1e-9, se=0.0),))
    j = judge_part(exact)
    assert (j.verdict, j.decisions[0].z, j.decisions[0].p) == (REPRODUCED, math.inf, 0.0)
    tie = Part(text="t", kind=DIRECTION, cells=(Cell(label="all pairs equal", estimate=0.0, se=0.0),))
    assert judge_part(tie).verdict == NOT_REPRODUCED and judge_part(tie).decisions[0].z == 0.0
    agree = Part(text="t", kind=AGREEMENT, cells=(Cell(label="exact", estimate=0.0, se=0.0),))
    assert judge_part(agree).verdict == REPRODUCED
    off = Part(text="t", kind=AGREEMENT, cells=(Cell(label="exact", estimate=-1e-12, se=0.0),))
    assert judge_part(off).verdict == NOT_REPRODUCED


# ------------------------------------------------------------------ agreement and no-worse parts


def test_agreement_words_by_holm_at_two_sided_5_percent():
    def part(*ps):
        return Part(
            text="calibrated", kind=AGREEMENT, cells=tuple(Cell(f"c{i}", 0.1, p_value=p) for i, p in enumerate(ps))
        )

    assert judge_part(part(0.2, 0.03, 0.5)).verdict == REPRODUCED  # 0.03 > 0.05 / 3: chance among three
    j = judge_part(part(0.2, 0.01, 0.5))
    assert (j.verdict, j.n_depart) == (PARTLY, 1)
    assert judge_part(part(0.001, 0.01)).verdict == NOT_REPRODUCED
    # from an se: two-sided p = 2 (1 - Φ(|z|)); z = 2.1 gives 0.0357 <= 0.05, z = -1.9 gives 0.057
    assert judge_part(Part(text="v", kind=AGREEMENT, cells=_cells(-2.1))).verdict == NOT_REPRODUCED
    j = judge_part(Part(text="v", kind=AGREEMENT, cells=_cells(-1.9)))
    assert j.verdict == REPRODUCED and j.decisions[0].p == pytest.approx(2 * (1 - _phi(1.9)), rel=1e-9)


def test_no_worse_falls_short_only_on_evidence_that_a_is_worse():
    assert judge_part(Part(text="≥", kind=NO_WORSE, cells=_cells(0.0, -1.5, 5.0))).verdict == REPRODUCED
    j = judge_part(Part(text="≥", kind=NO_WORSE, cells=_cells(-3.0, 0.0, 5.0)))
    assert (j.verdict, j.n_short, j.n_support, j.n_contradict) == (PARTLY, 1, 1, 1)
    # -2.1 is beyond 2 SE but not beyond Holm among two cells (needs p <= 0.0114)
    j = judge_part(Part(text="≥", kind=NO_WORSE, cells=_cells(-2.1, 0.0)))
    assert (j.verdict, j.n_contradict) == (REPRODUCED, 1)
    assert judge_part(Part(text="≥", kind=NO_WORSE, cells=_cells(-4.0, -3.0))).verdict == NOT_REPRODUCED


# ------------------------------------------------------------------ claims from parts


def test_claim_verdict_from_its_parts():
    rep = Part(text="a", kind=DIRECTION, cells=_cells(3.0))
    nrep = Part(text="b", kind=DIRECTION, cells=_cells(0.0))
    untestable = Part(text="c", kind=DIRECTION, untestable="the data is not public")
    untestable2 = Part(text="d", kind=AGREEMENT, untestable="no such setting here")
    assert judge_claim([rep]).verdict == REPRODUCED
    assert judge_claim([nrep, Part(text="e", kind=AGREEMENT, cells=_cells(5.0))]).verdict == NOT_REPRODUCED
    assert judge_claim([untestable, untestable2]).verdict == NOT_TESTABLE
    # untestable parts are set aside: the word is the testable parts' own
    assert judge_claim([rep, untestable]).verdict == REPRODUCED
    assert judge_claim([nrep, untestable]).verdict == NOT_REPRODUCED
    assert judge_claim([rep, nrep]).verdict == PARTLY
    j = judge_claim([rep, nrep, untestable])
    assert [p.verdict for p in j.parts] == [REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE]
    assert (j.n_cells, j.n_support) == (2, 1)


def test_bad_cells_and_parts_are_refused_with_the_cell_named():
    with pytest.raises(ValueError, match=r"cell 'Wine, ε = 1': estimate=nan"):
        Cell(label="Wine, ε = 1", estimate=float("nan"), se=0.1)
    with pytest.raises(ValueError, match=r"cell 'x': se=-0.1"):
        Cell(label="x", estimate=1.0, se=-0.1)
    with pytest.raises(ValueError, match=r"cell 'x': se=inf"):
        Cell(label="x", estimate=1.0, se=math.inf)
    with pytest.raises(ValueError, match="not both"):
        Cell(label="x", estimate=1.0, se=0.1, p_value=0.2)
    with pytest.raises(ValueError, match=r"refused=3 > attempts=2"):
        Cell(label="x", estimate=1.0, se=0.1, refused=3, attempts=2)
    with pytest.raises(ValueError, match="no cells and no untestable reason"):
        Part(text="empty", kind=DIRECTION)
    with pytest.raises(ValueError, match="an untestable part has no cells"):
        Part(text="both", kind=DIRECTION, cells=_cells(1.0), untestable="why")
    with pytest.raises(ValueError, match="kind='better'"):
        Part(text="k", kind="better", cells=_cells(1.0))
    with pytest.raises(ValueError, match=r"duplicated cell labels \['c0'\]"):
        Part(text="dup", kind=DIRECTION, cells=_cells(1.0) + _cells(2.0))
    with pytest.raises(ValueError, match="parts=()"):
        judge_claim([])
    with pytest.raises(ValueError, match=r"part 'p', cell 'c': a direction cell needs se"):
        judge_part(Part(text="p", kind=DIRECTION, cells=(Cell(label="c", estimate=1.0),)))
    with pytest.raises(ValueError, match=r"part 'p', cell 'c': an agreement cell needs se or p_value"):
        judge_part(Part(text="p", kind=AGREEMENT, cells=(Cell(label="c", estimate=1.0),)))
    with pytest.raises(ValueError, match=r"part 'p', cell 'c': a 'no worse' cell needs se"):
        judge_part(Part(text="p", kind=NO_WORSE, cells=(Cell(label="c", estimate=1.0, p_value=0.3),)))


# ------------------------------------------------------------------ evaluation, rendering, command


def _fake_claim(key: str = "B9", *, estimate: float = 3.0, words: int = 3, figure: str | None = "fig.png") -> Claim:
    def parts(results: Path) -> tuple[Part, ...]:
        value = float((results / "t.csv").read_text().split()[1]) * estimate
        return (
            Part(
                text="A better | B",
                kind=DIRECTION,
                cells=(Cell(label="n = 10", estimate=value, se=1.0, n=10, refused=2, attempts=10),),
            ),
            Part(text="not here", kind=AGREEMENT, untestable="no data"),
        )

    return Claim(
        key=key,
        paper="bernstein2018",
        item="Test, Fig. 9",
        claim="A beats B",
        where="Sec. 9",
        statistic="A − B",
        tables=("t.csv",),
        figure=figure,
        parts=parts,
        number=lambda results, parts: " ".join(["w"] * words),
    )


@pytest.fixture
def fake_results(tmp_path):
    (tmp_path / "t.csv").write_text("x\n1.0\n")
    (tmp_path / "fig.png").write_bytes(b"")
    return tmp_path


def test_evaluate_names_the_claim_and_cell_of_a_nan(fake_results):
    claim = _fake_claim(estimate=float("nan"))
    with pytest.raises(ClaimError, match=r"claim B9: ValueError: cell 'n = 10': estimate=nan"):
        evaluate(claim, results_dir=fake_results)
    with pytest.raises(ClaimError, match=r"claim B9: the number text has 41 words"):
        evaluate(_fake_claim(words=41), results_dir=fake_results)
    with pytest.raises(ClaimError, match=r"claim B9: missing under .*: nofig.png"):
        evaluate(_fake_claim(figure="nofig.png"), results_dir=fake_results)


def test_render_block_table_and_cells_csv(fake_results):
    result = evaluate(_fake_claim(), results_dir=fake_results)
    block = render_block([result], link_prefix="res")
    assert block.startswith(BEGIN) and block.endswith(END + "\n")
    row = next(line for line in block.splitlines() if line.startswith("| B9 |"))
    assert row == (
        "| B9 | Test, Fig. 9 | A beats B | **Reproduced** (parts: 1 reproduced, 1 not testable here) | w w w | [fig](res/fig.png) |"
    )
    assert (
        "| B9 | A better \\| B | direction | Reproduced | 1 of 1 beyond 2 SE (0.023 by chance), 0 against; 2 of 10 releases refused |"
        in block
    )
    assert "Of the 1 claims: 1 reproduced (B9)." in block
    lines = cells_csv([result]).splitlines()
    assert (
        lines[0] == "claim,claim_verdict,part,kind,part_verdict,cell,estimate,se,z,p,holm,beyond_2se,n,refused,attempts"
    )
    assert lines[1] == f"B9,Reproduced,A better | B,direction,Reproduced,n = 10,3,1,3,{1 - _phi(3.0):.6g},1,1,10,2,10"
    assert lines[2] == "B9,Reproduced,not here,agreement,Not testable here,untestable: no data,,,,,,,,,"


def test_a_verdict_cell_over_40_words_is_refused(fake_results):
    import dataclasses

    long_data = dataclasses.replace(_fake_claim(), data=" ".join(["synthetic"] * 35))
    with pytest.raises(ClaimError, match=r"claim B9: the verdict cell has 4\d words"):
        render_block([evaluate(long_data, results_dir=fake_results)])


def test_replace_block_keeps_the_rest_and_refuses_bad_markers():
    text = f"# Title\n\nintro\n{BEGIN}\nold\n{END}\n\nafter\n"
    block = f"{BEGIN}\nnew\n{END}\n"
    assert replace_block(text, block) == f"# Title\n\nintro\n{BEGIN}\nnew\n{END}\n\nafter\n"
    assert extract_block(text) == f"{BEGIN}\nold\n{END}\n"
    with pytest.raises(ValueError, match="found 0 and 0"):
        replace_block("no markers\n", block, source="X.md")
    with pytest.raises(ValueError, match="found 2 and 1"):
        extract_block(f"{BEGIN}\n{BEGIN}\n{END}\n")
    with pytest.raises(ValueError, match="comes before"):
        extract_block(f"{END}\n{BEGIN}\n")


def test_command_writes_then_checks_then_catches_an_edit(fake_results, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(command_module, "all_claims", lambda: (_fake_claim(),))
    doc = tmp_path / "DOC.md"
    doc.write_text(f"# Doc\n\n{BEGIN}\nstale\n{END}\ntail\n", encoding="utf-8")
    cells = tmp_path / "cells.csv"
    base = ["report", "--results", str(fake_results)]
    assert main([*base, "--write", str(doc), "--cells", str(cells)]) == 0
    written = doc.read_text(encoding="utf-8")
    assert written.startswith("# Doc\n\n" + BEGIN) and written.endswith(END + "\ntail\n")
    assert "[fig](fig.png)" in written  # links relative to the document's folder (results = its folder)
    assert main([*base, "--check", str(doc), "--cells", str(cells)]) == 0
    doc.write_text(written.replace("**Reproduced**", "**Partly**"), encoding="utf-8")
    capsys.readouterr()
    assert main([*base, "--check", str(doc)]) == 1
    out = capsys.readouterr().out
    assert (
        "-| B9 | Test, Fig. 9 | A beats B | **Partly**" in out
        and "+| B9 | Test, Fig. 9 | A beats B | **Reproduced**" in out
    )
    cells.write_text(cells.read_text().replace("Reproduced", "Partly"))
    doc.write_text(written, encoding="utf-8")
    assert main([*base, "--check", str(doc), "--cells", str(cells)]) == 1
    # --details: the parts go to their own file, the block links it, and --check holds both
    details = tmp_path / "parts.md"
    assert main([*base, "--write", str(doc), "--details", str(details)]) == 0
    linked = doc.read_text(encoding="utf-8")
    assert "[parts.md](parts.md)" in linked and "| B9 | A better" not in linked
    assert "| B9 | A better \\| B | direction | Reproduced |" in details.read_text(encoding="utf-8")
    assert main([*base, "--check", str(doc), "--details", str(details)]) == 0
    details.write_text(details.read_text(encoding="utf-8").replace("| Reproduced |", "| Partly |"), encoding="utf-8")
    assert main([*base, "--check", str(doc), "--details", str(details)]) == 1
    # a broken claim: exit 2 with the claim named
    monkeypatch.setattr(command_module, "all_claims", lambda: (_fake_claim(estimate=float("nan")),))
    assert main([*base, "--check", str(doc)]) == 2
    assert "claim B9" in capsys.readouterr().err


def test_all_claims_in_table_order_with_unique_keys():
    claims = all_claims()
    papers = [c.paper for c in claims]
    assert papers == sorted(papers, key=PAPER_ORDER.index)
    assert len({c.key for c in claims}) == len(claims)
    assert {"B1a", "B1b", "B1c"} <= {c.key for c in claims}
    with pytest.raises(ValueError, match="unknown"):
        all_claims(papers=("smith2020",))


def test_all_claims_skips_a_paper_without_a_module_and_checks_the_others(monkeypatch):
    import importlib
    import types

    real = importlib.import_module

    def fake_import(name, *args):
        if name == "pystanprivacy.experiments.kulkarni2022.claims":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if name == "pystanprivacy.experiments.jewson2023.claims":
            raise ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    assert {c.paper for c in all_claims(papers=("bernstein2018", "kulkarni2022"))} == {"bernstein2018"}
    with pytest.raises(ModuleNotFoundError, match="torchvision"):  # a broken module is not skipped
        all_claims(papers=("jewson2023",))
    monkeypatch.setattr(importlib, "import_module", real)
    fake = types.ModuleType("pystanprivacy.experiments.kulkarni2022.claims")
    fake.CLAIMS = [_fake_claim()]
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    with pytest.raises(ValueError, match="CLAIMS must be a tuple of Claim, got list"):
        all_claims(papers=("kulkarni2022",))
    fake.CLAIMS = (_fake_claim(),)  # declares bernstein2018
    with pytest.raises(ValueError, match=r"claims \['B9'\] declare another paper than 'kulkarni2022'"):
        all_claims(papers=("kulkarni2022",))


# ------------------------------------------------------------------ the committed report


@pytest.fixture(scope="module")
def computed():
    return compute(results_dir=RESULTS, document=REPORT, details=DETAILS)


def test_the_committed_verdict_block_is_what_the_command_writes(computed):
    block, _, _ = computed
    committed = extract_block(REPORT.read_text(encoding="utf-8"), source="REPRODUCTION.md")
    assert committed == block, (
        "REPRODUCTION.md's verdict block differs from the results; run "
        "`pystanprivacy report --write REPRODUCTION.md --cells results/verdict_cells.csv --details results/verdict_parts.md`"
    )


def test_the_committed_cells_csv_is_what_the_command_writes(computed):
    _, cells, _ = computed
    assert CELLS.read_text(encoding="utf-8") == cells, (
        "results/verdict_cells.csv differs from the results; run "
        "`pystanprivacy report --write REPRODUCTION.md --cells results/verdict_cells.csv --details results/verdict_parts.md`"
    )


def test_the_committed_details_are_what_the_command_writes(computed):
    block, _, details = computed
    assert "[results/verdict_parts.md](results/verdict_parts.md)" in block
    assert DETAILS.read_text(encoding="utf-8") == details, (
        "results/verdict_parts.md differs from the results; run `pystanprivacy report --write REPRODUCTION.md "
        "--cells results/verdict_cells.csv --details results/verdict_parts.md`"
    )


def test_every_claim_row_and_cell_is_in_the_committed_report(computed):
    block, cells, details = computed
    for key in (c.key for c in all_claims()):  # every claim's parts are in the details
        assert f"| {key} | " in details
    lines = block.splitlines()
    start = lines.index("|---|---|---|---|---|---|") + 1
    rows = lines[start : lines.index("", start)]
    keys = [c.key for c in all_claims()]
    assert [r.split(" | ")[0].removeprefix("| ") for r in rows] == keys
    csv_keys = {line.split(",")[0] for line in cells.splitlines()[1:]}
    assert csv_keys == set(keys)
