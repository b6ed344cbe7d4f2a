"""One package per problem kind.

In each: the problem side (instance, evaluator, generators, task view), the exact side (``exact/``)
and ``kind.py``, which declares the kind.
"""
