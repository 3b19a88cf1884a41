// promptfoo entry points that grade in a warm Python: `type: javascript` assertions
// (file://assertions/grounding.cjs:verifier, :judge, :factuality, :docs_qa) and scoring functions
// (assertScoringFunction: file://assertions/grounding.cjs:round1, :round2b, :round3).
//
// promptfoo starts a fresh Python process for every `type: python` call (about 50 ms each before any
// of our code runs); JavaScript entries run inside promptfoo's Node process. These forward each call,
// with promptfoo's own arguments, to a pool of long-lived Python workers
// (`python -m grounding_eval.promptfoo.worker`), which grade with exactly the functions the Python
// entry files (assertions/verifier.py, judge.py, composite.py, factuality.py, docs_qa.py) call. Same GradingResult either way.
//
// Lifetime: workers are started on first use, read requests from a pipe this process holds, and exit
// when it closes (promptfoo ended, crashed or was killed) or after GROUNDING_EVAL_WORKER_IDLE seconds
// without a request (default 120). No socket, no file.
// Python: $PROMPTFOO_PYTHON (as promptfoo itself uses), else `python3`.
// Pool size: $GROUNDING_EVAL_WORKERS (default 4, promptfoo's default concurrency), each one call at a time.
// If no worker can be started or kept, a call is graded in a one-off Python process
// (`--once`), and its reason says so: never a silent change of what graded the row.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

// Where the pack's data is: this file's repository when it sits in a checkout (assertions/ beside
// grounding_eval/), else the grounding-eval installed in that Python (a study made by
// `grounding-eval init`), asked once: grounding_eval.resources.pack_root().
const CHECKOUT = path.resolve(__dirname, '..');
const IN_CHECKOUT = fs.existsSync(path.join(CHECKOUT, 'grounding_eval', '__init__.py'));
let installedRoot;

function packRoot() {
  if (IN_CHECKOUT) return CHECKOUT;
  if (installedRoot === undefined) {
    const ask = 'from grounding_eval.resources import pack_root; print(pack_root())';
    try {
      installedRoot = execFileSync(python(), ['-c', ask], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (err) {
      const said = `${err.stderr || err.message}`.trim().split('\n').pop();
      installedRoot = new Error(`grounding-eval is not installed in ${python()}: ${said}`);
    }
  }
  if (installedRoot instanceof Error) throw installedRoot;
  return installedRoot;
}
const READY_TIMEOUT_MS = 60000;
const STATE_KEY = Symbol.for('grounding-eval.worker-pool');

function python() {
  return process.env.PROMPTFOO_PYTHON || 'python3';
}

// promptfoo's default concurrency: a live judge call waits on the network, so a worker per concurrent
// call, not per CPU (measured with recorded replies on 2 cores: 4 workers no slower than 2).
const DEFAULT_WORKERS = 4;

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

// promptfoo's own serialization for Python calls: drop only true cycles (functions vanish in JSON).
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

class Worker {
  constructor(onGone) {
    this.pending = new Map();
    this.busy = 0;
    this.buffer = '';
    this.gone = null;
    const idle = process.env.GROUNDING_EVAL_WORKER_IDLE || '120';
    this.child = spawn(python(), ['-m', 'grounding_eval.promptfoo.worker', '--idle', idle], {
      cwd: process.cwd(),
      env: workerEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    const timer = setTimeout(() => this.fail(new Error(`no ready line within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    timer.unref();
    this.ready.then(() => clearTimeout(timer), () => clearTimeout(timer));
    this.child.on('error', (err) => this.fail(err));
    this.child.on('exit', (code, signal) => {
      this.fail(new Error(`worker exited (${signal || `status ${code}`})`));
      onGone(this);
    });
    this.child.stdin.on('error', (err) => this.fail(err));
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => this.read(chunk));
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
      const waiting = this.pending.get(message.id);
      if (!waiting) continue;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    }
  }

  fail(err) {
    if (this.gone) return;
    this.gone = err;
    this.failReady(err);
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }

  // Busy from the moment a call is taken, so that waiting for the ready line keeps Node alive too.
  async call(id, line) {
    this.busy += 1;
    this.busyHandles();
    try {
      await this.ready;
      if (this.gone) throw this.gone;
      return await new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.child.stdin.write(line);
      });
    } finally {
      this.busy -= 1;
      this.idleHandles();
    }
  }
}

function pool() {
  if (!globalThis[STATE_KEY]) globalThis[STATE_KEY] = { workers: [], nextId: 1, queue: [] };
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

function once(line) {
  return new Promise((resolve, reject) => {
    const child = spawn(python(), ['-m', 'grounding_eval.promptfoo.worker', '--once'], {
      cwd: process.cwd(),
      env: workerEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        const message = JSON.parse(out.trim().split('\n').pop());
        if (message.error !== undefined) reject(new Error(message.error));
        else resolve(message.result);
      } catch (err) {
        reject(new Error(`one-off Python process ended with status ${code} and no reply`));
      }
    });
    child.stdin.end(line);
  });
}

const FAILED = {
  verifier: 'ERROR (verifier not run)',
  judge: 'ERROR (judge unscored)',
  factuality: 'ERROR (factuality unscored)',
  docs_qa: 'ERROR (docs-qa unscored)',
  round1: 'UNSCORED: composite not computed',
  round2b: 'UNSCORED: composite not computed',
  round3: 'UNSCORED: composite not computed',
};

// A composite that could not run says so as a value (metadata.composite.status), as the Python composite
// does: the report never reads the reason's text, which another assertion's reason could imitate.
function failed(call, message) {
  const result = { pass: false, score: 0, reason: `${FAILED[call]}: ${message}` };
  if (call.startsWith('round')) result.metadata = { composite: { status: 'unscored' } };
  return result;
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
  const line = `${stringify({ id, call, args: [value, context], pack_root: root })}\n`;
  let workerError;
  // A worker can end between two calls (its idle limit); a second worker gets one more try.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      return await pickWorker(state).call(id, line);
    } catch (err) {
      workerError = err;
    }
  }
  try {
    const result = await once(line);
    const note = `(graded in a one-off Python process: the grounding-eval worker failed: ${workerError.message})`;
    return { ...result, reason: `${result.reason}\n${note}` };
  } catch (err) {
    return failed(call, `no Python could grade this row: worker: ${workerError.message}; one-off: ${err.message}`);
  }
}

module.exports = {
  verifier: (output, context) => grade('verifier', output, context),
  judge: (output, context) => grade('judge', output, context),
  factuality: (output, context) => grade('factuality', output, context),
  docs_qa: (output, context) => grade('docs_qa', output, context),
  round1: (namedScores, context) => grade('round1', namedScores, context),
  round2b: (namedScores, context) => grade('round2b', namedScores, context),
  round3: (namedScores, context) => grade('round3', namedScores, context),
};
