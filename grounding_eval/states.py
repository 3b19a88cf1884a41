"""Two-letter jurisdiction codes, and the names a user, a dataset or the field's libraries write instead.

Every state, the District of Columbia and the territories (AS, GU, MP, PR, VI), with Micronesia (FM),
whose legal-aid program the Legal Services Corporation funds. The codes and names are the USPS ones;
``tests/test_states.py`` checks them against courts-db's list of states and against every state
reporters-db and citeurl's templates name, so a citation of any of them is read as its state's law.
The verifier compares jurisdictions as codes; ``US`` marks a national organization, which serves everyone.
"""

from __future__ import annotations

__all__ = ["ALL_NAMES", "NATIONAL", "OTHER_NAMES", "STATE_NAMES", "parse_state", "state_of_name"]

NATIONAL = "US"

STATE_NAMES: dict[str, str] = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia",
    "FL": "Florida", "GA": "Georgia", "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana",
    "IA": "Iowa", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland",
    "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri",
    "MT": "Montana", "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire", "NJ": "New Jersey",
    "NM": "New Mexico", "NY": "New York", "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio",
    "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina",
    "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VT": "Vermont",
    "VA": "Virginia", "WA": "Washington", "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming",
    "AS": "American Samoa", "FM": "Micronesia", "GU": "Guam", "MP": "Northern Mariana Islands",
    "PR": "Puerto Rico", "VI": "U.S. Virgin Islands",
}  # fmt: skip

OTHER_NAMES: dict[str, str] = {
    "Virgin Islands": "VI",  # (courts-db's, reporters-db's and citeurl's name for it)
    "United States Virgin Islands": "VI",
    "Washington D.C.": "DC",  # (courts-db's location of the District's courts)
    "Washington, D.C.": "DC",
    "Federated States of Micronesia": "FM",  # (courts-db's)
    "Commonwealth of the Northern Mariana Islands": "MP",
    "Commonwealth of Puerto Rico": "PR",
}
"""Other names the field's data writes for a jurisdiction: name -> code."""

_NAMES: dict[str, str] = {**{name: code for code, name in STATE_NAMES.items()}, **OTHER_NAMES}
_BY_NAME = {name.casefold(): code for name, code in _NAMES.items()}

ALL_NAMES: tuple[tuple[str, str], ...] = tuple(sorted(_NAMES.items(), key=lambda kv: (-len(kv[0]), kv[0])))
"""Every name and its code, longest first ("West Virginia" before "Virginia", "Washington D.C." before
"Washington"), for finding a name inside a longer text."""


def state_of_name(name: str) -> str | None:
    """The code of a jurisdiction's name as written (``Virgin Islands``, ``District Of Columbia``), any
    case; None for a name that is not one."""
    return _BY_NAME.get(" ".join(name.split()).casefold())


def parse_state(value: object, *, allow_national: bool = False) -> str:
    """Return the two-letter code for ``value`` (a code or a state name, any case).

    Raises:
        ValueError: with a one-line message when the value is not a known state (or ``US`` where
            ``allow_national`` is false).
    """
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a state code: {value!r}")
    text = value.strip()
    code = text.upper()
    if code == NATIONAL and allow_national:
        return NATIONAL
    if code in STATE_NAMES:
        return code
    by_name = state_of_name(text)
    if by_name is not None:
        return by_name
    raise ValueError(f"unknown state code {value!r}")
