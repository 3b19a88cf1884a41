// The one place that decides every judge model call: which provider, at which endpoint, with which
// secrets — in promptfoo's Node process, where promptfoo's providers live.
//
// Used three ways, always with the same rules:
//   - by assertions/grounding.cjs, inside `promptfoo eval`: each judge row's providers are resolved here
//     before the row is forwarded to a Python worker, and the worker's model calls come back here;
//   - as a host process (`node assertions/judges.cjs --serve`), started by the Python side where there is
//     no promptfoo eval around it: the `grounding-eval` command line (`factuality`, `rescore`) and the
//     `type: python` entries (assertions/grounding.py). Requests and replies are JSON lines on
//     stdin/stdout (grounding_eval/judge/host.py);
//   - by beforeAll (grounding.cjs), which loads every judge, checks its key and prints where keys go.
//
// Which judge (promptfoo's precedence): $GROUNDING_EVAL_JUDGE_PROVIDER (the one switch, a recorded
// `replay:` judge included); else the assertion's own `provider` (or its config.provider, the pack's
// older spelling; two different ones are an error); else the test's options.provider (defaultTest /
// --grader). The factual-accuracy judge's cheap first stage: $GROUNDING_EVAL_FACTUALITY_CHEAP_PROVIDER,
// else config.cheap_provider unless the switch named the capable judge.
// While the switch is set it decides the endpoint too: a judge endpoint the config names (base_url,
// cheap_base_url, a provider's apiBaseUrl / baseUrl / apiHost / url, a URL as a provider id) is refused
// in one line naming it, before any call — never merged into the switch's provider.
//
// Secrets never leave this process: Python gets a reference to the provider (`ref`), a label (the id
// without a URL's userinfo or query), the endpoint host and a digest for its reply cache. Every model
// reply and error is scrubbed here of every secret value the provider holds — its config's key-like
// values and headers, values taken from environment variables whatever their names, its API key, a URL's
// userinfo and query values — in each form a server echoes them (any mix of URL, JSON, Python and HTML
// escapes; hex- and base64-encoded; spread over lines; shortened or truncated; in another case; without a
// vendor prefix). While the switch decides the judge, an endpoint setting a .env file gave this process is
// refused too (refuseEnvFileEndpoints).
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');

const JUDGE_PROVIDER_ENV = 'GROUNDING_EVAL_JUDGE_PROVIDER';
const CHEAP_PROVIDER_ENV = 'GROUNDING_EVAL_FACTUALITY_CHEAP_PROVIDER';
const LIVE_JUDGE_EXAMPLE = 'anthropic:messages:claude-sonnet-4-5-20250929';
// The pack's calls and deadlines (grounding_eval/calls.py): one definition for Python and JavaScript.
const CALL_REGISTRY = require('./calls.json');

const DEADLINES = CALL_REGISTRY.deadlines;
const MAX_DEADLINE_S = Math.floor((2 ** 31 - 1) / 1000); // setTimeout's limit (24.8 days)

// The longest one model call may take: (max_retries + 1) attempts of `timeout` seconds and the waits
// between them (grounding_eval.calls.worst_case_seconds, the Python side's bound).
function worstCaseSeconds(timeout, maxRetries) {
  return (maxRetries + 1) * timeout + maxRetries * DEADLINES.judge_backoff_max_s;
}

// One model call's bound when its request names none: the default judge's (720 s).
const MODEL_CALL_DEFAULT_S = worstCaseSeconds(DEADLINES.judge_timeout_s, DEADLINES.judge_max_retries);

// $GROUNDING_EVAL_CALL_TIMEOUT in seconds, or undefined when unset; a bad value is an Error naming it.
function envDeadlineS() {
  const raw = process.env.GROUNDING_EVAL_CALL_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return undefined;
  const seconds = Number(raw.trim());
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_DEADLINE_S) {
    return new Error(
      `GROUNDING_EVAL_CALL_TIMEOUT must be a number of seconds above 0 and at most ${MAX_DEADLINE_S}, got ${JSON.stringify(raw)}`,
    );
  }
  return seconds;
}

// promptfoo's own serialization: drop only true cycles (functions vanish in JSON).
function stringify(value) {
  const ancestors = [];
  return JSON.stringify(value, function replacer(_key, val) {
    if (typeof val === 'bigint') return val.toString();
    if (typeof val === 'object' && val !== null) {
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(val)) return undefined;
      ancestors.push(val);
    }
    return val;
  });
}

// The same value with every object's keys sorted: a digest that does not depend on key order.
function canonical(value, seen = new Set()) {
  if (Array.isArray(value)) return value.map((v) => canonical(v, seen));
  if (!value || typeof value !== 'object' || seen.has(value)) return typeof value === 'function' ? undefined : value;
  seen.add(value);
  const out = {};
  for (const k of Object.keys(value).sort()) out[k] = canonical(value[k], seen);
  seen.delete(value);
  return out;
}

function sha256(text) {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

function oneLine(message) {
  return String(message).split('\n').map((s) => s.trim()).filter(Boolean).join(' ') || 'unknown error';
}

// --- providers as promptfoo takes them ------------------------------------------------------------------

function isLoadedProvider(value) {
  return Boolean(value) && typeof value === 'object' && typeof value.callApi === 'function';
}

function providerIdOf(value) {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return undefined;
  try {
    if (typeof value.id === 'function') return value.id();
  } catch (_err) {
    return undefined;
  }
  if (typeof value.id === 'string') return value.id;
  return undefined;
}

// A grader setting as promptfoo takes it: an id, {id, config, label}, a loaded provider, or a map by kind
// ({text: …}, the judges use text). Returns the one to use (undefined for none; a malformed value as is).
function graderOf(value) {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' || isLoadedProvider(value)) return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    if (typeof value.id === 'string' || typeof value.id === 'function') return value;
    if (value.text !== undefined) return graderOf(value.text);
  }
  return value;
}

