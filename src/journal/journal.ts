// The journal: one file per operation under $XDG_STATE_HOME/loopsign/journal, mode 0600, rewritten atomically
// after every step, and locked so a second loopsign process cannot work on the same operation. Every signed
// transaction is recorded (hash and raw bytes) before it is broadcast, so an interrupted command resumes
// without sending anything twice. Nothing secret is written here except what the user must keep to prove a vote.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';
import { createFileAtomically, ensurePrivateDir, writeFileAtomically } from '../fsutil.js';
import { journalDir } from '../paths.js';
import { acquireLock } from './lock.js';
import { jsonText } from '../output.js';

export interface JournalTx {
  stage: string; // 'ask' | 'bonus' | 'rate:<round>' | …
  calls: number[]; // plan call indexes this transaction covered when it was signed (for people; resume matches calls by digest)
  hash: `0x${string}`;
  // The signed bytes: resent as they are, never re-signed; which calls the transaction carries (and so what it can
  // pay) is read back from them, so nothing that could be derived is trusted from the journal.
  raw: `0x${string}`;
  nonce: number;
  kind: 'call' | 'batch' | 'batch+authorization';
  // dropped: provably never minable — its nonce is taken by another journaled transaction of this wallet that is mined.
  status: 'signed' | 'mined' | 'reverted' | 'dropped';
  blockNumber?: string;
  /** The spend ledger's record of what this transaction can cause (token, spender, atomic units), for people and policies. */
  effects?: RecordedEffect[];
  signedAt?: string;
}

/** A transaction that may still move money: signed (pending or lost before broadcast) or mined. */
export function isLive(tx: Pick<JournalTx, 'status'>): boolean {
  return tx.status === 'signed' || tx.status === 'mined';
}

export interface RecordedEffect {
  asset: 'USDC' | 'LREP';
  kind: 'approve' | 'authorization' | 'pull';
  spender: string;
  amount: string;
}

/** An EIP-3009 authorization this wallet signed for the operation (it can move USDC without a transaction). */
export interface JournalAuthorization {
  stage: string;
  message: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: `0x${string}`;
  signedAt: string;
  /** Proven unusable: its validity passed and the token says its nonce was never used. */
  dead?: boolean;
}

export interface JournalData {
  version: 1;
  kind: string;
  id: string;
  chainId: number;
  wallet: string;
  createdAt: string;
  updatedAt: string;
  step: string;
  txs: JournalTx[];
  [key: string]: unknown;
}

export function journalId(kind: string, parts: (string | number)[]): string {
  return `${kind}-${createHash('sha256').update(parts.join(':').toLowerCase()).digest('hex').slice(0, 32)}`;
}

export class Journal {
  private constructor(
    readonly file: string,
    public data: JournalData,
    private readonly unlock: () => Promise<void>,
  ) {}

  static path(id: string): string {
    return path.join(journalDir(), `${id}.json`);
  }

  static async read(id: string): Promise<JournalData | undefined> {
    try {
      return JSON.parse(await fs.readFile(Journal.path(id), 'utf8')) as JournalData;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new UsageError('journal_unreadable', `cannot read the journal ${Journal.path(id)}: ${(error as Error).message}`);
    }
  }

  /** Open (creating if needed) and lock a journal. */
  static async open(id: string, init: { kind: string; chainId: number; wallet: string; [key: string]: unknown }): Promise<Journal> {
    const dir = journalDir();
    await ensurePrivateDir(dir);
    const file = Journal.path(id);
    const now = new Date().toISOString();
    const fresh: JournalData = { ...init, version: 1, id, createdAt: now, updatedAt: now, step: 'created', txs: [] };
    await createFileAtomically(file, jsonText(fresh) + '\n').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // No waiting: a second process on the same operation is told so at once.
    const release = await acquireLock(file, { locked: () => lockedError(file) });
    const data = (await Journal.read(id))!;
    return new Journal(file, data, release);
  }

  async save(patch: Partial<JournalData> = {}): Promise<void> {
    Object.assign(this.data, patch, { updatedAt: new Date().toISOString() });
    await writeFileAtomically(this.file, jsonText(this.data) + '\n');
  }

  async step(step: string, patch: Partial<JournalData> = {}): Promise<void> {
    await this.save({ ...patch, step });
    crashHook(step);
  }

  async addTx(tx: JournalTx): Promise<void> {
    this.data.txs.push(tx);
    await this.save();
    crashHook(`${tx.stage}:signed:${tx.calls.join(',')}`);
  }

  async updateTx(hash: string, patch: Partial<JournalTx>): Promise<void> {
    const tx = this.data.txs.find((t) => t.hash === hash);
    if (tx) Object.assign(tx, patch);
    await this.save();
    if (tx) crashHook(`${tx.stage}:${tx.status}:${tx.calls.join(',')}`);
  }

  txsFor(stage: string): JournalTx[] {
    return this.data.txs.filter((t) => t.stage === stage);
  }

  /** The authorizations signed for this operation (the same objects: marking one dead and saving persists it). */
  authorizations(): JournalAuthorization[] {
    return ((this.data.authorizations ??= []) as JournalAuthorization[]);
  }

  /** Records an authorization before its signature leaves the process. */
  async addAuthorization(a: JournalAuthorization): Promise<void> {
    this.authorizations().push(a);
    await this.save();
    crashHook(`${a.stage}:authorization_signed`);
  }

  async close(): Promise<void> {
    await this.unlock().catch(() => undefined);
  }
}

/** The hash of a transaction another journal of this wallet signed with this nonce, if any. */
export async function findJournaledNonce(chainId: number, wallet: string, nonce: number, exceptHash: string): Promise<`0x${string}` | undefined> {
  let names: string[];
  try {
    names = (await fs.readdir(journalDir())).filter((n) => n.endsWith('.json'));
  } catch {
    return undefined;
  }
  for (const name of names) {
    const data = await Journal.read(path.basename(name, '.json')).catch(() => undefined);
    if (!data || data.chainId !== chainId || String(data.wallet).toLowerCase() !== wallet.toLowerCase() || !Array.isArray(data.txs)) continue;
    const taker = data.txs.find((t) => t.nonce === nonce && t.hash.toLowerCase() !== exceptHash.toLowerCase());
    if (taker) return taker.hash;
  }
  return undefined;
}

function lockedError(file: string): UsageError {
  return new UsageError('journal_locked', `another loopsign process is working on this operation (${file} is locked)`, {
    hint: 'wait for it to finish, then run the command again',
  });
}

/**
 * Test hook for the crash-recovery suite: LOOPSIGN_CRASH_AFTER=<step> makes the process SIGKILL itself right
 * after that journal step is on disk. It can only make loopsign stop; it never changes what is sent.
 */
function crashHook(step: string): void {
  const want = process.env.LOOPSIGN_CRASH_AFTER;
  if (want && want === step) process.kill(process.pid, 'SIGKILL');
}
