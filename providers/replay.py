"""promptfoo provider that replays recorded sample answers (fixtures): ``file://providers/replay.py:call_api``.

Config: ``answers`` — the recorded answers YAML. This is the only stand-in for a model in the pack; it
is named as such in every result's metadata (``recorded_fixture``).
"""

from typing import Any


def call_api(prompt: str, options: Any, context: Any) -> dict[str, Any]:
    """Return the recorded answer for this test's ``query_id`` (metadata or var) and the prompt's condition label."""
    from grounding_eval.promptfoo.replay_provider import call_replay

    return call_replay(prompt, options, context)
