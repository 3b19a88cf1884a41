"""A quicker ``__init__`` for the frozen, slotted dataclasses a hostile answer makes 10^5 of.

A frozen dataclass sets each field in its generated ``__init__`` with ``object.__setattr__`` looked up
again for every field, since its own ``__setattr__`` refuses: about 1 µs per mention or finding, and an
answer of 10^5 URLs or numbers makes three or four of them each. :func:`quick_init` gives such a class
an ``__init__`` that sets each slot through the slot's own descriptor instead: the same instance (same
fields, equality, hash, repr, still frozen) at about half the cost.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

__all__ = ["quick_init"]

_C = TypeVar("_C", bound=type)


def quick_init(cls: _C) -> _C:
    """Give ``cls`` (a ``@dataclass(frozen=True, slots=True)`` whose fields have no defaults and which
    has no ``__post_init__``) an ``__init__`` setting each slot through its descriptor.

    Raises:
        TypeError: ``cls`` is not such a class (a mistake in this package, at import).
    """
    params = getattr(cls, "__dataclass_params__", None)
    fields = dataclasses.fields(cls) if params is not None else ()
    if (
        params is None
        or not params.frozen
        or "__slots__" not in cls.__dict__
        or hasattr(cls, "__post_init__")
        or any(
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            for f in fields
        )
        or any(not f.init for f in fields)
    ):
        raise TypeError(f"quick_init: {cls.__name__} is not a frozen slotted dataclass without defaults")
    names = [f.name for f in fields]
    setters = {f"_set_{name}": cls.__dict__[name].__set__ for name in names}
    source = f"def __init__(self, {', '.join(names)}):\n" + "".join(
        f"    _set_{name}(self, {name})\n" for name in names
    )
    namespace: dict[str, object] = {}
    exec(source, setters, namespace)  # (as dataclasses builds its own __init__)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses assigning a class's __init__)
    return cls
