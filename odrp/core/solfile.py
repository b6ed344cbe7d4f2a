"""Solution files of MILP solvers: the values of a model's variables, by name, from the solver's own format.

The formats read, told apart by their first lines (each as the solver writes it for a model read from
an MPS or LP file):

- **HiGHS** (``highs --solution_file``, ``Highs.writeSolution``): ``Model status`` ... ``# Primal solution
  values``, ``Feasible``, ``Objective V``, ``# Columns N`` then N lines ``name value`` (every column), or, in
  its sparse style, ``# Columns -N`` and N lines ``name value index`` (the nonzero columns);
- **CBC** (``cbc MODEL -solve -solu FILE``): ``Optimal - objective value V``, then ``index name value
  reduced_cost`` per column, the nonzero ones by default (``**`` marks a value the solver flags); with
  ``-printingOptions all`` the rows come first and the index starts again at 0 for the columns;
- **SCIP** (``write solution``, ``Model.writeBestSol``): ``solution status: ...`` (optional), ``objective
  value: V``, then ``name value (obj:c)`` per nonzero variable;
- **Gurobi** (``model.write("x.sol")``, ``ResultFile=x.sol``): comment lines starting with ``#`` (``#
  Objective value = V``), then ``name value`` for every variable;
- **JSON**: one object ``{"name": value, ...}``, every variable;
- **CSV**: ``name,value`` lines (a header line ``variable,value`` or ``name,value`` is skipped), every
  variable.

The sparse formats (CBC, SCIP, HiGHS sparse) leave zeros out: a variable they do not list is 0. The
others must list every variable of the model. A value that is not a finite number, a name listed twice,
or a file that says it has no solution is bad input naming the file and the line.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from odrp.core.errors import InputError

FORMATS = ("highs", "cbc", "scip", "gurobi", "json", "csv")
"""The formats read (see the module's docstring)."""


@dataclass(frozen=True)
class SolutionValues:
    """A solver's solution: its values by variable name, the format, whether it lists every variable
    (``dense``), and the objective and status the file states (None where it states none)."""

    values: dict[str, float]
    format: str
    dense: bool
    objective: float | None = None
    status: str | None = None


_CBC_HEAD = re.compile(r"^(?P<status>.*?)\s+-\s+objective value\s+(?P<objective>\S+)\s*$")
_CBC_NO_SOLUTION = ("infeasible", "integer infeasible", "unbounded", "no solution")


def parse(text: str, source: str) -> SolutionValues:
    """The values of a solution file's text (``source`` names the file in errors)."""
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if not first:
        raise InputError(source, "", "a solution file, got an empty file")
    if first.startswith("{"):
        return _json(text, source)
    if first == "Model status":
        return _highs(lines, source)
    if _CBC_HEAD.match(first):
        return _cbc(lines, source)
    if first.lower().startswith(("solution status:", "objective value:")):
        return _scip(lines, source)
    if first.startswith("#"):
        return _pairs(lines, source, "gurobi")
    if "," in first:
        return _csv(lines, source)
    raise InputError(
        source,
        "line 1",
        f"a solution file of HiGHS, CBC, SCIP or Gurobi, or a JSON or CSV of variable values, got {first[:60]!r}",
    )


def _number(raw: str, source: str, where: str, name: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise InputError(source, where, f"a number as the value of {name}, got {raw[:40]!r}") from None
    if not math.isfinite(value):
        raise InputError(source, where, f"a finite number as the value of {name}, got {raw!r}")
    return value


def _add(values: dict[str, float], name: str, value: float, source: str, where: str) -> None:
    if name in values:
        raise InputError(source, where, f"each variable once, got {name} twice")
    values[name] = value


def _pairs(lines: list[str], source: str, fmt: str, objective: float | None = None) -> SolutionValues:
    """Gurobi's ``name value`` lines after ``#`` comments."""
    values: dict[str, float] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("#"):
            found = re.match(r"#\s*objective value\s*=\s*(\S+)", text, re.IGNORECASE)
            if found:
                objective = _number(found.group(1), source, f"line {number}", "the objective")
            continue
        parts = text.split()
        if len(parts) != 2:
            raise InputError(source, f"line {number}", f"'name value', got {text[:60]!r}")
        _add(values, parts[0], _number(parts[1], source, f"line {number}", parts[0]), source, f"line {number}")
    return SolutionValues(values, fmt, dense=True, objective=objective)


def _highs(lines: list[str], source: str) -> SolutionValues:
    status = lines[1].strip() if len(lines) > 1 else None
    try:
        start = next(k for k, line in enumerate(lines) if line.strip() == "# Primal solution values")
    except StopIteration:
        raise InputError(source, "", "a HiGHS solution file with '# Primal solution values'") from None
    verdict = lines[start + 1].strip() if start + 1 < len(lines) else "None"
    if verdict != "Feasible":
        raise InputError(source, f"line {start + 2}", f"a solution (HiGHS wrote {verdict!r}: model status {status})")
    objective = None
    k = start + 2
    if k < len(lines) and lines[k].startswith("Objective"):
        objective = _number(lines[k].split()[-1], source, f"line {k + 1}", "the objective")
        k += 1
    head = lines[k].split() if k < len(lines) else []
    if len(head) != 3 or head[:2] != ["#", "Columns"]:
        raise InputError(source, f"line {k + 1}", "'# Columns N' (a HiGHS solution in its raw or sparse style)")
    count = int(_number(head[2], source, f"line {k + 1}", "the number of columns"))
    values: dict[str, float] = {}
    for number in range(k + 2, k + 2 + abs(count)):
        if number > len(lines):
            raise InputError(source, f"line {number}", f"{abs(count)} columns (as '# Columns' says), got fewer")
        parts = lines[number - 1].split()
        if len(parts) < 2:
            raise InputError(source, f"line {number}", f"'name value', got {lines[number - 1][:60]!r}")
        _add(values, parts[0], _number(parts[1], source, f"line {number}", parts[0]), source, f"line {number}")
    return SolutionValues(values, "highs", dense=count >= 0, objective=objective, status=status)


def _cbc(lines: list[str], source: str) -> SolutionValues:
    body = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    head = _CBC_HEAD.match(body[0][1].strip())
    assert head is not None
    status = head.group("status").strip()
    if status.lower().startswith(_CBC_NO_SOLUTION):
        raise InputError(source, "line 1", f"a solution (CBC wrote {status!r})")
    objective = _number(head.group("objective"), source, "line 1", "the objective")
    blocks: list[dict[str, float]] = [{}]
    last = -1
    for number, line in body[1:]:
        parts = line.replace("**", " ").split()
        if len(parts) < 3:
            raise InputError(source, f"line {number}", f"'index name value [reduced cost]', got {line.strip()[:60]!r}")
        index = int(_number(parts[0], source, f"line {number}", "the index"))
        if index <= last:  # the index starts again: what came before were rows (-printingOptions all)
            blocks.append({})
        last = index
        _add(blocks[-1], parts[1], _number(parts[2], source, f"line {number}", parts[1]), source, f"line {number}")
    return SolutionValues(blocks[-1], "cbc", dense=False, objective=objective, status=status)


def _scip(lines: list[str], source: str) -> SolutionValues:
    values: dict[str, float] = {}
    objective, status = None, None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        lowered = text.lower()
        if not text:
            continue
        if lowered.startswith("solution status:"):
            status = text.split(":", 1)[1].strip()
            continue
        if lowered.startswith("no solution"):
            raise InputError(source, f"line {number}", f"a solution (SCIP wrote {text[:60]!r})")
        if lowered.startswith("objective value:"):
            objective = _number(text.split(":", 1)[1].strip(), source, f"line {number}", "the objective")
            continue
        parts = re.sub(r"\(obj:[^)]*\)", "", text).split()
        if len(parts) != 2:
            raise InputError(source, f"line {number}", f"'name value (obj:c)', got {text[:60]!r}")
        _add(values, parts[0], _number(parts[1], source, f"line {number}", parts[0]), source, f"line {number}")
    return SolutionValues(values, "scip", dense=False, objective=objective, status=status)


def _json(text: str, source: str) -> SolutionValues:
    try:
        data = json.loads(text, parse_constant=lambda name: name)
    except (json.JSONDecodeError, RecursionError) as error:
        raise InputError(source, "", f"valid JSON ({str(error)[:100]})") from None
    if not isinstance(data, dict):
        raise InputError(source, "", f"a JSON object of variable values, got {type(data).__name__}")
    values: dict[str, float] = {}
    for name, raw in data.items():
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise InputError(source, name, f"a number as the value of {name}, got {str(raw)[:40]!r}")
        values[name] = _number(str(raw), source, name, name)
    return SolutionValues(values, "json", dense=True)


def _csv(lines: list[str], source: str) -> SolutionValues:
    values: dict[str, float] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if "," not in text:
            raise InputError(source, f"line {number}", f"'name,value', got {text[:60]!r}")
        parts = [part.strip().strip('"') for part in text.rsplit(",", 1)]  # names may hold commas
        if number == 1 and parts[0].lower() in ("variable", "name", "var") and parts[1].lower() == "value":
            continue
        _add(values, parts[0], _number(parts[1], source, f"line {number}", parts[0]), source, f"line {number}")
    return SolutionValues(values, "csv", dense=True)
