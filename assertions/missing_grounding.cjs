// grounding-eval: the value of a grounding var (jkb_directory, jkb_full_content) whose block came out empty.
//
// The test generator (grounding_eval/promptfoo/round_tests.py) sets such a var to
// `file://<this file>` and records why in the test's `grounding_missing` var (JSON: {var: reason}).
// promptfoo resolves a `file://….cjs` var by calling this function while it renders each prompt of the
// test, before any provider is called (promptfoo 0.121.20, evaluatorHelpers renderPrompt):
//   - a prompt that uses the var (C1 uses jkb_directory, C1.5 jkb_full_content) throws, and promptfoo makes
//     that one cell an ERROR row whose error is exactly `ERROR (no grounding for C1.5: <why>)`, whatever the
//     provider (recorded answers or a live model: the model is never called with an empty block);
//   - any other prompt of the test gets a placeholder `(no grounding for …)`, which is not in its rendered
//     prompt, so the verifier and the judge count it as no source (as an empty var would be).
// The prompt files stay the methods document's verbatim text. Nothing here reads a file or the network.
"use strict";

module.exports = function missingGrounding(varName, prompt, vars) {
  let reasons = {};
  try {
    reasons = JSON.parse(String((vars && vars.grounding_missing) || "{}"));
  } catch {
    reasons = {};
  }
  const reason = String(reasons[varName] || `no grounding for ${varName}: the test names no reason`);
  // Any mention of the var's name in the prompt's text counts as a use: a false alarm is an ERROR row,
  // never a model shown an empty block.
  if (new RegExp(`(^|[^A-Za-z0-9_])${varName}([^A-Za-z0-9_]|$)`).test(String(prompt || ""))) {
    const error = new Error(`ERROR (${reason})`);
    error.name = ""; // String(error) is then the message alone: the row's error is the reason, verbatim
    error.stack = error.message;
    throw error;
  }
  return { output: `(${reason})` };
};
