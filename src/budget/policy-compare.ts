// Where the local spending policy (the inner bound, on the agent's machine) is looser than an on-chain grant (the
// outer bound, enforced by the chain): `config show` warns, in its text and its JSON, so a person sees which of the
// two actually binds. Looser means: no limit at all where the grant has one, or a higher one. The windows differ in
// kind too (the policy's are rolling 24 h and calendar months; a grant's fixed UTC days and 30-day periods from its
// start), which the warning says; the comparison is of the caps alone.
import { formatUnits } from 'viem';
import type { LoadedPolicy } from '../policy/file.js';
import type { RecordedGrant } from './records.js';

export interface BudgetPolicyWarning {
  grant: string;
  /** The grant's window the policy is looser than. */
  window: 'day' | '30days';
  grantCap: string;
  /** The policy's limit that is compared (the smallest over every policy file in force), or null: none is set. */
  policyLimit: 'perAsk' | 'rolling24h' | 'calendarMonth';
  policyCap: string | null;
  message: string;
}

const usdc = (atomic: bigint) => `${formatUnits(atomic, 6)} USDC`;

/** The smallest of the policies' USDC limits of one kind on this chain (every policy file applies), or null. */
function tightest(policies: LoadedPolicy[], chainId: number, kind: BudgetPolicyWarning['policyLimit']): bigint | null {
  let out: bigint | null = null;
  for (const { policy } of policies) {
    const cap = kind === 'perAsk' ? policy.perAsk?.maxUsdc : policy[kind]?.[String(chainId)]?.maxUsdc;
    if (cap !== undefined && (out === null || BigInt(cap) < out)) out = BigInt(cap);
  }
  return out;
}

export function policyLooserThanGrants(policies: LoadedPolicy[], chainId: number, grants: RecordedGrant[]): BudgetPolicyWarning[] {
  const out: BudgetPolicyWarning[] = [];
  for (const { grant } of grants) {
    if (grant.chainId !== chainId) continue;
    const entry = grant.delegations[0]!;
    const id = entry.hash;
    const short = `${id.slice(0, 10)}…`;
    const perDay = BigInt(entry.limits.perDay);
    const per30Days = BigInt(entry.limits.per30Days);
    const checks: [BudgetPolicyWarning['policyLimit'], 'day' | '30days', bigint, string][] = [
      ['rolling24h', 'day', perDay, 'in any 24 hours'],
      ['calendarMonth', '30days', per30Days, 'in a calendar month'],
      ['perAsk', 'day', perDay, 'per ask'],
    ];
    for (const [kind, window, grantCap, where] of checks) {
      const cap = tightest(policies, chainId, kind);
      if (cap !== null && cap <= grantCap) continue;
      const per = window === 'day' ? 'per UTC day' : 'per 30 days';
      const policySays = cap === null ? `sets no USDC limit ${where}` : `allows ${usdc(cap)} ${where}`;
      out.push({
        grant: id,
        window,
        grantCap: grantCap.toString(),
        policyLimit: kind,
        policyCap: cap === null ? null : cap.toString(),
        message:
          kind === 'perAsk'
            ? `the spending policy ${policySays}, more than grant ${short} allows ${per} (${usdc(grantCap)}): an ask above that cannot be paid from the grant`
            : `the spending policy ${policySays}, more than grant ${short} allows ${per} (${usdc(grantCap)}): the grant binds (its periods are fixed from 00:00 UTC of its start, the policy's ${kind === 'rolling24h' ? 'roll' : 'are calendar months'})`,
      });
    }
  }
  return out;
}