// A provider id as people read it and files keep it: a URL's userinfo, query and fragment dropped.
function label(id) {
  return String(id)
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/gi, '$1')
    .replace(/(:\/\/[^\s?#]*)[?#]\S*/g, '$1');
}

function shape(value) {
  if (value === undefined || value === null || value === '') return 'an empty value';
  return `a ${Array.isArray(value) ? 'list' : typeof value === 'number' ? (Number.isInteger(value) ? 'int' : 'float') : typeof value}`;
}

// --- which judge: promptfoo's precedence ----------------------------------------------------------------

class Refused extends Error {}

// The settings that name where a judge is served, in a provider's config.
const ENDPOINT_KEYS = ['apiBaseUrl', 'baseUrl', 'apiHost', 'url', 'endpoint', 'host', 'basePath'];
// A model is its id at an endpoint: the same id on another server is another model (self-grading check).
const SAME_MODEL_KEYS = ['apiBaseUrl', 'apiHost', 'baseUrl', 'url', 'region', 'projectId'];

function endpointSettings(config) {
  const out = {};
  if (!config || typeof config !== 'object') return out;
  for (const k of SAME_MODEL_KEYS) if (typeof config[k] === 'string') out[k] = config[k];
  return out;
}

// A judge named by an id or {id, config, …} in a config, the environment or the command line.
function fromSetting(value, where) {
  if (typeof value === 'string' && value.trim()) {
    const id = value.trim();
    return { id, held: id, where, replay: id.startsWith('replay:') };
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && !isLoadedProvider(value)
      && typeof value.id === 'string' && value.id.trim()) {
    const id = value.id.trim();
    if (id.startsWith('replay:')) {
      if (Object.keys(value).some((k) => k !== 'id' && k !== 'label')) throw new Refused(`${where}: a replay: judge takes no config`);
      return { id, held: id, where, replay: true };
    }
    const held = { id };
    for (const k of ['label', 'config', 'env', 'transform']) if (value[k] !== undefined) held[k] = value[k];
    return { id, held, where, replay: false };
  }
  if (isLoadedProvider(value)) {
    const id = providerIdOf(value);
    if (id) return { id, held: value, where, replay: id.startsWith('replay:') };
  }
  throw new Refused(`${where} must be a provider id or {id, config}, got ${shape(value)}`);
}

// Where a spec (id or {id, config, env}) names its endpoint: [setting, value] pairs — its config's endpoint
// keys, its own `env` map's endpoint settings (ENDPOINT_ENV: promptfoo gives them to the provider), and,
// for a `file://…yaml|yml|json` reference, what the file holds (providerFile), as promptfoo would load it.
// A file that cannot be checked is [setting, Refused]. bases: the folders a relative file is looked up in.
function namedEndpoints(spec, where, bases = fileBases(), depth = 0) {
  const out = [];
  if (spec === undefined || spec === null) return out;
  const id = providerIdOf(spec);
  if (typeof id === 'string' && /^https?:\/\//i.test(id)) out.push([`${where} (a URL)`, id]);
  if (typeof id === 'string' && isProviderFile(id) && !isLoadedProvider(spec)) {
    let held;
    try {
      held = providerFile(id, bases, depth);
    } catch (err) {
      out.push([`${where} (${label(id)})`, err instanceof Refused ? err : new Refused(`${where}: ${oneLine(err.message)}`)]);
      held = [];
    }
    for (const [i, one] of held.entries()) {
      out.push(...namedEndpoints(one, `${where} (${label(id)}${held.length > 1 ? `[${i}]` : ''})`, bases, depth + 1));
    }
  }
  const config = spec && typeof spec === 'object' ? spec.config : undefined;
  if (config && typeof config === 'object') {
    for (const k of ENDPOINT_KEYS) if (config[k] !== undefined && config[k] !== '') out.push([`${where}.config.${k}`, config[k]]);
  }
  const env = spec && typeof spec === 'object' && !isLoadedProvider(spec) ? spec.env : undefined;
  if (env && typeof env === 'object') {
    for (const [k, v] of Object.entries(env)) if (ENDPOINT_ENV.test(k) && v !== undefined && v !== null && v !== '') out.push([`${where}.env.${k}`, v]);
  }
  return out;
}

// A provider reference promptfoo expands from a YAML or JSON file (its isProviderConfigFileReference).
function isProviderFile(id) {
  return /^file:\/\/.*\.(?:ya?ml|json)$/i.test(String(id).trim());
}

const PROVIDER_FILE_MAX_BYTES = 1 << 20;
const PROVIDER_FILE_MAX_DEPTH = 4;

// The folders promptfoo may resolve a relative `file://` provider in: the one it runs in and each config's
// (-c/--config; promptfoo uses the config's folder). Every one is checked, so no copy goes unseen.
function fileBases(extra = []) {
  const fs = require('node:fs');
  const dirOf = (p) => { try { return fs.statSync(p).isDirectory() ? p : path.dirname(p); } catch (_err) { return path.dirname(p); } };
  return [...new Set([process.cwd(), ...extra, ...configsGiven().map(dirOf)])];
}

// The configs this promptfoo process was given (-c/--config, each value up to the next option), absolute.
function configsGiven() {
  const argv = process.argv;
  const out = [];
  for (let i = 0; i < argv.length; i += 1) {
    const a = String(argv[i]);
    if (/^--config=/.test(a)) out.push(a.slice(a.indexOf('=') + 1));
    else if (a === '-c' || a === '--config') for (let j = i + 1; j < argv.length && !String(argv[j]).startsWith('-'); j += 1) out.push(String(argv[j]));
  }
  return out.map((p) => path.resolve(process.cwd(), p));
}

// The config's top-level `env:` block, which promptfoo's getEnvString reads before the process's environment
// (its state, not the suite beforeAll sees): the suite's, and each config file's this promptfoo eval read
// (-c, else promptfooconfig.* in the folder it runs in), parsed with the yaml library promptfoo uses.
// [where, name, value] for each setting.
function configEnv(suite) {
  const out = [];
  const add = (env, where) => {
    if (env && typeof env === 'object' && !Array.isArray(env)) for (const [k, v] of Object.entries(env)) out.push([where, k, v]);
  };
  add(suite && suite.env, "the config's env");
  if (!runningPromptfoo()) return out;
  const fs = require('node:fs');
  let files = configsGiven().filter((f) => /\.(?:ya?ml|json)$/i.test(f));
  if (!configsGiven().length) files = ['promptfooconfig.yaml', 'promptfooconfig.yml', 'promptfooconfig.json'].map((f) => path.resolve(process.cwd(), f));
  for (const file of files.filter((f) => fs.existsSync(f))) {
    let data;
    try {
      if (fs.statSync(file).size > PROVIDER_FILE_MAX_BYTES * 16) throw new Error(`larger than ${PROVIDER_FILE_MAX_BYTES * 16} bytes`);
      data = yamlLibrary().load(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Refused(`${file}: cannot be read to check its env block: ${oneLine(err.message)}`);
    }
    const env = data && typeof data === 'object' ? data.env : undefined;
    add(typeof env === 'string' && isProviderFile(env) ? providerFile(env, [path.dirname(file)], 0, true)[0] : env, `the env block of ${file}`);
  }
  return out;
}

function yamlLibrary() {
  return require(require.resolve('js-yaml', { paths: [path.dirname(require.resolve('promptfoo', { paths: [process.cwd(), __dirname] })), process.cwd(), __dirname] }));
}

// The provider options a `file://` provider file holds, as promptfoo reads them (YAML or JSON, one provider
// or a list; nested `file://` YAML/JSON values loaded in their place), from every base folder it exists in.
// promptfoo's own reader is not exported: the file is parsed here with the yaml library promptfoo uses.
function providerFile(ref, bases, depth = 0, whole = false) {
  if (depth >= PROVIDER_FILE_MAX_DEPTH) throw new Refused(`${label(ref)}: provider files nested more than ${PROVIDER_FILE_MAX_DEPTH} deep cannot be checked`);
  const fs = require('node:fs');
  const rel = String(ref).trim().slice('file://'.length);
  const paths = path.isAbsolute(rel) ? [rel] : [...new Set(bases.map((b) => path.resolve(b, rel)))];
  const found = paths.filter((p) => fs.existsSync(p));
  if (!found.length) throw new Refused(`${label(ref)}: the provider file is not in ${paths.join(' or ')}, so the endpoint it names cannot be checked`);
  const yaml = yamlLibrary();
  const out = [];
  for (const file of found) {
    let data;
    try {
      const size = fs.statSync(file).size;
      if (size > PROVIDER_FILE_MAX_BYTES) throw new Error(`larger than ${PROVIDER_FILE_MAX_BYTES} bytes`);
      data = yaml.load(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Refused(`${file}: the provider file cannot be read, so the endpoint it names cannot be checked: ${oneLine(err.message)}`);
    }
    // A nested reference's content replaces it (one value, as promptfoo's maybeLoadConfigFromExternalFile).
    const nested = (value, d) => {
      if (typeof value === 'string' && isProviderFile(value)) {
        const copies = providerFile(value, [path.dirname(file), ...bases], d + 1, true);
        if (new Set(copies.map((c) => stringify(c))).size > 1) throw new Refused(`${label(value)} (in ${file}): its copies in different folders differ, so which one promptfoo reads cannot be checked`);
        return copies[0];
      }
      if (Array.isArray(value)) return value.map((v) => nested(v, d));
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'id' ? v : nested(v, d)]));
      return value;
    };
    const loaded = nested(data, depth);
    if (whole) out.push(loaded);
    else out.push(...(Array.isArray(loaded) ? loaded.flat() : [loaded]));
  }
  return out;
}

// The providers a grader setting names, with where: one, or each of a map by kind ({text, embedding, …}).
function gradersIn(value, where) {
  if (value === undefined || value === null || value === '') return [];
  if (value && typeof value === 'object' && !Array.isArray(value) && !isLoadedProvider(value) && value.id === undefined) {
    return Object.entries(value).flatMap(([kind, v]) => gradersIn(v, `${where}.${kind}`));
  }
  return [[where, value]];
}

// Every grader and judge setting in a suite, as promptfoo reads its config: defaultTest's, each test's and
// each scenario test's options.provider, and each assertion's provider (assert-sets included).
//   [{where, spec, promptfoo}] — promptfoo: whether promptfoo's own graders may call it (an assertion that
//   is not one of the pack's entries, or a test grader such an assertion in its scope would use).
function suiteGraders(suite, isPackEntry) {
  const out = [];
  const d = suite && suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  const tests = [];
  (Array.isArray(suite && suite.tests) ? suite.tests : []).forEach((t, i) => tests.push([t, `tests[${i}]`]));
  (Array.isArray(suite && suite.scenarios) ? suite.scenarios : []).forEach((sc, i) => {
    (Array.isArray(sc && sc.tests) ? sc.tests : []).forEach((t, j) => tests.push([t, `scenarios[${i}].tests[${j}]`]));
  });
  // Whether a list of assertions holds one promptfoo grades itself, with the test's grader.
  const graded = (list) => (Array.isArray(list) ? list : []).some((a) => a && typeof a === 'object'
    && (a.type === 'assert-set' ? graded(a.assert) : !isPackEntry(a) && a.provider === undefined));
  const assertions = (list, where) => (Array.isArray(list) ? list : []).forEach((a, i) => {
    if (!a || typeof a !== 'object') return;
    if (a.type === 'assert-set') assertions(a.assert, `${where}[${i}].assert`);
    for (const [w, spec] of gradersIn(a.provider, `${where}[${i}].provider`)) out.push({ where: w, spec, promptfoo: !isPackEntry(a) });
  });
  const options = (t) => (t && typeof t === 'object' && t.options && typeof t.options === 'object' ? t.options : {});
  const dGraded = graded(d.assert) || tests.some(([t]) => !options(t).provider && graded(t && t.assert));
  for (const [w, spec] of gradersIn(options(d).provider, 'defaultTest.options.provider')) out.push({ where: w, spec, promptfoo: dGraded });
  assertions(d.assert, 'defaultTest.assert');
  for (const [t, where] of tests) {
    if (!t || typeof t !== 'object') continue;
    const own = graded(t.assert) || graded(d.assert);
    for (const [w, spec] of gradersIn(options(t).provider, `${where}.options.provider`)) out.push({ where: w, spec, promptfoo: own });
    assertions(t.assert, `${where}.assert`);
  }
  return out;
}

// The assertion types promptfoo grades with a model, calling its default grader when no provider is named:
// promptfoo 0.123.1's MODEL_GRADED_ASSERTION_TYPES (not exported), with g-eval, select-best and
// conversation-relevance, which call the same default grader (matchers' getDefaultProviders), and
// moderation and similar, which call its default moderation and embedding providers.
const MODEL_GRADED = new Set([
  'agent-rubric', 'answer-relevance', 'context-faithfulness', 'context-recall', 'context-relevance', 'factuality',
  'llm-rubric', 'model-graded-closedqa', 'model-graded-factuality', 'search-rubric', 'trajectory:goal-success',
  'g-eval', 'select-best', 'conversation-relevance', 'moderation', 'similar',
]);

// The first assertion promptfoo grades with its default grader (a model-graded type, no provider named by
// it, its test or defaultTest), as "<type> at <where>", or undefined.
function defaultGraded(suite) {
  const d = suite && suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  const named = (t) => Boolean(t && typeof t === 'object' && t.options && typeof t.options === 'object' && t.options.provider);
  if (named(d) || d.provider) return undefined;
  const first = (list, where) => {
    for (const [i, a] of (Array.isArray(list) ? list : []).entries()) {
      if (!a || typeof a !== 'object') continue;
      const found = a.type === 'assert-set' ? first(a.assert, `${where}[${i}].assert`)
        : MODEL_GRADED.has(String(a.type || '').replace(/^not-/, '')) && (a.provider === undefined || a.provider === null) ? `${a.type} at ${where}[${i}]` : undefined;
      if (found) return found;
    }
    return undefined;
  };
  const tests = [];
  (Array.isArray(suite && suite.tests) ? suite.tests : []).forEach((t, i) => tests.push([t, `tests[${i}]`]));
  (Array.isArray(suite && suite.scenarios) ? suite.scenarios : []).forEach((sc, i) => {
    (Array.isArray(sc && sc.tests) ? sc.tests : []).forEach((t, j) => tests.push([t, `scenarios[${i}].tests[${j}]`]));
  });
  if (!tests.some(([t]) => named(t))) {
    const found = first(d.assert, 'defaultTest.assert');
    if (found) return found;
  }
  for (const [t, where] of tests) {
    if (named(t)) continue;
    const found = first(t && t.assert, `${where}.assert`);
    if (found) return found;
  }
  return undefined;
}

// While the switch is set: one line for each judge or grader endpoint the suite's config names (the
// pack's rule, refuseEndpoints's, for promptfoo's own graders too), before any call. Else none.
function suiteRefusals(suite, isPackEntry) {
  if (!String(process.env[JUDGE_PROVIDER_ENV] || '').trim()) return [];
  const named = suiteGraders(suite, isPackEntry).flatMap(({ where, spec }) => namedEndpoints(spec, where));
  // The config's own `env:` block: promptfoo reads it before the process's environment (getEnvString), so
  // an endpoint setting there moves every provider that reads it — refused as a .env file's line is.
  let settings;
  try {
    settings = configEnv(suite);
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return [err.message];
  }
  const fromEnv = settings.filter(([, k, v]) => ENDPOINT_ENV.test(k) && v !== undefined && v !== null && String(v).trim())
    .map(([where, k, v]) => `env.${k} (${label(String(v))}) in ${where}: while $${JUDGE_PROVIDER_ENV} decides the judge, the config may not `
      + 'choose where its requests and your key go; delete it, or set the variable in your own environment');
  return [...new Set([...fromEnv, ...named.map(refusalOf)])];
}

// The assertion's own `provider`: promptfoo passes the assertion's config but not its provider, so it is
// found among the test's assertions by entry (any of the pack's entry files for this call, JavaScript or
// Python) and config. Two that disagree are an error.
function ownAssertionProvider(call, context) {
  const found = [];
  const config = stringify((context && context.config) || {});
  const entry = new RegExp(`(?:grounding\\.cjs:${call}|assertions/(?:grounding\\.py:${call}|${call}\\.py(?::get_assert)?))$`);
  const visit = (list) => {
    for (const a of Array.isArray(list) ? list : []) {
      if (!a || typeof a !== 'object') continue;
      if (a.type === 'assert-set') visit(a.assert);
      else if ((a.type === 'javascript' || a.type === 'python') && typeof a.value === 'string' && entry.test(a.value)
        && stringify(a.config || {}) === config && a.provider !== undefined) {
        found.push(a.provider);
      }
    }
  };
  visit(context && context.test && context.test.assert);
  const distinct = new Set(found.map((p) => stringify(describe(graderOf(p)) || null)));
  if (distinct.size > 1) return new Refused("the assertion's provider: two assertions with the same config name different providers");
  return found.length ? graderOf(found[0]) : undefined;
}

// What may be said about a provider outside this process: its id and endpoint settings, never its keys.
function describe(value) {
  if (value === undefined) return undefined;
  const id = providerIdOf(value);
  if (id === undefined) return { malformed: true, type: Array.isArray(value) ? 'array' : typeof value };
  const out = { id: label(id) };
  if (value && typeof value === 'object' && typeof value.label === 'string') out.label = label(value.label);
  return out;
}

function withDataset(choice, metadata, what) {
  if (!choice.id.includes('{dataset}')) return choice;
  const dataset = String((metadata && metadata.dataset) || '');
  if (!dataset) throw new Refused(`${what} ${JSON.stringify(label(choice.id))} names {dataset}, but the test has no metadata.dataset`);
  const id = choice.id.split('{dataset}').join(dataset);
  const held = typeof choice.held === 'string' ? id : isLoadedProvider(choice.held) ? choice.held : { ...choice.held, id };
  return { ...choice, id, held, dataset };
}

// Self-grading, allowed by the assertion (allow_self_grading: true) or for a whole run by the user
// (GROUNDING_EVAL_ALLOW_SELF_GRADING=1: how the methods document's own study, Sonnet 4.5 grading itself, is reproduced).
// The run-wide switch counts only from the user's own environment, never from a study's .env file.
function selfGradingAllowed(config) {
  if (config && config.allow_self_grading === true) return true;
  if (!/^(1|true|yes)$/i.test(String(process.env.GROUNDING_EVAL_ALLOW_SELF_GRADING || '').trim())) return false;
  return !envFileSettings().some(([, name]) => name === 'GROUNDING_EVAL_ALLOW_SELF_GRADING');
}

function refuseSelfGrading(choice, context, config) {
  if (choice.replay || selfGradingAllowed(config)) return;
  const underTest = context && context.provider;
  if (!underTest) return;
  const sameObject = isLoadedProvider(choice.held) && choice.held === underTest;
  const underId = providerIdOf(underTest);
  const ownConfig = choice.held && typeof choice.held === 'object' ? choice.held.config : undefined;
  const sameModel = underId !== undefined && underId === choice.id
    && stringify(endpointSettings(ownConfig)) === stringify(endpointSettings(underTest.config));
  if (sameObject || sameModel) {
    throw new Refused(
      `the judge ${JSON.stringify(label(choice.id))} (${choice.where}) is the model under test, which would grade its own `
      + 'answers (promptfoo #10581: defaultTest.provider sets the model under test, defaultTest.options.provider the '
      + 'grader); name another judge, or set allow_self_grading: true (GROUNDING_EVAL_ALLOW_SELF_GRADING=1 for a run)',
    );
  }
}

// Settings that decide where a provider sends its requests, and its key (OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
// AZURE_OPENAI_API_HOST, OLLAMA_HOST, *_ENDPOINT…), through which proxy, or whether their TLS is checked.
const ENDPOINT_ENV = /(?:_BASE_URL|_API_BASE|_API_BASE_URL|_API_HOST|_API_URL|_HOST|_ENDPOINT|_BASE_PATH|^(?:HTTPS?|ALL)_PROXY|^NODE_TLS_REJECT_UNAUTHORIZED)$/i;

// The .env files promptfoo read into this process: the one in the folder it runs in, and --env-file/--env-path.
// [file, overrides]: promptfoo's --env-file values replace the environment's, the folder's .env fills only gaps.
function envFilesRead() {
  const files = [[path.resolve(process.cwd(), '.env'), false]];
  const argv = process.argv;
  for (let i = 0; i < argv.length; i += 1) {
    const a = String(argv[i]);
    const given = a === '--env-file' || a === '--env-path' ? argv[i + 1] : /^--env-(?:file|path)=/.test(a) ? a.slice(a.indexOf('=') + 1) : undefined;
    for (const p of String(given || '').split(',').map((s) => s.trim()).filter(Boolean)) files.push([path.resolve(process.cwd(), p), true]);
  }
  return files;
}

// While the user's own choice decides the judge (the switch, or the command line's --judge), an endpoint
// setting this process took from a .env file — a received study's, read by promptfoo from the folder it runs
// in — is refused in one line naming the file and variable: it would send the user's key to the file's host.
// A variable counts as the file's unless the user set another value themselves: the folder's .env never
// overrides the user's own value (and one the environment lacks is filled in when promptfoo's library loads,
// perhaps after this check); --env-file always does.
function refuseEnvFileEndpoints() {
  const found = envFileSettings().find(([, name]) => ENDPOINT_ENV.test(name));
  if (found) {
    const [file, name, value] = found;
    throw new Refused(`${file} sets ${name} (${label(value)}): while $${JUDGE_PROVIDER_ENV} or --judge decides the judge, a .env file may not `
      + 'choose where its requests and your key go; delete the line, or set the variable in your own environment');
  }
}

// [file, name, value] for every non-empty setting this process took from a .env file (envFilesRead's rule: a
// variable counts as the file's unless the user set another value themselves), in file order; read once per
// set of files.
const envFileCache = new Map();
function envFileSettings() {
  const files = envFilesRead();
  const key = JSON.stringify(files);
  if (!envFileCache.has(key)) {
    const fs = require('node:fs');
    const taken = [];
    for (const [file, overrides] of files) {
      let text;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (_err) {
        continue; // no such file: nothing was read from it
      }
      const dotenv = require(require.resolve('dotenv', { paths: [path.dirname(require.resolve('promptfoo', { paths: [process.cwd(), __dirname] })), process.cwd(), __dirname] }));
      for (const [name, value] of Object.entries(dotenv.parse(text))) {
        const own = process.env[name];
        if (value.trim() && (overrides || own === undefined || own === value)) taken.push([file, name, value]);
      }
    }
    envFileCache.set(key, taken);
  }
  return envFileCache.get(key);
}

// The judges a pack call uses, as settings (not loaded): {judge, cheap} or a Refused error thrown.
//   call: a judge call of calls.json; context: promptfoo's assertion context (test, config, provider);
//   options.assertionProvider: the assertion's provider when the caller knows it (beforeAll);
//   options.override: the command line's own choice ({provider, base_url, cheap_provider, cheap_base_url}).
function chooseJudges(call, context, options = {}) {
  const config = context && context.config && typeof context.config === 'object' ? context.config : {};
  const test = context && context.test && typeof context.test === 'object' ? context.test : {};
  const metadata = test.metadata && typeof test.metadata === 'object' ? test.metadata : {};
  const override = options.override || {};
  const env = String(process.env[JUDGE_PROVIDER_ENV] || '').trim();
  const cheapEnv = String(process.env[CHEAP_PROVIDER_ENV] || '').trim();
  let judge;
  let judgeFromSwitch = false;
  if (override.provider) {
    judge = fromSetting(override.provider, '--judge');
    if (override.base_url) judge = withBaseUrl(judge, override.base_url, '--base-url');
  } else if (env) {
    judge = fromSetting(env, `$${JUDGE_PROVIDER_ENV}`);
    judgeFromSwitch = true;
    refuseEndpoints(call, config, context, options, override);
  } else {
    if (override.base_url) throw new Refused('--base-url needs --judge (the judge it is the endpoint of)');
    if (options.received) refuseReceivedEndpoints(call, config, context, options);
    const own = 'assertionProvider' in options ? options.assertionProvider : ownAssertionProvider(call, context);
    if (own instanceof Error) throw own;
    const fromAssertion = own !== undefined ? fromSetting(own, "the assertion's provider") : undefined;
    const fromConfig = config.provider ? fromSetting(config.provider, 'config.provider') : undefined;
    if (fromAssertion && fromConfig && fromAssertion.id !== fromConfig.id) {
      throw new Refused(`the assertion names two judges: provider ${JSON.stringify(label(fromAssertion.id))} and config.provider ${JSON.stringify(label(fromConfig.id))}; keep one`);
    }
    judge = fromAssertion || fromConfig;
    if (!judge) {
      const grader = graderOf(test.options && typeof test.options === 'object' ? test.options.provider : undefined);
      if (grader !== undefined) judge = fromSetting(grader, 'options.provider');
    }
    if (judge && config.base_url) judge = withBaseUrl(judge, config.base_url, 'config.base_url');
  }
  if (judgeFromSwitch || override.provider) refuseEnvFileEndpoints();
  if (!judge) {
    const hint = test.provider
      ? ' (defaultTest.provider sets the model under test, not the grader: use defaultTest.options.provider)'
      : '';
    throw new Refused(`no judge provider: set $${JUDGE_PROVIDER_ENV}, the assertion's provider, or defaultTest.options.provider / --grader (e.g. ${LIVE_JUDGE_EXAMPLE})${hint}`);
  }
  judge = withDataset(judge, metadata, 'judge provider');
  refuseSelfGrading(judge, context, config);
  let cheap;
  if (CALL_REGISTRY.calls[call] && CALL_REGISTRY.calls[call].cheap_judge) {
    let setting;
    let where;
    if (override.cheap_provider) [setting, where] = [override.cheap_provider, '--cheap-judge'];
    else if (cheapEnv) [setting, where] = [cheapEnv, `$${CHEAP_PROVIDER_ENV}`];
    else if (!judgeFromSwitch && !override.provider && config.cheap_provider) [setting, where] = [config.cheap_provider, 'config.cheap_provider'];
    if (setting !== undefined) {
      cheap = fromSetting(setting, where);
      const base = override.cheap_provider ? override.cheap_base_url : cheapEnv ? undefined : config.cheap_base_url;
      if (base) cheap = withBaseUrl(cheap, base, override.cheap_provider ? '--cheap-base-url' : 'config.cheap_base_url');
      cheap = withDataset(cheap, metadata, 'judge provider');
      refuseSelfGrading(cheap, context, config);
    }
  }
  return { judge, cheap };
}

// While the switch decides the judge, every judge or grader endpoint the config names is refused, never
// merged: the one rule, for a row's judges (here) and for the whole suite's graders (suiteRefusals).
function refusalOf([where, value]) {
  if (value instanceof Error) return `${value.message}; while $${JUDGE_PROVIDER_ENV} decides the judge and its endpoint, it is refused`;
  return `${where} names a judge endpoint (${label(typeof value === 'string' ? value : stringify(value))}) while `
    + `$${JUDGE_PROVIDER_ENV} decides the judge and its endpoint; it is refused, not merged: remove it, or unset the `
    + 'switch to use the judge the config names';
}

// Every judge endpoint a row's settings name, as [where, value] pairs.
function rowEndpoints(call, config, context, options, override) {
  const named = [];
  // A results file's relative `file://` judge is looked up beside the file too.
  const bases = fileBases(options.received && options.received.source ? [path.dirname(path.resolve(String(options.received.source)))] : []);
  if (config.base_url) named.push(['config.base_url', config.base_url]);
  if (config.cheap_base_url) named.push(['config.cheap_base_url', config.cheap_base_url]);
  if (override.base_url) named.push(['--base-url', override.base_url]);
  if (override.cheap_base_url && !override.cheap_provider) named.push(['--cheap-base-url', override.cheap_base_url]);
  if (config.provider) named.push(...namedEndpoints(graderOf(config.provider), 'config.provider', bases));
  if (config.cheap_provider) named.push(...namedEndpoints(graderOf(config.cheap_provider), 'config.cheap_provider', bases));
  const own = 'assertionProvider' in options ? options.assertionProvider : ownAssertionProvider(call, context);
  if (own !== undefined && !(own instanceof Error) && !isLoadedProvider(own)) named.push(...namedEndpoints(own, "the assertion's provider", bases));
  // The test's grader (defaultTest.options.provider, merged into each test by promptfoo): the switch
  // replaces it as the pack's judge, and refuses the endpoint it names rather than let it pass unseen.
  const test = context && context.test && typeof context.test === 'object' ? context.test : {};
  const grader = test.options && typeof test.options === 'object' ? test.options.provider : undefined;
  for (const [where, spec] of gradersIn(grader, 'options.provider')) named.push(...namedEndpoints(spec, where, bases));
  return named;
}

function refuseEndpoints(call, config, context, options, override) {
  const named = rowEndpoints(call, config, context, options, override);
  if (named.length) throw new Refused(refusalOf(named[0]));
}

// A row read from a results file (`rescore`; options.received = {source, allow}) is data, not a choice of
// where the user's key goes: an endpoint its judge settings name is not followed unless its host is one
// the user allowed (`rescore --allow-endpoint`) or a model provider's own API host (policy.yaml
// bundle.official_api_hosts, passed in `allow`; a leading dot: any subdomain).
function refuseReceivedEndpoints(call, config, context, options) {
  const { source, allow } = options.received;
  const allowed = (value) => {
    const host = hostOf(value);
    return Boolean(host) && (allow || []).some((a) => {
      const entry = String(a).toLowerCase();
      return host === entry || hostOf(entry) === host || (entry.startsWith('.') && host.split(':')[0].endsWith(entry));
    });
  };
  for (const [where, value] of rowEndpoints(call, config, context, options, {})) {
    if (typeof value === 'string' && allowed(value)) continue;
    if (value instanceof Error) throw new Refused(`${value.message} (the results file ${source}): not followed`);
    throw new Refused(
      `${where} names a judge endpoint (${label(typeof value === 'string' ? value : stringify(value))}) in the results `
      + `file ${source}: not followed (a results file is data, not a choice of where your key goes); to use it, `
      + 'pass --allow-endpoint with its host',
    );
  }
}

// A URL's (or host's) host and port, lower-cased, or undefined.
function hostOf(value) {
  try {
    const text = String(value).trim();
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).host.toLowerCase() || undefined;
  } catch (_err) {
    return undefined;
  }
}

// The pack's older setting: the provider's own apiBaseUrl, unless its config names one.
function withBaseUrl(choice, url, where) {
  if (choice.replay) throw new Refused(`${where} does not apply to a replay: judge (${label(choice.id)})`);
  if (isLoadedProvider(choice.held)) {
    throw new Refused(`${where} cannot change the provider promptfoo loaded (${label(choice.id)}); give the provider as {id, config: {apiBaseUrl}}`);
  }
  const held = typeof choice.held === 'string' ? { id: choice.held } : { ...choice.held };
  held.config = { apiBaseUrl: String(url), ...(held.config || {}) };
  return { ...choice, held };
}

// --- endpoints and secrets of a loaded provider -----------------------------------------------------------

function callMethod(provider, name) {
  try {
    return typeof provider[name] === 'function' ? provider[name]() : undefined;
  } catch (_err) {
    return undefined;
  }
}

const DEFAULT_ENDPOINTS = [
  [/^anthropic:/, () => process.env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com'],
  [/^openai:/, () => 'https://api.openai.com'],
  [/^ollama:/, () => process.env.OLLAMA_BASE_URL || 'http://localhost:11434'],
  [/^bedrock:/, (p) => `https://bedrock-runtime.${(p.config && p.config.region) || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1'}.amazonaws.com`],
  [/^vertex:/, (p) => `https://${(p.config && p.config.region) || process.env.VERTEX_REGION || 'us-central1'}-aiplatform.googleapis.com`],
  [/^(google|gemini):/, () => 'https://generativelanguage.googleapis.com'],
];

// The URL the provider sends its requests to, as far as it says (methods first, then its settings).
function endpointUrl(provider) {
  const config = (provider && provider.config) || {};
  const candidates = [callMethod(provider, 'getApiUrl'), callMethod(provider, 'getApiBaseUrl'), provider && provider.url,
    config.apiBaseUrl, config.baseUrl, config.url, config.apiHost, config.endpoint];
  for (const c of candidates) if (typeof c === 'string' && c.trim()) return c.trim();
  const id = providerIdOf(provider) || '';
  for (const [pattern, url] of DEFAULT_ENDPOINTS) if (pattern.test(id)) return url(provider);
  if (/^https?:\/\//i.test(id)) return id;
  return undefined;
}

// The endpoint's host (and port), never its userinfo; undefined when the provider does not say.
function endpointHost(provider) {
  const url = endpointUrl(provider);
  return url ? hostOf(url) : undefined;
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SIGNATURE/i;
const MIN_SECRET_CHARS = 8; // a value known only to come from somewhere secret-ish: shorter would match prose
const MIN_KEY_CHARS = 4; // a value the provider holds as a key
// Settings of the pack, promptfoo and the system whose values are never secrets (not scanned for).
const NOT_SECRET_ENV = /^(?:GROUNDING_EVAL_|PROMPTFOO_|npm_|NODE_|PYTHON|VIRTUAL_ENV$|PATH$|PWD$|OLDPWD$|HOME$|USER$|LOGNAME$|SHELL$|LANG$|LC_|TERM|TMPDIR$|TMP$|TEMP$|HOSTNAME$|SHLVL$|_$|INIT_CWD$|EDITOR$|PAGER$)/;
const ENV_REF = /(?:\benv\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([^'"]+)['"]\s*\])|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|process\.env\.([A-Za-z_][A-Za-z0-9_]*))/g;

// Every secret value a provider holds (see the file's header): the values to scrub from what it returns,
// and what makes beforeAll say where a key goes (keyHost). A value is a secret when it sits under a
// key-like name or in headers (at any depth: `auth: {value: …}`), in a URL's userinfo or query, or was
// taken from an environment variable whatever its name — in the config's objects and in a JSON body
// given as a string alike. `processKeys`: also the process's key-like variables, which promptfoo's
// providers may read (the scrubber's caution; not evidence that this provider sends one).
function secretsOf(provider, spec, { processKeys = true } = {}) {
  const found = new Set();
  const add = (value, min = MIN_SECRET_CHARS) => {
    if (typeof value !== 'string') return;
    const v = value.trim();
    if (v.length >= min) found.add(v);
    // "Bearer <token>", "Basic <creds>": each word of a secret value is one too.
    for (const word of v.split(/\s+/)) if (word.length >= MIN_SECRET_CHARS && word !== v) found.add(word);
  };
  const fromUrl = (value) => {
    if (typeof value !== 'string' || !/:\/\//.test(value)) return;
    let url;
    try {
      url = new URL(value);
    } catch (_err) {
      return;
    }
    for (const part of [url.username, url.password]) {
      if (part) {
        add(part, MIN_KEY_CHARS);
        add(safeDecode(part), MIN_KEY_CHARS);
      }
    }
    for (const [name, v] of url.searchParams) add(v, SECRET_NAME.test(name) ? MIN_KEY_CHARS : MIN_SECRET_CHARS);
  };
  const envValues = Object.entries(process.env).filter(([name, v]) => typeof v === 'string'
    && v.trim().length >= MIN_SECRET_CHARS && !NOT_SECRET_ENV.test(name));
  const strings = [];
  // under: 'headers' (every value a secret), 'named' (below a key-like name: values of secret length), ''.
  const visit = (value, name, under, depth) => {
    if (depth > 12 || value === null || value === undefined) return;
    if (typeof value === 'string') {
      if (name !== 'id') strings.push([name, value]);
      if (under === 'headers' || SECRET_NAME.test(name)) add(value, MIN_KEY_CHARS);
      else if (under === 'named') add(value, MIN_SECRET_CHARS);
      fromUrl(value);
      for (const m of value.matchAll(ENV_REF)) add(process.env[m[1] || m[2] || m[3] || m[4]], MIN_KEY_CHARS);
      const text = value.trim();
      if (/^[[{]/.test(text)) { // a body given as JSON text: its fields are settings too
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch (_err) {
          parsed = undefined;
        }
        if (parsed && typeof parsed === 'object') visit(parsed, name, under, depth + 1);
      }
      return;
    }
    if (typeof value !== 'object' || typeof value === 'function') return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, name, under, depth + 1);
      return;
    }
    for (const [k, v] of Object.entries(value)) {
      if (k === 'basePath') continue; // where the config sits on this machine, added by promptfoo
      const below = under === 'headers' || /^headers$/i.test(k) ? 'headers' : under || (SECRET_NAME.test(k) ? 'named' : '');
      visit(v, k, below, depth + 1);
    }
  };
  visit(spec, '', '', 0);
  if (provider && typeof provider === 'object') {
    visit(provider.config, '', '', 0);
    visit(provider.env, 'env', '', 0);
    for (const k of ['apiKey', 'token', 'url', 'apiHost', 'apiBaseUrl']) if (typeof provider[k] === 'string') visit(provider[k], k, '', 0);
    add(callMethod(provider, 'getApiKey'), MIN_KEY_CHARS);
    fromUrl(callMethod(provider, 'getApiUrl'));
    fromUrl(callMethod(provider, 'getApiBaseUrl'));
    fromUrl(providerIdOf(provider));
    const config = provider.config || {};
    if (typeof config.apiKeyEnvar === 'string') add(process.env[config.apiKeyEnvar], MIN_KEY_CHARS);
  }
  fromUrl(providerIdOf(spec));
  // A value taken from an environment variable, whatever its name, is a secret where the provider holds it.
  for (const [, value] of strings) {
    for (const [, v] of envValues) if (value.includes(v.trim())) add(v, MIN_SECRET_CHARS);
  }
  // And the process's key-like variables: promptfoo's providers read their keys from there.
  if (processKeys) for (const [name, v] of envValues) if (SECRET_NAME.test(name)) add(v, MIN_SECRET_CHARS);
  return [...found].sort((a, b) => b.length - a.length);
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch (_err) {
    return text;
  }
}

// --- the scrubber: a secret in every form a server echoes it (the same rules as grounding_eval/judge/_redact.py,
// held to one table, tests/golden/key_echoes.yaml) ------------------------------------------------------------
//
// Escapes by rule: the text is read through a view (decoded) in which every escape of a character — URL %XX
// (once or twice), JSON/JavaScript \uXXXX, \u{X}, \/, Python \xHH, \UXXXXXXXX, HTML numeric and named
// references, octal, CSS, %uXXXX — is decoded where it stands and the rest of it filled, so any mix of them is
// the key itself and a match in the view is a span of the text; zero-width characters, soft hyphens and terminal
// colour codes are fill and compatibility forms (fullwidth) folded (NFKC, one character for one). Whitespace anywhere inside the key, its hex or its base64 (a line
// break, an indent, JSON's \n), for a key of MIN_FORM_CHARS and more. Forms: the key in any case, without its
// vendor prefix segments, hex, base64 (any alignment), shortened with an ellipsis, and truncated once it shows
// TRUNCATED_MIN characters of its random part (a key written as one token). Literals, classes, bounded gaps and
// chains of optional groups that each start with a literal: one text matches a form in one way per length.

const REDACTED = '[REDACTED]';
const MIN_FORM_CHARS = 12; // shortest secret whose base64, hex, shortened, truncated and spread forms are looked for
const TRUNCATED_MIN = 12; // characters of a key's random part a truncated echo must show (_redact.TRUNCATED_MIN)
const FILL = '\x01'; // the rest of a decoded escape, in the view (a \x01 of the text is shown as \x02)
const GAP = String.raw`[\s\x01]{0,40}`; // between two characters of a form: a line break, an indent, an escape's fill
const HEX_GAP = String.raw`[\s\x01:-]{0,40}`;
const FILLS = '\\x01*';
const ELLIPSIS = `(?:…|\\.{2,}|\\*{2,})${FILLS}`;
const PREFIX_SEGMENT = /^[A-Za-z0-9]+[-_]/;
const ONE_TOKEN = /^[A-Za-z0-9._~+/=-]+$/;
// An escape of one character: URL %XX (once or twice) and Python's \xHH, one UTF-8 character's bytes each;
// JSON/JavaScript \uXXXX, \u{X}, \/; Python \UXXXXXXXX; HTML numeric and named references; JSON's \n \r \t.
function utf8Escape(lead) {
  const more = `${lead}[89abAB][0-9A-Fa-f]`;
  // longest first: "%25C3%25A9" is é encoded twice, not "%" and "C3"
  return `${lead}[fF][0-4](?:${more}){3}|${lead}[eE][0-9A-Fa-f](?:${more}){2}|${lead}[cdCD][0-9A-Fa-f]${more}|${lead}[0-7][0-9A-Fa-f]`;
}
// A terminal's control sequence (a colour: ESC [ 1 m), raw or with ESC escaped: it shows nothing, so the view
// holds only fill for it. First, so that "\x1b[" is not read as the byte \x1b and a "[". Then JavaScript's
// escape() %uXXXX, an octal \163 (three digits, 0-377) and CSS's \73 (ended by a space; \163 is octal).
const ANSI = String.raw`(?:\x1b|\\u001[bB]|\\x1[bB]|\\033|\\e)\[[0-9;?]{0,32}[ -/]{0,4}[@-~]`;
const ESCAPE_SOURCE = String.raw`(?=[%\\&\x01\x1b])(?:(${ANSI})|(${utf8Escape('%(?:25)?')}|${utf8Escape(String.raw`\\x`)})`
  + String.raw`|\\u[{]([0-9A-Fa-f]{1,6})[}]|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|%u([0-9A-Fa-f]{4})`
  + String.raw`|\\([0-3][0-7]{2})|\\([0-9A-Fa-f]{1,6})[ \t\n]|\\([nrt])|\\([/"'\\])`
  + String.raw`|&#[xX]([0-9A-Fa-f]{1,8});?|&#([0-9]{1,10});?|&([A-Za-z][A-Za-z0-9]{1,31};)|\x01)`;
// Found without captures (far faster in a long text), then read with them, once per distinct escape.
const ESCAPE = new RegExp(ESCAPE_SOURCE.replace(/\((?!\?)/g, '(?:'), 'g');
const ESCAPE_ONE = new RegExp(`^${ESCAPE_SOURCE}$`);
// HTML's named references for the characters up to U+00FF (the table _redact.py takes from html.entities).
const ENTITY_TABLE = [
  '9:Tab a:NewLine 21:excl 22:QUOT,quot 23:num 24:dollar 25:percnt 26:AMP,amp 27:apos 28:lpar 29:rpar ',
  '2a:ast,midast 2b:plus 2c:comma 2e:period 2f:sol 3a:colon 3b:semi 3c:LT,lt 3d:equals 3e:GT,gt 3f:quest ',
  '40:commat 5b:lbrack,lsqb 5c:bsol 5d:rbrack,rsqb 5e:Hat 5f:UnderBar,lowbar 60:DiacriticalGrave,grave ',
  '7b:lbrace,lcub 7c:VerticalLine,verbar,vert 7d:rbrace,rcub a0:NonBreakingSpace,nbsp a1:iexcl a2:cent a3:pound ',
  'a4:curren a5:yen a6:brvbar a7:sect a8:Dot,DoubleDot,die,uml a9:COPY,copy aa:ordf ab:laquo ac:not ad:shy ',
  'ae:REG,circledR,reg af:macr,strns b0:deg b1:PlusMinus,plusmn,pm b2:sup2 b3:sup3 b4:DiacriticalAcute,acute ',
  'b5:micro b6:para b7:CenterDot,centerdot,middot b8:Cedilla,cedil b9:sup1 ba:ordm bb:raquo bc:frac14 ',
  'bd:frac12,half be:frac34 bf:iquest c0:Agrave c1:Aacute c2:Acirc c3:Atilde c4:Auml c5:Aring,angst c6:AElig ',
  'c7:Ccedil c8:Egrave c9:Eacute ca:Ecirc cb:Euml cc:Igrave cd:Iacute ce:Icirc cf:Iuml d0:ETH d1:Ntilde d2:Ograve ',
  'd3:Oacute d4:Ocirc d5:Otilde d6:Ouml d7:times d8:Oslash d9:Ugrave da:Uacute db:Ucirc dc:Uuml dd:Yacute ',
  'de:THORN df:szlig e0:agrave e1:aacute e2:acirc e3:atilde e4:auml e5:aring e6:aelig e7:ccedil e8:egrave ',
  'e9:eacute ea:ecirc eb:euml ec:igrave ed:iacute ee:icirc ef:iuml f0:eth f1:ntilde f2:ograve f3:oacute f4:ocirc ',
  'f5:otilde f6:ouml f7:div,divide f8:oslash f9:ugrave fa:uacute fb:ucirc fc:uuml fd:yacute fe:thorn ff:yuml',
].join('');
const ENTITIES = new Map(ENTITY_TABLE.split(' ').flatMap((group) => {
  const [code, names] = group.split(':');
  return names.split(',').map((n) => [`${n};`, String.fromCharCode(parseInt(code, 16))]);
}));

function esc(text) {
  return String(text).replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

// One character's escaped UTF-8 bytes ("%41", "%2541", "\\x41", "%C3%A9"): the character, or '' if not UTF-8.
function decodeBytes(token) {
  const digits = [];
  for (let i = token.length; i > 0; i -= 1) if (i === token.length || token[i] === '%' || token[i] === '\\') digits.unshift(token.slice(i - 2, i));
  if (digits.length === 1) return String.fromCharCode(parseInt(digits[0], 16));
  try {
    return UTF8.decode(Uint8Array.from(digits.map((d) => parseInt(d, 16))));
  } catch (_err) {
    return '';
  }
}

// One escape, decoded: the character at the escape's first place, the rest filled ('' kept as written).
function decodeToken(token) {
  const m = ESCAPE_ONE.exec(token);
  if (!m || token === '\x01') return '\x02';
  const [, ansi, bytes, cp, u4, u8, pu, oct, css, ctl, lit, hx, dec, name] = m;
  let char = '';
  if (ansi) return FILL.repeat(token.length);
  if (bytes) char = decodeBytes(token);
  else if (ctl) char = { n: '\n', r: '\r', t: '\t' }[ctl];
  else if (lit) char = lit;
  else if (name) char = ENTITIES.get(name) || '';
  else if (u4 || pu) char = String.fromCharCode(parseInt(u4 || pu, 16));
  else {
    const code = parseInt(cp || u8 || css || oct || hx || dec, dec ? 10 : oct ? 8 : 16);
    char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
  }
  return char && char.length <= token.length ? char + FILL.repeat(token.length - char.length) : token;
}

// The same few escapes recur: each is decoded once.
const decodedTokens = new Map();
function decodeOnce(token) {
  let out = decodedTokens.get(token);
  if (out === undefined) {
    if (decodedTokens.size >= 4096) decodedTokens.clear();
    out = decodeToken(token);
    decodedTokens.set(token, out);
  }
  return out;
}

// Each character shown as another one (NFKC, one character for one: fullwidth ｓ is s, ſ is s, a mathematical
// bold 𝐬 is s) in the blocks that hold such forms, and each invisible one (a soft hyphen, a zero-width space or
// joiner, a word joiner, a BOM) as fill: the same table as _redact.py's _FOLD, built from the same blocks.
const INVISIBLE = '\u00ad\u200b\u200c\u200d\u2060\ufeff';
const FOLD_BLOCKS = [[0x80, 0x33ff], [0xfb00, 0xffef], [0x1d400, 0x1d7ff], [0x1f100, 0x1f1ff]];
const FOLD = new Map(Array.from(INVISIBLE, (c) => [c, FILL]));
for (const [low, high] of FOLD_BLOCKS) {
  for (let code = low; code <= high; code += 1) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const char = String.fromCodePoint(code);
    const folded = char.normalize('NFKC');
    // one character for one, as many UTF-16 units as the original (a folded astral character: its unit and fill)
    if (!FOLD.has(char) && folded !== char && Array.from(folded).length === 1 && folded.length <= char.length) {
      FOLD.set(char, folded + FILL.repeat(char.length - folded.length));
    }
  }
}
const FOLDED = new RegExp(`[${Array.from(FOLD.keys(), (c) => esc(c)).join('')}]`, 'gu');

// The text with each escape decoded at its first character and the rest of it filled, each invisible character
// and terminal control sequence filled and each compatibility form folded: the same length, each character at
// its own index, so a match in this view is a span of the text.
function decoded(text) {
  let view = /[%\\&\x01\x1b]/.test(text) ? text.replace(ESCAPE, decodeOnce) : text;
  if (/[^\x00-\x7f]/.test(view)) view = view.replace(FOLDED, (c) => FOLD.get(c));
  return view;
}

// A secret's characters as patterns over the view: a space of the key may come back as "+".
function atoms(text) {
  return Array.from(text).map((ch) => (/\s/.test(ch) ? '[\\s+]' : esc(ch)));
}

function cases(ch) {
  return /\s/.test(ch) ? [] : [...new Set([ch, ch.toLowerCase(), ch.toUpperCase()].filter((c) => Array.from(c).length === 1))];
}

// The key's UTF-8 bytes in hex, byte separators and line breaks allowed (\x escapes are decoded in the view).
function hexForms(secret) {
  const digits = Buffer.from(secret, 'utf8').toString('hex');
  return { regex: digits.split('').join(HEX_GAP) + FILLS, starts: cases(digits[0]) };
}

// base64 (or base64url) of the key alone, and where it starts 0, 1 or 2 bytes into a group, line breaks anywhere.
function base64Forms(bytes) {
  const form = (encoded, padded) => ({
    text: encoded,
    regex: encoded.split('').map((c) => ({ '+': '[+-]', '/': '[/_]' }[c] || c)).join(GAP)
      + (padded ? `(?:${GAP}=${FILLS}){0,2}` : FILLS),
    starts: { '+': ['+', '-'], '/': ['/', '_'] }[encoded[0]] || [encoded[0]],
  });
  const forms = [form(bytes.toString('base64').replace(/=+$/, ''), true)];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.floor((4 * offset + 2) / 3);
    const last = Math.floor((8 * (offset + bytes.length)) / 6);
    forms.push(form(encoded.slice(first, last), false));
  }
  return forms;
}

// Any proper prefix of the key (its atoms) with at least `minimum` characters, longest first, as a chain of
// optional groups that each start with a joint and a literal.
function prefixes(list, minimum, joint) {
  let tail = '';
  for (const atom of list.slice(minimum, -1).reverse()) tail = `(?:${joint}${atom}${tail})?`;
  return list.slice(0, minimum).join(joint) + tail;
}

function suffixes(list, minimum, joint) {
  const alts = [];
  for (let i = 1; i <= list.length - minimum; i += 1) alts.push(list.slice(i).join(joint));
  return `(?:${alts.join('|') || list.join(joint)})`;
}

// The key, and the key without each longer run of its leading prefix segments (the last: its random part).
function variants(secret) {
  const out = [secret];
  let rest = secret;
  let m;
  while ((m = rest.match(PREFIX_SEGMENT)) && Array.from(rest).length - m[0].length >= MIN_FORM_CHARS) {
    rest = rest.slice(m[0].length);
    out.push(rest);
  }
  return out;
}

// The key cut short once it shows TRUNCATED_MIN characters of its random part, with or without any run of its
// vendor prefix segments; only for a key written as one token (a URL's or a phrase's beginning is ordinary text).
function truncated(key, core) {
  if (!ONE_TOKEN.test(key) || Array.from(core).length <= TRUNCATED_MIN) return [];
  let vendor = '';
  const starts = cases(core[0]);
  for (const segment of key.slice(0, key.length - core.length).match(/[A-Za-z0-9]+[-_]/g) || []) {
    vendor = `(?:${vendor}${atoms(segment).join(GAP)}${GAP})?`;
    starts.push(...cases(segment[0])); // the chain may start at any segment
  }
  return [{ regex: vendor + prefixes(atoms(core), TRUNCATED_MIN, GAP) + FILLS, starts }];
}

function union(forms, flags) {
  if (!forms.length) return undefined;
  const alternatives = forms.map((f) => f.regex).join('|');
  if (forms.some((f) => !f.starts.length)) return new RegExp(alternatives, flags);
  // One look at the next character before the alternatives: else every position tries each form.
  const starts = [...new Set(forms.flatMap((f) => f.starts))].sort().map(esc).join('');
  return new RegExp(`(?=[${starts}])(?:${alternatives})`, flags);
}

// The views a group's needles are looked for in: the text's decoded view with its gaps taken out (and a "+",
// which may stand for a key's space), case folded ('L'); with byte separators too, for hex ('H'); with the
// two base64 alphabets made one ('B'). A match of a form holds its needle in that view, so a form whose
// needles are all absent cannot match: it is not run (a reply is seldom near any of the user's keys).
const VIEWS = {
  L: (view) => view.replace(/[\s\x01+]+/g, '').toLowerCase(),
  H: (view) => view.replace(/[\s\x01:-]+/g, '').toLowerCase(),
  B: (view) => view.replace(/[\s\x01]+/g, '').split('-').join('+').split('_').join('/'),
  E: (view) => (/…|\.\.|\*\*/.test(view) ? 'ellipsis' : ''), // whether there is one: the shortened forms need it
};
const NEEDLE_CHARS = 6;

function needle(kind, text) {
  const folded = VIEWS[kind](text);
  return folded.length >= 3 ? [kind, folded.slice(0, NEEDLE_CHARS)] : undefined;
}

// A secret's forms in groups, each with the needles one of which (every needle of an entry) a match holds.
function groups(secret) {
  const key = decoded(String(secret)).split(FILL).join('');
  if (!key) return [];
  const long = Array.from(key).length >= MIN_FORM_CHARS;
  const joint = long ? GAP : FILLS;
  const all = variants(key);
  const core = all[all.length - 1];
  const gate = (...entries) => (entries.every((e) => e.every(Boolean)) ? entries : undefined); // else always run
  // The key first, then each prefix-stripped rest, longest first; a truncated key last. Each holds the start of
  // the random part (a truncated one shows 12 characters of it).
  const main = all.map((v) => ({ regex: atoms(v).join(joint) + FILLS, starts: cases(Array.from(v)[0]) }));
  if (long) main.push(...truncated(key, core));
  const out = [{ forms: main, flags: 'gi', gate: gate([needle('L', Array.from(core).slice(0, 12).join(''))]) }];
  if (!long) return out;
  const shortened = [];
  const entries = [];
  for (const v of all) {
    const list = atoms(v);
    const starts = cases(Array.from(v)[0]);
    // (the last characters as written: a shortened echo seldom escapes them, and their n² alternatives stay small)
    shortened.push({ regex: `${prefixes(list, 3, FILLS)}${ELLIPSIS}${suffixes(list, 3, '')}`, starts });
    shortened.push({ regex: `${prefixes(list, 8, FILLS)}${ELLIPSIS}`, starts });
    const chars = Array.from(v);
    // every suffix of 3 or more characters ends with the last 3
    entries.push([needle('L', chars.slice(0, 3).join('')), needle('L', chars.slice(-3).join('')), ['E', 'ellipsis']], [needle('L', chars.slice(0, 8).join('')), ['E', 'ellipsis']]);
  }
  out.push({ forms: shortened, flags: 'gi', gate: gate(...entries) });
  out.push({ forms: all.map(hexForms), flags: 'gi', gate: gate([needle('H', Buffer.from(core, 'utf8').subarray(0, 3).toString('hex'))]) });
  const b64 = all.flatMap((v) => base64Forms(Buffer.from(v, 'utf8')));
  out.push({ forms: b64, flags: 'g', gate: gate(...b64.map((f) => [needle('B', f.text.slice(Math.max(0, (f.text.length >> 1) - 3)))])) });
  return out;
}

// One function that replaces every form of every secret in a string (or in the strings of a value).
function scrubber(secrets) {
  const all = secrets.flatMap(groups).map((g) => ({ ...g, pattern: union(g.forms, g.flags) })).filter((g) => g.pattern);
  const scrubText = (text) => {
    if (!all.length) return text;
    const view = decoded(text);
    const folded = {};
    const has = ([kind, piece]) => (folded[kind] === undefined ? (folded[kind] = VIEWS[kind](view)) : folded[kind]).includes(piece);
    const found = [];
    for (const g of all) {
      if (g.gate && !g.gate.some((entry) => entry.every(has))) continue;
      for (const m of view.matchAll(g.pattern)) if (m[0].length) found.push([m.index, m.index + m[0].length]);
    }
    if (!found.length) return text;
    found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let out = '';
    let at = 0;
    let cur;
    for (const span of found) {
      if (cur && span[0] <= cur[1]) cur[1] = Math.max(cur[1], span[1]);
      else {
        if (cur) { out += text.slice(at, cur[0]) + REDACTED; at = cur[1]; }
        cur = [...span];
      }
    }
    out += text.slice(at, cur[0]) + REDACTED;
    return out + text.slice(cur[1]);
  };
  const scrub = (value) => {
    if (typeof value === 'string') return scrubText(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), scrub(v)]));
    }
    return value;
  };
  return scrub;
}

// --- the judges this process holds: a reference each, their providers loaded once --------------------------

let promptfooLibrary;
let givenPromptfoo; // the host's --promptfoo DIR: the promptfoo its starter runs under (grounding_eval/judge/host.py)

// The promptfoo package folder a file of it lies in (a few levels up), or undefined.
function promptfooPackageOf(file) {
  const fs = require('node:fs');
  let dir;
  try {
    dir = path.dirname(fs.realpathSync(file));
  } catch (_err) {
    return undefined;
  }
  for (let up = 0; up < 4; up += 1, dir = path.dirname(dir)) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === 'promptfoo') return dir;
    } catch (_err) {
      // not a package folder: look higher
    }
  }
  return undefined;
}

// The promptfoo package whose CLI runs this process (`promptfoo eval`: its entrypoint is argv[1]), or
// undefined (the host process, a test calling this file from `node -e`).
function runningPromptfoo() {
  return process.argv[1] ? promptfooPackageOf(process.argv[1]) : undefined;
}

// The promptfoo library the judges load providers with: the one the host was told to use (the promptfoo
// a `type: python` entry runs under), else the promptfoo whose CLI runs this process (inside an eval),
// else the pack's own (its node_modules, found from this file). Never the current folder's: a study
// folder you received may ship its own node_modules (docs/explanation/security.md).
function promptfooPackage() {
  if (givenPromptfoo) return givenPromptfoo;
  const running = runningPromptfoo();
  if (running) return running;
  try {
    return promptfooPackageOf(require.resolve('promptfoo', { paths: [__dirname] }));
  } catch (_err) {
    return undefined;
  }
}

// The pinned promptfoo as a library, loaded once, its cache off: the pack keeps its own reply cache, and
// the library's copy is not the CLI's (DESIGN.md).
function promptfoo() {
  if (!promptfooLibrary) {
    promptfooLibrary = (async () => {
      const where = promptfooPackage();
      if (!where) {
        throw new Error(`no promptfoo is installed with the pack (${path.dirname(__dirname)}): npm install there, or set GROUNDING_EVAL_PROMPTFOO to the promptfoo package folder to use`);
      }
      const { pathToFileURL } = require('node:url');
      const pkg = JSON.parse(require('node:fs').readFileSync(path.join(where, 'package.json'), 'utf8'));
      const entry = (pkg.exports && pkg.exports['.'] && pkg.exports['.'].import) || pkg.main;
      const library = await import(pathToFileURL(path.join(where, entry)).href);
      const api = library.loadApiProvider ? library : library.default;
      if (api.cache && typeof api.cache.disableCache === 'function') api.cache.disableCache();
      return api;
    })();
    promptfooLibrary.catch(() => { promptfooLibrary = undefined; });
  }
  return promptfooLibrary;
}

const REGISTRY_KEY = Symbol.for('grounding-eval.judges');

function registry() {
  if (!globalThis[REGISTRY_KEY]) globalThis[REGISTRY_KEY] = { byRef: new Map(), byObject: new WeakMap(), next: 1 };
  return globalThis[REGISTRY_KEY];
}

// A reference for a judge: one per provider object promptfoo holds, one per distinct spec otherwise.
function register(choice) {
  const reg = registry();
  let ref;
  if (isLoadedProvider(choice.held)) {
    ref = reg.byObject.get(choice.held);
    if (!ref) {
      ref = `p${reg.next++}`;
      reg.byObject.set(choice.held, ref);
    }
  } else {
    ref = `s${sha256(stringify(canonical(choice.held))).slice(0, 24)}`;
  }
  if (!reg.byRef.has(ref)) reg.byRef.set(ref, { held: choice.held, id: choice.id, loading: undefined });
  return ref;
}

// Loading a provider runs its module (a `file://` provider's own code): one that never settles must not
// hold beforeAll or a row. The bound: PROVIDER_LOAD_DEADLINE_S, or GROUNDING_EVAL_CALL_TIMEOUT when lower.
const PROVIDER_LOAD_DEADLINE_S = DEADLINES.provider_load_s;

function providerLoadDeadlineS() {
  const fromEnv = envDeadlineS();
  return typeof fromEnv === 'number' ? Math.min(fromEnv, PROVIDER_LOAD_DEADLINE_S) : PROVIDER_LOAD_DEADLINE_S;
}

// `promise`, or a rejection with `message` once `seconds` have passed (the timer never outlives it).
function withinDeadline(promise, seconds, message) {
  let timer;
  const late = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), seconds * 1000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// The judge's provider, loaded (once), with its endpoint host, scrubber and cache digest.
function loaded(ref) {
  const entry = registry().byRef.get(ref);
  if (!entry) return Promise.reject(new Error(`no judge provider is known by the reference ${JSON.stringify(ref)}`));
  if (!entry.loading) {
    entry.loading = (async () => {
      let provider = entry.held;
      if (!isLoadedProvider(provider)) {
        const { loadApiProvider } = await promptfoo();
        const options = typeof provider === 'string' ? {} : { ...provider };
        const id = typeof provider === 'string' ? provider : provider.id;
        const seconds = providerLoadDeadlineS();
        try {
          provider = await withinDeadline(
            loadApiProvider(id, { options, basePath: process.cwd() }),
            seconds,
            `the provider did not load within ${seconds} s`,
          );
        } catch (err) {
          // promptfoo's message may quote the provider's settings: scrubbed as its replies are
          throw new Error(scrubber(secretsOf(undefined, entry.held))(oneLine((err && err.message) || err)));
        }
      }
      const secrets = secretsOf(provider, entry.held);
      const scrub = scrubber(secrets);
      const spec = isLoadedProvider(entry.held)
        ? { id: providerIdOf(entry.held), config: entry.held.config }
        : entry.held;
      // The reply cache's key: the provider with every secret replaced (another key, the same judge), and
      // the endpoint it asks, wherever that was set (a setting in the environment too): a reply from one
      // host never answers for another.
      const asked = scrub(endpointUrl(provider) || null);
      const digest = sha256(stringify(canonical({ spec: scrub(JSON.parse(stringify(spec) || 'null')), endpoint: asked })));
      return { provider, scrub, host: endpointHost(provider) || null, digest, hasKey: secrets.length > 0 };
    })();
    entry.loading.catch(() => { entry.loading = undefined; }); // a failed load is not remembered
  }
  return entry.loading;
}

// What Python is told about a judge: a reference, a label, the endpoint host, a digest — no secret.
async function described(choice) {
  if (choice.replay) {
    const out = { id: choice.id, use: 'replay', path: choice.id.slice('replay:'.length), where: choice.where };
    if (choice.dataset) out.dataset = choice.dataset;
    return out;
  }
  const ref = register(choice);
  let held;
  try {
    held = await loaded(ref);
  } catch (err) {
    throw new Refused(`judge provider ${label(choice.id)} (${choice.where}): ${oneLine((err && err.message) || err)}`);
  }
  // key_host: where the provider sends an API key, if it holds one (the command line's key-host lines).
  const keyTo = keyHost(held.provider) || null;
  return { id: label(choice.id), use: 'live', ref, host: held.host, key_host: keyTo, digest: held.digest, where: choice.where };
}

// The judges of a pack call, as Python receives them: {judge, cheap} or {error} (one line).
async function resolveJudges(call, context, options = {}) {
  try {
    const { judge, cheap } = chooseJudges(call, context, options);
    return { protocol: 2, judge: await described(judge), cheap: cheap ? await described(cheap) : null };
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return { protocol: 2, error: err.message };
  }
}

// The context a judge call is forwarded to Python with: its judges resolved, and no provider object or
// setting that could hold a key (the test's grader, the assertions' providers, the model under test).
function forwarded(context, judges) {
  if (!context || typeof context !== 'object') return context;
  const test = context.test && typeof context.test === 'object' ? context.test : undefined;
  const out = { ...context };
  if (judges !== undefined) out.grounding_eval_judges = judges;
  if (context && context.provider !== undefined) out.provider = describe(context.provider);
  if (context && context.config && typeof context.config === 'object') {
    const config = { ...context.config };
    for (const k of ['provider', 'cheap_provider']) if (config[k] !== undefined) config[k] = describe(graderOf(config[k]));
    out.config = config;
  }
  if (test) {
    const copy = { ...test };
    if (test.options && typeof test.options === 'object' && test.options.provider !== undefined) {
      copy.options = { ...test.options, provider: describe(graderOf(test.options.provider)) };
    }
    if (test.provider !== undefined) copy.provider = describe(graderOf(test.provider));
    const strip = (list) => (Array.isArray(list) ? list.map((a) => {
      if (!a || typeof a !== 'object') return a;
      const b = { ...a };
      if (b.provider !== undefined) b.provider = describe(graderOf(b.provider));
      if (b.type === 'assert-set') b.assert = strip(b.assert);
      return b;
    }) : list);
    copy.assert = strip(test.assert);
    out.test = copy;
  }
  return out;
}

function chatPrompt(ask) {
  // promptfoo's chat providers read a JSON list of messages (as its own llm-rubric sends them).
  if (!ask.system) return String(ask.prompt);
  return JSON.stringify([
    { role: 'system', content: String(ask.system) },
    { role: 'user', content: String(ask.prompt) },
  ]);
}

function modelDeadlineS(ask) {
  const s = Number(ask.deadline_s);
  return Number.isFinite(s) && s > 0 ? Math.min(s, MAX_DEADLINE_S) : MODEL_CALL_DEFAULT_S;
}

// One model call a Python judge asked for: the reply scrubbed, or {error} (scrubbed, one line). Never throws.
async function modelCall(ask) {
  const request = ask && typeof ask === 'object' ? ask : {};
  const seconds = modelDeadlineS(request);
  const abort = new AbortController();
  let timer;
  let scrub = (text) => text;
  try {
    const held = await loaded(String(request.ref));
    scrub = held.scrub;
    const late = new Promise((_resolve, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new Error(`the judge provider did not answer within ${seconds} s`));
      }, seconds * 1000);
    });
    const prompt = chatPrompt(request);
    const context = { prompt: { raw: prompt, label: 'grounding-eval judge' }, vars: {} };
    const response = await Promise.race([held.provider.callApi(prompt, context, { abortSignal: abort.signal }), late]);
    if (!response || typeof response !== 'object') throw new Error('the provider returned no response');
    if (response.error) throw new Error(String(response.error));
    const output = response.output;
    if (output === undefined || output === null) throw new Error('the provider returned no output');
    return {
      output: scrub(typeof output === 'string' ? output : JSON.stringify(output)),
      token_usage: response.tokenUsage || null,
      cost: typeof response.cost === 'number' && Number.isFinite(response.cost) ? response.cost : null,
      host: held.host,
    };
  } catch (err) {
    return { error: scrub(oneLine((err && err.message) || err)) || 'the model call failed' };
  } finally {
    clearTimeout(timer);
  }
}

