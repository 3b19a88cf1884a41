// promptfoo entry points that grade in a warm Python: `type: javascript` assertions
// (file://assertions/grounding.cjs:verifier, :judge, :factuality, :docs_qa) and scoring functions
// (assertScoringFunction: file://assertions/grounding.cjs:round1, :round2b, :round3).
//
// promptfoo starts a fresh Python process for every `type: python` call (about 50 ms each before any
// of our code runs); JavaScript entries run inside promptfoo's Node process. These forward each call,
// with promptfoo's own arguments, to a pool of long-lived Python workers
// (`python -m grounding_eval.promptfoo.worker`), which grade with exactly the functions the Python
// entry file (assertions/grounding.py, and its older aliases verifier.py, judge.py, …) calls. Same GradingResult either way.
//
// Lifetime: workers are started on first use, read requests from a pipe this process holds, and exit
// when it closes (promptfoo ended, crashed or was killed) or after GROUNDING_EVAL_WORKER_IDLE seconds
// without a request (default 120). No socket, no file.
// Python: $PROMPTFOO_PYTHON (as promptfoo itself uses), else `python3`.
// Pool size: $GROUNDING_EVAL_WORKERS (default 4, promptfoo's default concurrency), each one call at a time.
// If no worker can be started or kept, a call is graded in a one-off Python process
// (`--once`), and its reason says so: never a silent change of what graded the row.
// Deadline: a worker (or one-off process) that has not answered a call within
// $GROUNDING_EVAL_CALL_TIMEOUT seconds is killed (SIGKILL: a stopped process ignores SIGTERM) and
// replaced, and that row gets an explicit ERROR / UNSCORED result saying so; calls on other workers go
// on, and the eval always finishes. Default: the slowest legitimate call, see defaultDeadlineS().
// Signs of life: that deadline is far too long to wait on a worker that has stopped (SIGSTOP, a C call
// holding its interpreter, a machine swapping it out). A worker writes a heartbeat line every
// HEARTBEAT_S from a thread of its own (`--heartbeat`); one that has a call and writes nothing for
// $GROUNDING_EVAL_WORKER_STALL seconds (default 15) is killed and replaced whatever the call, the call it
// was on is unscored as a worker failure (metadata.worker_failure), the calls queued behind it go to
// another worker. A worker still stopped when promptfoo exits is killed then.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

// Which model judges, at which endpoint, with which secrets: decided there, for every entry and the CLI.
const judges = require('./judges.cjs');

const { stringify } = judges; // promptfoo's own serialization for Python calls

// The pack's calls, their failure prefixes and deadlines (assertions/calls.json, grounding_eval/calls.py).
const CALLS = judges.CALL_REGISTRY.calls;
const DEADLINES = judges.CALL_REGISTRY.deadlines;
const namesWhere = (test) => Object.keys(CALLS).filter((name) => test(CALLS[name]));
const ASSERTION_CALLS = namesWhere((c) => c.kind === 'assertion');
const SCORING_CALLS = namesWhere((c) => c.kind === 'scoring');

// Where the pack's data is: this file's repository when it sits in a checkout (assertions/ beside
// grounding_eval/), else the grounding-eval installed in that Python (a study made by
// `grounding-eval init`), asked once: grounding_eval.resources.pack_root().
const CHECKOUT = path.resolve(__dirname, '..');
// (A checkout has its pyproject.toml: a `grounding_eval/` planted in a study folder does not make it one.)
const IN_CHECKOUT = ['grounding_eval/__init__.py', 'pyproject.toml'].every((f) => fs.existsSync(path.join(CHECKOUT, f)));
let installedRoot;

