// Red-team review of issue 11, through the built binary against a real sandbox: what a hostile service could still
// make loopsign pay for or tell an agent. Each test asserts the safe outcome (exit code, balances, nonce, pools).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { capture } from './helpers/capture.js';
import { bonusPoolsFunded, openSession, tokenBalance, type Pub, type Session } from './helpers/chain.js';
import { forget } from './helpers/store.js';

let s: Session;
let sb: SandboxHandle;
let home: Home;
let pub: Pub;
let n = 0;

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const usdc = () => tokenBalance(s, 'USDC');
const nonce = () => pub.getTransactionCount({ address: sb.info.devWallet.address });

function askFile(question: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  n++;
  return home.file(
    `redteam-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `redteam-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question,
      ...extra,
    }),
  );
}

async function hostile(scenario: string, count = 1) {
  await sb.control('/__sandbox/hostile', { scenario, count });
  capture.count('hostile scenarios refused with exit 5', scenario);
}
const calm = () => sb.control('/__sandbox/hostile', undefined, 'DELETE');

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 10_000, read: 10_000 }, raters: false });
  ({ sb, home, pub } = s);
});
afterAll(async () => {
  await sb.stop();
});

describe("a submission claim must be this ask's, not any question this wallet once asked", () => {
  // The registry takes a question once per chain (its key: category, media, details, URL, title, tags): the same
  // question asked again can never be submitted, so its honest rerun is refused before anything is signed; another
  // question with the same title is asked and paid.
  it.each([
    ['the same question asked again', { tags: ['repeat'], contextUrl: 'https://example.com/repeat' }, false],
    ['another question with the same title', { tags: ['other'], contextUrl: 'https://example.com/other' }, true],
  ] as const)(
    'claims_submitted_earlier (%s): nothing is paid for the earlier question, and an honest rerun asks the new one if the chain can take it',
    async (_label, earlierFields, askable) => {
      const title = `Red team: is this release ready? ${n}`;
      const earlier = await run([
        '--json',
        'ask',
        '--file',
        askFile({ title, categoryId: '1', ...earlierFields }, { maxPaymentAmount: '1500000' }),
        '--payment-mode',
        'wallet_calls',
      ]);
      expect(earlier.code, earlier.stdout + earlier.stderr).toBe(0);
      const earlierId = earlier.json().contentIds[0] as string;

      const file = askFile(
        { title, categoryId: '1', tags: ['repeat'], contextUrl: 'https://example.com/repeat' },
        { feedbackBonus: { amount: '1000000', asset: 'USDC' } },
      );
      const before = await usdc();
      const n0 = await nonce();
      await hostile('claims_submitted_earlier');
      const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
      await calm();
      expect(await bonusPoolsFunded(s, earlierId), 'no bonus pool funded for the earlier question').toBe(0);
      expect(await usdc(), 'nothing paid').toBe(before);
      expect(await nonce(), 'nothing signed').toBe(n0);
      expect(r.code, r.stdout + r.stderr).toBe(5);
      expect(r.json().error.code).toBe('unproven_submission');

      const honest = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
      if (!askable) {
        expect(honest.code, honest.stdout + honest.stderr).toBe(5);
        expect(honest.json().error.code).toBe('question_already_submitted');
        expect(await usdc(), 'nothing paid').toBe(before);
        expect(await nonce(), 'nothing signed').toBe(n0);
        return;
      }
      expect(honest.code, honest.stdout + honest.stderr).toBe(0);
      expect(honest.json().contentIds[0]).not.toBe(earlierId);
      expect(honest.json().feedbackBonus.status).toBe('funded');
      expect(await usdc()).toBe(before - 2_500_000n);
    },
  );
  it("a submission the service names that is this ask's own is still believed when its journal is gone", async () => {
    const file = askFile(
      { title: `Red team: journal lost ${n}`, categoryId: '1', tags: ['lost'], contextUrl: 'https://example.com/lost' },
      { maxPaymentAmount: '1500000' },
    );
    const first = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    forget(home, first.json().operation as string);
    const n0 = await nonce();
    const again = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().contentIds).toEqual(first.json().contentIds);
    expect(await nonce()).toBe(n0);
  });
});

describe('an x402 authorization redeemed by someone else (the live submitter lets anyone send it)', () => {
  it('x402_relayed: the service sends the submit itself; loopsign sends nothing, proves the submission by its nonce and reports it paid', async () => {
    const file = askFile(
      { title: `Red team: relayed ${n}`, categoryId: '1', tags: ['relayed'], contextUrl: 'https://example.com/relayed' },
      { feedbackBonus: { amount: '1000000', asset: 'USDC' } },
    );
    const before = await usdc();
    const n0 = await nonce();
    await hostile('x402_relayed');
    const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'x402_authorization']);
    await calm();
    expect(await usdc(), 'paid once, by the authorization').toBe(before - 2_500_000n);
    expect(await nonce(), 'the wallet sent nothing').toBe(n0);
    // On main: exit 4, call_would_revert "... nothing was sent for this call" while 2.5 USDC have left the wallet.
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'submitted', feedbackBonus: { status: 'funded' } });
  });
});

