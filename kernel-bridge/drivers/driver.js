// The JavaScript kernel driver of cc-kernel-bridge. The host sends this file through the
// kernel's control pipe; the bootstrap runs it as a function of (require, ARGS, importModule),
// with WATCHDOG_SOURCE prepended (see kernel-bridge/src/kernel.rs). It always talks on two
// extra fds (given in ARGS): through an enclosure, relay.js runs it as a child that way.
//
// Cells run through the inspector's Runtime.evaluate with replMode: a persistent context
// where let/const may be re-declared, top-level await works and the last value is returned.
// A watchdog worker thread reads every incoming message (the main thread may be stuck in a
// loop) and forwards them; to interrupt, it asks the main thread first (a cell waiting on a
// promise) and otherwise stops the running script with Runtime.terminateExecution.
'use strict';

const fs = require('fs');
const inspector = require('inspector');
const util = require('util');
const path = require('path');
const Module = require('module');
const { Worker } = require('worker_threads');

const [, NONCE, IN_ARG, OUT_ARG, LIFELINE_ARG] = ARGS;

// Node cannot set close-on-exec on an inherited fd, but a descriptor it opens has it: reopen
// the protocol pipes so child processes of cells do not hold them.
function reopen(fd, flags) {
  try {
    const copy = fs.openSync(`/proc/self/fd/${fd}`, flags);
    fs.closeSync(fd);
    return copy;
  } catch {
    return fd;
  }
}
const IN_FD = reopen(Number(IN_ARG), 'r');
const OUT_FD = reopen(Number(OUT_ARG), 'w');
process.argv = [process.argv[0]];

if (LIFELINE_ARG !== undefined) {
  // The reaper: waits for the host's end of the lifeline to close, then kills this process
  // group, so processes started by cells do not outlive a host that died without cleaning up.
  const lifeline = Number(LIFELINE_ARG);
  const reaper = require('child_process').spawn('/bin/sh', ['-c', 'read _ <&3; kill -KILL 0'], {
    stdio: ['ignore', 'ignore', 'ignore', lifeline],
  });
  reaper.unref();
  fs.closeSync(lifeline);
}

function send(message) {
  const bytes = Buffer.from(JSON.stringify(message) + '\n');
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(OUT_FD, bytes, offset, bytes.length - offset);
    } catch (error) {
      if (error.code === 'EAGAIN') continue;
      process.exit(0); // the host is gone
    }
  }
}

// Lone surrogates would make the host's JSON parser drop the message (node < 20 lacks this).
const clean = typeof ''.toWellFormed === 'function' ? (text) => String(text).toWellFormed() : String;

// --- The globals every cell sees ----------------------------------------------------------

const inspect = (value) => util.inspect(value, { depth: 4, maxArrayLength: 100, breakLength: 100 });
const INSPECT_KEY = Symbol.for('cc.kernel.inspect');
globalThis[INSPECT_KEY] = inspect;
globalThis.require = Module.createRequire(path.join(process.cwd(), '[cc-kernel]'));
// `import()` written in a cell cannot work (the inspector gives it no module loader); this
// one comes from the bootstrap, which can.
globalThis.importModule = (specifier) => importModule(specifier);

class ToolError extends Error {
  constructor(kind, message, details) {
    super(`${kind}: ${message}`);
    this.name = 'ToolError';
    this.kind = kind;
    this.details = details || {};
    this.toolMessage = message;
  }
}
globalThis.ToolError = ToolError;

const pendingCalls = new Map();
let nextCallId = 1;

globalThis.tool = function tool(name, args = {}) {
  if (typeof name !== 'string') {
    return Promise.reject(new TypeError(`tool() takes the tool name as a string, got ${inspect(name)}`));
  }
  const id = nextCallId++;
  return new Promise((resolve, reject) => {
    pendingCalls.set(id, { resolve, reject });
    try {
      send({ op: 'call', id, name, args });
    } catch (error) {
      pendingCalls.delete(id);
      reject(error);
    }
  });
};