function packRoot() {
  if (IN_CHECKOUT) return CHECKOUT;
  if (installedRoot === undefined) {
    const ask = 'from grounding_eval.resources import pack_root; print(pack_root())';
    try {
      installedRoot = execFileSync(python(), ['-P', '-c', ask], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (err) {
      const said = `${err.stderr || err.message}`.trim().split('\n').pop();
      installedRoot = new Error(`grounding-eval is not installed in ${python()}: ${said}`);
    }
  }
  if (installedRoot instanceof Error) throw installedRoot;
  return installedRoot;
}
const READY_TIMEOUT_MS = DEADLINES.worker_ready_s * 1000;
const STATE_KEY = Symbol.for('grounding-eval.worker-pool');

function python() {
  return process.env.PROMPTFOO_PYTHON || 'python3';
}
// Every Python process the pack starts runs with -P (Python >= 3.11, as the pack requires): the study
// folder it runs in is not put on sys.path, so a `grounding_eval/` or `yaml.py` planted there cannot
// shadow the installed pack or a library (docs/explanation/security.md, "A study you received").

// promptfoo's default concurrency: a live judge call waits on the network, so a worker per concurrent
// call, not per CPU (measured with recorded replies on 2 cores: 4 workers no slower than 2).
const DEFAULT_WORKERS = 4;

// The slowest legitimate call is a factual-accuracy judgment: up to 3 model calls (cheap judge, capable
// judge, its repair retry; the rubric judge makes 2), each bounded by the judge client's own deadline,
// (max_retries + 1) × timeout + max_retries × backoff_max (judges.worstCaseSeconds), with the assertion's
// timeout / max_retries (defaults 120 s and 4, backoff_max 30 s): 3 × 720 + 60 s of margin = 2220 s. A
// verifier or composite call is far below it. The numbers: assertions/calls.json `deadlines`.
const { MAX_DEADLINE_S, envDeadlineS } = judges;

function defaultDeadlineS(config) {
  const c = config && typeof config === 'object' ? config : {};
  // As the Python assertions read them (float(...), int(...)): "300" is 300 s there, so here too.
  const given = (value) => (typeof value === 'number' || typeof value === 'string' ? Number(value) : NaN);
  const t = given(c.timeout);
  const r = Math.trunc(given(c.max_retries));
  const timeout = Number.isFinite(t) && t > 0 ? t : DEADLINES.judge_timeout_s;
  const retries = Number.isFinite(r) && r >= 0 ? r : DEADLINES.judge_max_retries;
  const oneCall = judges.worstCaseSeconds(timeout, retries);
  return Math.min(DEADLINES.model_calls_per_judgment * oneCall + DEADLINES.call_margin_s, MAX_DEADLINE_S);
}

let deadlineWarned = false;

// The call's deadline in seconds, or an Error (said once on standard error, and on every row).
function callDeadlineS(context) {
  const fromEnv = envDeadlineS();
  if (fromEnv instanceof Error && !deadlineWarned) {
    deadlineWarned = true;
    process.stderr.write(`grounding-eval: ${fromEnv.message}; every grounding-eval assertion is unscored\n`);
  }
  return fromEnv !== undefined ? fromEnv : defaultDeadlineS(context && context.config);
}

// A call past its deadline: the row's result says so, and the call is not tried again elsewhere.
class CallTimeout extends Error {
  constructor(who, seconds) {
    super(`${who} did not answer within ${seconds} s; it was killed (GROUNDING_EVAL_CALL_TIMEOUT)`);
    this.name = 'CallTimeout';
    this.failure = 'deadline';
  }
}

// A process that stopped making progress while it held a call: the same, without waiting for the deadline.
class WorkerStalled extends Error {
  constructor(who, seconds) {
    super(`${who} showed no sign of life for ${seconds} s (stopped, stuck or swapped out); it was killed (GROUNDING_EVAL_WORKER_STALL)`);
    this.name = 'WorkerStalled';
    this.failure = 'stalled';
  }
}

const HEARTBEAT_S = DEADLINES.heartbeat_s; // a worker's heartbeat period (the Python side's --heartbeat)
const DEFAULT_STALL_S = DEADLINES.worker_stall_s;
const MIN_STALL_S = 2 * HEARTBEAT_S;
const WATCH_TICK_MS = 500;

// $GROUNDING_EVAL_WORKER_STALL in seconds (default 15), or an Error naming it.
function stallSeconds() {
  const raw = process.env.GROUNDING_EVAL_WORKER_STALL;
  if (raw === undefined || raw.trim() === '') return DEFAULT_STALL_S;
  const seconds = Number(raw.trim());
  if (!Number.isFinite(seconds) || seconds < MIN_STALL_S || seconds > MAX_DEADLINE_S) {
    return new Error(
      `GROUNDING_EVAL_WORKER_STALL must be a number of seconds from ${MIN_STALL_S} to ${MAX_DEADLINE_S}, got ${JSON.stringify(raw)}`,
    );
  }
  return seconds;
}

let stallWarned = false;

// The stall limit for a row's call, or an Error (said once on standard error, and on every row).
function callStallS() {
  const stall = stallSeconds();
  if (stall instanceof Error && !stallWarned) {
    stallWarned = true;
    process.stderr.write(`grounding-eval: ${stall.message}; every grounding-eval assertion is unscored\n`);
  }
  return stall;
}

// Watches a process's output while it holds a call: `onStall()` once nothing has come for `stallS`
// seconds. Counted only while this Node process runs: after a pause of its own (a long synchronous step
// in promptfoo) what the process wrote meanwhile is still unread, so the count starts again.
function watchdog(stallS, onStall) {
  let heard = Date.now();
  let tick = heard;
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - tick > 4 * WATCH_TICK_MS) heard = now;
    tick = now;
    if (now - heard >= stallS * 1000) {
      clearInterval(timer);
      onStall();
    }
  }, WATCH_TICK_MS);
  timer.unref(); // the call itself keeps Node alive; the watch never does
  return {
    heard() {
      heard = Date.now();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

function poolSize() {
  const wanted = Number.parseInt(process.env.GROUNDING_EVAL_WORKERS || '', 10);
  return Number.isInteger(wanted) && wanted > 0 ? wanted : DEFAULT_WORKERS;
}

function workerEnv() {
  // In a checkout the pack itself is importable even when the package is not installed into that Python.
  if (!IN_CHECKOUT) return { ...process.env, PYTHONUNBUFFERED: '1' };
  const parts = [CHECKOUT];
  if (process.env.PYTHONPATH) parts.push(process.env.PYTHONPATH);
  return { ...process.env, PYTHONPATH: parts.join(path.delimiter), PYTHONUNBUFFERED: '1' };
}

class Worker {
  constructor(onGone) {
    this.pending = new Map();
    this.order = []; // ids sent, oldest first: the worker answers one call at a time, in order
    this.timer = null; // the deadline of the call the worker is on (order[0])
    this.busy = 0;
    this.buffer = '';
    this.gone = null;
    this.watch = null; // the watchdog, while the worker has a call (busy > 0)
    const idle = process.env.GROUNDING_EVAL_WORKER_IDLE || String(DEADLINES.worker_idle_s);
    const args = ['-P', '-m', 'grounding_eval.promptfoo.worker', '--idle', idle, '--heartbeat', String(HEARTBEAT_S)];
    this.child = spawn(python(), args, {
      cwd: process.cwd(),
      env: workerEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    const timer = setTimeout(() => {
      this.fail(new Error(`no ready line within ${READY_TIMEOUT_MS} ms`));
      this.child.kill('SIGKILL'); // a stopped process would ignore anything milder
    }, READY_TIMEOUT_MS);
    timer.unref();
    this.ready.then(() => clearTimeout(timer), () => clearTimeout(timer));
    this.child.on('error', (err) => this.fail(err));
    this.child.on('exit', (code, signal) => {
      this.fail(new Error(`worker exited (${signal || `status ${code}`})`));
      onGone(this);
    });
    this.child.stdin.on('error', (err) => this.fail(err));
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      if (this.watch) this.watch.heard();
      this.read(chunk);
    });
    this.idleHandles();
  }

  // While no call is waiting, the worker must not keep promptfoo's Node process alive.
  idleHandles() {
    if (this.busy > 0) return;
    this.child.unref();
    this.child.stdout.unref?.();
    this.child.stdin.unref?.();
  }

  busyHandles() {
    this.child.ref();
    this.child.stdout.ref?.();
    this.child.stdin.ref?.();
  }

  read(chunk) {
    this.buffer += chunk;
    let cut;
    while ((cut = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch (err) {
        this.fail(new Error(`unreadable reply from the worker: ${err.message}`));
        this.child.kill();
        return;
      }
      if (message.ready !== undefined) {
        this.markReady();
        continue;
      }
      if (message.beat !== undefined) continue; // a sign of life, already counted
      if (message.model !== undefined) {
        answerModelCall(message.model, (reply) => {
          if (!this.gone) this.child.stdin.write(`${stringify(reply)}\n`);
        });
        continue;
      }
      const waiting = this.pending.get(message.id);
      if (!waiting) continue;
      this.pending.delete(message.id);
      this.order = this.order.filter((id) => id !== message.id);
      this.arm();
      if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    }
  }

  // The deadline runs for the call the worker is on, so a call queued behind another is not charged
  // for the wait.
  arm() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.gone || this.order.length === 0) return;
    const id = this.order[0];
    const { seconds } = this.pending.get(id);
    this.timer = setTimeout(() => this.expire(id, seconds), seconds * 1000);
  }

  // Past the deadline: the call fails for good, the worker is killed, the calls queued behind it go to
  // another worker.
  expire(id, seconds) {
    const waiting = this.pending.get(id);
    this.pending.delete(id);
    this.fail(new Error(`worker killed: the call before this one did not answer within ${seconds} s`));
    this.child.kill('SIGKILL');
    if (waiting) waiting.reject(new CallTimeout('the grounding-eval worker', seconds));
  }

  // No sign of life while it held a call: the call it is on fails for good (a worker failure), the worker
  // is killed, the calls queued behind it go to another worker.
  stalled(seconds) {
    const id = this.order[0];
    const waiting = id === undefined ? undefined : this.pending.get(id);
    if (waiting) this.pending.delete(id);
    this.fail(new Error(`worker killed: it showed no sign of life for ${seconds} s`));
    this.child.kill('SIGKILL');
    if (waiting) waiting.reject(new WorkerStalled('the grounding-eval worker', seconds));
  }

  fail(err) {
    if (this.gone) return;
    this.gone = err;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.watch) this.watch.stop();
    this.watch = null;
    this.failReady(err);
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
    this.order = [];
  }

  // Busy from the moment a call is taken, so that waiting for the ready line keeps Node alive too.
  async call(id, line, seconds, stallS) {
    this.busy += 1;
    this.busyHandles();
    if (!this.watch && !this.gone) this.watch = watchdog(stallS, () => this.stalled(stallS));
    try {
      await this.ready;
      if (this.gone) throw this.gone;
      return await new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject, seconds });
        this.order.push(id);
        this.child.stdin.write(line);
        if (this.order.length === 1) this.arm();
      });
    } finally {
      this.busy -= 1;
      if (this.busy === 0 && this.watch) {
        this.watch.stop();
        this.watch = null;
      }
      this.idleHandles();
    }
  }
}

