// Enforcing the spending policy (issue 14 §1). Checked twice: before an ask or a vote starts (chains, categories,
// templates, the per-ask or per-rating amounts, what the windows have left, and a human's approval above the
// threshold), and again at every admission of the spend ledger, inside the database's write transaction that
// records the signature, against everything every operation of every wallet on the chain has signed — so two
// processes, two wallets, a restart or a changed flag cannot slip past a window.
import { formatUnits } from 'viem';
import { RefusedError } from '../errors.js';
import type { ChainConfig } from '../chains/table.js';
import { exposure, type Amounts } from '../store/ledger.js';
import type { Store, Db } from '../store/db.js';
import type { Operation } from '../store/operation.js';
import type { Kind } from '../store/records.js';
import type { NormalizedAsk } from '../protocol/ask-normalize.js';
import type { Output } from '../output.js';
import type { Asset, SpendEffect } from '../wallet/spend-effects.js';
import { loadPolicies, type LoadedPolicy, type PolicySources } from './file.js';
import { BUILT_IN_POLICY, CHANGE_DEFAULT_POLICY } from './default.js';
import { calendarMonth, increment, operationEffects, operationUsage, rolling24h, sum, windowUsage, type Window } from './usage.js';

export interface ApprovalRequest {
  kind: 'ask' | 'rating';
  chainId: number;
  amounts: Amounts;
  /** One line for logs: loopsign's facts only (what, how much, which chain). */
  summary: string;
  /** loopsign's own statement of the spend: what is paid, to what, on which chain (src/policy/approval-form.ts). */
  facts: string;
  /** Text the agent wrote, shown only after the facts, quoted, labelled untrusted and shortened. */
  agentText?: { label: string; text: string }[];
  /** Which threshold it crosses. */
  threshold: string;
}

/** Asks a human (never the agent) to approve a spend; resolves true only on an explicit yes. */
export type Approver = (request: ApprovalRequest) => Promise<boolean>;

const ASSETS: Asset[] = ['USDC', 'LREP'];
const fmt = (amount: bigint, asset: Asset) => `${formatUnits(amount, 6)} ${asset}`;
const limitOf = (a: { maxUsdc?: string; maxLrep?: string } | undefined, asset: Asset): bigint | undefined => {
  const v = asset === 'USDC' ? a?.maxUsdc : a?.maxLrep;
  return v === undefined ? undefined : BigInt(v);
};

function refuse(
  code: 'policy_limit' | 'approval_required' | 'approval_declined',
  message: string,
  details: Record<string, unknown>,
): never {
  const builtIn = details.policy === BUILT_IN_POLICY;
  // A person's "no" is the answer, not an obstacle: nothing is suggested that would put the same spend to them again
  // or get around them (another host, another policy).
  if (code === 'approval_declined') {
    throw new RefusedError(code, `refused: a person declined this spend; ${message}; nothing was signed`, {
      hint: 'a person declined this spend: do not retry it or ask again another way; ask them what they want changed',
      details: { rule: code, ...details, ...(builtIn ? { builtInDefault: true } : {}) },
    });
  }
  let hint =
    code === 'policy_limit'
      ? 'the policy changes only by editing its file (see `loopsign config show` and docs/policy.md)'
      : 'a human must approve this spend; run it where you can answer the prompt, or through an MCP host that supports elicitation';
  if (builtIn)
    hint = `${code === 'policy_limit' ? '' : `${hint}. `}No policy file is set, so ${BUILT_IN_POLICY} applies; to change it, ${CHANGE_DEFAULT_POLICY}`;
  throw new RefusedError(code, `refused by the spending policy: ${message}; nothing was signed`, {
    hint,
    details: { rule: code, ...details, ...(builtIn ? { builtInDefault: true } : {}) },
  });
}

export interface WindowUse {
  chainId: number;
  window: string;
  asset: Asset;
  limit: bigint;
  used: bigint;
  left: bigint;
  policy: string;
}