describe('check-plan (offline) and plans that were already paid', () => {
  it('a bonus plan re-offered after it was funded passes check-plan, which then says it cannot know it was paid', async () => {
    const file = askFile(
      { title: `Red team: check-plan bonus ${n}`, categoryId: '1', tags: ['check'], contextUrl: 'https://example.com/check' },
      { feedbackBonus: { amount: '1000000', asset: 'USDC' } },
    );
    const before = await usdc();
    await sb.control('/__sandbox/faults', {
      route: 'POST /api/agent/asks/:operationKey/confirm-feedback-bonus',
      kind: 'status',
      status: 503,
      count: 20,
    });
    const first = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/faults', undefined, 'DELETE');
    expect(first.code, first.stdout + first.stderr).toBe(3);
    expect(await usdc(), 'bounty and bonus paid').toBe(before - 2_500_000n);
    // The service still offers the bonus plan (its confirmation never arrived): an agent on the public MCP endpoint
    // checks it before signing it with its own wallet tool.
    const key = (await run(['--json', 'quote', '--file', file, '--payment-mode', 'wallet_calls'])).json().operationKey as string;
    const status = await run(['--json', 'status', '--operation-key', key]);
    const answer = home.file(`redteam-answer-${n}.json`, JSON.stringify(status.json().service));
    const checked = await run(['--json', 'check-plan', '--ask', file, '--response', answer, '--wallet', sb.info.devWallet.address]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.json().kind).toBe('bonus_plan');
    // Passing says nothing about whether the plan was already executed: that must be stated, or an agent pays twice.
    expect(JSON.stringify(checked.json().needsChain)).toMatch(/already (funded|paid|signed)/);
  });
});

describe('service text never becomes an instruction or a terminal control sequence', () => {
  const question = () => ({
    title: `Red team error text ${n}`,
    categoryId: '1',
    tags: ['errors'],
    contextUrl: 'https://example.com/errors',
  });

  it("error_instructions (--json): the hint is loopsign's, not a command the service wrote", async () => {
    await hostile('error_instructions');
    const r = await run(['--json', 'ask', '--file', askFile(question()), '--payment-mode', 'wallet_calls']);
    await calm();
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const error = r.json().error;
    expect(error.hint ?? '').not.toContain('wallet export');
    expect(error.recoverWith).toBeUndefined();
    expect(error.code).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it("result_escapes (text): rater feedback and the service's next action are printed without escapes or commands", async () => {
    const asked = await run([
      '--json',
      'ask',
      '--file',
      askFile(question(), { maxPaymentAmount: '1500000' }),
      '--payment-mode',
      'wallet_calls',
    ]);
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    await hostile('result_escapes');
    const r = await run(['result', '--operation-key', asked.json().operationKey]);
    await calm();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('feedback');
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.stdout).not.toContain('wallet export');
  });

  it('error_instructions (text): no escape sequence reaches the terminal, no service command the hint', async () => {
    await hostile('error_instructions');
    const r = await run(['ask', '--file', askFile(question()), '--payment-mode', 'wallet_calls']);
    await calm();
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).not.toContain('wallet export');
  });
});

// Other operations on the same wallet between an interruption and its rerun.
describe('interrupted plans and other operations on the same wallet', () => {
  const plain = (title: string) =>
    askFile({ title, categoryId: '1', tags: ['turns'], contextUrl: 'https://example.com/turns' }, { maxPaymentAmount: '1500000' });

  it('an ask killed after its approval, then another ask replaces and uses the allowance: the rerun stops (approval_replaced) and never approves twice', async () => {
    const first = plain(`Red team: interrupted after approve ${n}`);
    const before = await usdc();
    const killed = await run(['--json', 'ask', '--file', first, '--payment-mode', 'wallet_calls'], { LOOPSIGN_CRASH_AFTER: 'ask:mined:1' });
    expect(killed.code).toBe(-1);
    // Another ask takes its turn: its approval replaces the first's, its submit spends it.
    const other = await run(['--json', 'ask', '--file', plain(`Red team: the other ask ${n}`), '--payment-mode', 'wallet_calls']);
    expect(other.code, other.stdout + other.stderr).toBe(0);
    const n0 = await nonce();
    const resumed = await run(['--json', 'ask', '--file', first, '--payment-mode', 'wallet_calls']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(4);
    expect(resumed.json().error.code).toBe('approval_replaced');
    expect(resumed.json().error.hint).toMatch(/new clientRequestId/);
    expect(await nonce(), 'nothing signed').toBe(n0);
    expect(await usdc()).toBe(before - 1_500_000n);
  });

  it('an ask killed after signing, before broadcast, then another ask cancels that gap and signs past it: the first finishes once the cancel is final (its lost transaction void), paying once', async () => {
    const first = plain(`Red team: killed before broadcast ${n}`);
    const before = await usdc();
    const killed = await run(['--json', 'ask', '--file', first, '--payment-mode', 'wallet_calls'], {
      LOOPSIGN_CRASH_AFTER: 'ask:signed:0',
    });
    expect(killed.code).toBe(-1);
    const other = await run(['--json', 'ask', '--file', plain(`Red team: the nonce taker ${n}`), '--payment-mode', 'wallet_calls']);
    expect(other.code, other.stdout + other.stderr).toBe(0);
    expect(other.stderr).toMatch(/"event":"tx\.cancel"/);
    // The other ask's three transactions came after the cancel: the sandbox's finalized block (head − 2) passed it.
    const resumed = await run(['--json', 'ask', '--file', first, '--payment-mode', 'wallet_calls']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/"event":"tx\.void"/);
    expect(await usdc()).toBe(before - 3_000_000n);
  });
});
