"""The promptfoo boundary: every adapter between promptfoo's calls and the pack's pure parts.

promptfoo calls an assertion with ``(output, context)`` and a scoring function with
``(named_scores, context)``, and wants a GradingResult back. The modules here are the only place that
reads promptfoo's shapes and writes GradingResults; the checks (``grounding_eval.verifier``), the judge
(``grounding_eval.judge``) and the composites (``grounding_eval.scoring``) know nothing of promptfoo.

* ``verifier_assertion`` — the deterministic verifier as one assertion per row;
* ``judge_assertion`` — the rubric judge;
* ``factuality_assertion`` — the factual-accuracy judge; ``docs_qa_assertion`` — the docs-QA grader;
* ``composite_scoring`` — the round composites as ``assertScoringFunction``;
* ``replay_provider`` — recorded answers (fixtures) as a promptfoo provider;
* ``round_tests``, ``docs_qa_tests`` — promptfoo test generators over a dataset;
* ``worker`` — the warm Python behind ``assertions/grounding.cjs``; ``rescore`` — grading a results
  file again without promptfoo, rebuilding rows as promptfoo does.
"""
