// Reads loopsign's database in a test home the way an auditor would with sqlite3: read-only, through SQL, with no
// loopsign code in between (what the binary recorded, not what its own reader makes of it).
import Database from 'better-sqlite3';
import path from 'node:path';
import type { Home } from './cli.js';

export const storeFile = (home: Home | string) => path.join(typeof home === 'string' ? home : home.dir, 'state', 'loopsign', 'loopsign.db');

export interface RecordedTx {
  stage: string;
  hash: `0x${string}`;
  raw: `0x${string}`;
  nonce: number;
  status: string;
  kind: string;
  calls: number[];
  blockNumber: string | null;
}

export interface RecordedOperation {
  id: string;
  kind: string;
  step: string;
  data: Record<string, any>;
  txs: RecordedTx[];
  authorizations: { stage: string; message: Record<string, string>; dead: boolean }[];
}

export function withStore<T>(home: Home | string, fn: (db: Database.Database) => T): T {
  const db = new Database(storeFile(home), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** One operation as recorded (the id is the `operation` field loopsign printed). */
export function recorded(home: Home | string, id: string): RecordedOperation {
  return withStore(home, (db) => {
    const row = db.prepare('SELECT id, kind, step, data FROM operations WHERE id = ?').get(id) as
      | { id: string; kind: string; step: string; data: string }
      | undefined;
    if (!row) throw new Error(`no operation ${id} in ${storeFile(home)}`);
    const txs = (
      db
        .prepare(
          'SELECT stage, hash, raw, nonce, status, kind, calls, block_number AS blockNumber FROM transactions WHERE operation_id = ? ORDER BY seq',
        )
        .all(id) as (Omit<RecordedTx, 'calls'> & { calls: string })[]
    ).map((t) => ({ ...t, calls: JSON.parse(t.calls) as number[] }));
    const authorizations = (
      db.prepare('SELECT stage, message, dead FROM authorizations WHERE operation_id = ? ORDER BY id').all(id) as {
        stage: string;
        message: string;
        dead: number;
      }[]
    ).map((a) => ({ stage: a.stage, message: JSON.parse(a.message), dead: a.dead === 1 }));
    return { id: row.id, kind: row.kind, step: row.step, data: JSON.parse(row.data), txs, authorizations };
  });
}

/** Every operation of a kind, oldest first. */
export function recordedOfKind(home: Home | string, kind: string): RecordedOperation[] {
  const ids = withStore(home, (db) =>
    (db.prepare('SELECT id FROM operations WHERE kind = ? ORDER BY created_at').all(kind) as { id: string }[]).map((r) => r.id),
  );
  return ids.map((id) => recorded(home, id));
}

/** Deletes an operation and everything it recorded, as if its journal were lost (a red-team scenario). */
export function forget(home: Home | string, id: string): void {
  const db = new Database(storeFile(home), { fileMustExist: true });
  try {
    db.transaction(() => {
      db.prepare('DELETE FROM usage WHERE operation_id = ?').run(id);
      // The hourly sums again from the rows that are left (as src/store/usage.ts keeps them).
      db.exec(
        'DELETE FROM usage_hourly; INSERT INTO usage_hourly (chain_id, hour, asset, amount) SELECT chain_id, at / 3600000, asset, SUM(amount) FROM usage GROUP BY chain_id, at / 3600000, asset',
      );
      db.prepare('DELETE FROM effects WHERE operation_id = ?').run(id);
      db.prepare('DELETE FROM transactions WHERE operation_id = ?').run(id);
      db.prepare('DELETE FROM authorizations WHERE operation_id = ?').run(id);
      db.prepare('DELETE FROM operations WHERE id = ?').run(id);
    })();
  } finally {
    db.close();
  }
}