let current = null; // the running cell: { cell, finish }

globalThis.display = function display(value, mime) {
  let item;
  if (mime) {
    const data = Buffer.isBuffer(value) ? value.toString('base64')
      : typeof value === 'string' ? value : JSON.stringify(value);
    item = { mime, data: clean(data) };
  } else {
    item = { mime: 'text/plain', data: clean(typeof value === 'string' ? value : inspect(value)) };
  }
  send({ op: 'display', cell: current ? current.cell : null, items: [item] });
};

// --- Running cells ------------------------------------------------------------------------

const session = new inspector.Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => {
  session.post(method, params, (error, result) => (error ? reject(error) : resolve(result)));
});

// [0]: the cell whose code runs now (0: none); [1]: the cell whose interrupt the main thread took.
const flags = new Int32Array(new SharedArrayBuffer(8));
const worker = new Worker(WATCHDOG_SOURCE, { eval: true, workerData: { inFd: IN_FD, flags: flags.buffer } });
worker.on('message', onMessage);
worker.on('error', (error) => {
  process.stderr.write(`cc kernel driver: the watchdog failed: ${error && error.stack}\n`);
  process.exit(3);
});

const INSPECT_FN = `function () { return globalThis[Symbol.for('cc.kernel.inspect')](this); }`;

async function echo(remote) {
  if (!remote || remote.type === 'undefined') return null;
  if (remote.subtype === 'null') return 'null';
  if (remote.unserializableValue !== undefined) return remote.unserializableValue;
  if (remote.type !== 'object' && remote.type !== 'function' && 'value' in remote) return inspect(remote.value);
  if (remote.type === 'symbol' || !remote.objectId) return remote.description ?? null;
  const shown = await post('Runtime.callFunctionOn', {
    objectId: remote.objectId, functionDeclaration: INSPECT_FN, returnByValue: true,
  });
  return shown.result.value ?? remote.description ?? null;
}

