// The spending policy (issue 14 §1) through the built binary against a real sandbox: a bad field is one clear line
// (exit 2); per ask, per rating, per window (counted from the journals, so across runs), chains and categories are
// enforced before anything is signed (exit 5, policy_limit, naming the limit, the amount and what is left); a
// --policy file adds limits but cannot lift the config folder's; above the approval threshold nobody can approve
// from a pipe; `config show` shows what is left; no policy is a one-line notice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession, tokenBalance, type Pub, type Session } from './helpers/chain.js';

let s: Session;
let sb: SandboxHandle;
let pub: Pub;
let n = 0;

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 10_000, read: 10_000 } });
  ({ sb, pub } = s);
});
afterAll(async () => {
  await sb.stop();
});

/** A fresh home with this policy in its config folder. */
function homeWithPolicy(policy: unknown): Home {
  const home = makeHome();
  mkdirSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
  if (policy !== undefined)
    writeFileSync(
      path.join(home.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'),
      typeof policy === 'string' ? policy : JSON.stringify(policy),
    );
  return home;
}

function askFile(home: Home, extra: Record<string, unknown> = {}): string {
  n++;
  return home.file(
    `policy-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `policy-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title: `Policy question ${n}`, contextUrl: 'https://example.com/policy', categoryId: '1', tags: ['policy'] },
      ...extra,
    }),
  );
}

