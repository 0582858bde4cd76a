// Test control: make the sandbox service tamper with what it returns, as a compromised or buggy service would.
// A scenario is armed for a number of responses (default 1) through POST /__sandbox/hostile; the list of
// scenarios is served at GET /__sandbox/hostile so hardening suites can run every one of them.
import { encodeFunctionData, maxUint256, type Hex } from 'viem';
import { erc20Abi } from '../../protocol/abi.js';

export const ATTACKER = '0xbad000000000000000000000000000000000bad0' as Hex;

export interface HostileScenario {
  name: string;
  flow: 'ask' | 'x402' | 'bonus' | 'rate' | 'upload' | 'handoff' | 'money' | 'evidence' | 'redteam' | 'review';
  description: string;
}

export const ASK_SCENARIOS: HostileScenario[] = [
  { name: 'wrong_target', flow: 'ask', description: 'the submit call goes to an unknown contract' },
  { name: 'inflated_approval', flow: 'ask', description: 'the bounty approval is ten times the bounty' },
  { name: 'unlimited_approval', flow: 'ask', description: 'the bounty approval is unlimited (2^256-1)' },
  { name: 'wrong_spender', flow: 'ask', description: 'the bounty approval names an attacker as spender' },
  { name: 'native_value', flow: 'ask', description: 'a call carries native ETH value' },
  { name: 'extra_call', flow: 'ask', description: 'an extra USDC transfer to an attacker is appended' },
  { name: 'wrong_chain', flow: 'ask', description: 'the response names another chain' },
  { name: 'wrong_wallet', flow: 'ask', description: 'the plan is for another wallet' },
  {
    name: 'changed_question',
    flow: 'ask',
    description: 'the submitted question text differs from the file (reservation rebuilt to match)',
  },
  { name: 'wrong_operation_key', flow: 'ask', description: 'the operationKey is not the one the payload hashes to' },
  {
    name: 'bundle_internal_error',
    flow: 'ask',
    description: "a wallet-calls bundle is answered with the live service's HTTP 500 failed_submission (as at commit 0b442ae)",
  },
  { name: 'permit_typed_data', flow: 'x402', description: 'an ERC-2612 Permit typed-data is returned instead of ReceiveWithAuthorization' },
  { name: 'x402_wrong_recipient', flow: 'x402', description: 'the authorization pays an attacker instead of the submitter' },
  { name: 'x402_inflated_value', flow: 'x402', description: 'the authorization value exceeds the bounty' },
  { name: 'x402_long_validity', flow: 'x402', description: 'the authorization is valid for 30 days' },
  { name: 'x402_wrong_nonce', flow: 'x402', description: 'the nonce is not bound to this ask' },
  { name: 'x402_wrong_token', flow: 'x402', description: 'the EIP-712 domain names another token contract' },
  { name: 'bonus_inflated_approval', flow: 'bonus', description: 'the bonus approval exceeds the bonus' },
  { name: 'bonus_wrong_awarder', flow: 'bonus', description: 'the bonus pool names an attacker as awarder' },
  { name: 'bonus_wrong_target', flow: 'bonus', description: 'the pool creation goes to an unknown contract' },
];

/** Scenarios against the money path's invariants (issue 11): the service's word on what was submitted and paid. */
export const MONEY_SCENARIOS: HostileScenario[] = [
  {
    name: 'claims_submitted',
    flow: 'money',
    description: 'the first answer says "submitted", with another wallet\'s question, its transaction and a bonus plan for it',
  },
  {
    name: 'bonus_other_content',
    flow: 'money',
    description: 'the bonus plan (and its fields) name another question than the one this wallet submitted',
  },
  { name: 'bonus_wrong_round', flow: 'money', description: "the bonus pool targets a round that is not the question's current round" },
  { name: 'bonus_late_close', flow: 'money', description: "the bonus feedback window closes 30 days after the question's round" },
  {
    name: 'bonus_reflag_atomic',
    flow: 'money',
    description: 'the bonus plan is re-flagged requiresAtomicExecution (after it was executed in order)',
  },
  { name: 'confirm_other_operation_key', flow: 'money', description: 'the confirmation names another operationKey' },
  {
    name: 'status_forged_envelope',
    flow: 'money',
    description: 'the status answer carries ok:false, an error, a hint and `next` commands of its own',
  },
  {
    name: 'rating_claims_revealed',
    flow: 'money',
    description: 'the rating status says "revealed" for a vote the engine has not revealed',
  },
];

/** Found in the red-team review of issue 11: a service that passes off this wallet's own earlier question, and one that writes instructions into its errors. */
export const REDTEAM_SCENARIOS: HostileScenario[] = [
  {
    name: 'claims_submitted_earlier',
    flow: 'redteam',
    description:
      'the first answer says "submitted", naming this wallet\'s own earlier submission (another ask, same title and bounty) and a bonus plan for that question\'s open round',
  },
  {
    name: 'x402_relayed',
    flow: 'redteam',
    description:
      'the service redeems the x402 authorization itself (another account sends the submit) before returning the plan, then reports the ask submitted',
  },
  {
    name: 'result_escapes',
    flow: 'redteam',
    description: 'the result carries rater feedback with terminal escape sequences and a recommendedNextAction that is a shell command',
  },
  {
    name: 'error_instructions',
    flow: 'redteam',
    description:
      'the ask is refused with an error whose message carries terminal escape sequences and whose recoverWith is a shell command',
  },
];

export class Hostile {
  private readonly armed = new Map<string, number>();
  readonly scenarios: HostileScenario[] = [...ASK_SCENARIOS, ...MONEY_SCENARIOS, ...REDTEAM_SCENARIOS];

  register(more: HostileScenario[]): void {
    this.scenarios.push(...more);
  }

  arm(name: string, count = 1): void {
    if (!this.scenarios.some((s) => s.name === name)) throw new Error(`unknown hostile scenario ${name}`);
    this.armed.set(name, count);
  }

  clear(): void {
    this.armed.clear();
  }

  /** True (and consumes one use) when the scenario is armed. */
  take(name: string): boolean {
    const n = this.armed.get(name) ?? 0;
    if (n <= 0) return false;
    if (n === 1) this.armed.delete(name);
    else this.armed.set(name, n - 1);
    return true;
  }

  active(): Record<string, number> {
    return Object.fromEntries(this.armed);
  }
}

export function unlimitedApprove(spender: Hex): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, maxUint256] });
}

export function approveData(spender: Hex, amount: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });
}

export function transferData(to: Hex, amount: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
}
