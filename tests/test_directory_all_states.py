"""The organization directory of every state, DC and the territories (datasets/directory, issue 42): the
committed file is what scripts/build_directory.py builds from ../shared/data, and it holds none of the LSC
list's known-wrong values.

With ``../shared/data`` beside the checkout, the file is rebuilt and compared byte for byte; without it (a
fresh clone), its own recorded entries hash, the sample's entries and every rule are checked on the
committed file, and the rules themselves on a small list written here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from grounding_eval.resources import pack_directory
from grounding_eval.states import STATE_NAMES
from grounding_eval.verifier.directory import load_directory
from tests.entry_points import load_file

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
FILE = REPO / "datasets" / "directory" / "organizations.yaml"
SAMPLE = REPO / "datasets" / "sample" / "organizations.yaml"
LSC_SOURCE = "LSC grantee directory (shared/data/legal_orgs_lsc_grantees.yaml, via lsc.gov)"

script = load_file("build_directory", REPO / "scripts" / "build_directory.py")


def _entries() -> list[dict[str, object]]:
    data: list[dict[str, object]] = yaml.safe_load(FILE.read_text(encoding="utf-8"))
    return data


def _lsc_entries() -> list[dict[str, object]]:
    """The entries built from LSC rows (the sample's six states' are the sample's own)."""
    sample_names = {e["name"] for e in yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))}
    return [e for e in _entries() if e["name"] not in sample_names]