function pool() {
  if (!globalThis[STATE_KEY]) {
    const state = { workers: [], nextId: 1, queue: [] };
    globalThis[STATE_KEY] = state;
    // A worker exits when its pipe closes, unless it is stopped (and never picked again): not left behind.
    process.once('exit', () => {
      for (const w of state.workers) if (!w.gone) w.child.kill('SIGKILL');
    });
  }
  return globalThis[STATE_KEY];
}

function pickWorker(state) {
  const alive = state.workers.filter((w) => !w.gone);
  state.workers = alive;
  const free = alive.find((w) => w.busy === 0);
  if (free) return free;
  if (alive.length < poolSize()) {
    const worker = new Worker((gone) => {
      state.workers = state.workers.filter((w) => w !== gone);
    });
    state.workers.push(worker);
    return worker;
  }
  return alive.reduce((a, b) => (b.busy < a.busy ? b : a));
}

// `stallS`: the stall limit, or undefined for none (the deadline alone).
function once(line, seconds, stallS) {
  return new Promise((resolve, reject) => {
    const args = ['-P', '-m', 'grounding_eval.promptfoo.worker', '--once', '--heartbeat', String(HEARTBEAT_S)];
    const child = spawn(python(), args, {
      cwd: process.cwd(),
      env: workerEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    let late = false;
    let stalled = false;
    const timer = setTimeout(() => {
      late = true;
      child.kill('SIGKILL');
    }, seconds * 1000);
    const watch = stallS === undefined ? undefined : watchdog(stallS, () => {
      stalled = true;
      child.kill('SIGKILL');
    });
    child.stdout.setEncoding('utf8');
    let pendingLine = '';
    child.stdout.on('data', (chunk) => {
      if (watch) watch.heard();
      // Model calls are asked for on the way, heartbeats come meanwhile; everything else is the reply.
      pendingLine += chunk;
      let cut;
      while ((cut = pendingLine.indexOf('\n')) >= 0) {
        const text = pendingLine.slice(0, cut);
        pendingLine = pendingLine.slice(cut + 1);
        let message;
        try {
          message = JSON.parse(text);
        } catch (_err) {
          message = undefined;
        }
        if (message && message.beat !== undefined) continue;
        if (message && message.model !== undefined) {
          answerModelCall(message.model, (reply) => child.stdin.write(`${stringify(reply)}\n`));
        } else {
          out += `${text}\n`;
          child.stdin.end();
        }
      }
    });
    child.stdin.on('error', () => {});
    child.on('error', (err) => {
      clearTimeout(timer);
      if (watch) watch.stop();
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (watch) watch.stop();
      if (late) {
        reject(new CallTimeout('the one-off Python process', seconds));
        return;
      }
      if (stalled) {
        reject(new WorkerStalled('the one-off Python process', stallS));
        return;
      }
      out += pendingLine;
      try {
        const message = JSON.parse(out.trim().split('\n').pop());
        if (message.error !== undefined) reject(new Error(message.error));
        else resolve(message.result);
      } catch (err) {
        reject(new Error(`one-off Python process ended with status ${code} and no reply`));
      }
    });
    child.stdin.write(line);
  });
}

// --- judge model calls: resolved and made by assertions/judges.cjs ---------------------------------------

const JUDGE_CALLS = new Set(namesWhere((c) => c.judge));

// Answer one model call a worker asked for; `write` sends the reply on that worker's pipe. Never throws.
function answerModelCall(ask, write) {
  const seq = ask && ask.seq;
  judges.modelCall(ask).then((reply) => write({ model_reply: seq, ...reply }));
}

// A call that could not run is unscored as a value: metadata.outcome 'unscored' and its reason, the
// fields grounding_eval/outcome.py writes for Python's own failures (a composite also says
// metadata.composite.status, as the Python composite does). The report never reads the reason's text,
// which another assertion's reason could imitate. No named scores of its own (a composite's result keeps
// the row's others, and adds no composite score), so promptfoo's averages leave the row out.
function failed(call, message, workerFailure) {
  const why = String(message).trim() || 'no reason given';
  const metadata = { outcome: 'unscored', unscored_reason: why };
  if (workerFailure) metadata.worker_failure = workerFailure; // 'stalled' or 'deadline': the process, killed
  const scoring = CALLS[call].kind === 'scoring';
  if (scoring) metadata.composite = { status: 'unscored' };
  const prefix = scoring ? judges.CALL_REGISTRY.scoring_failed : CALLS[call].failed;
  return { pass: false, score: 0, reason: `${prefix}: ${why}`, metadata };
}

async function grade(call, value, context) {
  const state = pool();
  const id = state.nextId++;
  let root;
  try {
    root = packRoot();
  } catch (err) {
    return failed(call, err.message);
  }
  const seconds = callDeadlineS(context);
  if (seconds instanceof Error) return failed(call, seconds.message);
  const stallS = callStallS();
  if (stallS instanceof Error) return failed(call, stallS.message);
  try {
    context = await withSourceVars(context);
  } catch (err) {
    return failed(call, `the test's source vars could not be restored: ${err.message}`);
  }
  // No provider object crosses to Python (the model under test's, the graders'): a judge row gets its
  // judges resolved instead, every row the providers' labels.
  try {
    context = judges.forwarded(context, JUDGE_CALLS.has(call) ? await judges.resolveJudges(call, context) : undefined);
  } catch (err) {
    return failed(call, `the judge could not be resolved: ${err.message}`);
  }
  const line = `${stringify({ id, call, args: [value, context], pack_root: root })}\n`;
  let workerError;
  // A worker can end between two calls (its idle limit); a second worker gets one more try. A call
  // past its deadline gets none: asked again, it could hold the eval as long again.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      return await pickWorker(state).call(id, line, seconds, stallS);
    } catch (err) {
      if (err instanceof CallTimeout || err instanceof WorkerStalled) return failed(call, err.message, err.failure);
      workerError = err;
    }
  }
  try {
    const result = await once(line, seconds, stallS);
    const note = `(graded in a one-off Python process: the grounding-eval worker failed: ${workerError.message})`;
    return { ...result, reason: `${result.reason}\n${note}` };
  } catch (err) {
    return failed(call, `no Python could grade this row: worker: ${workerError.message}; one-off: ${err.message}`);
  }
}

