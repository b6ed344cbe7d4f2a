"""The report's pictures and page on a hand-built dataset: every curve and count worked out by hand."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from odrp.bench import dataset, page, pictures
from odrp.bench.report import report
from tests.report_data import rows_of, write_dataset


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    out = tmp_path_factory.mktemp("hand") / "bench"
    write_dataset(out)
    return out


@pytest.fixture(scope="module")
def made(hand):
    """The report of the hand dataset (pictures and page written once for the module)."""
    return report(hand)


def study_rows(out, study):
    frame = dataset.read(out)
    return pictures.labelled(frame[frame["study"] == study])


def curves(profile):
    return {c.name: (list(c.taus), [round(s, 9) for s in c.shares]) for c in profile.curves}


def test_runtime_profile_is_dolan_more_over_the_proven_instances(hand):
    profile = pictures.runtime_profile(study_rows(hand, "sizes"), "t")
    # C has no proven optimum. A: the fastest run at the optimum is h1 repeat 0 (0.5 s): highs 2/0.5 = 4,
    # cbc 4/0.5 = 8, h1 1 and inf (repeat 1 has gap 0.1; each repeat weighs 1/2), h2 and h3 1/0.5 = 2.
    # B: fastest h1 repeat 1 (0.25 s): highs 1/0.25 = 4, cbc inf (time limit, gap 0.2), h1 inf and 1,
    # h2 and h3 inf (gap 0.5). rho = share of the 2 instances with ratio <= tau.
    assert profile.instances == 2 and "2 of 3 instances; 1 without a proven optimum left out" in profile.note
    assert curves(profile) == {
        "exact/highs": ([1.0, 4.0], [0.0, 1.0]),
        "exact/cbc": ([1.0, 8.0], [0.0, 0.5]),
        "h1": ([1.0], [0.5]),
        "h2 = h3": ([1.0, 2.0], [0.0, 0.5]),  # identical curves: drawn once
    }
    assert profile.right == 12.0  # 1.5 x the largest finite ratio


def test_gap_ecdf_leaves_out_the_exact_solver_that_is_always_optimal(hand):
    profile = pictures.gap_ecdf(study_rows(hand, "sizes"), "t")
    # highs: gap 0 on A and B: named, not drawn. cbc: A 0, B 0.2. h1: A 0 and 0.1, B none (inf) and 0, each
    # repeat 1/4 of the instances' weight: 0.5 at 0, 0.75 at 0.1. h2 = h3: A 0, B 0.5.
    assert curves(profile) == {
        "exact/cbc": ([0.0, 0.2], [0.5, 1.0]),
        "h1": ([0.0, 0.1], [0.5, 0.75]),
        "h2 = h3": ([0.0, 0.5], [0.5, 1.0]),
    }
    assert "exact/highs: gap 0 on every run (not drawn)" in profile.note


def test_weighted_steps():
    taus, shares = pictures.weighted_steps([0.0, 0.2, math.inf, 0.2], [0.25] * 4, 0.0)
    assert taus == [0.0, 0.2] and shares == [0.25, 0.75]  # inf (no solution) never counts
    taus, shares = pictures.weighted_steps([-0.1, 0.3], [0.5, 0.5], 0.0)
    assert taus == [-0.1, 0.0, 0.3] and shares == [0.5, 0.5, 1.0]  # a negative gap keeps its own step


def test_pictures_per_study_in_png_and_svg_and_size_plots_only_with_sizes(made):
    target = made.out
    names = {p.name for p in target.iterdir()}
    for stem in ("odrp-sizes", "odrp-flat", "kp-knap"):
        for picture in ("runtime-profile", "gap-ecdf"):
            assert {f"{stem}-{picture}.png", f"{stem}-{picture}.svg"} <= names
    assert {"odrp-sizes-gap-vs-size.svg", "odrp-sizes-runtime-vs-size.png"} <= names
    assert not any("flat-gap-vs-size" in n or "knap-runtime-vs-size" in n for n in names)  # one size each
    assert not any(n.startswith("profile-") for n in names)  # nothing pooled over a kind's studies
    png = (target / "odrp-sizes-gap-ecdf.png").read_bytes()
    svg = (target / "odrp-sizes-gap-ecdf.svg").read_text()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "<svg" in svg and "h2 = h3" in svg
    # the size axis has the two sizes as its ticks, no jitter around them
    sized = (target / "odrp-sizes-runtime-vs-size.svg").read_text()
    assert "instance size (operators)" in sized


COUNTS = ["instances", "method_better", "ties", "other_better", "method_solved", "other_solved", "pairs"]


def test_head_to_head_by_hand(hand):
    flat = page.head_to_head(study_rows(hand, "flat")).set_index(["method", "other"])
    # highs vs h1: D 0 < 0.25, E 0 = 0. h1 vs h2: D h2 has no solution (h1 better), E 0 < 0.2
    assert flat.loc[("exact/highs", "h1"), COUNTS].tolist() == [2, 1, 1, 0, 2, 2, 2]
    assert flat.loc[("exact/highs", "h1"), ["method_mean", "other_mean", "sign_p"]].tolist() == [0.0, 0.125, 1.0]
    assert flat.loc[("h1", "h2"), COUNTS].tolist() == [2, 2, 0, 0, 2, 1, 1]
    # two wins, no loss: the sign test's two-sided p is 2 x (1/2)^2 = 0.5; the gaps pair on E only, one
    # pair that differs: Wilcoxon's exact two-sided p is 1, and too few pairs to say more
    h1_h2 = flat.loc[("h1", "h2")]
    assert (h1_h2.sign_p, h1_h2.method_mean, h1_h2.other_mean) == (0.5, 0.0, 0.2)
    assert h1_h2.p_value == 1.0 and h1_h2.note.startswith("too few")
    sizes = page.head_to_head(study_rows(hand, "sizes")).set_index(["method", "other"])
    # h1 on A: no run without a solution, mean gap (0 + 0.1) / 2 = 0.05 > h2's 0; on B one of its two runs
    # has no solution, h2's one run has one: h2 is better on both. Both have a solution on A and B: two gap
    # pairs, h1 (0.05 + 0) / 2, h2 (0 + 0.5) / 2; h1's runs with a solution 3 of 4. C has no proof: left out
    assert sizes.loc[("h1", "h2"), COUNTS].tolist() == [2, 0, 0, 2, 3, 2, 2]
    assert sizes.loc[("h1", "h2"), ["method_mean", "other_mean"]].tolist() == pytest.approx([0.025, 0.25])
    assert sizes.loc[("h1", "h2"), ["method_runs", "other_runs"]].tolist() == [4, 2]
    assert sizes.loc[("h2", "h3"), COUNTS].tolist() == [2, 0, 2, 0, 2, 2, 2]
    assert math.isnan(sizes.loc[("h2", "h3"), "p_value"]) and math.isnan(sizes.loc[("h2", "h3"), "sign_p"])


def test_head_to_head_wilcoxon_p_by_hand():
    # six instances where b is better on every one: all signed ranks on one side, W- = 0, and the exact
    # two-sided p is 2 / 2^6 (the two extreme sign patterns of 64); the sign test of 0 wins and 6 losses too
    spec, params = [], {}
    for k in range(6):
        name = f"I{k}"
        params[name] = {"operators": 4}
        spec += [
            (name, 4, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 1.0, True),
            (name, 4, "a/0", "feasible", 0.9 - 0.1 * k, 1.0, "proven", 0.1 + 0.1 * k, 0.1, True),
            (name, 4, "b/0", "feasible", 1.0, 1.0, "proven", 0.0, 0.1, True),
        ]
    rows = pd.DataFrame(rows_of("odrp", "six", spec, params)).assign(problem="odrp")
    pair = page.head_to_head(rows).set_index(["method", "other"]).loc[("a", "b")]
    assert pair[COUNTS].tolist() == [6, 0, 0, 6, 6, 6, 6]
    assert (pair["method_mean"], pair["other_mean"]) == (pytest.approx(0.35), 0.0)
    assert pair["p_value"] == pytest.approx(2 / 2**6) and pair["note"] == ""
    assert pair["sign_p"] == pytest.approx(2 / 2**6)


def test_proof_says_who_proved_the_optimum(hand):
    rows = study_rows(hand, "sizes")
    assert page.proof(rows[rows["instance_id"] == "odrp-A"]) == (
        "proven optimal by exact/cbc (4 s), exact/highs (2 s); their objectives agree"
    )
    assert (
        page.proof(rows[rows["instance_id"] == "odrp-B"])
        == "proven optimal by exact/highs (1 s) (exact/cbc: time_limit)"
    )
    assert page.proof(rows[rows["instance_id"] == "odrp-C"]) == "no proof (exact/cbc: error, exact/highs: time_limit)"


def test_answers_name_where_each_method_loses_most(made):
    rows = {row[0]: row for row in page.answers(made.sections)["odrp"]}
    # h1's mean gaps: sizes (0 + 0.1 + 0) / 3, operators=4 0.05, operators=6 0, flat (0.25 + 0) / 2 = 0.125.
    # runs 6 + 2, one no_solution (B), 7 with a solution (all but B/0), gaps 3 + 2 of 8, at the optimum A/0,
    # B/1, E of the 6 comparable runs
    assert rows["h1"] == ["h1", "12.50%", "flat", "8", "7/8", "1", "0", "0", "0", "5/8", "3/6"]
    # h2: sizes 0.25, operators=6 0.5, flat 0.2 (D has no solution)
    assert rows["h2"][:6] == ["h2", "50.00%", "sizes / operators=6", "5", "4/5", "1"]
    assert list(page.answers(made.sections)) == ["odrp", "kp"]


def test_the_page_is_self_contained_with_metadata_and_no_path(made, hand):
    text = made.html.read_text()
    assert not re.search(r"<script[^>]*\bsrc=", text) and "<link" not in text
    markup = re.sub(r"<script[^>]*>.*?</script>", "", text, flags=re.S)  # plotly.js holds links to its site
    assert not re.search(r"""(src|href)=['"]?(https?:|//)""", markup)  # no CDN: the browser test logs requests
    assert "Plotly" in text and len(text) > 3_000_000  # plotly.js itself is inside
    nav = text[text.index("<nav") : text.index("</nav>")]
    assert nav.index(">odrp<") < nav.index(">kp<")  # the registry's order, not alphabetical
    assert nav.index("'#study-odrp-sizes'") < nav.index("'#study-odrp-flat'")  # the grid's order
    for fact in ("2026-01-02T03:04:05+0000", "hand.yaml", "local[2]", "benchhost", "odrp-toolkit", "solver highs"):
        assert fact in text
    assert "/somewhere/secret" not in text and str(hand.resolve()) not in text
    data = text[text.index("id='odrp-data'>") :]
    assert '"proof":"proven optimal by exact/highs (1 s) (exact/cbc: time_limit)"' in data
    assert text.count("data-figure='figure-") == 6  # two profiles for each of the three studies
