"""The names of the vars a test gives a prompt: which are sources shown to the model, which are labels.

Core vocabulary, read by the test generators, the assertions and the report; it imports nothing, so any
layer may read it (rebuilding the vars a row lost is :mod:`grounding_eval.promptfoo.source_vars`'s).
"""

from __future__ import annotations

from typing import Final

__all__ = ["GROUNDING_VARS", "LABEL_VARS", "NOT_SOURCES", "REFERENCE_VARS"]

# What a round's prompt shows the model under each grounding condition (C0 shows none), in the
# conditions' order; the generator fills them and the judge reads them back from the rendered prompt.
GROUNDING_VARS: Final = {"C1": "jkb_directory", "C1.5": "jkb_full_content"}
# The verifier's default reference text (config ``source_vars``): the item's articles, in every
# test's vars whatever its condition, so an answer gets the same verdict under each.
REFERENCE_VARS: Final = (GROUNDING_VARS["C1.5"],)
# A test's vars that are the item's own words or labels, never a source shown to the model (the report).
NOT_SOURCES: Final = frozenset({"question", "query_id", "item_id", "jurisdiction", "topic", "round"})
# Short vars a prompt uses whose value is also the test's metadata under the same name: a round test
# names them in metadata.source_vars too, so that beforeAll lifts them with the sources. promptfoo's viewer
# gives any var a column at least 160 px wide, and with the question's (360 px) and the three
# conditions' (480 px each) the jurisdiction's put the third condition 56 px past a 1920-pixel screen
# (issue 42); the details' Metadata tab shows it. Rebuilt from the metadata.
LABEL_VARS: Final = ("jurisdiction",)
