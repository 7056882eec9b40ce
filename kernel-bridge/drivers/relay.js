// The relay of the JavaScript kernel through an enclosure (see kernel-bridge/src/kernel.rs).
//
// An enclosure passes only stdin, stdout and stderr, and node cannot move its own fd 1 aside
// the way the Python driver does, so cells and their child processes would write into the
// protocol's stdout. Instead this process keeps the original stdin/stdout for the protocol
// and runs the real kernel as a child in host mode: control on fds 3 and 4, stdout a pipe
// whose bytes go to the host as "out" frames. This process is the only writer of its stdout,
// so no user output can split or forge a frame. stderr is passed through untouched.
//
// Run by the bootstrap as a function of (require, ARGS, importModule) with KERNEL_BOOT (the
// bootstrap itself) and KERNEL_SOURCE (the host-mode driver) prepended.
'use strict';

const { spawn } = require('child_process');

const NONCE = ARGS[1];
const FRAME = '\x1fcc:';
// Gives the kernel's last output a moment to arrive after it exits; a grandchild that keeps
// its stdout open must not keep the relay alive.
const EXIT_DRAIN_MS = 200;

const kernel = spawn(process.execPath, ['-e', KERNEL_BOOT, 'host', NONCE, '3', '4'], {
  stdio: ['ignore', 'pipe', 'inherit', 'pipe', 'pipe'],
});
const toKernel = kernel.stdio[3];
const fromKernel = kernel.stdio[4];

function write(line) {
  // Writes to a pipe are synchronous on Linux: a frame is never cut by another frame.
  process.stdout.write(FRAME + line + '\n');
}

// The host's messages (lines) go to the kernel as they are, after its driver's source.
const source = Buffer.from(KERNEL_SOURCE, 'utf8');
toKernel.write(`${source.length}\n`);
toKernel.write(source);
process.stdin.pipe(toKernel);
toKernel.on('error', () => {}); // the kernel is gone; its exit ends the relay

let pending = '';
fromKernel.setEncoding('utf8');
fromKernel.on('data', (chunk) => {
  pending += chunk;
  let newline;
  while ((newline = pending.indexOf('\n')) !== -1) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (line.trim()) write(line);
  }
});

// Bytes as Latin-1 code points survive JSON and come back as the same bytes on the host.
kernel.stdout.on('data', (bytes) => write(JSON.stringify({ op: 'out', data: bytes.toString('latin1') })));

let exited = null;
function finish() {
  if (exited === null) return;
  const [code, signal] = exited;
  if (signal) {
    // Die the same way, so the host reports what happened to the kernel.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code === null ? 1 : code);
}
kernel.on('exit', (code, signal) => {
  exited = [code, signal];
  setTimeout(finish, EXIT_DRAIN_MS);
});
kernel.on('close', finish);
kernel.on('error', (error) => {
  process.stderr.write(`cc kernel relay: cannot start the kernel: ${error.message}\n`);
  process.exit(3);
});
