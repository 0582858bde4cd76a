// The database's tables. Amounts are atomic units in SQLite integers (64 bits: 9.2e12 USDC, far beyond any real
// payment; larger ones are refused before they are recorded), so the policy's sums are the engine's own. Times are
// milliseconds since the epoch. Each version's statements run once, in order, inside the opening transaction.
import type { Db } from './db.js';
import { UsageError } from '../errors.js';

const VERSIONS: string[] = [
  // 1: operations, their signed transactions and authorizations, what each can pay, claims, imported journals.
  `
  CREATE TABLE operations (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    chain_id INTEGER NOT NULL,
    wallet TEXT NOT NULL,
    step TEXT NOT NULL,
    operation_key TEXT,
    -- The hash of the chain's block 0 when the operation first touched it: a restarted or replaced chain has another.
    chain_genesis TEXT,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX operations_by_key ON operations(operation_key) WHERE operation_key IS NOT NULL;
  CREATE INDEX operations_by_kind ON operations(kind, chain_id, wallet);

  -- A hash names a transaction on one chain instance: a restarted local chain can see the same bytes again, under
  -- another operation (the one set aside keeps its own).
  CREATE TABLE transactions (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    operation_id TEXT NOT NULL REFERENCES operations(id) ON UPDATE CASCADE,
    seq INTEGER NOT NULL,
    stage TEXT NOT NULL,
    calls TEXT NOT NULL,
    raw TEXT NOT NULL,
    nonce INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('call', 'batch', 'batch+authorization')),
    status TEXT NOT NULL CHECK (status IN ('signed', 'mined', 'reverted', 'dropped')),
    block_number TEXT,
    chain_id INTEGER NOT NULL,
    wallet TEXT NOT NULL,
    signed_at INTEGER NOT NULL,
    UNIQUE (operation_id, hash)
  ) STRICT;
  CREATE INDEX transactions_by_operation ON transactions(operation_id, seq);
  CREATE INDEX transactions_by_nonce ON transactions(chain_id, wallet, nonce);

  CREATE TABLE authorizations (
    id INTEGER PRIMARY KEY,
    operation_id TEXT NOT NULL REFERENCES operations(id) ON UPDATE CASCADE,
    stage TEXT NOT NULL,
    message TEXT NOT NULL,
    signature TEXT NOT NULL,
    signed_at INTEGER NOT NULL,
    dead INTEGER NOT NULL DEFAULT 0 CHECK (dead IN (0, 1)),
    chain_id INTEGER NOT NULL,
    wallet TEXT NOT NULL
  ) STRICT;
  CREATE INDEX authorizations_by_operation ON authorizations(operation_id, id);

  -- What each signed transaction or authorization can make a wallet pay; live until it is proven harmless
  -- (a reverted or dropped transaction, an authorization past its validity and never used).
  CREATE TABLE effects (
    id INTEGER PRIMARY KEY,
    operation_id TEXT NOT NULL REFERENCES operations(id) ON UPDATE CASCADE,
    tx_id INTEGER REFERENCES transactions(id),
    authorization_id INTEGER REFERENCES authorizations(id),
    stage TEXT NOT NULL,
    chain_id INTEGER NOT NULL,
    wallet TEXT NOT NULL,
    asset TEXT NOT NULL CHECK (asset IN ('USDC', 'LREP')),
    kind TEXT NOT NULL CHECK (kind IN ('approve', 'authorization', 'pull')),
    spender TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount >= 0),
    at INTEGER NOT NULL,
    live INTEGER NOT NULL CHECK (live IN (0, 1)),
    CHECK ((tx_id IS NULL) <> (authorization_id IS NULL))
  ) STRICT;
  CREATE INDEX effects_by_operation ON effects(operation_id);
  CREATE INDEX effects_by_tx ON effects(tx_id) WHERE tx_id IS NOT NULL;
  CREATE INDEX effects_by_authorization ON effects(authorization_id) WHERE authorization_id IS NOT NULL;

  -- What each signature added to its operation's exposure when it was signed (src/store/usage.ts): the numbers the
  -- spending policy's windows and loopsign history sum. Kept in step with the live effects: recomputed for an
  -- operation whenever one of its signatures is recorded, or stops counting.
  CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    operation_id TEXT NOT NULL REFERENCES operations(id) ON UPDATE CASCADE,
    chain_id INTEGER NOT NULL,
    wallet TEXT NOT NULL,
    asset TEXT NOT NULL CHECK (asset IN ('USDC', 'LREP')),
    at INTEGER NOT NULL,
    amount INTEGER NOT NULL CHECK (amount > 0)
  ) STRICT;
  -- A window is one range of this index, read without the table.
  CREATE INDEX usage_by_window ON usage(chain_id, at, asset, amount, operation_id);
  CREATE INDEX usage_by_operation ON usage(operation_id);
  -- The same sums per hour, kept with the rows: a window is its hours plus the rows of the hour it starts in.
  CREATE TABLE usage_hourly (
    chain_id INTEGER NOT NULL,
    hour INTEGER NOT NULL,
    asset TEXT NOT NULL,
    amount INTEGER NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (chain_id, hour, asset)
  ) STRICT, WITHOUT ROWID;

  -- One run at a time: a row per claimed name (an operation, a wallet's plan), naming the process that holds it.
  CREATE TABLE claims (
    name TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL,
    boot TEXT NOT NULL,
    token TEXT NOT NULL,
    claimed_at INTEGER NOT NULL
  ) STRICT;

  -- JSON journals of earlier versions, read once each.
  CREATE TABLE imports (
    file TEXT PRIMARY KEY,
    operation_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('imported', 'unreadable', 'skipped')),
    detail TEXT,
    at INTEGER NOT NULL
  ) STRICT;
  `,
  // 2: nonce slots (issue 35). A transaction's nonce is its slot; a slot's calls move to a new nonce only once it is
  // void (its nonce used in the finalized chain by none of its versions). void_checked says a dropped record was found
  // void at finality: records dropped before this version were dropped at one confirmation, and are checked again at
  // finality before their calls are signed anew. slot_versions holds a slot's versions besides its original bytes: a
  // zero-effect cancel at the nonce of a record that was signed and never reached the node (a run killed before its
  // broadcast), so that the wallet's later transactions are not stuck behind the gap. Only one version of a slot can
  // be mined; a cancel pays nothing.
  `
  ALTER TABLE transactions ADD COLUMN void_checked INTEGER NOT NULL DEFAULT 0 CHECK (void_checked IN (0, 1));
  CREATE TABLE slot_versions (
    id INTEGER PRIMARY KEY,
    tx_id INTEGER NOT NULL REFERENCES transactions(id),
    kind TEXT NOT NULL CHECK (kind IN ('cancel')),
    hash TEXT NOT NULL UNIQUE,
    raw TEXT NOT NULL,
    nonce INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('signed', 'mined', 'reverted')),
    block_number TEXT,
    signed_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX slot_versions_by_tx ON slot_versions(tx_id);
  `,
  // 3: the highest nonce count of a wallet on a chain instance that loopsign was told to take as explained (its first
  // sight of the wallet there, or the user's confirmation of transactions it did not sign): src/store/nonce-mark.ts.
  `
  CREATE TABLE wallet_marks (
    chain_id INTEGER NOT NULL,
    genesis TEXT NOT NULL,
    wallet TEXT NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    reason TEXT NOT NULL CHECK (reason IN ('first_sight', 'confirmed', 'warned')),
    at INTEGER NOT NULL,
    PRIMARY KEY (chain_id, genesis, wallet)
  ) STRICT, WITHOUT ROWID;
  `,
  // 4: the hash of the block a transaction was seen mined in. A record seen mined is dropped only when the chain no
  // longer has that block at its height AND its nonce is used in the finalized chain by another transaction (a reorg
  // took it out); a node that shows the same block and says the transaction is not there contradicts itself. And fee
  // bumps: a slot's version of kind 'bump' carries the same calls at the same nonce with higher fees (signed when the
  // chain's base fee rose past what the slot offered); only one version of a slot can be mined, and once a bump is, it
  // becomes the record's own bytes. SQLite cannot widen a CHECK in place: the table is rebuilt, its rows kept.
  `
  ALTER TABLE transactions ADD COLUMN block_hash TEXT;
  CREATE TABLE slot_versions_4 (
    id INTEGER PRIMARY KEY,
    tx_id INTEGER NOT NULL REFERENCES transactions(id),
    kind TEXT NOT NULL CHECK (kind IN ('cancel', 'bump')),
    hash TEXT NOT NULL UNIQUE,
    raw TEXT NOT NULL,
    nonce INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('signed', 'mined', 'reverted')),
    block_number TEXT,
    signed_at INTEGER NOT NULL
  ) STRICT;
  INSERT INTO slot_versions_4 (id, tx_id, kind, hash, raw, nonce, status, block_number, signed_at)
    SELECT id, tx_id, kind, hash, raw, nonce, status, block_number, signed_at FROM slot_versions;
  DROP TABLE slot_versions;
  ALTER TABLE slot_versions_4 RENAME TO slot_versions;
  CREATE INDEX slot_versions_by_tx ON slot_versions(tx_id);
  `,
];

export const SCHEMA_VERSION = VERSIONS.length;

/** Brings the database to the current version (inside a write transaction). */
export function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > VERSIONS.length) {
    throw new UsageError(
      'store_too_new',
      `loopsign's database was written by a newer loopsign (schema ${version}, this one knows ${VERSIONS.length})`,
      {
        hint: 'upgrade loopsign; an older version must not change what a newer one recorded',
      },
    );
  }
  for (let v = version; v < VERSIONS.length; v++) db.exec(VERSIONS[v]!);
  if (version !== VERSIONS.length) db.pragma(`user_version = ${VERSIONS.length}`);
}
