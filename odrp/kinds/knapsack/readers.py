"""Readers for the published knapsack benchmark files, into our instance JSON (``odrp import``).

| FORMAT          | files                                            | kind   | instances per file           |
|-----------------|--------------------------------------------------|--------|------------------------------|
| ``orlib-gap``   | OR-Library gap1..gap12, gapa..gapd               | gap    | several, named ``<file>#k``  |
| ``orlib-mknap`` | OR-Library mknap1, mknapcb1..9 (Chu & Beasley)   | mdkp   | several, named ``<file>#k``  |
| ``orlib-mknap2``| OR-Library mknap2 (SAC94 suite)                  | mdkp   | several, named ``<file>#k``  |
| ``dellamico-mkp``| Dell'Amico et al. (2019) MKP ``probT1_...txt``  | mkp    | one, named after the file    |
| ``bs-qkp``      | Billionnet & Soutif QKP ``jeu_n_d_i.txt``         | qkp    | one, named after the file    |
| ``hj-qmkp``     | Hiley & Julstrom QMKP ``jeu_n_d_K_i.txt``         | qmkp   | one, named after the file    |

Formats (whitespace-separated numbers; line breaks do not matter unless said):

- OR-Library GAP: P; then per problem m n, c[i][j] (m rows of n), a[i][j] (m rows of n), b[i] (m).
  Every job in exactly one agent; gap1..12 are quoted as maximisation (OR-Library) and minimisation
  (later papers), gapa..d as minimisation: the sense is the reader's ``sense`` argument.
- OR-Library mknap1 / mknapcb: K; then per problem n m opt, p[1..n], r[i][1..n] (m rows), b[1..m].
- OR-Library mknap2: free text; each problem is a section "problem NAME.DAT" between lines of
  ``+``; in it: m n (m constraints, n items), p[1..n], b[1..m], r[i][1..n] (m rows), the optimum.
- Dell'Amico et al. MKP: m, n, c_1..c_m, then n lines "w_j p_j" (weight first).
- Billionnet & Soutif QKP: [a name line], n, c[1..n], the upper triangle q[i][i+1..n] row by row,
  then [0 (constraint type)], C, w[1..n], [a "Comments" block]. Both variants are read by token
  counts (the stripped copies omit the name and the 0).
- Hiley & Julstrom QMKP: a name line, n, c[1..n], the upper triangle, 0, K, cap[1..K], w[1..n] and a
  trailing time limit (ignored).

Every reader checks the token counts and raises :class:`~odrp.core.errors.InputError` naming the file,
the place and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from odrp.core.errors import InputError, read_text

Number = int | float


class Tokens:
    """The numbers of a file, consumed front to back, with errors that say where."""

    def __init__(self, words: list[str], source: str) -> None:
        self.words, self.source, self.position = words, source, 0

    @classmethod
    def of(cls, text: str, source: str) -> Tokens:
        return cls(text.split(), source)

    @property
    def left(self) -> int:
        return len(self.words) - self.position

    def take(self, count: int, what: str) -> list[Number]:
        if count < 0 or self.left < count:
            raise InputError(self.source, what, f"{count} numbers, only {max(0, self.left)} left in the file")
        out = [self._number(self.words[self.position + i], what) for i in range(count)]
        self.position += count
        return out

    def one(self, what: str) -> Number:
        return self.take(1, what)[0]

    def count(self, what: str) -> int:
        value = self.one(what)
        if not isinstance(value, int) or value < 1:
            raise InputError(self.source, what, f"a positive integer, got {value!r}")
        return value

    def matrix(self, rows: int, cols: int, what: str) -> list[list[Number]]:
        return [self.take(cols, f"{what} row {r + 1}") for r in range(rows)]

    def done(self, what: str) -> None:
        if self.left:
            raise InputError(self.source, what, f"the end of the data, found {self.left} more tokens")

    def _number(self, word: str, what: str) -> Number:
        try:
            return int(word)
        except ValueError:
            pass
        try:
            return float(word)
        except ValueError:
            raise InputError(self.source, what, f"a number, got {word!r}") from None


# ------------------------------------------------------------------------------- OR-Library


def read_orlib_gap(text: str, source: str, sense: str = "min") -> list[dict[str, Any]]:
    tokens = Tokens.of(text, source)
    problems = tokens.count("number of problems")
    out = []
    for p in range(1, problems + 1):
        where = f"problem {p}"
        m, n = tokens.count(f"{where}: agents m"), tokens.count(f"{where}: jobs n")
        values = tokens.matrix(m, n, f"{where}: costs c[i][j]")
        weights = tokens.matrix(m, n, f"{where}: resources a[i][j]")
        capacities = tokens.take(m, f"{where}: capacities b[i]")
        out.append(
            {
                "problem": "gap",
                "name": f"{Path(source).name}#{p}",
                "sense": sense,
                "values": values,
                "weights": weights,
                "capacities": capacities,
            }
        )
    tokens.done(f"after problem {problems}")
    return out


def read_orlib_mknap(text: str, source: str) -> list[dict[str, Any]]:
    tokens = Tokens.of(text, source)
    problems = tokens.count("number of problems")
    out = []
    for p in range(1, problems + 1):
        where = f"problem {p}"
        n, m = tokens.count(f"{where}: items n"), tokens.count(f"{where}: constraints m")
        tokens.one(f"{where}: optimum")
        profits = tokens.take(n, f"{where}: profits p[j]")
        weights = tokens.matrix(m, n, f"{where}: constraint r[i][j]")
        capacities = tokens.take(m, f"{where}: capacities b[i]")
        out.append(_mdkp(f"{Path(source).name}#{p}", profits, weights, capacities))
    tokens.done(f"after problem {problems}")
    return out


_MKNAP2_HEADER = re.compile(r"^\s*problem\s+(\S+)", re.MULTILINE)


def read_orlib_mknap2(text: str, source: str) -> list[dict[str, Any]]:
    headers = list(_MKNAP2_HEADER.finditer(text))
    if not headers:
        raise InputError(source, "sections", 'sections headed "problem NAME.DAT" (the OR-Library mknap2 format)')
    out = []
    for p, header in enumerate(headers, start=1):
        end = headers[p].start() if p < len(headers) else len(text)
        blocks = [b for b in re.split(r"^\s*\++\s*$", text[header.end() : end], flags=re.MULTILINE) if b.strip()]
        name = header.group(1)
        if not blocks:
            raise InputError(source, f"problem {name}", "the problem's numbers between lines of +")
        tokens = Tokens.of(blocks[0], f"{source} ({name})")
        m, n = tokens.count("constraints m"), tokens.count("items n")
        profits = tokens.take(n, "profits")
        capacities = tokens.take(m, "capacities")
        weights = tokens.matrix(m, n, "constraint")
        tokens.one("optimum")
        tokens.done("after the optimum")
        out.append(_mdkp(f"{Path(source).name}#{p}", profits, weights, capacities))
    return out


def _mdkp(name: str, profits: list[Number], weights: list[list[Number]], capacities: list[Number]) -> dict[str, Any]:
    return {"problem": "mdkp", "name": name, "profits": profits, "weights": weights, "capacities": capacities}


# ---------------------------------------------------------------------------- single problems


def read_dellamico_mkp(text: str, source: str) -> list[dict[str, Any]]:
    tokens = Tokens.of(text, source)
    m, n = tokens.count("knapsacks m"), tokens.count("items n")
    capacities = tokens.take(m, "capacities")
    pairs = tokens.matrix(n, 2, "item (weight, profit)")
    tokens.done("after the items")
    return [
        {
            "problem": "mkp",
            "name": Path(source).name,
            "profits": [p for _, p in pairs],
            "weights": [w for w, _ in pairs],
            "capacities": capacities,
        }
    ]


def _quadratic_profits(tokens: Tokens, n: int) -> list[list[Number]]:
    profits: list[list[Number]] = [[0] * n for _ in range(n)]
    for j, c in enumerate(tokens.take(n, "linear profits c[j]")):
        profits[j][j] = c
    for i in range(n - 1):
        for offset, q in enumerate(tokens.take(n - 1 - i, f"pair profits q row {i + 1}")):
            j = i + 1 + offset
            profits[i][j] = profits[j][i] = q
    return profits


def _without_name_and_comments(text: str) -> str:
    text = text.split("Comments", 1)[0]
    lines = text.strip().splitlines()
    if lines and not re.fullmatch(r"[\s0-9.eE+-]*", lines[0]):
        lines = lines[1:]
    return "\n".join(lines)


def read_bs_qkp(text: str, source: str) -> list[dict[str, Any]]:
    tokens = Tokens.of(_without_name_and_comments(text), source)
    n = tokens.count("items n")
    profits = _quadratic_profits(tokens, n)
    if tokens.left == n + 2:
        if tokens.one("constraint type") != 0:
            raise InputError(source, "constraint type", "0 (<=)")
    elif tokens.left != n + 1:
        raise InputError(
            source, "capacity and weights", f"[0] C w[1..{n}] ({n + 1} or {n + 2} numbers), got {tokens.left}"
        )
    capacity = tokens.one("capacity C")
    weights = tokens.take(n, "weights w[j]")
    return [{"problem": "qkp", "name": Path(source).name, "profits": profits, "weights": weights, "capacity": capacity}]


def read_hj_qmkp(text: str, source: str) -> list[dict[str, Any]]:
    tokens = Tokens.of(_without_name_and_comments(text), source)
    n = tokens.count("items n")
    profits = _quadratic_profits(tokens, n)
    if tokens.one("constraint type") != 0:
        raise InputError(source, "constraint type", "0 (<=)")
    k = tokens.count("knapsacks K")
    capacities = tokens.take(k, "capacities")
    weights = tokens.take(n, "weights w[j]")
    if tokens.left > 1:
        raise InputError(source, "after the weights", f"at most one number (a time limit), found {tokens.left}")
    return [
        {"problem": "qmkp", "name": Path(source).name, "profits": profits, "weights": weights, "capacities": capacities}
    ]


# ------------------------------------------------------------------------------------ dispatch

READERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "orlib-gap": read_orlib_gap,
    "orlib-mknap": read_orlib_mknap,
    "orlib-mknap2": read_orlib_mknap2,
    "dellamico-mkp": read_dellamico_mkp,
    "bs-qkp": read_bs_qkp,
    "hj-qmkp": read_hj_qmkp,
}


def read(fmt: str, path: str | Path, **options: Any) -> list[dict[str, Any]]:
    """Every instance in a published file, as our instance JSON (``options``: ``sense`` for GAP)."""
    source = str(path)
    if fmt not in READERS:
        raise InputError("command line", "FORMAT", f"one of {', '.join(READERS)}, got {fmt!r}")
    text = read_text(path)
    return READERS[fmt](text, source, **options)


def file_stem(instance_name: str) -> str:
    """``gap1.txt#3`` -> ``gap1-3``; ``jeu_100_25_1.txt`` -> ``jeu_100_25_1`` (file names for ``odrp import``)."""
    stem, _, k = instance_name.partition("#")
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return f"{stem}-{k}" if k else stem
