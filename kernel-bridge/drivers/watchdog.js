// The watchdog thread of the JavaScript kernel driver (see driver.js). It owns the incoming
// half of the protocol: it reads messages synchronously, so it keeps working while the main
// thread is stuck in `for(;;){}`, and forwards them to the main thread, except interrupts.
'use strict';

const fs = require('fs');
const inspector = require('inspector');
const { parentPort, workerData } = require('worker_threads');

const flags = new Int32Array(workerData.flags);
const nap = new Int32Array(new SharedArrayBuffer(4));
let session = null;

function interrupt(cell) {
  if (Atomics.load(flags, 0) !== cell) return; // that cell is over
  // A main thread that is free (the cell awaits a promise) ends the cell itself.
  parentPort.postMessage({ op: 'interrupt', cell });
  const deadline = Date.now() + 300;
  while (Date.now() < deadline) {
    if (Atomics.load(flags, 1) === cell || Atomics.load(flags, 0) !== cell) return;
    Atomics.wait(nap, 0, 0, 10);
  }
  if (Atomics.load(flags, 0) !== cell) return;
  // The main thread is busy running the cell's code: stop the script from outside.
  if (session === null) {
    session = new inspector.Session();
    session.connectToMainThread();
  }
  session.post('Runtime.terminateExecution');
  parentPort.postMessage({ op: 'terminated', cell });
}

const buffer = Buffer.alloc(64 * 1024);
let pending = Buffer.alloc(0);
for (;;) {
  let count;
  try {
    count = fs.readSync(workerData.inFd, buffer, 0, buffer.length, null);
  } catch (error) {
    if (error.code === 'EAGAIN' || error.code === 'EINTR') {
      Atomics.wait(nap, 0, 0, 5);
      continue;
    }
    count = 0;
  }
  if (count === 0) {
    parentPort.postMessage({ op: 'eof' });
    break;
  }
  pending = Buffer.concat([pending, buffer.subarray(0, count)]);
  let newline;
  while ((newline = pending.indexOf(10)) !== -1) {
    const line = pending.subarray(0, newline).toString('utf8');
    pending = pending.subarray(newline + 1);
    if (!line.trim()) continue;
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      process.stderr.write(`cc kernel watchdog: unreadable message: ${error}\n`);
      continue;
    }
    if (message.op === 'interrupt') {
      interrupt(message.cell);
    } else {
      parentPort.postMessage(message);
    }
  }
}
