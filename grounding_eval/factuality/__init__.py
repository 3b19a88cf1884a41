"""The factual-accuracy judge (seed 000): claims, per-claim verdicts, severity, score computed in code.

The room's parts, each pure except :mod:`.judge` (which calls the judge client and writes the queues):

* :mod:`.rubric` — ``rubrics/factual_accuracy.yaml`` loaded and checked: verification results and their
  scores, the severity scale (data, as the seed asks), risk levels, thresholds, our decisions.
* :mod:`.evidence` — evidence documents cut into chunks with ids; quotes looked up in them with the
  verifier's quotation matcher.
* :mod:`.render` — the seed's template rendered with the target text treated as hostile.
* :mod:`.parse` — the judge's reply read strictly, repaired only where no verdict can change.
* :mod:`.score` — the score computed in code, the judge's own numbers checked against it, ungrounded
  verdicts, the status (scored, no verifiable claims, needs human verification).
* :mod:`.judge` — one judgment: optional cheap stage, capable stage with one retry, review and
  human-verification queues, audit fields.

Nothing here knows promptfoo; the adapter is :mod:`grounding_eval.promptfoo.factuality_assertion`.
"""