class TestCommittedFile:
    """The committed file is the script's output, checked against ../shared when it is there."""

    def test_is_as_built(self) -> None:
        text = FILE.read_text(encoding="utf-8")
        header = script.recorded(text)
        assert header["entries-sha256"] == hashlib.sha256(script.entries_text(text).encode()).hexdigest()
        sample = SAMPLE.read_text(encoding="utf-8")
        assert header["sample-sha256"] == hashlib.sha256(sample.encode()).hexdigest(), (
            "datasets/sample/organizations.yaml changed: re-run scripts/build_directory.py"
        )
        lsc = SHARED / "legal_orgs_lsc_grantees.yaml"
        if lsc.is_file():  # the source is here: rebuild from it
            assert header["lsc-sha256"] == hashlib.sha256(lsc.read_bytes()).hexdigest()
            assert script.build(lsc.read_text(encoding="utf-8"), sample) == text
        else:  # a clone without ../shared: built from the snapshot shared/data/SOURCES.md describes
            assert header["lsc-sha256"] == "3800633f7d7704095084d04957e8a147137e1e3ab723c1ccc535aac454791d9b"

    def test_holds_the_sample_entries_unchanged(self) -> None:
        ours = {e["name"]: e for e in _entries()}
        for entry in yaml.safe_load(SAMPLE.read_text(encoding="utf-8")):
            assert ours[entry["name"]] == entry

    def test_is_the_default_directory_and_loads(self) -> None:
        assert pack_directory() == FILE
        directory = load_directory(FILE)  # every phone and domain listed once, every state a code
        served = {s for org in directory.organizations for s in org.states}
        assert served == set(STATE_NAMES) - {"GU", "MP"} | {"US"}  # (no LSC row for Guam or the CNMI)

    def test_check_mode(self, capsys: pytest.CaptureFixture[str]) -> None:
        if (SHARED / "legal_orgs_lsc_grantees.yaml").is_file():
            assert script.main(["--shared", str(SHARED), "--check"]) == 0
            assert "as built" in capsys.readouterr().out
        assert script.main(["--shared", str(REPO / "no-such-folder"), "--check"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{REPO / 'no-such-folder' / 'legal_orgs_lsc_grantees.yaml'}: cannot read")


class TestKnownDefects:
    """Each known-wrong value of the LSC list (shared/data/SOURCES.md) is left out of the committed file."""

    def test_every_lsc_phone_is_marked_unverified(self) -> None:
        entries = _lsc_entries()
        assert len(entries) == 109
        for entry in entries:
            assert entry["source"] == LSC_SOURCE
            assert ("phones" in entry) == ("phones" in entry.get("unverified", [])), entry["name"]

    def test_the_minnesota_row_loses_michigans_site_and_phone(self) -> None:
        by_name = {e["name"]: e for e in _entries()}
        mn = by_name["Legal Services of Northwest Minnesota Corporation"]
        assert "domains" not in mn and "phones" not in mn and mn["states"] == ["MN"]
        mi = by_name["Legal Services of Northern Michigan, Inc."]
        assert mi["domains"] == ["lsnm.org"] and mi["phones"] == ["(800) 872-8432"]

    @pytest.mark.parametrize(
        "value", ["lsnj.org", "(732) 572-9100", "(877) 696-6529", "(855) 947-2529", "(225) 578-0200"]
    )
    def test_shared_and_wrong_values_are_dropped(self, value: str) -> None:
        for entry in _entries():
            assert value not in [*entry.get("domains", []), *entry.get("phones", [])], entry["name"]  # type: ignore[misc]

    def test_no_phone_is_another_states_number(self) -> None:
        for entry in _lsc_entries():
            for phone in entry.get("phones", []):  # type: ignore[attr-defined]
                e164 = script._e164(phone)
                assert e164 is not None and script._PHONE.fullmatch(phone)
                assert script._phone_state(e164) in (None, entry["states"][0]), entry["name"]  # type: ignore[index]

    def test_no_name_is_inside_another_states_name(self) -> None:
        entries = _entries()
        for entry in _lsc_entries():
            for surface in (entry["name"], *entry.get("aliases", [])):  # type: ignore[misc]
                for other in entries:
                    if entry["states"][0] not in other["states"]:  # type: ignore[index,operator]
                        for name in (other["name"], *other.get("aliases", [])):  # type: ignore[misc]
                            assert not script._within(name, surface), (surface, name)
        assert "Legal Aid Society (Kentucky)" in {e["name"] for e in entries}


LSC = """\
source: {name: test}
grantees:
- {name: "Ohio Org, Inc.", state: OH, website: "https://www.ohorg.org", phone: "(614) 555-0100"}
- {name: "Alpha Legal Aid, Inc.", state: WA, website: "https://www.shared.org", phone: "(206) 555-0101"}
- {name: "Beta Legal Aid", state: WA, website: "https://www.shared.org", phone: "(206) 555-0101"}
- {name: "Gamma Law", state: PR, website: "https://www.gamma.pr", phone: "(800) 555-0102 Calle 5, San Juan"}
- {name: "Delta Legal", state: NY, phone: "(225) 578-0200"}
- {name: "Legal Aid", state: KY, website: "https://laky.org"}
- {name: "Epsilon Legal Aid", state: OR, website: "https://www.mine.org", phone: "(503) 555-0103"}
"""
SAMPLE_TEXT = """\
- name: "Mine Legal Aid"
  domains: [mine.org]
  states: [OH]
"""


@pytest.fixture(scope="module")
def built() -> dict[str, dict[str, object]]:
    text = script.build(LSC, SAMPLE_TEXT)
    return {e["name"]: e for e in yaml.safe_load(text)}


class TestRules:
    """The script's rules on a list written here (each row one defect)."""

    def test_the_samples_states_come_from_the_sample(self, built: dict[str, dict[str, object]]) -> None:
        assert "Ohio Org, Inc." not in built and built["Mine Legal Aid"] == {
            "name": "Mine Legal Aid", "domains": ["mine.org"], "states": ["OH"]
        }  # fmt: skip

    def test_a_site_or_phone_of_two_organizations_is_dropped(
        self, built: dict[str, dict[str, object]]
    ) -> None:
        for name in ("Alpha Legal Aid, Inc.", "Beta Legal Aid"):
            assert "domains" not in built[name] and "phones" not in built[name]
            assert "also listed for" in str(built[name]["note"])
        assert "domains" not in built["Epsilon Legal Aid"]  # the sample's mine.org stays the sample's
        assert built["Epsilon Legal Aid"]["phones"] == ["(503) 555-0103"]

    def test_a_garbled_or_another_states_phone_is_dropped(self, built: dict[str, dict[str, object]]) -> None:
        assert "phones" not in built["Gamma Law"] and "not one number" in str(built["Gamma Law"]["note"])
        assert "phones" not in built["Delta Legal"] and "a Louisiana number" in str(
            built["Delta Legal"]["note"]
        )
        assert "unverified" not in built["Delta Legal"]

    def test_a_generic_name_gets_its_state(self, built: dict[str, dict[str, object]]) -> None:
        assert "Legal Aid" not in built and built["Legal Aid (Kentucky)"]["domains"] == ["laky.org"]
        assert built["Alpha Legal Aid, Inc."]["aliases"] == ["Alpha Legal Aid"]
