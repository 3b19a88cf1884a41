"""The seed's answer score and pass rule, as one pure function.

    Answer score = sum of the criteria that apply (0–4). Criteria marked n/a are left out of the total.
    An answer passes only if it scores 1 on Correct and Grounded, whatever its total.

(the seed's words). Which criteria are n/a is the grader's reply, already checked against the rubric's
applicability rules by :func:`~grounding_eval.docs_qa.reply.parse_grading`; this module only adds up.
"A complete but wrong answer is worse than an incomplete one" is carried by the pass rule: Complete = 1
with Correct = 0 totals as much as Complete = 0 with Correct = 1, but fails (``tests/docs_qa/golden/
scoring.yaml`` pins both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grounding_eval.docs_qa.reply import Score

__all__ = ["AnswerScore", "disagreements", "score_answer"]


@dataclass(frozen=True)
class AnswerScore:
    """An answer's score under the seed's rule.

    Attributes:
        total: the sum of the applicable criteria's scores.
        applicable: how many criteria apply (were not n/a).
        passed: every criterion in ``pass_requires`` scored 1.
        failed_requirements: the required criteria that did not score 1.
    """

    total: int
    applicable: int
    passed: bool
    failed_requirements: tuple[str, ...]

    @property
    def label(self) -> str:
        """The seed's result line: ``2/3 applicable, Pass``."""
        return f"{self.total}/{self.applicable} applicable, {'Pass' if self.passed else 'Fail'}"


def score_answer(scores: Mapping[str, Score], pass_requires: Sequence[str]) -> AnswerScore:
    """Sum the applicable criteria and apply the pass rule.

    Args:
        scores: criterion id → 1, 0 or ``None`` (n/a).
        pass_requires: the criteria that must score 1 (Correct and Grounded); one that is missing or
            n/a counts as not 1.
    """
    applicable = [s for s in scores.values() if s is not None]
    failed = tuple(cid for cid in pass_requires if scores.get(cid) != 1)
    return AnswerScore(
        total=sum(applicable), applicable=len(applicable), passed=not failed, failed_requirements=failed
    )


def disagreements(
    scores: Mapping[str, Score], missed_points: Sequence[str], invalid_citations: Sequence[str]
) -> list[str]:
    """Where the deterministic helpers contradict the grader (shown beside it; nothing is overridden).

    * the grader says Complete = 1 but coverage found a missed must-include point;
    * the grader says Grounded = 1 but the answer cites a section that does not exist.
    """
    out = []
    if scores.get("complete") == 1 and missed_points:
        out.append(f"grader says Complete but coverage missed: {'; '.join(missed_points)}")
    if scores.get("grounded") == 1 and invalid_citations:
        out.append(f"grader says Grounded but cited section(s) do not exist: {', '.join(invalid_citations)}")
    return out
