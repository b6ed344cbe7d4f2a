"""Canonical JSON and the SHA-256 of an instance: one text for equal data, whatever its key order or number form.

Canonical JSON sorts keys, writes no spaces and writes integral floats as integers, so ``20`` and
``20.0`` are one value. A dataset records the SHA-256 of every instance's canonical JSON
(``instance_sha256``), and a model file's map records the same digest of the instance it was written
for, so a solution made elsewhere is matched to its instance by content, not by file name.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def normalise(value: Any) -> Any:
    """Integral floats become ints (recursively), so equal numbers give equal ids."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalise(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    return json.dumps(normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def instance_sha256(data: Any) -> str:
    """SHA-256 of an instance's canonical JSON (recorded with every row of a dataset and in a model's map)."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()
