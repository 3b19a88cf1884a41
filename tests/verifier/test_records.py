"""The quicker ``__init__`` of the verifier's 10^5-per-answer records builds the same frozen instances."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from grounding_eval.verifier.allowlist import UrlFinding, UrlStatus
from grounding_eval.verifier.directory import OrgMention
from grounding_eval.verifier.phones import PhoneFinding, PhoneMention, PhoneStatus
from grounding_eval.verifier.records import quick_init
from grounding_eval.verifier.url_orgs import UrlOrgFinding, UrlOrgStatus
from grounding_eval.verifier.urls import UrlMention


@dataclass(frozen=True, slots=True)
class _Plain:
    a: str
    b: int


@quick_init
@dataclass(frozen=True, slots=True)
class _Quick:
    a: str
    b: int


def test_same_instance_as_the_generated_init() -> None:
    """Fields by position or keyword, equality, hash and repr as the dataclass's own; still frozen."""
    q, k = _Quick("x", 1), _Quick(b=1, a="x")
    assert q == k and hash(q) == hash(k) == hash(_Plain("x", 1))
    assert repr(q) == "_Quick(a='x', b=1)"
    assert dataclasses.astuple(q) == ("x", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.a = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Quick("x")  # type: ignore[call-arg]


@pytest.mark.parametrize("make", [
    lambda: UrlMention("lsc.gov", "https://lsc.gov", 3, 10, None),
    lambda: UrlFinding(UrlMention("a.org", "https://a.org", 0, 5, "A"), "https://a.org/", UrlStatus.UNCHECKED, "x"),
    lambda: UrlOrgFinding(UrlMention("a.org", "https://a.org", 0, 5, None), None, None, UrlOrgStatus.UNOWNED),
    lambda: PhoneMention("(312) 341-1070", "+13123411070", 4, 18),
    lambda: PhoneFinding(PhoneMention("211", "211", 0, 3), None, None, PhoneStatus.UNPAIRED),
])  # fmt: skip
def test_the_verifiers_records(make: object) -> None:
    """Each record built with the quick init equals one built field by field with object.__setattr__
    (what the dataclass's own init does), and refuses to change."""
    record = make()  # type: ignore[operator]
    cls = type(record)
    twin = object.__new__(cls)
    for field in dataclasses.fields(cls):
        object.__setattr__(twin, field.name, getattr(record, field.name))
    assert record == twin and hash(record) == hash(twin) and repr(record) == repr(twin)
    assert [f.name for f in dataclasses.fields(cls)] == list(cls.__slots__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, dataclasses.fields(cls)[0].name, None)
    assert OrgMention.__init__.__qualname__ == "OrgMention.__init__"


def test_refuses_what_it_cannot_build() -> None:
    """A class with a default, a __post_init__, no slots or no freezing is a mistake, said at import."""

    @dataclass(frozen=True, slots=True)
    class WithDefault:
        a: int = 0

    @dataclass(slots=True)
    class Thawed:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    for cls in (WithDefault, Thawed, NoSlots, int):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)
