// Verifying a large audit export without holding it, on every core: the file is read in chunks and cut into
// batches of events (audit-split.ts), which worker threads scan, parse and hash (audit-batch.ts, audit-worker.ts);
// the batches' runs are joined in order (joinRuns). The verdict is what verifyAuditExport — the reference, which
// the tests compare this path against — reports for the same file, and memory stays bounded by the batches in
// flight, however many events the file has.
import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { checkBatch, type BatchReport, type BatchTask } from './audit-batch.js';
import { ExportSplitter, type Submit, type Verdict } from './audit-split.js';

const MiB = 1024 * 1024;
const BATCH_BYTES = 1 * MiB;

/** One worker per core (at most four); the main thread only reads and cuts. On one core, batches are checked in place. */
export function defaultWorkers(): number {
  const cores = availableParallelism();
  return cores < 2 ? 0 : Math.min(cores, 4);
}

export interface StreamOptions {
  expectedHead?: string;
  /** Worker threads; 0 checks the batches on this thread (still streamed). */
  workers?: number;
  /** About how many bytes of events go into a batch (tests make it small to put breaks at batch boundaries). */
  batchBytes?: number;
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
  const pool = new Pool(options.workers ?? defaultWorkers());
  try {
    if (!options.exact) {
      const guessed = await pass(file, options, pool.submit, true);
      if (guessed) return { ...guessed, recut: false };
    }
    return { ...(await pass(file, options, pool.submit, false))!, recut: !options.exact };
  } finally {
    await pool.close();
  }
}

/** One reading of the file; undefined when a speculative cut proved wrong. */
async function pass(file: string, options: StreamOptions, submit: Submit, speculative: boolean): Promise<Verdict | undefined> {
  const splitter = new ExportSplitter(submit, options.batchBytes ?? BATCH_BYTES, options.name ?? file, speculative);
  for await (const chunk of createReadStream(file, { highWaterMark: options.chunkBytes ?? MiB })) {
    await splitter.push(chunk as Buffer);
    if (splitter.stopped || splitter.misjudged) break; // leaving the loop closes the file
  }
  if (!splitter.misjudged) await splitter.end();
  const verdict = await splitter.verdict(options.expectedHead);
  return splitter.misjudged ? undefined : verdict;
}

type Pending = { resolve: (r: BatchReport) => void; reject: (e: Error) => void };

/** Worker threads checking batches; with none, batches are checked here as they are cut. */
class Pool {
  private readonly workers: { worker: Worker; pending: Map<number, Pending> }[] = [];
  private next = 0;
  private freed?: () => void;
  // Two batches in flight per worker: one being checked, one waiting, so a worker never idles on the reader.
  private static readonly DEPTH = 2;

  constructor(count: number) {
    for (let k = 0; k < count; k++) {
      // A bounded young generation: a batch's events die young. 16 MB keeps a million-event export near 220 MB
      // peak (32 MB: 285 MB, of the 300 MB allowed), and 8 MB cost some 10% more CPU in scavenges (bench/evidence.mjs).
      const worker = new Worker(new URL('./audit-worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 16 } });
      const pending = new Map<number, Pending>();
      worker.on('message', ({ id, report }: { id: number; report: BatchReport }) => {
        pending.get(id)?.resolve(report);
        pending.delete(id);
        this.freed?.();
      });
      const failAll = (error: Error): void => {
        for (const p of pending.values()) p.reject(error);
        pending.clear();
        this.freed?.();
      };
      worker.on('error', failAll);
      worker.on('exit', (code) => failAll(new Error(`an audit worker stopped (exit ${code})`)));
      this.workers.push({ worker, pending });
    }
  }

  /** Waits for room, then hands back the batch's report to come (boxed, so that it is not awaited here). */
  readonly submit: Submit = async (task: BatchTask) => {
    if (this.workers.length === 0) return { report: Promise.resolve(checkBatch(task)) };
    for (;;) {
      const least = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      if (least.pending.size < Pool.DEPTH) {
        const id = this.next++;
        const report = new Promise<BatchReport>((resolve, reject) => least.pending.set(id, { resolve, reject }));
        report.catch(() => undefined); // awaited later, in order; an early failure must not go unhandled meanwhile
        least.worker.postMessage({ id, ...task }, [task.bytes.buffer as ArrayBuffer]);
        return { report };
      }
      await new Promise<void>((resolve) => (this.freed = resolve));
    }
  };

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }
}