// --- beforeAll: the configuration check before any model is called -----------------------------------

const ASSERTION_NAMES = ASSERTION_CALLS.join('|');
const PACK_ENTRY = new RegExp(`(?:grounding\\.cjs:(${ASSERTION_NAMES})|assertions/(?:(${ASSERTION_NAMES})\\.py(?::\\w+)?|grounding\\.py:(${ASSERTION_NAMES})))$`);
const CHECK_DEADLINE_S = DEADLINES.check_s;
const MAX_PROBLEMS_SHOWN = 10;

function isPackEntry(assertion) {
  return Boolean(assertion) && typeof assertion.value === 'string' && PACK_ENTRY.test(assertion.value);
}

// The configuration is refused: the problems, one line each, before any model call. Under promptfoo's
// CLI a hook's error is printed four times over (its transform's log on stdout, then the hook's error
// and its two causes, each with a stack, on stderr): there the pack says its lines once, last, and ends
// the eval itself with the status that error would give (1). A wrapper that runs the eval (scripts/demo)
// names a file in $GROUNDING_EVAL_REFUSAL_FILE: the message is written there too, so that it knows the
// eval stopped here and adds no line after it. Called any other way (a library caller, a test from
// `node -e`, promptfoo's viewer), the error is thrown as usual.
function refuse(problems) {
  const list = [...problems];
  const shown = list.slice(0, MAX_PROBLEMS_SHOWN).map((p) => `  - ${p}`).join('\n');
  const more = list.length > MAX_PROBLEMS_SHOWN ? `\n  … and ${list.length - MAX_PROBLEMS_SHOWN} more` : '';
  const message = `grounding-eval: the configuration has ${list.length} problem(s); no model was called:\n${shown}${more}`;
  if (judges.runningPromptfoo() && process.argv[2] === 'eval') {
    const told = process.env.GROUNDING_EVAL_REFUSAL_FILE;
    if (told) {
      try {
        const partial = `${told}.${process.pid}.partial`;
        fs.writeFileSync(partial, `${message}\n`);
        fs.renameSync(partial, told);
      } catch (err) {
        fs.writeSync(2, `grounding-eval: could not write $GROUNDING_EVAL_REFUSAL_FILE (${told}): ${err.message}\n`);
      }
    }
    fs.writeSync(2, `${message}\n`);
    process.exit(1);
  }
  throw new Error(message);
}

