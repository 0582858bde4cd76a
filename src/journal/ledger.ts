// The spend ledger of one operation (issue 11 §1), kept in its journal. Everything that can make the wallet pay —
// each signed transaction (its calls, read back from the signed bytes) and each EIP-3009 authorization — counts
// until it is proven harmless (a reverted transaction; an authorization past its validity that was never used).
// Before anything new is signed, what is already signed plus what is about to be signed must fit the caps taken
// from the user's own input: per stage (the bounty once, the bonus once, one stake per round) and per operation.
// The caps do not depend on the plan, its grouping, this run's flags or anything the service says.
import { formatUnits, type Hex, type PublicClient } from 'viem';
import { RefusedError } from '../errors.js';
import type { ChainConfig } from '../chains/table.js';
import { erc20Abi } from '../protocol/abi.js';
import { callEffects, callsOfRawTransaction, type Asset, type SpendEffect } from '../wallet/spend-effects.js';
import { isLive, type Journal, type JournalAuthorization } from './journal.js';
import type { PolicyGate } from '../policy/gate.js';

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
  ref: string;
  effects: SpendEffect[];
  authorization?: JournalAuthorization;
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

export class SpendLedger {
  constructor(
    private readonly journal: Journal,
    private readonly chain: ChainConfig,
    private readonly wallet: Hex,
    readonly caps: SpendCaps,
    /** The user's spending policy, consulted after the caps (limits across operations and windows). */
    private readonly policy?: PolicyGate,
  ) {}

  /** Every entry that may still move money: signed transactions not reverted, authorizations not proven dead. */
  entries(): Entry[] {
    const out: Entry[] = [];
    for (const tx of this.journal.data.txs) {
      if (!isLive(tx)) continue;
      const effects = callsOfRawTransaction(tx.raw, this.wallet).flatMap((c) => callEffects(this.chain, c));
      out.push({ stage: tx.stage, ref: tx.hash, effects });
    }
    for (const a of this.journal.authorizations()) {
      if (a.dead) continue;
      out.push({ stage: a.stage, ref: `authorization ${a.message.nonce}`, effects: [authorizationEffect(a)], authorization: a });
    }
    return out;
  }

  /** What the operation (or one stage) can already cause. */
  exposure(stage?: string): Amounts {
    return exposure(this.entries().filter((e) => stage === undefined || e.stage === stage).flatMap((e) => e.effects));
  }

  /**
   * Refuses (exit 5, spend_limit) unless what is already signed plus `effects` fits every cap. An authorization
   * that might be dead is checked on chain first: it no longer counts once its validity has passed unused.
   */
  async admit(stage: string, effects: SpendEffect[], client?: PublicClient): Promise<void> {
    let over = this.overCap(stage, effects);
    if (over && client && (await this.buryDeadAuthorizations(client))) over = this.overCap(stage, effects);
    if (!over) {
      await this.policy?.admit(this.chain, this.journal, stage, effects);
      return;
    }
    throw new RefusedError('spend_limit', `refused: ${over}; nothing was signed`, {
      hint: 'loopsign never lets one ask pay its bounty or bonus twice, whatever the plan or the flags. Check `loopsign status`; if an earlier authorization is still valid, run again after it expires',
      details: { rule: 'spend_limit', stage, caps: this.caps.source },
    });
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
      check(`the ${stage} stage`, this.caps.stage(stage), entries.filter((e) => e.stage === stage).flatMap((e) => e.effects)) ??
      (this.caps.total ? check('this operation', this.caps.total, entries.flatMap((e) => e.effects)) : undefined)
    );
  }

  /** Marks authorizations past their validity and unused on chain as dead. Returns true when any was. */
  private async buryDeadAuthorizations(client: PublicClient): Promise<boolean> {
    const live = this.journal.authorizations().filter((a) => !a.dead);
    if (live.length === 0) return false;
    const now = (await client.getBlock({ blockTag: 'latest' })).timestamp;
    let buried = false;
    for (const a of live) {
      if (BigInt(a.message.validBefore) > now) continue;
      if (!(await authorizationUsed(client, this.chain, this.wallet, a.message.nonce as Hex))) {
        a.dead = true;
        buried = true;
      }
    }
    if (buried) await this.journal.save();
    return buried;
  }
}

/** Whether the token has seen this wallet's EIP-3009 authorization with this nonce used (by anyone). */
export async function authorizationUsed(client: PublicClient, chain: ChainConfig, wallet: Hex, nonce: Hex): Promise<boolean> {
  return client.readContract({ address: chain.tokens.USDC.address as Hex, abi: erc20Abi, functionName: 'authorizationState', args: [wallet, nonce] });
}

export function authorizationEffect(a: JournalAuthorization): SpendEffect {
  return { asset: 'USDC', kind: 'authorization', spender: a.message.to as Hex, amount: BigInt(a.message.value) };
}
