// Journals of earlier versions (one JSON file per operation under the state folder's journal/) are read into the
// database the first time it is opened: each file once (the imports table remembers it), under the id it had, with
// its transactions, authorizations and what each can pay. The files are kept, made read-only. A file that cannot be
// read is reported — at the import and again at every open while it is there — never silently dropped: it may hold
// a signature that still counts.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import type { Hex } from 'viem';
import type { Output } from '../output.js';
import type { Store } from './db.js';
import { authorizationMessage, isKind, KIND_DATA, TX_KINDS, TX_STATUSES } from './records.js';
import { BUILTIN_CHAINS } from '../chains/table.js';
import { callEffects, callsOfRawTransaction, type SpendEffect } from '../wallet/spend-effects.js';
import { jsonText } from '../output.js';
import { recomputeUsage } from './usage.js';

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date');
const effect = z.object({
  asset: z.enum(['USDC', 'LREP']),
  kind: z.enum(['approve', 'authorization', 'pull']),
  spender: z.string(),
  amount: z.string().regex(/^[0-9]+$/),
});
const journalFile = z
  .object({
    version: z.literal(1),
    kind: z.string(),
    id: z.string(),
    chainId: z.number().int(),
    wallet: z.string(),
    createdAt: iso,
    updatedAt: iso,
    step: z.string(),
    txs: z.array(
      z.object({
        stage: z.string(),
        calls: z.array(z.number().int()),
        hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
        raw: z.string().regex(/^0x[0-9a-fA-F]+$/),
        nonce: z.number().int().nonnegative(),
        kind: z.enum(TX_KINDS),
        status: z.enum(TX_STATUSES),
        blockNumber: z.string().optional(),
        effects: z.array(effect).optional(),
        signedAt: iso.optional(),
      }),
    ),
    authorizations: z
      .array(
        z.object({ stage: z.string(), message: authorizationMessage, signature: z.string(), signedAt: iso, dead: z.boolean().optional() }),
      )
      .optional(),
  })
  .passthrough();

const ENVELOPE = ['version', 'kind', 'id', 'chainId', 'wallet', 'createdAt', 'updatedAt', 'step', 'txs', 'authorizations'];

/** What a legacy transaction can pay: as it was recorded, or read from its bytes on a built-in chain. */
function effectsOf(tx: z.infer<typeof journalFile>['txs'][number], chainId: number, wallet: string): SpendEffect[] | undefined {
  if (tx.effects) return tx.effects.map((e) => ({ asset: e.asset, kind: e.kind, spender: e.spender as Hex, amount: BigInt(e.amount) }));
  const chain = BUILTIN_CHAINS[chainId];
  if (!chain) return undefined;
  try {
    return callsOfRawTransaction(tx.raw as Hex, wallet as Hex).flatMap((c) => callEffects(chain, c));
  } catch {
    return undefined;
  }
}