function packAssertions(list, found) {
  for (const a of Array.isArray(list) ? list : []) {
    if (!a || typeof a !== 'object') continue;
    if (a.type === 'assert-set') packAssertions(a.assert, found);
    else if (typeof a.value === 'string') {
      const m = a.value.match(PACK_ENTRY);
      if (m) found.push({ call: m[1] || m[2] || m[3], python: Boolean(m[2] || m[3]), assertion: a });
    }
  }
  return found;
}

function merged(base, own) {
  return { ...((base && typeof base === 'object') ? base : {}), ...((own && typeof own === 'object') ? own : {}) };
}

// A test's item id, for messages: its metadata's (the generators' place since issue 42), or a var's.
function testId(test) {
  const id = (test.metadata && test.metadata.query_id) || (test.vars && test.vars.query_id);
  return typeof id === 'string' ? id : undefined;
}

// The rows' views of the suite: each test (defaultTest merged in, as promptfoo merges it) with each of
// its pack assertions, once per provider under test (a judge must not be one of them).
function checks(suite) {
  const d = suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  const tests = [];
  for (const t of Array.isArray(suite.tests) ? suite.tests : []) if (t && typeof t === 'object') tests.push(t);
  for (const sc of Array.isArray(suite.scenarios) ? suite.scenarios : []) {
    for (const t of Array.isArray(sc && sc.tests) ? sc.tests : []) if (t && typeof t === 'object') tests.push(t);
  }
  if (tests.length === 0) tests.push({});
  const providers = Array.isArray(suite.providers) && suite.providers.length ? suite.providers : [undefined];
  const out = [];
  const seen = new Set();
  for (const t of tests) {
    const test = {
      ...t,
      vars: merged(d.vars, t.vars),
      options: merged(d.options, t.options),
      metadata: merged(d.metadata, t.metadata),
      assert: [...(Array.isArray(d.assert) ? d.assert : []), ...(Array.isArray(t.assert) ? t.assert : [])],
    };
    // The prompt is not rendered yet: every var counts as shown, so that only what fails whatever the
    // prompt shows (no evidence for any prompt) is a configuration error.
    const shown = Object.values(test.vars).filter((v) => typeof v === 'string').join('\n\n');
    for (const { call, python: pythonEntry, assertion } of packAssertions(test.assert, [])) {
      for (const provider of providers) {
        const context = { prompt: shown, vars: test.vars, test, provider, ...(assertion.config ? { config: assertion.config } : {}) };
        const key = stringify([call, pythonEntry, context.config, test.vars, test.metadata,
          judges.describe(judges.graderOf(test.options.provider)), judges.describe(judges.graderOf(assertion.provider)),
          judges.providerIdOf(provider)]);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ call, pythonEntry, assertion, context, where: test.description || testId(test) || 'defaultTest' });
      }
    }
  }
  return out;
}

// --- Source vars: in the prompt and the assertions, not in the viewer's columns ------------------------
//
// promptfoo's viewer makes every var a column (a long one 360 px wide), so the long source texts a test
// generator puts in vars (the C1 directory, the C1.5 articles, the docs set) pushed every answer off the
// screen. A generator names them in the test's `metadata.source_vars`; beforeAll lifts them out of the
// test's vars, so they are neither columns nor copied into every row of the results file, and gives every
// prompt a function (promptfoo 0.121.20 calls `prompt.function({vars})` in renderPrompt, then renders what
// it returns with the vars) that puts each one in place of its `{{ name }}`, verbatim, inside
// `{% raw %}`; every grounding-eval assertion gets them back in its context.vars (grade()). A results file
// is graded again from the dataset (grounding_eval/rescore.py with_source_vars). They are lifted
// only where that is exact: every prompt that mentions one uses it only as a plain `{{ name }}`, no
// transformVars rewrites the vars, and no two tests are told apart by their source texts alone. Else, and
// without this hook, the vars stay where the generator put them, as columns.
const lifted = new Map(); // key of a test's remaining vars -> { values: {name: value} }
let liftedNames = new Set();

