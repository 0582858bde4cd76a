// Generation with review (seed-only: the live service has no generation route) against the sandbox: a draft is
// never approval; retry_required is repaired by repeating the identical request; the 24-hour window ends in 410; the
// draft's review is followed over the workspace MCP like any other, and only §5.6.4 approval is success.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { registerSecret, runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

let sb: SandboxHandle;
let home: Home;
let env: Record<string, string>;
let keyFile: string;
let trustedKeys: string;
const run = (args: string[]) => runCli(args, home, { env });
const key = () => ['--api-key-file', keyFile];
const gen = (id: string) => [
  '--json',
  'generate',
  '--workflow',
  'release-notes',
  '--agent',
  'agt_sandbox',
  '--message',
  'system:Be brief',
  '--message',
  `user:Summarise build ${id} for users`,
  '--max-output-tokens',
  '50',
  '--client-request-id',
  id,
  ...key(),
];
const wait = (id: string, timeout: string) =>
  run(['--json', 'review', 'wait', id, '--timeout', timeout, '--trusted-keys', trustedKeys, ...key()]);

beforeAll(async () => {
  ({ sb, home } = await openSession());
  keyFile = (sb.info as unknown as { workspace: { apiKeyFile: string } }).workspace.apiKeyFile;
  registerSecret(readFileSync(keyFile, 'utf8').trim());
  env = sb.env();
  trustedKeys = path.join(home.dir, 'trusted-keys.json');
  expect((await run(['evidence', 'keys', '--out', trustedKeys])).code).toBe(0);
});
afterAll(async () => {
  await sb.stop();
});

describe('generate (seed-only) and review wait', () => {
  it('is labelled seed-only in its help', async () => {
    const h = await run(['generate', '--help']);
    expect(h.stdout).toMatch(/SEED-ONLY/);
    expect(h.stdout).toMatch(/not in the live service/);
  });

  it('prints a draft marked not approved, then waits for the review (over the workspace MCP) to be approved', async () => {
    const text = await runCli(gen('gen-text-1').slice(1), home, { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/DRAFT — NOT APPROVED/);
    const r = await run(gen(`gen-ok-${Date.now()}`));
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.draft).toMatchObject({ approved: false, model: 'sandbox-draft-1' });
    expect(doc.opportunityId).toMatch(/^aop_[0-9a-f]{40}$/);
    expect(doc.reviewState).toBe('pending');
    // A key given by flag travels with the printed command (issue 19): it runs as printed.
    expect(doc.next).toEqual([`loopsign review wait ${doc.opportunityId} --api-key-file ${keyFile}`]);
    const early = await wait(doc.opportunityId, '2');
    expect(early.code).toBe(7);
    expect(early.json().error).toMatchObject({ code: 'review_wait_timeout', state: 'pending' });
    await sb.control('/__sandbox/time', { advanceSeconds: 200 });
    const w = await wait(doc.opportunityId, '30');
    expect(w.code, w.stderr).toBe(0);
    // The evidence signs the draft that was printed: its hash was journaled by generate.
    expect(w.json()).toMatchObject({ approved: true, state: 'completed', evidence: 'verified' });
  });

  it('retry_required: not approval (exit 7); the identical request repeated after repair sets up the review without a new generation', async () => {
    await sb.control('/__sandbox/settings', { reviewSetupFailures: 1 });
    const id = `gen-retry-${Date.now()}`;
    const r = await run(gen(id));
    expect(r.code).toBe(7);
    const e = r.json().error;
    expect(e).toMatchObject({ code: 'review_setup_required', condition: 'review_integration_unavailable', opportunityId: null, next: [] });
    expect(e.draft.text).toMatch(/^Draft \(release-notes\)/);
    expect(e.hint).toContain(`loopsign generate --retry ${id}`);
    const again = await run(['--json', 'generate', '--retry', id, ...key()]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().draft.text).toBe(e.draft.text);
    expect(again.json().opportunityId).toMatch(/^aop_[0-9a-f]{40}$/);
  });

  it('after 24 hours the same key is 410: no new generation; start a new request', async () => {
    const id = `gen-old-${Date.now()}`;
    expect((await run(gen(id))).code).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 25 * 3600 });
    const r = await run(['--json', 'generate', '--retry', id, ...key()]);
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe('generation_expired');
    expect(r.json().error.message).toMatch(/no new generation was made; start a new request/);
  });

  it('an inconclusive review is not approval (exit 7)', async () => {
    await sb.control('/__sandbox/settings', { reviewOutcome: 'inconclusive' });
    const r = await run(gen(`gen-inc-${Date.now()}`));
    await sb.control('/__sandbox/settings', { reviewOutcome: 'approved' });
    await sb.control('/__sandbox/time', { advanceSeconds: 1300 });
    const w = await wait(r.json().opportunityId, '30');
    expect(w.code).toBe(7);
    expect(w.json().error).toMatchObject({ code: 'review_not_approved', approved: false, state: 'inconclusive' });
  });

  it('bad input and missing credentials', async () => {
    expect(
      (await run(['--json', 'generate', '--workflow', 'w', '--agent', 'a', '--message', 'no role here', '--max-output-tokens', '5'])).json()
        .error.code,
    ).toBe('invalid_message');
    const noKey = await run(gen('gen-nokey').slice(0, -2));
    expect(noKey.code).toBe(6);
    expect(noKey.json().error.code).toBe('api_key_required');
  });
});
