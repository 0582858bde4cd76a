// The spend ledger of one operation (issue 11 §1), on the database (issue 20). Everything that can make the wallet
// pay — each signed transaction (its calls, read back from the signed bytes) and each EIP-3009 authorization —
// counts until it is proven harmless (a reverted or dropped transaction; an authorization past its validity that was
// never used). A signature is admitted in one write transaction: what is already signed plus what is about to be
// signed must fit the caps taken from the user's own input (per stage: the bounty once, the bonus once, one stake
// per round; per operation), then the spending policy's limits and windows over every wallet on the chain; then the
// signature is made and recorded, and only after the commit does it leave the process. The caps do not depend on the
// plan, its grouping, this run's flags or anything the service says.
import { formatUnits, keccak256, type Hex, type PublicClient } from 'viem';
import { RefusedError } from '../errors.js';
import type { ChainConfig } from '../chains/table.js';
import { erc20Abi } from '../protocol/abi.js';
import { callEffects, callsOfRawTransaction, type Asset, type SpendEffect } from '../wallet/spend-effects.js';
import type { PolicyGate } from '../policy/gate.js';
import type { Db } from './db.js';
import { crashHook } from './crash-hook.js';
import type { Operation } from './operation.js';
import { isLive, type AuthorizationRecord, type Kind, type TxRecord } from './records.js';
import { timed } from '../timings.js';

export type Amounts = Partial<Record<Asset, bigint>>;

export interface SpendCaps {
  /** What one stage may cause at most (an asset not named: nothing). */
  stage(stage: string): Amounts;
  /** What the whole operation may cause at most, over every stage (absent: stages only, e.g. a vote per round). */
  total?: Amounts;
  /** Where the caps come from, for the refusal message (e.g. "maxPaymentAmount in ask.json"). */
  source: string;
}

interface Entry {
  stage: string;
  effects: SpendEffect[];
}

/**
 * Exposure of a set of effects, per asset: for each spender, the larger of what it was allowed (approvals and
 * authorizations) and what calls pull through it. An approval that a submit then uses counts once; a pull through
 * an allowance granted outside this operation counts too; two approvals count twice.
 */
export function exposure(effects: SpendEffect[]): Amounts {
  const bySpender = new Map<string, { asset: Asset; allowed: bigint; pulled: bigint }>();
  for (const e of effects) {
    const key = `${e.asset}:${e.spender.toLowerCase()}`;
    const s = bySpender.get(key) ?? { asset: e.asset, allowed: 0n, pulled: 0n };
    if (e.kind === 'pull') s.pulled += e.amount;
    else s.allowed += e.amount;
    bySpender.set(key, s);
  }
  const out: Amounts = {};
  for (const s of bySpender.values()) out[s.asset] = (out[s.asset] ?? 0n) + (s.allowed > s.pulled ? s.allowed : s.pulled);
  return out;
}

const fmt = (amount: bigint, asset: Asset) => `${formatUnits(amount, 6)} ${asset}`;

export function authorizationEffect(a: Pick<AuthorizationRecord, 'message'>): SpendEffect {
  return { asset: 'USDC', kind: 'authorization', spender: a.message.to as Hex, amount: BigInt(a.message.value) };
}

/** What a signed transaction can pay, read back from its bytes (never from what was recorded beside them). */
export function effectsOfRaw(chain: ChainConfig, raw: Hex, wallet: Hex): SpendEffect[] {
  return callsOfRawTransaction(raw, wallet).flatMap((c) => callEffects(chain, c));
}

const effectKey = (e: SpendEffect) => `${e.asset}:${e.kind}:${e.spender.toLowerCase()}:${e.amount}`;

/** A transaction to record: what the signer produced for the admitted calls. */
export interface SignedTx {
  raw: Hex;
  nonce: number;
  kind: TxRecord['kind'];
  calls: number[];
}

export class SpendLedger {
  constructor(
    private readonly op: Operation<Kind>,
    private readonly chain: ChainConfig,
    private readonly wallet: Hex,
    readonly caps: SpendCaps,
    /** The user's spending policy, consulted after the caps (limits across operations and windows). */
    private readonly policy?: PolicyGate,
  ) {}

  /** Every entry that may still move money: signed transactions not reverted or dropped, authorizations not proven dead. */
  entries(): Entry[] {
    const out: Entry[] = [];
    for (const tx of this.op.txs()) if (isLive(tx)) out.push({ stage: tx.stage, effects: effectsOfRaw(this.chain, tx.raw, this.wallet) });
    for (const a of this.op.authorizations()) if (!a.dead) out.push({ stage: a.stage, effects: [authorizationEffect(a)] });
    return out;
  }

  /** What the operation (or one stage) can already cause. */
  exposure(stage?: string): Amounts {
    return exposure(
      this.entries()
        .filter((e) => stage === undefined || e.stage === stage)
        .flatMap((e) => e.effects),
    );
  }

  /**
   * Refuses (exit 5, spend_limit or the policy's codes) unless what is already signed plus `effects` fits every cap
   * and the policy. Records nothing: a run checks the whole rest of a plan this way before its first signature.
   */
  async check(stage: string, effects: SpendEffect[], client?: PublicClient): Promise<void> {
    await this.op.write((db) => this.checkIn(db, stage, effects, client));
  }