function varsKey(vars, drop) {
  const kept = Object.keys(vars || {}).filter((k) => !k.startsWith('_') && !drop.has(k)).sort();
  return stringify(kept.map((k) => [k, vars[k]]));
}

// A `file://` var promptfoo would call while rendering (an absolute .js/.cjs path, as the generators
// write for a missing grounding block): called the same way, (varName, prompt, vars, provider).
const CALLED_VAR = /^file:\/\/(\/.*\.c?js)$/;

async function sourceValue(name, value, raw, vars, provider) {
  const called = typeof value === 'string' && value.match(CALLED_VAR);
  if (!called) return value;
  const out = await require(called[1])(name, raw, vars, provider);
  if (out && out.error) throw new Error(`Error running ${called[1]}: ${out.error}`);
  return String((out && out.output) || '');
}

function placeholder(name) {
  return new RegExp(`\\{\\{-?\\s*${name}\\s*-?\\}\\}`, 'g');
}

function mentions(raw, name) {
  return new RegExp(`(^|[^A-Za-z0-9_])${name}([^A-Za-z0-9_]|$)`).test(String(raw || ''));
}

// `text` exactly as written once nunjucks renders it: inside {% raw %}, each `{% endraw %}` it holds
// written as a string expression.
function verbatim(text) {
  return String(text).split(/(\{%-?\s*endraw\s*-?%\})/).map((part, i) => (i % 2
    ? `{{ ${JSON.stringify(part)} }}`
    : `{% raw %}${part}{% endraw %}`)).join('');
}

// What could read a lifted var without getting it back: an assertion or scoring function whose code
// is not the pack's (a file or package), one whose text names the var (rendered with the vars), a provider
// that is code of its own (it gets the vars, not only the prompt). Code of its own: nothing is lifted (the
// reason, a string); an assertion's text: the vars it names are not (`{ named }`).
const PACK_SCORING = /(?:grounding\.cjs:round\w+|assertions\/(?:composite\.py(?::\w+)?|grounding\.py:round\w+))$/;
const PACK_PROVIDER = /providers\/replay\.py(?::\w+)?$/;
const CODE_REF = /^(?:file:\/\/|package:|exec:|python:|golang:|ruby:)/;

function foreignReader(suite, names) {
  const texts = [];
  const code = (v) => typeof v === 'string' && CODE_REF.test(v);
  const visit = (list) => {
    for (const a of Array.isArray(list) ? list : []) {
      if (!a || typeof a !== 'object') continue;
      if (a.type === 'assert-set') { visit(a.assert); continue; }
      if (code(a.value) && !PACK_ENTRY.test(a.value)) return true;
      texts.push(stringify(a));
    }
    return false;
  };
  const tests = [suite.defaultTest, ...(Array.isArray(suite.tests) ? suite.tests : [])].filter((t) => t && typeof t === 'object');
  for (const t of tests) {
    if (visit(t.assert)) return 'an assertion of its own code';
    const scoring = t.assertScoringFunction;
    if (code(scoring) && !PACK_SCORING.test(scoring)) return 'a scoring function of its own code';
  }
  for (const p of Array.isArray(suite.providers) ? suite.providers : []) {
    const id = typeof p === 'string' ? p : p && typeof p.id === 'function' ? p.id() : p && p.id;
    if (code(id) && !PACK_PROVIDER.test(id)) return `a provider of its own code (${id})`;
  }
  return { named: new Set([...names].filter((n) => texts.some((t) => mentions(t, n)))) };
}

