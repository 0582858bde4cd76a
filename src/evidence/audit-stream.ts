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
}

export interface StreamedAudit extends Verdict {
  /** Whether the first, speculative reading had to be redone exactly. */
  recut: boolean;
}

export async function verifyAuditFile(file: string, options: StreamOptions = {}): Promise<StreamedAudit> {
  const pool = new Pool(options.workers ?? defaultWorkers(), (options.batchBytes ?? BATCH_BYTES) + BATCH_SLACK, options.partBytes);
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
  private readonly started: Worker[] = [];
  private next = 0;
  // Buffers of batches already checked, handed back by the workers (transferred, not copied).
  private readonly spare: ArrayBuffer[] = [];
  // Two batches in flight per worker: one being checked, one waiting, so a worker never idles on the reader.
  private static readonly DEPTH = 2;

  constructor(
    count: number,
    private readonly capacity: number,
    private readonly partBytes: number | undefined,
  ) {
    this.workers = Array.from({ length: count }, () => ({ pending: new Map<number, Pending>() }));
  }

  private start(slot: Pool['workers'][number]): Worker {
    // A bounded young generation: a batch's events die young. 16 MB keeps a million-event export near 185 MB
    // peak (with two workers and 32 MB: 285 MB, of the 300 MB allowed); 8 MB cost more CPU in scavenges. The file is
    // one CommonJS bundle, which a worker starts faster than an ES module (scripts/bundle.mjs).
    const worker = new Worker(packageFile('dist', 'evidence', 'audit-worker.cjs'), { resourceLimits: { maxYoungGenerationSizeMb: 16 } });
    const { pending } = slot;
    worker.on('message', ({ id, report, buffer }: { id: number; report: BatchReport; buffer: ArrayBuffer }) => {
      this.recycle(buffer);
      pending.get(id)?.resolve(report);
      pending.delete(id);
    });
    // A worker that fails takes its batches with it (the verification fails) and gets no more.
    const failAll = (error: Error): void => {
      for (const p of pending.values()) p.reject(error);
      pending.clear();
      this.workers = this.workers.filter((w) => w !== slot);
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`an audit worker stopped (exit ${code})`)));
    this.started.push(worker);
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

  async close(): Promise<void> {
    await Promise.all(this.started.map((worker) => worker.terminate()));
  }
}
