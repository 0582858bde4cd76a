// Global setup: one sandbox per vitest worker, shared by the end-to-end files that worker runs. Starting a sandbox
// (anvil, contracts, service) costs seconds of a 2-core machine; most files need only a chain and a service, with
// their own wallet (test/helpers/sandbox-pool.ts makes and funds one per file).
//
// A tiny HTTP broker on 127.0.0.1 runs here, in vitest's main process; its URL is provided to the test files. A file
// asks it for the sandbox of its worker (VITEST_POOL_ID): the first ask starts one (`loopsign --json sandbox`, as
// startSandbox does), later ones get the same. A worker runs its files one after another, so one pool id's sandbox is
// never used by two files at once. When a file is done it gives the sandbox back and the broker resets it (POST
// /__sandbox/reset: start-up settings, no fault or hostile scenario armed); a file that never gave it back (it
// failed in its setup, its worker was killed) has it reset before the next file gets it. At teardown every sandbox
// started here is stopped by its PID, and the run fails if any of its processes is left.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { alive, startSandbox, type SandboxHandle } from '../helpers/sandbox.js';

declare module 'vitest' {
  export interface ProvidedContext {
    sandboxBroker: string;
  }
}

interface Slot {
  /** The sandbox being started or running. */
  sandbox: Promise<SandboxHandle>;
  /** The file holding it (undefined once given back, reset). */
  holder?: string;
  /** The files it was handed to, in turn (printed at the end: what ran before a file that failed on it). */
  files: string[];
}

const slots = new Map<string, Slot>();
const started: SandboxHandle[] = [];
const counts = { started: 0, handedOut: 0, resetOnReturn: 0, resetForNext: 0, startMs: 0 };

function start(): Promise<SandboxHandle> {
  counts.started++;
  const t0 = Date.now();
  return startSandbox().then((sb) => {
    counts.startMs += Date.now() - t0;
    started.push(sb);
    return sb;
  });
}

/** Resets it; a sandbox that cannot be reset is stopped, so the next file gets a new one rather than a broken one. */
async function reset(sb: SandboxHandle): Promise<boolean> {
  try {
    await sb.control('/__sandbox/reset', {});
    return true;
  } catch (error) {
    console.error(`sandbox pool: a sandbox could not be reset, replacing it: ${(error as Error).message}`);
    await sb.stop();
    return false;
  }
}

/** The sandbox for this pool id: started on first use, started again if it died, reset if its last holder kept it. */
async function acquire(pool: string, file: string): Promise<SandboxHandle> {
  let slot = slots.get(pool);
  if (!slot) {
    slot = { sandbox: start(), files: [] };
    slots.set(pool, slot);
  }
  let sb = await slot.sandbox.catch(() => undefined);
  if (sb && sb.child?.exitCode === null && slot.holder !== undefined) {
    counts.resetForNext++;
    slot.files.push('(reset: not given back)');
    if (!(await reset(sb))) sb = undefined;
  }
  if (!sb || sb.child?.exitCode !== null) {
    slot.sandbox = start();
    slot.holder = undefined;
    slot.files.push('(a new sandbox)');
    sb = await slot.sandbox;
  }
  slot.holder = file;
  slot.files.push(file.replace(/ \(\w+\)$/, '').replace(/^test\//, ''));
  counts.handedOut++;
  return sb;
}

async function release(pool: string, file: string): Promise<void> {
  const slot = slots.get(pool);
  if (!slot || slot.holder !== file) return;
  slot.holder = undefined;
  counts.resetOnReturn++;
  await reset(await slot.sandbox);
}

async function body(req: IncomingMessage): Promise<Record<string, string>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text || '{}');
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const b = await body(req);
    const pool = String(b.pool ?? '');
    const file = String(b.file ?? '');
    if (!pool || !file) throw new Error('pool and file are required');
    if (req.method === 'POST' && req.url === '/acquire') {
      const sb = await acquire(pool, file);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ info: sb.info, stateDir: sb.stateDir }));
    } else if (req.method === 'POST' && req.url === '/release') {
      await release(pool, file);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"released":true}');
    } else res.writeHead(404).end('{}');
  } catch (error) {
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (error as Error).message }));
  }
}

export default async function setup(project: TestProject) {
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  project.provide('sandboxBroker', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const sandboxes = await Promise.all([...slots.values()].map((s) => s.sandbox.catch(() => undefined)));
    const pids = started.flatMap((sb) => [sb.info.pids.sandbox, sb.info.pids.anvil]);
    await Promise.all(started.map((sb) => sb.stop()));
    const left = pids.filter(alive);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    if (counts.started > 0)
      console.log(
        `sandbox pool: ${counts.started} sandboxes started (${sandboxes.filter(Boolean).length} workers, ${(counts.startMs / 1000).toFixed(1)} s ` +
          `starting them) for ${counts.handedOut} files; ` +
          `reset ${counts.resetOnReturn} times when given back, ${counts.resetForNext} times for a file that did not give it back`,
      );
    for (const [pool, slot] of slots) console.log(`sandbox pool: worker ${pool}: ${slot.files.join(' → ')}`);
    if (left.length > 0) {
      console.error(`sandbox pool: processes left after SIGTERM (killed): ${left.join(', ')}`);
      process.exitCode = 1;
    }
  };
}