export class PolicyGate {
  private constructor(
    readonly policies: LoadedPolicy[],
    private readonly out: Output,
    private readonly approver: Approver | undefined,
    private readonly store: () => Promise<Store>,
  ) {}

  /**
   * The policy files in force now; with none, `fallback` when given (`loopsign mcp`'s built-in default,
   * src/policy/default.ts), else no policy at all (the CLI: a notice on every spend).
   */
  static async load(
    out: Output,
    where: PolicySources,
    store: () => Promise<Store>,
    approver?: Approver,
    fallback?: () => LoadedPolicy,
  ): Promise<PolicyGate> {
    const files = await loadPolicies(where);
    return new PolicyGate(files.length === 0 && fallback ? [fallback()] : files, out, approver, store);
  }

  get active(): boolean {
    return this.policies.length > 0;
  }

  /** Whether the built-in default applies (no policy file is set). */
  get builtIn(): boolean {
    return this.policies.some((p) => p.source === 'built-in default');
  }

  /**
   * Before an ask: everything that can be known from the file. `operationId` (this ask's) is left out of the windows
   * here — the planned amounts stand for it, and a rerun must not count itself twice.
   */
  async preflightAsk(chain: ChainConfig, ask: NormalizedAsk, operationId: string): Promise<void> {
    const planned: Amounts = {};
    planned[ask.bounty.asset] = ask.bounty.amount;
    if (ask.feedbackBonus) planned[ask.feedbackBonus.asset] = (planned[ask.feedbackBonus.asset] ?? 0n) + ask.feedbackBonus.amount;
    if (!this.notice()) return;
    for (const { policy: p, file } of this.policies) {
      this.checkChain(chain, file, p.allowedChains);
      for (const q of ask.questions) {
        if (p.allowedCategories && !p.allowedCategories.includes(q.categoryId.toString()))
          refuse('policy_limit', `category ${q.categoryId} is not in allowedCategories of ${file}`, {
            limit: 'allowedCategories',
            policy: file,
          });
        if (p.allowedTemplates && !p.allowedTemplates.includes(q.templateId))
          refuse('policy_limit', `template ${q.templateId} is not in allowedTemplates of ${file}`, {
            limit: 'allowedTemplates',
            policy: file,
          });
      }
      for (const asset of ASSETS) {
        const limit = limitOf(p.perAsk, asset);
        const amount = planned[asset] ?? 0n;
        if (limit !== undefined && amount > limit)
          refuse('policy_limit', `this ask would spend ${fmt(amount, asset)}, above perAsk ${fmt(limit, asset)} of ${file}`, {
            limit: 'perAsk',
            asset,
            amount: amount.toString(),
            left: limit.toString(),
            policy: file,
          });
      }
    }
    this.checkWindows((await this.store()).db, chain, planned, undefined, operationId);
    const parts = [`a bounty of ${fmt(ask.bounty.amount, ask.bounty.asset)} to ${ask.bounty.requiredVoters} raters`];
    if (ask.feedbackBonus) parts.push(`a feedback bonus of ${fmt(ask.feedbackBonus.amount, ask.feedbackBonus.asset)}`);
    const questions = ask.questions.length === 1 ? 'one question' : `${ask.questions.length} questions`;
    await this.approval({
      kind: 'ask',
      chainId: chain.chainId,
      amounts: planned,
      summary: `ask ${ask.clientRequestId} on chain ${chain.chainId}: ${describe(planned)}`,
      facts: `pay ${describe(planned)} (${parts.join(' and ')}) on ${chainName(chain)} for an ask of ${questions}`,
      agentText: [
        { label: ask.questions.length === 1 ? 'title' : 'first title', text: ask.questions[0]!.title },
        { label: 'clientRequestId', text: ask.clientRequestId },
      ],
      threshold: '',
    });
  }

