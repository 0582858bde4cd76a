// What the database holds, as typed records. Every read goes through a parser here (zod): a row edited by hand or
// written by a broken version is a clear error naming the operation, never an `as` cast that hides it.
import * as z from 'zod';
import type { Hex } from 'viem';
import { UsageError } from '../errors.js';

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'must be 0x-prefixed hex') as unknown as z.ZodType<Hex>;
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte hash') as unknown as z.ZodType<Hex>;
const decimal = z.string().regex(/^(0|[1-9][0-9]*)$/, 'must be a decimal integer');
/** A service document, kept as the service sent it (checked where it is used, by the guards). */
const serviceDoc = z.record(z.string(), z.unknown());

export const TX_KINDS = ['call', 'batch', 'batch+authorization'] as const;
export const TX_STATUSES = ['signed', 'mined', 'reverted', 'dropped'] as const;

export interface TxRecord {
  stage: string; // 'ask' | 'bonus' | 'rate:<round>' | …
  /** Plan call indexes this transaction covered when it was signed (for people; resume matches calls by digest). */
  calls: number[];
  hash: Hex;
  /** The signed bytes: resent as they are, never re-signed; what the transaction can pay is read back from them. */
  raw: Hex;
  nonce: number;
  kind: (typeof TX_KINDS)[number];
  /** dropped: provably never minable (its nonce was taken by another mined transaction of this wallet). */
  status: (typeof TX_STATUSES)[number];
  blockNumber?: string;
  /** The block it was seen mined in (from schema 4 on): a reorg is told from a node's lie by this block's absence. */
  blockHash?: Hex;
  /** Milliseconds since the epoch. */
  signedAt: number;
  /** A dropped record found void at finality (its nonce used in the finalized chain by none of its versions). */
  voidChecked?: boolean;
  /** The slot's other versions at this nonce (a zero-effect cancel), each able to take the nonce instead. */
  versions?: SlotVersion[];
}

/**
 * Another version of a transaction's nonce slot: a cancel (a zero-value self-send with no data) pays nothing; a bump
 * carries the very calls of the record at higher fees (its effects are the record's, counted once).
 */
export interface SlotVersion {
  kind: 'cancel' | 'bump';
  hash: Hex;
  raw: Hex;
  nonce: number;
  status: 'signed' | 'mined' | 'reverted';
  blockNumber?: string;
}

/** A transaction that may still move money: signed (pending, or lost before its broadcast) or mined. */
export function isLive(tx: Pick<TxRecord, 'status'>): boolean {
  return tx.status === 'signed' || tx.status === 'mined';
}

export const authorizationMessage = z
  .object({ from: hex, to: hex, value: decimal, validAfter: decimal, validBefore: decimal, nonce: hash })
  .strict();

/** An EIP-3009 authorization this wallet signed for an operation (it can move USDC without a transaction). */
export interface AuthorizationRecord {
  id: number;
  stage: string;
  message: z.infer<typeof authorizationMessage>;
  signature: Hex;
  signedAt: number;
  /** Proven unusable: its validity passed and the token says its nonce was never used. */
  dead: boolean;
}

// The vote a rating operation committed to: everything needed to prove or reveal it (the salt included).
const builtCommit = z.object({
  roundId: decimal,
  roundReferenceRatingBps: z.number().int(),
  targetRound: decimal,
  drandChainHash: hex,
  commitHash: hash,
  ciphertext: hex,
  stakeWei: decimal,
  stakeAtomicUnits: decimal,
  frontend: hex,
  secret: z.object({
    isUp: z.boolean(),
    predictedUpBps: z.number().int(),
    salt: hash,
    commitKey: hash,
    ciphertextHash: hash,
    roundContext: z.string(),
  }),
});

// A link loopsign created (handoff, signing intent): its bearer token lives only in the URL fragment and here, with the
// origin that issued it (older journals kept the base URL instead).
const link = z.object({
  token: z.string().optional(),
  createdAt: z.string().optional(),
  expiresAt: z.string().optional(),
  origin: z.string().optional(),
  baseUrl: z.string().optional(),
});