const run = (home: Home, args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const nonce = () => pub.getTransactionCount({ address: sb.info.devWallet.address });

describe('the policy file', () => {
  it.each([
    [{ version: 2 }, /version/],
    [{ version: 1, perAsk: { maxUsdc: '1.5' } }, /perAsk\.maxUsdc: must be a decimal string of atomic units/],
    [{ version: 1, rolling24h: { '1': { maxUsdc: '1' } } }, /rolling24h/],
    [{ version: 1, perAsk: { maxUsd: '1' } }, /perAsk/],
    ['{ not json', /not valid JSON/],
  ])('a bad policy is refused with one line naming the field (%#)', async (policy, message) => {
    const home = homeWithPolicy(policy);
    const r = await run(home, ['--json', 'ask', '--file', askFile(home)]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error.code).toBe('invalid_policy');
    expect(r.json().error.message).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('without a policy a spend carries a one-line notice', async () => {
    const home = homeWithPolicy(undefined);
    const r = await run(home, ['--json', 'ask', '--file', askFile(home), '--payment-mode', 'wallet_calls']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/no spending policy is set/);
  });
});

describe('limits, before anything is signed', () => {
  it('perAsk: exit 5 policy_limit naming the limit, the amount and what is left; nothing signed', async () => {
    const home = homeWithPolicy({ version: 1, perAsk: { maxUsdc: '2000000' } });
    const n0 = await nonce();
    const r = await run(home, [
      '--json',
      'ask',
      '--file',
      askFile(home, { feedbackBonus: { amount: '1000000', asset: 'USDC' } }),
      '--payment-mode',
      'wallet_calls',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'policy_limit', limit: 'perAsk', asset: 'USDC', amount: '2500000', left: '2000000' });
    expect(r.json().error.message).toMatch(/2\.5 USDC, above perAsk 2 USDC/);
    expect(await nonce()).toBe(n0);
  });

  it('rolling24h, counted from the journals: two asks fit, the third is refused; `config show` says what is left', async () => {
    const home = homeWithPolicy({ version: 1, rolling24h: { '31337': { maxUsdc: '3500000' } } });
    for (let i = 0; i < 2; i++) {
      const r = await run(home, ['--json', 'ask', '--file', askFile(home), '--payment-mode', 'wallet_calls']);
      expect(r.code, r.stderr).toBe(0);
    }
    const shown = await run(home, ['--json', 'config', 'show']);
    expect(shown.json().policy.remaining).toEqual([
      expect.objectContaining({ window: 'the last 24 hours', asset: 'USDC', limit: '3500000', used: '3000000', left: '500000' }),
    ]);
    const before = await tokenBalance(s, 'USDC');
    const third = await run(home, ['--json', 'ask', '--file', askFile(home), '--payment-mode', 'wallet_calls']);
    expect(third.code, third.stdout).toBe(5);
    expect(third.json().error).toMatchObject({ code: 'policy_limit', limit: 'the last 24 hours', left: '500000', amount: '1500000' });
    expect(await tokenBalance(s, 'USDC')).toBe(before);
  });

  it('two processes at once against one window: both pass the preflight, the ledger admission (under the wallet lock) lets only one pay', async () => {
    const home = homeWithPolicy({ version: 1, rolling24h: { '31337': { maxUsdc: '2000000' } } });
    const before = await tokenBalance(s, 'USDC');
    const runs = await Promise.all(
      [0, 1].map(() => run(home, ['--json', 'ask', '--file', askFile(home), '--payment-mode', 'wallet_calls'])),
    );
    const codes = runs.map((r) => r.code).sort();
    expect(codes, runs.map((r) => r.stdout).join('\n')).toEqual([0, 5]);
    expect(runs.find((r) => r.code === 5)!.json().error.code).toBe('policy_limit');
    expect(await tokenBalance(s, 'USDC')).toBe(before - 1_500_000n);
  });

  it('allowedChains and allowedCategories', async () => {
    const chains = homeWithPolicy({ version: 1, allowedChains: [8453] });
    const r1 = await run(chains, ['--json', 'ask', '--file', askFile(chains)]);
    expect(r1.code).toBe(5);
    expect(r1.json().error.message).toMatch(/chain 31337 is not in allowedChains/);
    const cats = homeWithPolicy({ version: 1, allowedCategories: ['7'] });
    const r2 = await run(cats, ['--json', 'ask', '--file', askFile(cats)]);
    expect(r2.code).toBe(5);
    expect(r2.json().error.message).toMatch(/category 1 is not in allowedCategories/);
  });

  it("--policy and LOOPSIGN_POLICY add limits but never lift the config folder's", async () => {
    const home = homeWithPolicy({ version: 1, perAsk: { maxUsdc: '1000000' } });
    const lax = home.file('lax.json', JSON.stringify({ version: 1, perAsk: { maxUsdc: '100000000' } }));
    const byFlag = await run(home, ['--json', '--policy', lax, 'ask', '--file', askFile(home)]);
    expect(byFlag.code).toBe(5);
    expect(byFlag.json().error.limit).toBe('perAsk');
    const byEnv = await run(home, ['--json', 'ask', '--file', askFile(home)], { LOOPSIGN_POLICY: lax });
    expect(byEnv.code).toBe(5);
    const open = homeWithPolicy(undefined);
    const strict = open.file('strict.json', JSON.stringify({ version: 1, perAsk: { maxUsdc: '1000000' } }));
    const added = await run(open, ['--json', '--policy', strict, 'ask', '--file', askFile(open)]);
    expect(added.code).toBe(5);
    expect(added.json().error.policy).toBe(strict);
  });

  it('above the approval threshold, with no human to ask (no terminal), the spend is refused', async () => {
    const home = homeWithPolicy({ version: 1, approvalThreshold: { maxUsdc: '1000000' } });
    const n0 = await nonce();
    const r = await run(home, ['--json', 'ask', '--file', askFile(home)]);
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'approval_required', limit: 'approvalThreshold' });
    expect(await nonce()).toBe(n0);
  });

  it('rolling24h counts the earlier round when a wallet votes again (--new-round): refused at the preflight, before the rating context is read, anything built or anything sent', async () => {
    // The preflight excluded the operation it was given from the window — the earlier round's vote, whose stake the
    // new vote does not replace — so a vote the window cannot take passed it, read the context, built and journaled
    // a commit (and would have opened the round or signed gated terms) before the ledger refused it at signing.
    const home = homeWithPolicy({ version: 1, rolling24h: { '31337': { maxLrep: '2500000' } } });
    const id = String((await sb.control('/__sandbox/content', { durationSeconds: 60 })).contentId);
    const first = await run(home, ['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '1']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 700 });
    for (let i = 0; i < 4; i++) await sb.control('/__sandbox/keeper/tick', {});
    const n0 = await nonce();
    const again = await run(home, ['--json', 'rate', '--content-id', id, '--down', '--prediction', '30', '--stake', '2', '--new-round']);
    expect(again.code, again.stdout).toBe(5);
    expect(again.json().error).toMatchObject({ code: 'policy_limit', limit: 'the last 24 hours', left: '1500000', amount: '2000000' });
    expect(again.stderr).not.toMatch(/rating context|rating plan/);
    expect(await nonce()).toBe(n0);
  });

  it('perRating caps the stake', async () => {
    const home = homeWithPolicy({ version: 1, perRating: { maxStakeLrep: '2000000' } });
    const id = String((await sb.control('/__sandbox/content', {})).contentId);
    const r = await run(home, ['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '3']);
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'policy_limit', limit: 'perRating' });
    const ok = await run(home, ['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '2']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });
});