function liftSourceVars(suite) {
  lifted.clear();
  liftedNames = new Set();
  const candidates = new Set((Array.isArray(suite.tests) ? suite.tests : [])
    .flatMap((t) => (t && t.metadata && Array.isArray(t.metadata.source_vars) ? t.metadata.source_vars : [])));
  if (candidates.size === 0) return;
  const reader = foreignReader(suite, candidates);
  if (typeof reader === 'string') {
    process.stderr.write(`grounding-eval: the source vars stay vars (viewer columns): the suite has ${reader}, which could read them\n`);
    return;
  }
  // A var an assertion's text names stays a var (that assertion is rendered with the vars); the others go.
  for (const n of reader.named) {
    process.stderr.write(`grounding-eval: ${n} stays a var (a viewer column): the suite has an assertion that names it\n`);
  }
  const d = suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  const tests = (Array.isArray(suite.tests) ? suite.tests : []).filter((t) => t && typeof t === 'object');
  const prompts = (Array.isArray(suite.prompts) ? suite.prompts : []).filter((p) => p && typeof p === 'object');
  const plainOnly = (name) => prompts.every((p) => !mentions(p.raw, name)
    || (typeof p.function !== 'function' && !mentions(String(p.raw).replace(placeholder(name), ''), name)));
  const found = new Map(); // key -> [{test, lift, values}]
  for (const t of tests) {
    if ((d.options && d.options.transformVars) || (t.options && t.options.transformVars)) continue;
    const names = t.metadata && Array.isArray(t.metadata.source_vars) ? t.metadata.source_vars : [];
    const own = t.vars && typeof t.vars === 'object' ? t.vars : {};
    const lift = new Set(names.filter((n) => typeof n === 'string' && typeof own[n] === 'string' && !reader.named.has(n)
      && (!own[n].startsWith('file://') || CALLED_VAR.test(own[n])) && plainOnly(n)));
    if (lift.size === 0) continue;
    const key = varsKey(merged(d.vars, own), lift);
    if (!found.has(key)) found.set(key, []);
    found.get(key).push({ test: t, lift, values: Object.fromEntries([...lift].map((n) => [n, own[n]])) });
  }
  for (const [key, entries] of found) {
    const first = stringify(entries[0].values);
    if (entries.some((e) => stringify(e.values) !== first)) continue;
    lifted.set(key, { values: entries[0].values });
    for (const { test, lift } of entries) {
      for (const n of lift) liftedNames.add(n);
      test.vars = Object.fromEntries(Object.entries(test.vars).filter(([k]) => !lift.has(k)));
    }
  }
  if (lifted.size === 0) return;
  for (const prompt of prompts) {
    const raw = prompt.raw;
    const used = [...liftedNames].filter((n) => mentions(raw, n));
    if (used.length === 0 || typeof prompt.function === 'function') continue;
    prompt.function = async (ctx) => {
      const vars = ctx.vars;
      const entry = lifted.get(varsKey(vars, liftedNames));
      let text = raw;
      for (const name of used) {
        if (vars[name] !== undefined) continue; // a test whose vars were not lifted: promptfoo renders it
        // Never a prompt rendered with an empty block: the cell is an ERROR row saying why.
        if (!entry || !(name in entry.values)) throw bare(`ERROR (grounding-eval: this test's ${name} could not be found again after beforeAll)`);
        const value = await sourceValue(name, entry.values[name], raw, vars, ctx.provider);
        text = text.replace(placeholder(name), () => verbatim(value));
      }
      return text;
    };
  }
}

// Tests whose metadata names source vars their vars lack — re-run from a results file (promptfoo's
// --filter-failing / --filter-errors-only build tests from its rows, which keep none) — get them rebuilt
// from their dataset, in one Python process; a test that cannot is a configuration problem: its prompt
// would otherwise be rendered with an empty block.
async function restoreSourceVars(suite, root, seconds) {
  const d = suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {};
  const missing = (Array.isArray(suite.tests) ? suite.tests : []).filter((t) => t && typeof t === 'object'
    && t.metadata && Array.isArray(t.metadata.source_vars)
    && t.metadata.source_vars.some((n) => merged(d.vars, t.vars)[n] === undefined));
  if (missing.length === 0) return [];
  const entries = missing.map((t) => ({ vars: t.vars && typeof t.vars === 'object' ? t.vars : {}, metadata: t.metadata }));
  const line = `${stringify({ id: 0, call: 'source_vars', args: [entries, null], pack_root: root })}\n`;
  let answers;
  try {
    answers = (await once(line, seconds, checkStallS())).source_vars;
    if (!Array.isArray(answers) || answers.length !== missing.length) throw new Error('no answer for every test');
  } catch (err) {
    return [`source vars (${missing.length} test(s) without them): could not be rebuilt: ${err.message}`];
  }
  const problems = [];
  missing.forEach((t, i) => {
    const answer = answers[i] || {};
    if (answer.vars && typeof answer.vars === 'object') t.vars = answer.vars;
    else problems.push(`source vars (${t.description || testId(t) || 'a test'}): ${answer.error || 'no answer'}`);
  });
  return problems;
}

// The context a grounding-eval assertion is graded with: its vars with the source vars beforeAll lifted.
async function withSourceVars(context) {
  if (lifted.size === 0 || !context || !context.vars || typeof context.vars !== 'object') return context;
  const entry = lifted.get(varsKey(context.vars, liftedNames));
  if (!entry) return context;
  const vars = { ...context.vars };
  for (const [name, value] of Object.entries(entry.values)) {
    // A missing block's stand-in is what a prompt that does not use it was given.
    if (vars[name] === undefined) vars[name] = await sourceValue(name, value, '', vars, context.provider);
  }
  return { ...context, vars };
}

// beforeAll's own Python processes are watched too; a bad GROUNDING_EVAL_WORKER_STALL is said on the rows.
function checkStallS() {
  const stall = stallSeconds();
  return typeof stall === 'number' ? stall : undefined;
}

// An error whose text is its message alone (promptfoo stores String(error) / its stack as the row's error).
function bare(message) {
  const error = new Error(message);
  error.name = '';
  error.stack = message;
  return error;
}

// A text-file prompt's label as promptfoo makes it is `<label>: <file>: <the whole template>`, and its viewer
// prints the label atop each output column (three lines, clamped): the template pushed every cell and its
// verdict down the screen. The label keeps `<label>: <file>` (the condition is still the label's first
// field); the template is the prompt's `raw`, which the viewer shows when the label is clicked.
// promptfoo's map of the prompts each provider runs names them by label: it follows.
function shortLabels(suite) {
  const renamed = new Map();
  for (const prompt of Array.isArray(suite.prompts) ? suite.prompts : []) {
    if (!prompt || typeof prompt.label !== 'string' || typeof prompt.raw !== 'string' || !prompt.raw) continue;
    const tail = `: ${prompt.raw}`;
    if (!prompt.label.endsWith(tail) || prompt.label.length <= tail.length) continue;
    renamed.set(prompt.label, prompt.label.slice(0, -tail.length));
    prompt.label = renamed.get(prompt.label);
  }
  const map = suite.providerPromptMap;
  if (renamed.size === 0 || !map || typeof map !== 'object') return;
  for (const [provider, labels] of Object.entries(map)) {
    if (Array.isArray(labels)) map[provider] = labels.map((l) => (renamed.has(l) ? renamed.get(l) : l));
  }
}