// beforeAll's look at a resolved live judge: loaded, and its key set. A problem as one line, else undefined.
async function checkJudge(described) {
  if (!described || described.use !== 'live') return undefined;
  try {
    const { provider } = await loaded(described.ref);
    if (callMethod(provider, 'requiresApiKey') && !callMethod(provider, 'getApiKey')) {
      return `judge provider ${described.id} (${described.where}): its API key is not set`;
    }
  } catch (err) {
    return `judge provider ${described.id} (${described.where}): ${oneLine((err && err.message) || err)}`;
  }
  return undefined;
}

// Where a provider sends a key, if it holds one: its host, else undefined. What it holds is what the
// scrubber scrubs (secretsOf), but the process's key-like variables it may never read.
function keyHost(provider) {
  if (!isLoadedProvider(provider)) return undefined;
  const holds = Boolean(callMethod(provider, 'getApiKey')) || secretsOf(provider, undefined, { processKeys: false }).length > 0;
  return holds ? endpointHost(provider) || 'an endpoint the provider does not name' : undefined;
}

// The lines beforeAll prints before any model is called: one per provider that will receive a key — the
// generation providers, the pack's judges, and the graders promptfoo's own assertions use (suiteGraders).
async function keyLines(suite, judges, isPackEntry = () => false) {
  const lines = new Set();
  for (const p of Array.isArray(suite && suite.providers) ? suite.providers : []) {
    const host = keyHost(p);
    if (host) lines.add(`grounding-eval: API key sent to ${host} (generation: ${label(providerIdOf(p) || 'provider')})`);
  }
  for (const j of judges) {
    if (j && j.use === 'live' && j.key_host) lines.add(`grounding-eval: API key sent to ${j.key_host} (judge: ${j.id})`);
  }
  // A provider named by a setting (not loaded yet): loaded as promptfoo loads it, and its key host said.
  const said = new Set();
  const settingLine = async (spec, where, role) => {
    if (isLoadedProvider(spec)) {
      const host = keyHost(spec);
      if (host) lines.add(`grounding-eval: API key sent to ${host} (${role}: ${label(providerIdOf(spec) || 'provider')})`);
      return;
    }
    let choice;
    try {
      choice = fromSetting(spec, where);
    } catch (err) {
      lines.add(`grounding-eval: cannot tell where the ${role} ${where} sends a key: ${err.message}`);
      return;
    }
    if (choice.replay || said.has(stringify(choice.held))) return; // recordings: no model, no key
    said.add(stringify(choice.held));
    try {
      const host = keyHost((await loaded(register(choice))).provider);
      if (host) lines.add(`grounding-eval: API key sent to ${host} (${role}: ${label(choice.id)})`);
    } catch (err) {
      lines.add(`grounding-eval: the ${role} ${label(choice.id)} (${where}) did not load here, so where it sends a key is not known: ${oneLine((err && err.message) || err)}`);
    }
  };
  for (const { where, spec, promptfoo: used } of suiteGraders(suite, isPackEntry)) {
    if (used) await settingLine(spec, where, 'grader');
  }
  // A model under test named per test (defaultTest.provider, a test's provider): generation too.
  const d = suite && suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  if (d.provider) await settingLine(d.provider, 'defaultTest.provider', 'generation');
  const tests = Array.isArray(suite && suite.tests) ? suite.tests : [];
  for (let i = 0; i < tests.length; i += 1) {
    if (tests[i] && typeof tests[i] === 'object' && tests[i].provider) await settingLine(tests[i].provider, `tests[${i}].provider`, 'generation');
  }
  // promptfoo's default grader: which provider it is, promptfoo decides from the keys set; where it is
  // served, from the endpoint settings in the config's env block or the environment.
  const graded = defaultGraded(suite);
  if (graded) {
    let where;
    try {
      const set = configEnv(suite).find(([, k, v]) => ENDPOINT_ENV.test(k) && String(v || '').trim());
      where = set ? `${hostOf(set[2]) || label(String(set[2]))} (${set[0]} sets ${set[1]})`
        : 'the endpoint your environment sets for that provider, else its own API host';
    } catch (err) {
      where = `an endpoint not known here (${oneLine(err.message)})`;
    }
    lines.add(`grounding-eval: API key sent to promptfoo's default grader for ${graded}, no grader named: promptfoo picks it from the keys you set, at ${where}`);
  }
  return [...lines];
}

