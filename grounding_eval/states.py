"""Two-letter jurisdiction codes, and the names a user or a dataset may write instead.

The verifier compares jurisdictions as codes; ``US`` marks a national organization, which serves everyone.
"""

from __future__ import annotations

__all__ = ["NATIONAL", "STATE_NAMES", "parse_state"]

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

_BY_NAME = {name.casefold(): code for code, name in STATE_NAMES.items()}


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
    by_name = _BY_NAME.get(text.casefold())
    if by_name is not None:
        return by_name
    raise ValueError(f"unknown state code {value!r}")