/** A generation request as `generate` built it (journaled so that --retry repeats it exactly). */
const generationRequest = z.object({
  agentId: z.string(),
  clientRequestId: z.string(),
  workflowKey: z.string(),
  messages: z.array(z.object({ role: z.string(), content: z.string() })),
  maxOutputTokens: z.number().int(),
});
export type GenerationRequest = z.infer<typeof generationRequest>;

/** Each kind's own fields. Optional ones arrive as the operation goes on. */
export const KIND_DATA = {
  ask: z.object({
    clientRequestId: z.string(),
    request: serviceDoc,
    operationKey: hash.optional(),
    metadataBase: z.string().optional(),
    paymentMode: z.enum(['wallet_calls', 'x402_authorization']).optional(),
    askHashes: z.array(hash).optional(),
    confirm: serviceDoc.optional(),
    bonusPlan: z
      .object({ bonus: serviceDoc, target: z.object({ contentId: decimal, roundId: decimal, roundStart: decimal, now: decimal }) })
      .optional(),
    bonusHashes: z.array(hash).optional(),
    bonusConfirm: serviceDoc.optional(),
  }),
  rate: z.object({
    contentId: decimal,
    commit: builtCommit.optional(),
    /** Commits this operation built and then replaced within its round (never sent, or reverted): kept, not overwritten. */
    superseded: z.array(builtCommit).optional(),
    ratePlan: serviceDoc.optional(),
    confirmed: z.object({ transactionHashes: z.array(hash) }).optional(),
    /** The vote before this one on the same question (an earlier round), when this one was started with --new-round. */
    previous: z.string().optional(),
  }),
  'offline-commit': z.object({ contentId: z.string(), commit: builtCommit.optional() }),
  image: z
    .object({
      attachmentId: z.string().optional(),
      imageUrl: z.string().optional(),
      sha256: z.string().optional(),
      storedSha256: z.string().optional(),
      origin: z.string().optional(),
    })
    .passthrough(),
  handoff: link.extend({ handoffId: z.string().optional() }).passthrough(),
  'signing-intent': link.extend({ intentId: z.string().optional() }).passthrough(),
  generation: z.object({ request: generationRequest.optional() }).passthrough(),
  'review-opportunity': z.object({ baseUrl: z.string().optional(), record: serviceDoc.optional() }).passthrough(),
  'review-evaluation': z
    .object({
      baseUrl: z.string().optional(),
      externalOpportunityId: z.string().optional(),
      inputsDigest: z.string().optional(),
      args: serviceDoc.optional(),
      sourcePayload: z.string().optional(),
      suggestionPayload: z.string().optional(),
      opportunityId: z.string().optional(),
    })
    .passthrough(),
  'private-review-payload': z
    .object({ baseUrl: z.string().optional(), payloadDigest: z.string().optional(), idempotencyKey: z.string().optional() })
    .passthrough(),
  'private-review': z
    .object({ baseUrl: z.string().optional(), idempotencyKey: z.string().optional(), payloadDigest: z.string().optional() })
    .passthrough(),
  // An owner's budget transaction (issue 38): the EIP-7702 delegation of a first grant, or a revocation (`finished`:
  // the revoke --all stages whose run answered, so a later --all is never taken for their rerun).
  budget: z.object({ grant: hash.optional(), finished: z.array(z.string()).optional() }).passthrough(),
  // `budget sweep`: S's tokens above a float, back to the owner of its grant (src/budget/sweep.ts).
  'budget-sweep': z.object({ owner: z.string(), usdc: z.string(), lrep: z.string(), float: z.string() }).passthrough(),
  'project-create': z
    .object({
      request: serviceDoc.optional(),
      baseUrl: z.string().optional(),
      projectId: z.string().optional(),
      workspaceId: z.string().optional(),
      knownBefore: z.array(z.string()).optional(),
    })
    .passthrough(),
} as const;