// One line per problem: the same problem found in several tests (a judge set once for the whole suite, a
// missing file every test reads) names the tests once, the first few of them.
function problemLines(problems) {
  return [...problems.values()].map(({ call, problem, where }) => {
    if (where.length === 0) return `${call}: ${problem}`;
    const named = where.length <= 3 ? where.join(', ') : `${where.length} tests: ${where.slice(0, 3).join(', ')}, …`;
    return `${call} (${named}): ${problem}`;
  });
}

// promptfoo's beforeAll hook (file://assertions/grounding.cjs:beforeAll): every pack assertion is
// checked as its rows would run it, in one Python process (grounding_eval/promptfoo/preflight.py), and
// each live judge is loaded and its key checked. Any problem stops the eval here, before any model call.
async function beforeAll(context) {
  const suite = context && context.suite;
  if (!suite || typeof suite !== 'object') return context;
  const root = packRoot();
  const problems = new Map(); // `call\0problem` → the tests it was found in
  const found = (call, where, problem) => {
    const key = `${call}\0${problem}`;
    if (!problems.has(key)) problems.set(key, { call, problem, where: [] });
    if (where && !problems.get(key).where.includes(where)) problems.get(key).where.push(where);
  };
  const fromEnvS = envDeadlineS();
  const restoring = await restoreSourceVars(suite, root, typeof fromEnvS === 'number' ? Math.min(fromEnvS, CHECK_DEADLINE_S) : CHECK_DEADLINE_S);
  if (restoring.length) refuse(restoring);
  // While the switch decides the judge, a judge or grader endpoint anywhere in the config (promptfoo's own
  // graders included) is refused, by the pack's one rule (judges.cjs), before anything is loaded.
  const refused = judges.suiteRefusals(suite, isPackEntry);
  if (refused.length) refuse(refused);
  // Each judge row's judges, resolved as the row will resolve them (assertions/judges.cjs), the
  // assertion's own provider known here; a `type: python` entry asks judges.cjs the same at run time.
  const items = await Promise.all(checks(suite).map(async ({ call, pythonEntry, assertion, context: rowContext, where }) => {
    if (!JUDGE_CALLS.has(call)) return { call, where, entry: { call, entry: pythonEntry ? 'python' : 'javascript', context: rowContext } };
    const resolved = await judges.resolveJudges(call, rowContext, { assertionProvider: judges.graderOf(assertion.provider) });
    const forwarded = judges.forwarded(rowContext, resolved);
    return { call, where, resolved, entry: { call, entry: pythonEntry ? 'python' : 'javascript', context: forwarded } };
  }));
  // Before any model is called: every host that will receive an API key, judge and generation, one line each.
  const ready = async () => {
    const live = items.flatMap((i) => (i.resolved ? [i.resolved.judge, i.resolved.cheap] : [])).filter((j) => j && j.use === 'live');
    for (const keyLine of await judges.keyLines(suite, live, isPackEntry)) process.stderr.write(`${keyLine}\n`);
    shortLabels(suite);
    liftSourceVars(suite);
    return context;
  };
  if (items.length === 0) return ready();
  // One Python process for the whole check, apart from the eval's worker pool (which starts with the rows).
  const fromEnv = envDeadlineS();
  const seconds = typeof fromEnv === 'number' ? Math.min(fromEnv, CHECK_DEADLINE_S) : CHECK_DEADLINE_S;
  const line = `${stringify({ id: 0, call: 'check', args: [items.map((i) => i.entry), null], pack_root: root })}\n`;
  let answers;
  try {
    answers = (await once(line, seconds, checkStallS())).checks;
    if (!Array.isArray(answers) || answers.length !== items.length) throw new Error('the checker gave no answer for every assertion');
  } catch (err) {
    // Not a configuration error: the check itself could not run. Said, and the eval goes on (each row says
    // what is wrong with it, under its own deadline).
    process.stderr.write(`grounding-eval: the configuration could not be checked before the eval (${err.message}); each row will say what is wrong\n`);
    return ready();
  }
  const live = new Map(); // each live judge once (by its reference), whatever number of rows name it
  await Promise.all(items.map(async ({ call, where, resolved }, i) => {
    const answer = answers[i];
    if (!answer || answer.ok !== true) {
      found(call, where, (answer && answer.error) || 'no answer');
      return;
    }
    for (const judge of resolved ? [resolved.judge, resolved.cheap] : []) {
      if (!judge || judge.use !== 'live') continue;
      if (!live.has(judge.ref)) live.set(judge.ref, { judge, problem: judges.checkJudge(judge) });
      const problem = await live.get(judge.ref).problem;
      if (problem) found(call, undefined, problem);
    }
  }));
  if (problems.size > 0) refuse(problemLines(problems));
  return ready();
}

module.exports = {
  // Not an assertion: the deadline a call with this context gets, in seconds (or the Error), for tests.
  deadlineSeconds: callDeadlineS,
  beforeAll,
  // One entry per call, named as the call: (output, context) for an assertion, (namedScores, context)
  // for a scoring function (assertScoringFunction).
  ...Object.fromEntries([...ASSERTION_CALLS, ...SCORING_CALLS].map((call) => [call, (value, context) => grade(call, value, context)])),
};