// --- the host process: JSON lines on stdin/stdout --------------------------------------------------------

function serve() {
  const fs = require('node:fs');
  const send = (message) => fs.writeSync(1, `${stringify(message)}\n`);
  // Only protocol lines on the real stdout: whatever promptfoo's library logs goes to stderr.
  process.stdout.write = process.stderr.write.bind(process.stderr);
  for (const name of ['log', 'info', 'debug']) console[name] = console.error; // eslint-disable-line no-console
  let buffer = '';
  let pending = 0;
  let ended = false;
  const finish = () => { if (ended && pending === 0) process.exit(0); };
  const answer = async (line) => {
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      send({ id: null, error: `not JSON: ${err.message}` });
      return;
    }
    const id = request && request.id;
    try {
      if (request.resolve) {
        const r = request.resolve;
        const options = {};
        if (r.override) options.override = r.override;
        if (r.received) options.received = r.received; // a results file's row (rescore)
        const judges = await resolveJudges(String(r.call), r.context || {}, options);
        // The command line checks its judges' keys before any call, as beforeAll does for an eval.
        for (const j of r.check && !judges.error ? [judges.judge, judges.cheap] : []) {
          const problem = await checkJudge(j);
          if (problem) {
            send({ id, judges: { protocol: 2, error: problem } });
            return;
          }
        }
        send({ id, judges });
      } else if (request.model) {
        send({ id, ...(await modelCall(request.model)) });
      } else {
        send({ id, error: 'unknown request' });
      }
    } catch (err) {
      send({ id, error: oneLine((err && err.message) || err) });
    }
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    let cut;
    while ((cut = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      if (!line.trim()) continue;
      pending += 1;
      answer(line).finally(() => { pending -= 1; finish(); });
    }
  });
  process.stdin.on('end', () => { ended = true; finish(); });
  send({ ready: 2, pid: process.pid, node: process.version });
}

module.exports = {
  CALL_REGISTRY,
  MAX_DEADLINE_S,
  worstCaseSeconds,
  envDeadlineS,
  JUDGE_PROVIDER_ENV,
  CHEAP_PROVIDER_ENV,
  stringify,
  label,
  isLoadedProvider,
  providerIdOf,
  graderOf,
  describe,
  ownAssertionProvider,
  chooseJudges,
  resolveJudges,
  forwarded,
  modelCall,
  checkJudge,
  keyLines,
  suiteGraders,
  suiteRefusals,
  endpointHost,
  secretsOf,
  scrubber,
  decoded,
  ENTITIES,
  ENDPOINT_ENV,
  promptfoo,
  runningPromptfoo,
};

if (require.main === module) {
  if (process.argv.includes('--serve')) {
    const at = process.argv.indexOf('--promptfoo');
    if (at > 0 && process.argv[at + 1]) givenPromptfoo = path.resolve(process.argv[at + 1]);
    serve();
  }
  else {
    process.stderr.write(`usage: node ${path.basename(__filename)} --serve [--promptfoo DIR] (JSON lines on stdin/stdout; see grounding_eval/judge/host.py)\n`);
    process.exit(2);
  }
}
