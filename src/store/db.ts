// The money state's database (issue 20): one SQLite file in loopsign's state folder, shared by every loopsign
// process on the machine. SQLite's locks are held by the kernel and dropped when a process dies, so there is no stale
// lock to take over; every write is a transaction begun IMMEDIATE (the write lock first, then the reads it depends
// on), so reading the ledger and the policy windows, admitting a signature and recording it happen atomically for
// every process at once. WAL lets readers (status, history) go on while one process writes.
//
// A committed write is copied into loopsign.db itself at once (a checkpoint after every commit, before the write's
// caller goes on: before signed bytes are broadcast, before a receipt's record is relied on). So loopsign.db alone
// holds every committed record whenever no write is in progress: a kill followed by the loss of the -wal and -shm
// files (a backup or sync tool that copies loopsign.db alone) loses no payment record (docs/store.md).
//
// better-sqlite3 is synchronous. A write transaction may await inside (an RPC read, a signature: see `write`), so
// the writes of this process are queued: the one connection never runs two transactions' statements interleaved.
// Waiting for another process's write lock is done here, asynchronously (SQLite's own busy wait would freeze the
// event loop: an MCP server's progress, a signal).
import { closeSync, openSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { ChainError, UsageError } from '../errors.js';
import { ensurePrivateDir, PRIVATE_FILE } from '../fsutil.js';
import { migrate } from './schema.js';
import { timed } from '../timings.js';

export type Db = BetterSqlite3.Database;

/** The database's file name in the state folder. */
export const STORE_FILE = 'loopsign.db';

// statfs(2) f_type of filesystems whose locking SQLite cannot rely on (WAL needs shared memory on one host).
const NETWORK_FS: Record<number, string> = {
  0x6969: 'NFS',
  0x517b: 'SMB',
  0xff534d42: 'CIFS',
  0xfe534d42: 'SMB2',
  0x65735546: 'FUSE (sshfs or another user-space filesystem)',
  0x5346414f: 'AFS',
  0x47504653: 'GPFS',
  0x0bd00bd0: 'Lustre',
  0x01021997: '9P',
};

/** The kind of network filesystem `dir` is on, if statfs tells (Linux); undefined for a local disk or when unknown. */
export function networkFilesystem(dir: string, statfs: (p: string) => { type: number } = statfsSync): string | undefined {
  try {
    return NETWORK_FS[statfs(dir).type >>> 0];
  } catch {
    return undefined;
  }
}

const BUSY_RETRY_MS = [2, 5, 10, 20, 40, 80];
// A slow node or a hardware signer can hold another process's admission for a while; waiting longer than this for the
// database means something is stuck.
const WRITE_WAIT_MS = 300_000;

/**
 * The store whose write transaction the running code is inside. One storage for every store: each live
 * AsyncLocalStorage is carried into every promise the process makes, so one per store made a process that opens many
 * (the slot model test opens one per simulated process, thousands) slower with each.
 */
const inside = new AsyncLocalStorage<Store>();

export class Store {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly file: string,
    readonly db: Db,
  ) {}

  /** Opens (creating and migrating if needed) the database in `dir`, a local folder that is made private. */
  static async open(dir: string, options: { statfs?: (p: string) => { type: number } } = {}): Promise<Store> {
    const file = path.join(dir, STORE_FILE);
    // A folder or file loopsign cannot use (a read-only disk, a directory where the database should be) is one clear
    // line, not an internal error.
    const unusable = (error: unknown) =>
      new UsageError('store_unreadable', `cannot open loopsign's database ${file}: ${(error as Error).message}`, {
        hint: "check the state folder's permissions and free space; the file must be a loopsign database",
      });
    try {
      await ensurePrivateDir(dir);
    } catch (error) {
      throw unusable(error);
    }
    const remote = networkFilesystem(dir, options.statfs);
    if (remote) {
      throw new UsageError(
        'state_on_network_fs',
        `loopsign's state folder ${dir} is on ${remote}; its database needs a local disk (SQLite's locks are not reliable over a network filesystem)`,
        {
          hint: 'point XDG_STATE_HOME at a folder on a local disk',
        },
      );
    }
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    // Another connection may hold the database for a moment as this one opens it: the first opener after a run was
    // killed recovers its write-ahead log, several reruns open it together, sqlite3 may hold a lock. That is waited
    // for like a write (SQLite answers "database is locked" at once here: the busy timeout is not set yet).
    const db = await whileBusy(file, undefined, () => {
      let opened: Db | undefined;
      try {
        // Created 0600 before SQLite opens it (SQLite would use the umask); its -wal and -shm files take its mode.
        closeSync(openSync(file, 'a', PRIVATE_FILE));
        opened = new Database(file, { timeout: 0 });
        opened.pragma('journal_mode = WAL');
        // FULL: a committed admission (the signed bytes) is on disk before the transaction is broadcast.
        opened.pragma('synchronous = FULL');
        opened.pragma('foreign_keys = ON');
        // Readers and the first statement of a write wait here briefly; longer waits are `write`'s, asynchronous.
        opened.pragma('busy_timeout = 100');
        return opened;
      } catch (error) {
        opened?.close();
        throw isBusy(error) ? error : unusable(error);
      }
    });
    const store = new Store(file, db);
    await store.write(() => migrate(db));
    return store;
  }

  /**
   * Runs `fn` in a write transaction (BEGIN IMMEDIATE: the database's write lock is taken first, so what `fn` reads
   * cannot change before it commits). `fn` may await (an RPC read, a signature): other processes' writes wait
   * meanwhile, and so do this process's other writes (queued). A throw rolls everything back. A write inside a
   * write joins it. Once committed it is checkpointed into loopsign.db before this resolves, unless `durable` is
   * false: a write whose loss harms nothing (a claim: its process is gone with it), copied with the next one.
   */
  async write<T>(fn: (db: Db) => T | Promise<T>, options: { signal?: AbortSignal; durable?: boolean } = {}): Promise<T> {
    if (inside.getStore() === this) return fn(this.db);
    const run = this.queue.then(() => inside.run(this, () => this.transaction(fn, options.signal, options.durable !== false)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Synchronous reads (WAL: never blocked by another process's write). */
  read<T>(fn: (db: Db) => T): T {
    return fn(this.db);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private async transaction<T>(fn: (db: Db) => T | Promise<T>, signal: AbortSignal | undefined, durable: boolean): Promise<T> {
    await this.begin(signal);
    try {
      const result = await fn(this.db);
      this.db.exec('COMMIT');
      if (durable) await this.checkpoint(signal);
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * Copies every committed frame of the write-ahead log into the database file and syncs it (synchronous = FULL).
   * PASSIVE waits for no other writer (another process's write transaction may be awaiting a hardware signer); it
   * can only stop short of the end for a reader still on an older snapshot, a moment: then it is tried again.
   */
  private async checkpoint(signal?: AbortSignal): Promise<void> {
    await timed('checkpoint', () => this.checkpointNow(signal));
  }

  private async checkpointNow(signal?: AbortSignal): Promise<void> {
    await whileBusy(this.file, signal, () => {
      const [row] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
      // log is -1 when the database is not in WAL mode (nothing to copy).
      if (row && row.log > 0 && row.checkpointed < row.log)
        throw Object.assign(new Error('checkpoint incomplete'), { code: 'SQLITE_BUSY_CHECKPOINT' });
    });
  }

  private async begin(signal?: AbortSignal): Promise<void> {
    await whileBusy(this.file, signal, () => this.db.exec('BEGIN IMMEDIATE'));
  }
}

/** SQLite's "another connection holds it" answers, extended codes included (SQLITE_BUSY_RECOVERY while a log is recovered). */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Runs `fn` until it is not refused as busy, waiting asynchronously in between, for at most WRITE_WAIT_MS. */
async function whileBusy<T>(file: string, signal: AbortSignal | undefined, fn: () => T): Promise<T> {
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    signal?.throwIfAborted();
    if (Date.now() - start > WRITE_WAIT_MS) {
      throw new ChainError(
        'store_busy',
        `another loopsign process has held the database ${file} for over ${WRITE_WAIT_MS / 60_000} minutes; nothing was signed`,
        {
          hint: 'wait for it to finish (a hardware signer waiting for a button, a very slow RPC), then run the same command again',
        },
      );
    }
    await new Promise((r) => setTimeout(r, BUSY_RETRY_MS[Math.min(attempt, BUSY_RETRY_MS.length - 1)]));
  }
}
