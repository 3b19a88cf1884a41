"""The jurisdiction codes against the field's own lists, and a citation of every state's law read as that
state's (issue 42: every state, DC and the territories).

``grounding_eval/states.py`` is a hand list of USPS codes and names; these tests hold it to courts-db's list
of states, to every place reporters-db names, and to every citeurl template the verifier loads, so a state
or a spelling the libraries use and the list lacks fails here rather than leaving that state's law
without a jurisdiction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import courts_db
import pytest
import reporters_db

from grounding_eval.states import ALL_NAMES, NATIONAL, STATE_NAMES, parse_state, state_of_name
from grounding_eval.verifier.citations import _library, _template_state, find_citations

# Freely associated states courts-db lists that the LSC funds no program in (FM, whose program it funds,
# is served).
_NOT_SERVED = {"MH", "PW"}
# Places reporters-db's laws name that are no state today.
_NOT_STATES = {"United States", "Canal Zone", "Navajo Nation"}
TERRITORIES = ("AS", "GU", "MP", "PR", "VI")


def _courts_db_states() -> dict[str, str]:
    data = json.loads((Path(courts_db.__file__).parent / "data" / "states.json").read_text(encoding="utf-8"))
    return {code: name for code, name in data.items() if len(code) == 2}


class TestCodes:
    """The list holds every state, DC and the five territories, as courts-db writes them."""

    def test_fifty_states_dc_and_the_territories(self) -> None:
        assert len(STATE_NAMES) == 57  # 50 + DC + AS GU MP PR VI + FM (LSC-funded)
        assert {"DC", *TERRITORIES} <= set(STATE_NAMES)
        assert NATIONAL not in STATE_NAMES

    def test_every_code_is_courts_dbs_with_the_same_name(self) -> None:
        theirs = _courts_db_states()
        assert set(STATE_NAMES) == set(theirs) - _NOT_SERVED
        for code, name in theirs.items():
            if code not in _NOT_SERVED:
                assert state_of_name(name) == code, (code, name)  # "District Of Columbia", "Virgin Islands"

    def test_every_state_reporters_db_abbreviates(self) -> None:
        for abbreviation, name in reporters_db.STATE_ABBREVIATIONS.items():
            assert state_of_name(name) is not None, abbreviation

    def test_every_place_reporters_db_files_a_law_or_reporter_under(self) -> None:
        places = {str(e.get("jurisdiction")) for entries in reporters_db.LAWS.values() for e in entries}
        assert {p for p in places if state_of_name(p) is None} == _NOT_STATES
        codes = {
            m.group(1).upper()
            for entries in reporters_db.REPORTERS.values()
            for e in entries
            for place in e.get("mlz_jurisdiction") or ()
            if (m := re.match(r"us:([a-z]{2});", place))
        }
        assert codes == set(STATE_NAMES) - {"FM"}  # (no reporter of Micronesia)

    def test_names_parse_like_codes(self) -> None:
        for name, code in ALL_NAMES:
            assert parse_state(name) == code
            assert parse_state(name.upper()) == code
        assert parse_state("wa") == "WA"
        with pytest.raises(ValueError, match="unknown state code"):
            parse_state("Virgin")

    def test_longer_names_come_first(self) -> None:
        lengths = [len(name) for name, _ in ALL_NAMES]
        assert lengths == sorted(lengths, reverse=True)


class TestTemplates:
    """Every state-law template the verifier loads belongs to a state."""

    def test_every_state_template_has_its_state(self) -> None:
        library = _library()
        states = {name: _template_state(name) for name in library.names() if name not in library._federal}
        assert not [name for name, code in states.items() if code is None]
        assert states["Virgin Islands Code"] == "VI"  # (read as no state before issue 42)
        assert states["West Virginia Code"] == "WV" and states["Revised Code of Washington"] == "WA"
        assert set(states.values()) == set(STATE_NAMES) - {"FM"}


def _law_examples() -> Iterator[tuple[str, str, str]]:
    """(state, law, example) for the first two examples of every state law reporters-db lists."""
    for short, entries in sorted(reporters_db.LAWS.items()):
        for entry in entries:
            code = state_of_name(str(entry.get("jurisdiction")))
            if code is not None:
                for example in entry.get("examples", [])[:2]:
                    yield code, short, example


_BY_STATE: dict[str, list[tuple[str, str]]] = {}
for _code, _short, _example in _law_examples():
    _BY_STATE.setdefault(_code, []).append((_short, _example))


@pytest.mark.parametrize("code", sorted(set(STATE_NAMES) - {"FM"}))
def test_each_states_law_is_read_as_that_states(code: str) -> None:
    """Every example reporters-db gives of a state's laws that the verifier finds is that state's law."""
    examples = _BY_STATE[code]
    read = 0
    for short, example in examples:
        found = find_citations(example).mentions
        if found:
            read += 1
            assert {m.jurisdiction for m in found} == {code}, (short, example)
    assert read >= 2, f"{code}: {read} of {len(examples)} examples found"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Doe v. Roe, 45 V.I. 123 (V.I. 2003).", "VI"),  # eyecite's court: Virginia Beach
        ("Pueblo v. Ortiz, 123 P.R. Dec. 456 (P.R. 1990).", "PR"),  # eyecite's court: Prince William
        ("Smith v. Jones, 123 A.3d 456 (D.C. 2015).", "DC"),  # courts-db's location: Washington D.C.
        ("Lee v. Kim, 123 Or. App. 45 (Or. Ct. App. 1993).", "OR"),
        ("Roe v. Doe, 2012 VI 5.", "VI"),
    ],
)
def test_a_case_is_its_courts_or_its_own_reporters_state(text: str, code: str) -> None:
    assert [m.jurisdiction for m in find_citations(text).mentions] == [code]
