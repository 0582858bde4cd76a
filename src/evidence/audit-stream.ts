// Verifying a large audit export without holding it, on every core: the file is read in chunks and cut into
// batches of events (audit-split.ts), which worker threads — and this thread, whenever they are all busy — scan,
// parse and hash (audit-batch.ts, audit-worker.ts); the batches' runs are joined in order (joinRuns). The verdict is
// what verifyAuditExport — the reference, which the tests compare this path against — reports for the same file,
// and memory stays bounded by the batches in flight, however many events the file has.
import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { checkBatch, type BatchReport, type BatchTask } from './audit-batch.js';
import { ExportSplitter, type Checker, type Verdict } from './audit-split.js';
import { packageFile } from '../package-root.js';

const MiB = 1024 * 1024;
const BATCH_BYTES = 1 * MiB;

/**
 * One worker per core besides this one (at most three): this thread reads and cuts, and checks a batch itself
 * whenever every worker has its fill. On two cores one worker and this thread share the batches, which measured
 * faster than two workers with this thread mostly idle (a worker costs a start and its own warm-up, bench/evidence.mjs).
 */
export function defaultWorkers(): number {
  return Math.min(availableParallelism() - 1, 3);
}

export interface StreamOptions {
  expectedHead?: string;
  /** Worker threads; 0 checks every batch on this thread (still streamed). */
  workers?: number;
  /** About how many bytes of events go into a batch (tests make it small to put breaks at batch boundaries). */
  batchBytes?: number;
  /** About how many bytes of a batch are parsed at a time (tests make it small: see checkBatch). */
  partBytes?: number;
  /** How much is read at a time (tests make it tiny, so that strings, escapes and boundaries straddle chunks). */
  chunkBytes?: number;
  /** Cut the events array exactly from the start instead of guessing first (tests compare the two). */
  exact?: boolean;
  /** The file's name in messages. */
  name?: string;
  /** How long this file's workers wait for the next file's batches once it is done (default IDLE_MS). */
  keepWorkersMs?: number;
}

export interface StreamedAudit extends Verdict {
  /** Whether the first, speculative reading had to be redone exactly. */
  recut: boolean;
}

export async function verifyAuditFile(file: string, options: StreamOptions = {}): Promise<StreamedAudit> {
  const pool = new Pool(
    options.workers ?? defaultWorkers(),
    (options.batchBytes ?? BATCH_BYTES) + BATCH_SLACK,
    options.partBytes,
    options.keepWorkersMs ?? IDLE_MS,
  );
  try {
    if (!options.exact) {
      const guessed = await pass(file, options, pool, true);
      if (guessed) return { ...guessed, recut: false };
    }
    return { ...(await pass(file, options, pool, false))!, recut: !options.exact };
  } finally {
    await pool.close();
  }
}

/** One reading of the file; undefined when a speculative cut proved wrong. */
async function pass(file: string, options: StreamOptions, checker: Checker, speculative: boolean): Promise<Verdict | undefined> {
  const splitter = new ExportSplitter(checker, options.batchBytes ?? BATCH_BYTES, options.name ?? file, speculative);
  for await (const chunk of createReadStream(file, { highWaterMark: options.chunkBytes ?? MiB })) {
    await splitter.push(chunk as Buffer);
    if (splitter.stopped || splitter.misjudged) break; // leaving the loop closes the file
  }
  if (!splitter.misjudged) await splitter.end();
  const verdict = await splitter.verdict(options.expectedHead);
  return splitter.misjudged ? undefined : verdict;
}

type Pending = { resolve: (r: BatchReport) => void; reject: (e: Error) => void };

/** Room for the event that ends a batch past its size, so that a recycled buffer almost always fits. */
const BATCH_SLACK = 64 * 1024;

/** Worker threads checking batches, and this thread when they are all busy; batch buffers go round, not to the collector. */
class Pool implements Checker {
  // A worker is started when the first batch is dealt to it: a file refused before its events array (not JSON, a
  // field over its cap, no events) starts none, where each would cost ~25 ms of CPU for nothing.
  private workers: { worker?: Worker; pending: Map<number, Pending> }[];
  private readonly started: { worker: Worker; release: () => boolean }[] = [];
  private next = 0;
  // Buffers of batches already checked, handed back by the workers (transferred, not copied).
  private readonly spare: ArrayBuffer[] = [];
  // Two batches in flight per worker: one being checked, one waiting, so a worker never idles on the reader.
  private static readonly DEPTH = 2;

  constructor(
    count: number,
    private readonly capacity: number,
    private readonly partBytes: number | undefined,
    private readonly keepWorkersMs: number,
  ) {
    this.workers = Array.from({ length: count }, () => ({ pending: new Map<number, Pending>() }));
  }