export type Kind = keyof typeof KIND_DATA;
export type DataOf<K extends Kind> = z.infer<(typeof KIND_DATA)[K]>;
export type BuiltCommitRecord = z.infer<typeof builtCommit>;

export function isKind(kind: string): kind is Kind {
  return Object.hasOwn(KIND_DATA, kind);
}

/** Parses an operation's stored fields for its kind; a row that does not parse is an error naming it. */
export function parseData<K extends Kind>(kind: K, id: string, json: string): DataOf<K> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw corrupt(id, 'its data is not JSON');
  }
  const parsed = KIND_DATA[kind].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw corrupt(id, `${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return parsed.data as DataOf<K>;
}

export function corrupt(id: string, why: string): UsageError {
  return new UsageError('journal_corrupt', `the journal of operation ${id} in loopsign's database cannot be read: ${why}`, {
    hint: 'it was changed outside loopsign; restore the database from a backup (nothing was signed)',
  });
}

const txRow = z.object({
  stage: z.string(),
  calls: z.string(),
  hash,
  raw: hex,
  nonce: z.number().int().nonnegative(),
  kind: z.enum(TX_KINDS),
  status: z.enum(TX_STATUSES),
  block_number: decimal.nullable(),
  block_hash: hash.nullable().optional(),
  signed_at: z.number().int(),
  void_checked: z.number().int().optional(),
});

const versionRow = z.object({
  kind: z.enum(['cancel', 'bump']),
  hash,
  raw: hex,
  nonce: z.number().int().nonnegative(),
  status: z.enum(['signed', 'mined', 'reverted']),
  block_number: decimal.nullable(),
});

export function parseVersionRow(id: string, row: unknown): SlotVersion {
  const parsed = versionRow.safeParse(row);
  if (!parsed.success) throw corrupt(id, `a slot version row: ${parsed.error.issues[0]!.message}`);
  const r = parsed.data;
  return {
    kind: r.kind,
    hash: r.hash,
    raw: r.raw,
    nonce: r.nonce,
    status: r.status,
    ...(r.block_number === null ? {} : { blockNumber: r.block_number }),
  };
}

export function parseTxRow(id: string, row: unknown): TxRecord {
  const parsed = txRow.safeParse(row);
  if (!parsed.success) throw corrupt(id, `a transaction row: ${parsed.error.issues[0]!.message}`);
  const r = parsed.data;
  let calls: number[];
  try {
    calls = z.array(z.number().int().nonnegative()).parse(JSON.parse(r.calls));
  } catch {
    throw corrupt(id, `transaction ${r.hash}: its call list does not parse`);
  }
  return {
    stage: r.stage,
    calls,
    hash: r.hash,
    raw: r.raw,
    nonce: r.nonce,
    kind: r.kind,
    status: r.status,
    ...(r.block_number === null ? {} : { blockNumber: r.block_number }),
    ...(r.block_hash ? { blockHash: r.block_hash } : {}),
    signedAt: r.signed_at,
    ...(r.void_checked ? { voidChecked: true } : {}),
  };
}

const authorizationRow = z.object({
  id: z.number().int(),
  stage: z.string(),
  message: z.string(),
  signature: hex,
  signed_at: z.number().int(),
  dead: z.union([z.literal(0), z.literal(1)]),
});

export function parseAuthorizationRow(id: string, row: unknown): AuthorizationRecord {
  const parsed = authorizationRow.safeParse(row);
  if (!parsed.success) throw corrupt(id, `an authorization row: ${parsed.error.issues[0]!.message}`);
  const r = parsed.data;
  let message: AuthorizationRecord['message'];
  try {
    message = authorizationMessage.parse(JSON.parse(r.message));
  } catch {
    throw corrupt(id, `authorization ${r.id}: its message does not parse`);
  }
  return { id: r.id, stage: r.stage, message, signature: r.signature, signedAt: r.signed_at, dead: r.dead === 1 };
}