function trimStack(stack) {
  // Frames below the evaluated code belong to this driver and the inspector.
  const lines = String(stack).split('\n');
  const cut = lines.findIndex((line) => /at Session\.post \(node:inspector|cc-kernel-driver\.js/.test(line));
  return (cut === -1 ? lines : lines.slice(0, cut)).join('\n');
}

function formatException(details) {
  const exception = details.exception || {};
  if (exception.subtype === 'error') {
    const traceback = trimStack(exception.description || '');
    const first = traceback.split('\n')[0];
    const name = exception.className || 'Error';
    let value = first.startsWith(`${name}: `) ? first.slice(name.length + 2) : first;
    if (/ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING|Cannot use import statement/.test(value)) {
      value += ' (cells are scripts: use `const m = await importModule(\'name\')` or `require(\'name\')`)';
    }
    return { ename: name, evalue: clean(value), traceback: clean(traceback) };
  }
  const value = exception.description ?? (('value' in exception) ? inspect(exception.value) : details.text);
  return { ename: 'Uncaught', evalue: clean(value), traceback: clean(`Uncaught ${value}`) };
}

function interruptedError(how) {
  return { ename: 'Interrupted', evalue: how, traceback: `Interrupted: ${how}` };
}

function barrier(cell) {
  const marker = `\x1e\x1ecc:${NONCE}:${cell}\x1e\x1e`;
  const written = [];
  for (const stream of [process.stdout, process.stderr]) {
    try { stream.write(marker); written.push(true); } catch { written.push(false); }
  }
  return written;
}

// Code that changed on disk between cells (the agent's edits, a `git checkout`, an
// `npm install` in a shell): require() keeps what it loaded, so each cell first drops the
// changed files from require's cache, and says so. Compiled addons cannot be dropped.
const requireStamps = new Map(); // file -> its mtime and size when first seen loaded

function fileStamp(file) {
  try {
    const status = fs.statSync(file, { bigint: true });
    return `${status.mtimeNs}:${status.size}`;
  } catch {
    return null;
  }
}

function stampRequired() {
  for (const file of requireStamps.keys()) {
    if (!(file in Module._cache)) requireStamps.delete(file);
  }
  for (const file of Object.keys(Module._cache)) {
    if (!requireStamps.has(file) && !file.endsWith('.node') && path.isAbsolute(file)) {
      requireStamps.set(file, fileStamp(file));
    }
  }
}

function evictChanged() {
  const changed = [];
  for (const [file, stamp] of requireStamps) {
    if (file in Module._cache && fileStamp(file) !== stamp) changed.push(file);
  }
  if (changed.length === 0) return;
  for (const file of changed) {
    delete Module._cache[file];
    requireStamps.delete(file);
  }
  const shown = changed.map((file) => path.relative(process.cwd(), file)).join(', ');
  process.stdout.write(`Dropped ${shown} from require's cache: changed on disk since loaded, `
    + 'the next require() loads the new code. Values bound before keep the old code; reset '
    + 'for a clean state.\n');
}

async function runCell(message) {
  const { cell, code } = message;
  let finish;
  const stopped = new Promise((resolve) => { finish = resolve; });
  current = { cell, finish };
  Atomics.store(flags, 0, cell);
  let result = null;
  let error = null;
  try {
    try { evictChanged(); } catch { /* never stop a cell for this */ }
    const evaluation = post('Runtime.evaluate', {
      expression: code, replMode: true, awaitPromise: true, objectGroup: 'cc-cell', generatePreview: false,
    });
    const outcome = await Promise.race([evaluation, stopped]);
    Atomics.store(flags, 0, 0);
    if (outcome && outcome.interrupted) {
      error = interruptedError(outcome.interrupted);
      evaluation.catch(() => {});
    } else if (outcome.exceptionDetails) {
      error = formatException(outcome.exceptionDetails);
    } else {
      result = await echo(outcome.result);
      result = result === null ? null : clean(result);
    }
  } catch (caught) {
    Atomics.store(flags, 0, 0);
    const terminated = /Execution was terminated/.test(String(caught && caught.message));
    error = terminated
      ? interruptedError('the running script was terminated')
      : { ename: 'InternalError', evalue: clean(String(caught)), traceback: clean(String(caught && caught.stack)) };
  }
  current = null;
  try { stampRequired(); } catch { /* as above */ }
  post('Runtime.releaseObjectGroup', { objectGroup: 'cc-cell' }).catch(() => {});
  send({ op: 'done', cell, result, error, barrier: barrier(cell) });
}

function onMessage(message) {
  switch (message.op) {
    case 'exec':
      runCell(message);
      break;
    case 'reply': {
      const pending = pendingCalls.get(message.id);
      if (!pending) break;
      pendingCalls.delete(message.id);
      if (message.ok) {
        pending.resolve(message.value);
      } else {
        const { kind = 'internal', message: text = 'the tool call failed', ...details } = message.error || {};
        pending.reject(new ToolError(kind, text, details));
      }
      break;
    }
    case 'interrupt':
      // The main thread is free (the cell awaits something): end the cell here.
      if (current && current.cell === message.cell) {
        Atomics.store(flags, 1, message.cell);
        current.finish({ interrupted: 'the cell was waiting and was abandoned (pending promises may still settle later)' });
      }
      break;
    case 'terminated':
      // A promise the terminated script was awaiting may never settle: give up on it.
      setTimeout(() => {
        if (current && current.cell === message.cell) {
          current.finish({ interrupted: 'the running script was terminated' });
        }
      }, 50);
      break;
    case 'shutdown':
    case 'eof':
      process.exit(0);
      break;
    default:
      break;
  }
}

send({ op: 'ready', version: process.version, executable: process.execPath, pid: process.pid });