  private start(slot: Pool['workers'][number]): Worker {
    const worker = idleWorkers.take() ?? newWorker();
    const { pending } = slot;
    const onMessage = ({ id, report, buffer }: { id: number; report: BatchReport; buffer: ArrayBuffer }) => {
      this.recycle(buffer);
      pending.get(id)?.resolve(report);
      pending.delete(id);
    };
    // A worker that fails takes its batches with it (the verification fails) and gets no more.
    const failAll = (error: Error): void => {
      for (const p of pending.values()) p.reject(error);
      pending.clear();
      this.workers = this.workers.filter((w) => w !== slot);
    };
    const onExit = (code: number) => failAll(new Error(`an audit worker stopped (exit ${code})`));
    worker.on('message', onMessage);
    worker.on('error', failAll);
    worker.on('exit', onExit);
    this.started.push({
      worker,
      // Handed back only when it is sound and idle: still dealt to (no error, no exit) and no batch of this file in
      // it, so that no report of this file can ever reach the next one.
      release: () => {
        worker.off('message', onMessage);
        worker.off('error', failAll);
        worker.off('exit', onExit);
        // Its failure from now on concerns no file, but must still be heard: an 'error' no one listens for ends the
        // process, and a worker stopped with batches in it may already have failed on one, its error not yet delivered.
        worker.on('error', unheard);
        return this.workers.includes(slot) && pending.size === 0;
      },
    });
    return worker;
  }

  buffer(size: number): Buffer {
    const k = this.spare.findIndex((b) => b.byteLength >= size);
    const memory = k === -1 ? new ArrayBuffer(Math.max(size, this.capacity)) : this.spare.splice(k, 1)[0]!;
    return Buffer.from(memory, 0, size);
  }

  private recycle(memory: ArrayBuffer): void {
    if (this.spare.length < 2 * Pool.DEPTH * (this.workers.length + 1)) this.spare.push(memory);
  }

  /** To the least busy worker with room; when every worker has its fill, checked here and now (the reader waits). */
  async submit(batch: BatchTask): Promise<{ report: Promise<BatchReport> }> {
    const task: BatchTask = this.partBytes === undefined ? batch : { ...batch, partBytes: this.partBytes };
    const least = this.workers.reduce<Pool['workers'][number] | undefined>(
      (a, b) => (a && a.pending.size <= b.pending.size ? a : b),
      undefined,
    );
    if (!least || least.pending.size >= Pool.DEPTH) {
      const report = checkBatch(task);
      this.recycle(task.bytes.buffer as ArrayBuffer);
      return { report: Promise.resolve(report) };
    }
    const worker = (least.worker ??= this.start(least));
    const id = this.next++;
    const report = new Promise<BatchReport>((resolve, reject) => least.pending.set(id, { resolve, reject }));
    report.catch(() => undefined); // awaited later, in order; an early failure must not go unhandled meanwhile
    worker.postMessage({ id, ...task }, [task.bytes.buffer as ArrayBuffer]);
    return { report };
  }

  /** Sound, idle workers wait for the next file (idleWorkers); any other is stopped. */
  async close(): Promise<void> {
    await Promise.all(
      this.started.map(({ worker, release }) => (release() ? idleWorkers.keep(worker, this.keepWorkersMs) : worker.terminate())),
    );
  }
}

/** The 'error' listener of a worker no file deals to any more (Pool.close), waiting or being stopped. */
const unheard = (): void => undefined;

function newWorker(): Worker {
  // A bounded young generation: a batch's events die young. 16 MB keeps a million-event export near 185 MB
  // peak (with two workers and 32 MB: 285 MB, of the 300 MB allowed); 8 MB cost more CPU in scavenges. The file is
  // one CommonJS bundle, which a worker starts faster than an ES module (scripts/bundle.mjs).
  return new Worker(packageFile('dist', 'evidence', 'audit-worker.cjs'), { resourceLimits: { maxYoungGenerationSizeMb: 16 } });
}

/**
 * Workers between files, kept for a short while: a worker costs ~24 ms of CPU to start and stop, more than checking a
 * small export, and a process that verifies one file after another (the MCP server's loopsign_verify_evidence, the
 * tests) would otherwise pay it for every file. A worker holds nothing between batches (audit-worker.ts checks each
 * batch on its own), and only one that finished every batch it was given comes back (Pool.close). Waiting, a worker
 * keeps no process alive, and is stopped after IDLE_MS (or the last file's keepWorkersMs).
 */
const IDLE_MS = 5000;
// More than a file's workers are kept only when files were verified at once; the rest are stopped.
const IDLE_MAX = 4;
const idleWorkers = new (class {
  // Each waiting worker with the listener that drops it should it stop on its own.
  private readonly waiting = new Map<Worker, () => void>();
  private timer: NodeJS.Timeout | undefined;

  take(): Worker | undefined {
    const [worker, onExit] = [...this.waiting][0] ?? [];
    if (!worker || !onExit) return undefined;
    this.waiting.delete(worker);
    worker.off('exit', onExit);
    worker.off('error', unheard);
    worker.ref();
    return worker;
  }

  async keep(worker: Worker, ms: number): Promise<void> {
    if (this.waiting.size >= IDLE_MAX) {
      await worker.terminate();
      return;
    }
    const onExit = () => void this.waiting.delete(worker);
    worker.once('exit', onExit);
    worker.unref();
    this.waiting.set(worker, onExit);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.stop(), ms).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    const all = [...this.waiting];
    this.waiting.clear();
    await Promise.all(all.map(([worker, onExit]) => (worker.off('exit', onExit), worker.terminate())));
  }

  get count(): number {
    return this.waiting.size;
  }
})();

/** Stops the workers waiting for another file; how many were waiting. For tests that count the workers a file starts. */
export async function stopIdleAuditWorkers(): Promise<number> {
  const n = idleWorkers.count;
  await idleWorkers.stop();
  return n;
}