  /** Before a vote (`operationId`: as for asks). */
  async preflightRating(chain: ChainConfig, contentId: string, stake: bigint, operationId: string): Promise<void> {
    if (!this.notice()) return;
    const planned: Amounts = stake > 0n ? { LREP: stake } : {};
    for (const { policy: p, file } of this.policies) {
      this.checkChain(chain, file, p.allowedChains);
      const max = p.perRating ? BigInt(p.perRating.maxStakeLrep) : undefined;
      if (max !== undefined && stake > max)
        refuse('policy_limit', `a stake of ${fmt(stake, 'LREP')} is above perRating ${fmt(max, 'LREP')} of ${file}`, {
          limit: 'perRating',
          asset: 'LREP',
          amount: stake.toString(),
          left: max.toString(),
          policy: file,
        });
    }
    this.checkWindows((await this.store()).db, chain, planned, undefined, operationId);
    await this.approval({
      kind: 'rating',
      chainId: chain.chainId,
      amounts: planned,
      summary: `vote on question ${contentId} on chain ${chain.chainId}: stake ${fmt(stake, 'LREP')}`,
      facts: `stake ${fmt(stake, 'LREP')} on a vote on question ${contentId} on ${chainName(chain)}`,
      threshold: '',
    });
  }

  /**
   * At each admission of an operation's spend ledger (inside the write transaction `db` that records it): the
   * operation as it would stand after `effects` must fit perAsk / perRating, and every window must fit what every
   * operation on the chain signed.
   */
  admit(db: Db, chain: ChainConfig, op: Operation<Kind>, stage: string, effects: SpendEffect[]): void {
    if (!this.active) return;
    const kind = op.kind;
    for (const { policy: p, file } of this.policies) {
      if (kind === 'ask' && p.perAsk) {
        const after = exposure([...operationEffects(db, op.id), ...effects]);
        for (const asset of ASSETS) {
          const limit = limitOf(p.perAsk, asset);
          if (limit !== undefined && (after[asset] ?? 0n) > limit)
            refuse('policy_limit', `this ask could then pay ${fmt(after[asset]!, asset)}, above perAsk ${fmt(limit, asset)} of ${file}`, {
              limit: 'perAsk',
              asset,
              amount: after[asset]!.toString(),
              policy: file,
            });
        }
      }
      if (kind === 'rate' && p.perRating && stage.startsWith('rate:')) {
        const after = exposure([...operationEffects(db, op.id, { stage }), ...effects]);
        const limit = BigInt(p.perRating.maxStakeLrep);
        if ((after.LREP ?? 0n) > limit)
          refuse(
            'policy_limit',
            `this vote could then stake ${fmt(after.LREP!, 'LREP')}, above perRating ${fmt(limit, 'LREP')} of ${file}`,
            { limit: 'perRating', asset: 'LREP', amount: after.LREP!.toString(), policy: file },
          );
      }
    }
    this.checkWindows(db, chain, {}, { op, effects });
  }

  /** What each window of each policy has left on this chain (for `config show` and the MCP policy tool). */
  async remaining(chain: ChainConfig, now = new Date()): Promise<WindowUse[]> {
    const out: WindowUse[] = [];
    if (!this.active) return out;
    const db = (await this.store()).db;
    for (const { policy: p, file } of this.policies) {
      for (const [w, limits] of windowsOf(p, chain.chainId, now)) {
        const used = windowUsage(db, chain.chainId, w.since);
        for (const asset of ASSETS) {
          const limit = limitOf(limits, asset);
          if (limit === undefined) continue;
          const u = used[asset] ?? 0n;
          out.push({ chainId: chain.chainId, window: w.name, asset, limit, used: u, left: limit > u ? limit - u : 0n, policy: file });
        }
      }
    }
    return out;
  }

  private notice(): boolean {
    if (this.active) return true;
    this.out.warn('no spending policy is set: only the ask file and the flags bound this spend (see docs/policy.md)');
    return false;
  }

