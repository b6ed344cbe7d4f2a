"""Storm's EvenScheduler on the task/node view, against the example in Storm's own source.

``EvenScheduler.sortSlots`` documents its order for supervisor1 (ports 6700-6701), supervisor2
(6700-6702) and supervisor3 (6700-6703): s3:6700, s2:6700, s1:6700, s3:6701, s2:6701, s1:6701,
s3:6702, s2:6702, s3:6703. Port index k below is port 6700 + k.
"""

from __future__ import annotations

from odrp.core.taskview import Node, Task, TaskView
from odrp.heuristics.storm import even_schedule, executor_order, sort_slots

NODES = (Node("supervisor1", slots=2), Node("supervisor2", slots=3), Node("supervisor3", slots=4))


def test_sort_slots_matches_storms_documented_example():
    assert sort_slots(NODES) == [
        ("supervisor3", 0),
        ("supervisor2", 0),
        ("supervisor1", 0),
        ("supervisor3", 1),
        ("supervisor2", 1),
        ("supervisor1", 1),
        ("supervisor3", 2),
        ("supervisor2", 2),
        ("supervisor3", 3),
    ]


def test_equal_slot_counts_keep_node_id_order():
    nodes = [Node("b", slots=2), Node("a", slots=2), Node("c", slots=2)]
    assert [s[0] for s in sort_slots(nodes)] == ["a", "b", "c", "a", "b", "c"]


def test_executors_dealt_round_robin_by_start_task_id():
    # components in id order ("bolt" < "spout"), tasks by index: bolt#0, bolt#1, bolt#2, spout#0
    tasks = (Task("spout", 0), Task("bolt", 0), Task("bolt", 1), Task("bolt", 2))
    assert [t.id for t in executor_order(tasks)] == ["bolt#0", "bolt#1", "bolt#2", "spout#0"]
    view = TaskView(tasks=tasks, nodes=NODES)
    assert even_schedule(view) == {
        "bolt#0": "supervisor3",
        "bolt#1": "supervisor2",
        "bolt#2": "supervisor1",
        "spout#0": "supervisor3",
    }
    # two workers: only the first two slots of the order (s3:6700, s2:6700) are used
    two = TaskView(tasks=tasks, nodes=NODES, workers=2)
    assert list(even_schedule(two).values()) == ["supervisor3", "supervisor2", "supervisor3", "supervisor2"]
