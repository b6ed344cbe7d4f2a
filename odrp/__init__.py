"""Exact operator replication and placement for stream processing, and heuristics scored against it.

Data flows one way: instance JSON -> kind (validated) -> method (exact model or heuristic)
-> solution -> evaluator -> Result, and imports run one way: ``odrp.core`` <- a kind's problem side
<- ``odrp.heuristics`` <- a kind's exact side <- ``odrp.registry`` <- ``odrp.methods`` <- ``odrp.bench``
<- ``odrp.cli``. The layers and contracts are described in docs/design.md.
"""

__version__ = "0.1.0"
