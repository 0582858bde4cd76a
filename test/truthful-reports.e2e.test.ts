// Reports that read right (issue 36, item 6), against a real sandbox: the rerun of a finished ask says it sent nothing
// ("0 sent this run, N earlier"; `sentThisRun` beside the total `transactions`), and finds the bonus an earlier run
// funded whatever --payment-mode the rerun was given; a question the service does not know is not a pending result
// (the live service answers its indexer's 404: exit 3, at once, even with --wait).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAbi, type Hex, createPublicClient } from 'viem';
import { runCli, SETTLE_TIMEOUT, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
let sb: SandboxHandle;
let home: Home;
let pub: ReturnType<typeof createPublicClient>;
let dev: Hex;

beforeAll(async () => {
  ({ sb, home, pub } = await openSession({ autoAdvance: true, pollAfterMs: 200, rateLimits: { write: 10_000, read: 10_000 } }));
  dev = sb.info.devWallet.address;
});
afterAll(async () => {
  await sb.stop();
});

const run = (args: string[]) => runCli(args, home, { env: sb.env() });
const usdc = async () =>
  (await pub.readContract({ address: sb.info.tokens.USDC.address, abi: erc20, functionName: 'balanceOf', args: [dev] })) as bigint;

describe('the rerun of a finished ask', () => {
  it('reports 0 sent this run beside the total, and the bonus an earlier run funded, whatever --payment-mode it omits', async () => {
    const id = `truthful-${process.pid}-${Date.now()}`;
    const file = home.file(
      `${id}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: id,
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
        question: { title: `Truthful reports ${id}`, contextUrl: 'https://example.com/context', categoryId: '1', tags: ['agent'] },
      }),
    );
    // Paid by wallet calls, not the default for this ask (x402: one USDC question, a USDC bonus).
    const first = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(first.code, first.stderr).toBe(0);
    const a = first.json();
    expect(a.feedbackBonus.status).toBe('funded');
    expect(a.transactions).toBeGreaterThan(0);
    expect(a.sentThisRun).toBe(a.transactions);
    const balance = await usdc();

    // The rerun omits --payment-mode: nothing is sent, and the report says so.
    const again = await run(['--json', 'ask', '--file', file]);
    expect(again.code, again.stderr).toBe(0);
    const b = again.json();
    expect(b).toMatchObject({ resumed: true, operationKey: a.operationKey, paymentMode: 'wallet_calls' });
    expect(b.transactions).toBe(a.transactions);
    expect(b.sentThisRun).toBe(0);
    expect(b.feedbackBonus).toMatchObject({ status: 'funded', poolId: a.feedbackBonus.poolId });
    expect(await usdc()).toBe(balance);

    // The same in text.
    const text = await run(['ask', '--file', file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`(0 sent this run, ${a.transactions} earlier)`);
    expect(text.stdout).toMatch(/bonus\s+funded/);
    expect(text.stdout).not.toMatch(/unavailable/);
    expect(await usdc()).toBe(balance);
  });
});

describe('a question that does not exist', () => {
  it('result --content-id is exit 3 naming it, never pending; --wait does not wait on it', async () => {
    for (const wait of [[], ['--wait', '--timeout', SETTLE_TIMEOUT]]) {
      const r = await run(['--json', 'result', '--content-id', '987654321', ...wait]);
      expect(r.code, r.stdout + r.stderr).toBe(3);
      const e = r.json().error;
      expect(e.message).toMatch(/no question with content id 987654321/);
      expect(e.status).toBe(404);
      expect(r.stdout).not.toMatch(/pending|1970/);
    }
  });
});
