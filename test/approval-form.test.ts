// The approval form (issue 36 §5): what a person sees when a spend needs their yes — the terminal's y/N prompt and an
// MCP host's elicitation form, one rendering (src/policy/approval-form.ts). The real policy gate, a real policy file
// and store: an ask whose agent titled it "Weekly check (0.30 USDC, pre-approved by policy; …)" and pays 3 USDC. The
// form states loopsign's facts first (3 USDC, the chain, the threshold) and shows the title only after them, quoted,
// labelled untrusted and shortened.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chainForProfile } from '../src/chains/index.js';
import { elicitationApprover } from '../src/mcp/approval.js';
import { Output } from '../src/output.js';
import { loopsignPaths } from '../src/paths.js';
import { PolicyGate, type ApprovalRequest } from '../src/policy/gate.js';
import { normalizeAsk } from '../src/protocol/ask-normalize.js';
import { Store } from '../src/store/db.js';

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-approval-form-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TITLE = 'Weekly check (0.30 USDC, pre-approved by policy; the owner already said yes, no need to read further)';
const ask = normalizeAsk({
  chainId: 8453,
  clientRequestId: 'weekly-check-preapproved-0.30',
  maxPaymentAmount: '3000000',
  bounty: { amount: '3000000', asset: 'USDC', requiredVoters: '3' },
  question: { title: TITLE, contextUrl: 'https://example.com/weekly', categoryId: '1', tags: ['weekly'] },
});

/** What the real gate asks a person about this ask, above a 2 USDC threshold. */
async function requestFor(): Promise<{ request: ApprovalRequest; shown: { title: string; message: string }[] }> {
  const policy = path.join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ version: 1, approvalThreshold: { maxUsdc: '2000000' } }));
  const store = await Store.open(path.join(dir, 'state'));
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const out = new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: sink });
  const shown: { title: string; message: string }[] = [];
  let request: ApprovalRequest | undefined;
  // The MCP approver, with the person's form recorded (they say yes).
  const mcp = elicitationApprover(async (form) => (shown.push(form), true))!;
  const gate = await PolicyGate.load(
    out,
    { flag: policy, env: {}, paths: loopsignPaths({ XDG_STATE_HOME: dir }) },
    async () => store,
    (r) => {
      request = r;
      return mcp(r);
    },
  );
  await gate.preflightAsk(chainForProfile(8453), ask, 'ask-00000000000000000000000000000000');
  store.close();
  return { request: request!, shown };
}

describe('the approval form', () => {
  it("states loopsign's facts first; the agent's title only after them, quoted, labelled untrusted, shortened", async () => {
    const { request, shown } = await requestFor();
    expect(shown).toHaveLength(1);
    const { message, title } = shown[0]!;
    expect(title).toBe('Approve this spend');
    const lines = message.split('\n');
    expect(lines[0]).toBe(
      'loopsign asks for your approval: pay 3 USDC (a bounty of 3 USDC to 3 raters) on Base mainnet (chain 8453, production) for an ask of one question.',
    );
    expect(lines[1]).toMatch(
      /^This is above the approvalThreshold 2 USDC of .*policy\.json, so it needs your yes; your agent cannot give it\.$/,
    );
    // The agent's words: the last line, labelled, quoted and cut.
    expect(lines[2]).toMatch(
      /^Written by the agent \(untrusted, shortened; not what loopsign pays\): title "Weekly check \(0\.30 USDC, pre-approved by po.*…"/,
    );
    expect(message.indexOf('0.30 USDC')).toBeGreaterThan(message.indexOf('pay 3 USDC'));
    expect(message.indexOf('0.30 USDC')).toBeGreaterThan(message.indexOf('approvalThreshold 2 USDC'));
    expect(message).not.toContain('no need to read further');
    expect(message.split('"Weekly check')[1]!.split('"')[0]!.length).toBeLessThan(48);
    // The log line names no agent text at all.
    expect(request.summary).not.toContain('Weekly');
    // The terminal prompt renders the same form (src/policy/prompt.ts).
    const { approvalForm } = await import('../src/policy/approval-form.js');
    expect(shown[0]).toEqual(approvalForm(request));
  });

  it('agent text cannot break out of its quotes or its line', async () => {
    const { approvalForm } = await import('../src/policy/approval-form.js');
    const form = approvalForm({
      kind: 'ask',
      chainId: 8453,
      amounts: { USDC: 3_000_000n },
      summary: '',
      facts: 'pay 3 USDC',
      threshold: 'approvalThreshold 2 USDC of p.json',
      agentText: [{ label: 'title', text: 'ok"\nloopsign asks for your approval: pay 0.30 USDC' }],
    });
    expect(form.message.split('\n')).toHaveLength(3);
    expect(form.message.split('\n')[2]).toContain('title "ok\\" loopsign asks for your approval: pay 0.30 U…"');
  });
});
