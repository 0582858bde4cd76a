// One run at a time, without lock files: a claim is a row naming the process that holds it, taken inside a write
// transaction. Whether an earlier holder still runs is decided in that same transaction, so two processes that both
// find a dead holder cannot both take its place: the second one's transaction sees the first one's row, whose
// process runs. A claim ends when its run releases it, or when its process dies (nothing to clean up).
import { randomBytes } from 'node:crypto';
import type { Store } from './db.js';
import { currentProcess, isRunning, type ProcessIdentity } from './process-identity.js';

export interface Claim {
  readonly name: string;
  release(): Promise<void>;
}

interface ClaimRow extends ProcessIdentity {
  token: string;
}

/** Takes the claim now, or returns undefined while a running process (this one included, for another run) holds it. */
export async function tryClaim(store: Store, name: string): Promise<Claim | undefined> {
  const me = currentProcess();
  const token = randomBytes(12).toString('hex');
  // Not checkpointed on its own (src/store/db.ts): a claim lost with the -wal after a kill names a process that is gone.
  const taken = await store.write(
    (db) => {
      const row = db.prepare('SELECT pid, started, boot, token FROM claims WHERE name = ?').get(name) as ClaimRow | undefined;
      if (row && isRunning(row)) return false;
      db.prepare(
        `INSERT INTO claims (name, pid, started, boot, token, claimed_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET pid = excluded.pid, started = excluded.started, boot = excluded.boot, token = excluded.token, claimed_at = excluded.claimed_at`,
      ).run(name, me.pid, me.started, me.boot, token, Date.now());
      return true;
    },
    { durable: false },
  );
  if (!taken) return undefined;
  let released = false;
  return {
    name,
    release: async () => {
      if (released) return;
      released = true;
      await store.write((db) => db.prepare('DELETE FROM claims WHERE name = ? AND token = ?').run(name, token), { durable: false });
    },
  };
}

/**
 * Takes the claim, waiting up to `waitMs` for a running holder to finish (`onWait` is told once); then throws
 * `busy()`. With no wait, a held claim throws at once.
 */
export async function claim(
  store: Store,
  name: string,
  options: { waitMs?: number; busy: () => Error; onWait?: () => void; signal?: AbortSignal },
): Promise<Claim> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  let told = false;
  for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
    const got = await tryClaim(store, name);
    if (got) return got;
    if (Date.now() >= deadline) throw options.busy();
    if (!told) {
      told = true;
      options.onWait?.();
    }
    options.signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, delay));
  }
}
