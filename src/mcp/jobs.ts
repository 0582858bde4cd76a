// Calls that can outlast a host's request timeout — an ask that pays and waits for its result, a status wait, a vote —
// run as jobs in the server process, so that every call answers within its budget (default 20 s, well inside the
// 60 s many clients give a request). A call starts the job (or attaches to the one already running for the same call)
// and follows it — with progress notifications when it sent a progressToken — until the job ends or the budget runs
// out; then it answers pending, with what is known so far and the exact call that continues it. Calling that again
// attaches to the running job; after a server restart it starts a new run, which resumes from loopsign's journal.
// The continuation carries no authority: it is the same call, checked again by the same guards, and what was signed
// and paid is in the database, never in the model's hands.
//
// Cancelling a call stops that call's wait, never a payment mid-way. When the last call following a job is cancelled,
// the job's own waits stop too (a round's result, a person's answer): the core watches the job's signal only there,
// between two polls, so whatever is being signed, sent or confirmed finishes and is journaled. A call made meanwhile
// starts a new run once that one has stopped.
import type { Context } from '../context.js';
import { NotReadyError } from '../errors.js';
import type { Audience, Extra } from './call.js';

type Settled = { ok: true; value: Record<string, unknown> } | { ok: false; error: unknown };

/** How long the outcome of a job no call was following is kept for the call that continues it. */
const KEEP_UNCLAIMED_MS = 60 * 60_000;
/** The progress lines a pending answer shows. */
const RECENT = 5;

export class Job {
  readonly startedAt = Date.now();
  /** Aborted when the job's last follower cancels, or the server closes: ends the job's waits, nothing else. */
  readonly stop = new AbortController();
  readonly recent: string[] = [];
  outcome: Settled | undefined;
  done!: Promise<Settled>;
  /** The run's Context, once started (a pending answer reads the database through it). */
  ctx: Context | undefined;

  constructor(readonly audience: Audience) {}

  noteProgress(message: string): void {
    this.recent.push(message);
    if (this.recent.length > RECENT) this.recent.shift();
  }
}

export type Followed = { settled: Settled } | { pending: Job } | { cancelled: true };

export class Jobs {
  private readonly current = new Map<string, Job>();
  /** Jobs whose last follower cancelled, still finishing what cannot be interrupted. */
  private readonly stopping = new Map<string, Job>();

  constructor(private readonly audience: () => Audience) {}

  /**
   * Follows the job of this call (`key`: the tool and its arguments, the budget aside), starting it with `start` when
   * none is running, until it ends, `budgetMs` passes, or the call is cancelled.
   */
  async follow(key: string, start: (job: Job) => Promise<Record<string, unknown>>, extra: Extra, budgetMs: number): Promise<Followed> {
    const job = this.current.get(key) ?? this.launch(key, start);
    job.audience.join(extra);
    let ended: 'settled' | 'budget' | 'cancelled';
    try {
      ended = await race(job.done, budgetMs, extra.signal);
    } finally {
      job.audience.leave(extra);
    }
    if (ended === 'settled') {
      // Delivered: the next call starts afresh (and resumes from the journal, if there is anything to resume).
      if (this.current.get(key) === job) this.current.delete(key);
      return { settled: job.outcome! };
    }
    if (ended === 'cancelled') {
      if (job.audience.size === 0 && !job.outcome) this.halt(key, job);
      return { cancelled: true };
    }
    return { pending: job };
  }

  /** The server is closing: every job's waits end (what is being signed or sent finishes and is journaled). */
  stopAll(): void {
    for (const job of [...this.current.values(), ...this.stopping.values()]) job.stop.abort();
  }

  /** Resolves once every job has ended (each run's claims released, what it was signing or sending journaled). */
  async ended(): Promise<void> {
    await Promise.all([...this.current.values(), ...this.stopping.values()].map((job) => job.done));
  }

  private launch(key: string, start: (job: Job) => Promise<Record<string, unknown>>): Job {
    const previous = this.stopping.get(key);
    const job = new Job(this.audience());
    job.done = (async () => {
      // One run of a call at a time: a cancelled one first finishes what it was signing or sending.
      if (previous) await previous.done;
      return start(job);
    })()
      .then(
        (value): Settled => ({ ok: true, value }),
        (error: unknown): Settled => ({ ok: false, error }),
      )
      .then((outcome) => {
        job.outcome = outcome;
        // Kept for the call that continues it; forgotten after a while if none comes.
        setTimeout(() => this.current.get(key) === job && this.current.delete(key), KEEP_UNCLAIMED_MS).unref();
        return outcome;
      });
    this.current.set(key, job);
    return job;
  }

  /** No call follows the job any more, and its last one was cancelled: its waits end, and the next call starts afresh. */
  private halt(key: string, job: Job): void {
    job.stop.abort();
    if (this.current.get(key) === job) this.current.delete(key);
    this.stopping.set(key, job);
    void job.done.then(() => this.stopping.get(key) === job && this.stopping.delete(key));
  }
}

function race(done: Promise<unknown>, budgetMs: number, signal: AbortSignal): Promise<'settled' | 'budget' | 'cancelled'> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve('cancelled');
    const finish = (how: 'settled' | 'budget' | 'cancelled') => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(how);
    };
    const onAbort = () => finish('cancelled');
    const timer = setTimeout(() => finish('budget'), budgetMs);
    signal.addEventListener('abort', onAbort, { once: true });
    void done.then(() => finish('settled'));
  });
}

/** What a cancelled call answers (the SDK sends no answer to a cancelled request; a client that still reads one sees this). */
export function callCancelled(tool: string): NotReadyError {
  return new NotReadyError(
    'call_cancelled',
    `the ${tool} call was cancelled: it stopped waiting; nothing being signed or sent was interrupted`,
    {
      hint: `call ${tool} again with the same arguments to pick it up; nothing is paid twice`,
    },
  );
}

/** A key for a call: the tool and its arguments in a canonical form. */
export function callKey(tool: string, args: Record<string, unknown>): string {
  return `${tool} ${canonical(args)}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