  /**
   * Admits, signs and records one transaction in one write transaction: the caps and the policy are checked against
   * what every process has recorded, `sign` makes the signature (reading the nonce meanwhile), and the signed bytes
   * are recorded with what they can pay — which must be exactly `effects`, read back from the bytes. Only after the
   * commit may the bytes be broadcast.
   */
  async admitTransaction(
    stage: string,
    effects: SpendEffect[],
    client: PublicClient | undefined,
    sign: (db: Db) => Promise<SignedTx>,
  ): Promise<TxRecord> {
    const hash = await this.op.write(async (db) => {
      await this.checkIn(db, stage, effects, client);
      const signed = await timed('signing', () => sign(db));
      const recorded = effectsOfRaw(this.chain, signed.raw, this.wallet);
      if (recorded.map(effectKey).sort().join() !== effects.map(effectKey).sort().join()) {
        throw new RefusedError(
          'signed_effects_mismatch',
          'refused: the signed transaction can pay other amounts than the calls that were admitted; it was not recorded or sent',
          {
            details: { rule: 'signed_effects_mismatch' },
          },
        );
      }
      const hash = keccak256(signed.raw);
      this.op.insertTx(
        db,
        { stage, calls: signed.calls, hash, raw: signed.raw, nonce: signed.nonce, kind: signed.kind },
        recorded,
        Date.now(),
      );
      return hash;
    });
    const tx = this.op.txs().find((t) => t.hash.toLowerCase() === hash.toLowerCase())!;
    crashHook(`${stage}:signed:${tx.calls.join(',')}`);
    return tx;
  }

  /** As admitTransaction, for an EIP-3009 authorization: admitted, signed and recorded before the signature leaves. */
  async admitAuthorization(
    stage: string,
    message: AuthorizationRecord['message'],
    client: PublicClient | undefined,
    sign: () => Promise<Hex>,
  ): Promise<AuthorizationRecord> {
    const effects = [authorizationEffect({ message })];
    const id = await this.op.write(async (db) => {
      await this.checkIn(db, stage, effects, client);
      const signature = await timed('signing', sign);
      return this.op.insertAuthorization(db, stage, message, signature, effects, Date.now());
    });
    crashHook(`${stage}:authorization_signed`);
    return this.op.authorizations().find((a) => a.id === id)!;
  }

  private async checkIn(db: Db, stage: string, effects: SpendEffect[], client?: PublicClient): Promise<void> {
    this.op.refresh();
    let over = this.overCap(stage, effects);
    if (over && client && (await this.buryDeadAuthorizations(db, client))) {
      this.op.refresh();
      over = this.overCap(stage, effects);
    }
    if (over) {
      throw new RefusedError('spend_limit', `refused: ${over}; nothing was signed`, {
        hint: 'loopsign never lets one ask pay its bounty or bonus twice, whatever the plan or the flags. Check `loopsign status`; if an earlier authorization is still valid, run again after it expires',
        details: { rule: 'spend_limit', stage, caps: this.caps.source },
      });
    }
    this.policy?.admit(db, this.chain, this.op, stage, effects);
  }

  private overCap(stage: string, effects: SpendEffect[]): string | undefined {
    const entries = this.entries();
    const check = (scope: string, cap: Amounts, had: SpendEffect[]) => {
      const before = exposure(had);
      const after = exposure([...had, ...effects]);
      for (const asset of Object.keys(after) as Asset[]) {
        const limit = cap[asset] ?? 0n;
        if ((after[asset] ?? 0n) > limit && (after[asset] ?? 0n) > (before[asset] ?? 0n)) {
          return `${scope} could pay ${fmt(after[asset]!, asset)} (already signed: ${fmt(before[asset] ?? 0n, asset)}), above its limit of ${fmt(limit, asset)} from ${this.caps.source}`;
        }
      }
      return undefined;
    };
    return (
      check(
        `the ${stage} stage`,
        this.caps.stage(stage),
        entries.filter((e) => e.stage === stage).flatMap((e) => e.effects),
      ) ??
      (this.caps.total
        ? check(
            'this operation',
            this.caps.total,
            entries.flatMap((e) => e.effects),
          )
        : undefined)
    );
  }

  /** Marks authorizations past their validity and unused on chain as dead. Returns true when any was. */
  private async buryDeadAuthorizations(db: Db, client: PublicClient): Promise<boolean> {
    const live = this.op.authorizations().filter((a) => !a.dead);
    if (live.length === 0) return false;
    const now = (await client.getBlock({ blockTag: 'latest' })).timestamp;
    const dead: number[] = [];
    for (const a of live) {
      if (BigInt(a.message.validBefore) > now) continue;
      if (!(await authorizationUsed(client, this.chain, this.wallet, a.message.nonce))) dead.push(a.id);
    }
    if (dead.length) await this.op.buryAuthorizations(dead, db);
    return dead.length > 0;
  }
}

/** Whether the token has seen this wallet's EIP-3009 authorization with this nonce used (by anyone). */
export async function authorizationUsed(client: PublicClient, chain: ChainConfig, wallet: Hex, nonce: Hex): Promise<boolean> {
  return client.readContract({
    address: chain.tokens.USDC.address as Hex,
    abi: erc20Abi,
    functionName: 'authorizationState',
    args: [wallet, nonce],
  });
}