  private checkChain(chain: ChainConfig, file: string, allowed: number[] | undefined): void {
    if (allowed && !allowed.includes(chain.chainId))
      refuse('policy_limit', `chain ${chain.chainId} is not in allowedChains of ${file}`, { limit: 'allowedChains', policy: file });
  }

  /**
   * Each window: what the other operations signed in it, plus this operation (its effects in the window and the ones
   * about to be signed, or — before it starts — the planned amounts), must fit.
   */
  private checkWindows(
    db: Db,
    chain: ChainConfig,
    planned: Amounts,
    current: { op: Operation<Kind>; effects: SpendEffect[] } | undefined,
    exclude?: string,
  ): void {
    const now = new Date();
    const except = current?.op.id ?? exclude ?? '';
    for (const { policy: p, file } of this.policies) {
      for (const [w, limits] of windowsOf(p, chain.chainId, now)) {
        const used = windowUsage(db, chain.chainId, w.since, except);
        // This operation: what it signed in the window, plus what the new signature adds to it.
        const mine = current
          ? sum([operationUsage(db, current.op.id, w.since), increment(operationEffects(db, current.op.id), current.effects)])
          : planned;
        for (const asset of ASSETS) {
          const limit = limitOf(limits, asset);
          if (limit === undefined) continue;
          const total = (used[asset] ?? 0n) + (mine[asset] ?? 0n);
          if (total > limit && (mine[asset] ?? 0n) > 0n) {
            const left = limit > (used[asset] ?? 0n) ? limit - (used[asset] ?? 0n) : 0n;
            refuse(
              'policy_limit',
              `${w.name} on chain ${chain.chainId} allows ${fmt(limit, asset)} (${file}); ${fmt(used[asset] ?? 0n, asset)} already signed, ${fmt(left, asset)} left, this needs ${fmt(mine[asset] ?? 0n, asset)}`,
              {
                limit: w.name,
                asset,
                amount: (mine[asset] ?? 0n).toString(),
                left: left.toString(),
                policy: file,
              },
            );
          }
        }
      }
    }
  }

  private async approval(request: ApprovalRequest): Promise<void> {
    for (const { policy: p, file } of this.policies) {
      for (const asset of ASSETS) {
        const threshold = limitOf(p.approvalThreshold, asset);
        const amount = request.amounts[asset] ?? 0n;
        if (threshold === undefined || amount <= threshold) continue;
        const req = { ...request, threshold: `approvalThreshold ${fmt(threshold, asset)} of ${file}` };
        if (!this.approver)
          refuse('approval_required', `${describe(request.amounts)} is above the ${req.threshold}, and no human can be asked here`, {
            limit: 'approvalThreshold',
            asset,
            amount: amount.toString(),
            policy: file,
          });
        this.out.progress('policy.approval', `asking a human to approve: ${request.summary}`);
        if (!(await this.approver(req)))
          refuse('approval_declined', `${describe(request.amounts)} is above the ${req.threshold}`, {
            limit: 'approvalThreshold',
            asset,
            amount: amount.toString(),
            policy: file,
          });
        return;
      }
    }
  }
}

const chainName = (chain: ChainConfig) => `${chain.name} (chain ${chain.chainId}, ${chain.role})`;

function describe(amounts: Amounts): string {
  const parts = ASSETS.filter((a) => (amounts[a] ?? 0n) > 0n).map((a) => fmt(amounts[a]!, a));
  return parts.length ? parts.join(' + ') : 'nothing';
}

function windowsOf(p: LoadedPolicy['policy'], chainId: number, now: Date): [Window, { maxUsdc?: string; maxLrep?: string }][] {
  const out: [Window, { maxUsdc?: string; maxLrep?: string }][] = [];
  const day = p.rolling24h?.[String(chainId)];
  if (day) out.push([rolling24h(now), day]);
  const month = p.calendarMonth?.[String(chainId)];
  if (month) out.push([calendarMonth(now), month]);
  return out;
}