function importOne(store: Store, file: string, text: string): { id: string } | { why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { why: 'it is not valid JSON' };
  }
  const parsed = journalFile.safeParse(json);
  if (!parsed.success) return { why: `${parsed.error.issues[0]!.path.join('.') || '(top level)'}: ${parsed.error.issues[0]!.message}` };
  const j = parsed.data;
  if (!isKind(j.kind)) return { why: `it is of an unknown kind (${j.kind})` };
  if (j.id !== path.basename(file, '.json')) return { why: `its id ${j.id} is not its file name` };
  const data = Object.fromEntries(Object.entries(j).filter(([k]) => !ENVELOPE.includes(k)));
  const checked = KIND_DATA[j.kind].safeParse(data);
  if (!checked.success) return { why: `${checked.error.issues[0]!.path.join('.')}: ${checked.error.issues[0]!.message}` };
  const wallet = j.wallet.toLowerCase();
  const at = (s: string | undefined) => Date.parse(s ?? j.updatedAt);
  return store.read((db) => {
    if (db.prepare('SELECT 1 FROM operations WHERE id = ?').get(j.id)) {
      // The same record met again (two processes importing at once) is nothing to do. A file with signatures the
      // database's record lacks (an earlier loopsign still running after the upgrade, journals copied in) may still
      // pay: it is reported at every open, never skipped in silence.
      const hashes = new Set(
        (db.prepare('SELECT hash FROM transactions WHERE operation_id = ?').all(j.id) as { hash: string }[]).map((r) => r.hash),
      );
      const signatures = new Set(
        (db.prepare('SELECT signature FROM authorizations WHERE operation_id = ?').all(j.id) as { signature: string }[]).map((r) =>
          r.signature.toLowerCase(),
        ),
      );
      const missing =
        j.txs.filter((t) => !hashes.has(t.hash.toLowerCase())).length +
        (j.authorizations ?? []).filter((a) => !signatures.has(a.signature.toLowerCase())).length;
      if (missing === 0) return { why: 'an operation with its id is already in the database' };
      return {
        why: `operation ${j.id} is already in the database without ${missing} of the signatures this file records, and those are not counted`,
      };
    }
    const operationKey = typeof data.operationKey === 'string' ? data.operationKey.toLowerCase() : null;
    db.prepare(
      'INSERT INTO operations (id, kind, chain_id, wallet, step, operation_key, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(j.id, j.kind, j.chainId, wallet, j.step, operationKey, jsonText(checked.data), Date.parse(j.createdAt), Date.parse(j.updatedAt));
    const addEffects = (
      effects: SpendEffect[],
      stage: string,
      when: number,
      live: boolean,
      parent: { tx?: number; authorization?: number },
    ) => {
      const insert = db.prepare(
        'INSERT INTO effects (operation_id, tx_id, authorization_id, stage, chain_id, wallet, asset, kind, spender, amount, at, live) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      for (const e of effects)
        insert.run(
          j.id,
          parent.tx ?? null,
          parent.authorization ?? null,
          stage,
          j.chainId,
          wallet,
          e.asset,
          e.kind,
          e.spender.toLowerCase(),
          e.amount,
          when,
          live ? 1 : 0,
        );
    };
    for (const [seq, tx] of j.txs.entries()) {
      const effects = effectsOf(tx, j.chainId, wallet);
      if (!effects) throw new Error(`transaction ${tx.hash} has no recorded effects and its calls cannot be classified here`);
      const hash = tx.hash.toLowerCase();
      const info = db
        .prepare(
          'INSERT INTO transactions (hash, operation_id, seq, stage, calls, raw, nonce, kind, status, block_number, chain_id, wallet, signed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          hash,
          j.id,
          seq,
          tx.stage,
          JSON.stringify(tx.calls),
          tx.raw,
          tx.nonce,
          tx.kind,
          tx.status,
          tx.blockNumber ?? null,
          j.chainId,
          wallet,
          at(tx.signedAt),
        );
      addEffects(effects, tx.stage, at(tx.signedAt), tx.status === 'signed' || tx.status === 'mined', { tx: Number(info.lastInsertRowid) });
    }
    for (const a of j.authorizations ?? []) {
      const info = db
        .prepare(
          'INSERT INTO authorizations (operation_id, stage, message, signature, signed_at, dead, chain_id, wallet) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(j.id, a.stage, JSON.stringify(a.message), a.signature, at(a.signedAt), a.dead ? 1 : 0, j.chainId, wallet);
      addEffects(
        [{ asset: 'USDC', kind: 'authorization', spender: a.message.to as Hex, amount: BigInt(a.message.value) }],
        a.stage,
        at(a.signedAt),
        !a.dead,
        { authorization: Number(info.lastInsertRowid) },
      );
    }
    recomputeUsage(db, j.id);
    return { id: j.id };
  });
}

/** Imports every journal file in `dir` not imported before; reports what was imported and what could not be. */
export async function importJournals(store: Store, dir: string, out: Output): Promise<void> {
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return; // no journals from an earlier version
  }
  const known = new Map(
    store
      .read((db) => db.prepare('SELECT file, status FROM imports').all() as { file: string; status: string }[])
      .map((r) => [r.file, r.status]),
  );
  const imported: string[] = [];
  const unreadable: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    if (known.get(file) === 'imported' || known.get(file) === 'skipped') continue;
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      unreadable.push(`${file} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      continue;
    }
    const result = await store
      .write((db) => {
        let r: { id: string } | { why: string };
        try {
          r = importOne(store, file, text);
        } catch (error) {
          // A row that did not fit: the transaction rolls back, nothing of this file stays, and the file is reported.
          throw Object.assign(new Error((error as Error).message), { importFailure: true });
        }
        const status = 'id' in r ? 'imported' : r.why.startsWith('an operation with its id') ? 'skipped' : 'unreadable';
        db.prepare(
          'INSERT INTO imports (file, operation_id, status, detail, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(file) DO UPDATE SET status = excluded.status, detail = excluded.detail, at = excluded.at',
        ).run(file, 'id' in r ? r.id : null, status, 'why' in r ? r.why : null, Date.now());
        return r;
      })
      .catch((error: Error & { importFailure?: boolean }) => {
        if (!error.importFailure) throw error;
        return { why: error.message };
      });
    if ('id' in result) {
      imported.push(name);
      await fs.chmod(file, 0o400).catch(() => undefined);
    } else if (!result.why.startsWith('an operation with its id')) unreadable.push(`${file} (${result.why})`);
  }
  if (imported.length)
    out.warn(
      `imported ${imported.length} journal${imported.length === 1 ? '' : 's'} of an earlier loopsign from ${dir} into ${store.file}; the files are kept, read-only`,
    );
  for (const u of unreadable)
    out.warn(
      `the journal ${u} could not be imported into loopsign's database and is not counted by the spending policy; fix or move it, then run again`,
    );
}
