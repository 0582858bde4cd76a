// Generation with review against the sandbox: a draft is never approval; retry_required is repaired by repeating
// the identical request; the 24-hour window ends in 410; only an approved review is success.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { makeHome, registerSecret, runCli, type Home } from './helpers/cli.js';
import { startSandbox, type SandboxHandle } from './helpers/sandbox.js';

let sb: SandboxHandle;
let home: Home;
let env: Record<string, string>;
const run = (args: string[]) => runCli(args, home, { env });
const gen = (id: string) => ['--json', 'generate', '--workflow', 'release-notes', '--agent', 'agt_sandbox', '--message', 'system:Be brief', '--message', `user:Summarise build ${id} for users`, '--max-output-tokens', '50', '--client-request-id', id];

beforeAll(async () => {
  sb = await startSandbox();
  home = makeHome();
  const apiKey = readFileSync((sb.info as unknown as { workspace: { apiKeyFile: string } }).workspace.apiKeyFile, 'utf8').trim();
  registerSecret(apiKey);
  env = { ...sb.env(), LOOPSIGN_API_KEY: apiKey };
}, 60_000);
afterAll(async () => {
  await sb.stop();
});

describe('generate and review wait', () => {
  it('prints a draft marked not approved, then waits for the review to be approved', async () => {
    const text = await runCli(gen('gen-text-1').slice(1), home, { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/DRAFT — NOT APPROVED/);
    const r = await run(gen(`gen-ok-${Date.now()}`));
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.draft).toMatchObject({ approved: false, model: 'sandbox-draft-1' });
    expect(doc.opportunityId).toMatch(/^opp_/);
    expect(doc.review.lifecycle.state).toBe('pending');
    const early = await run(['--json', 'review', 'wait', doc.opportunityId, '--timeout', '2']);
    expect(early.code).toBe(7);
    expect(early.json().error.code).toBe('review_wait_timeout');
    await sb.control('/__sandbox/time', { advanceSeconds: 130 });
    const w = await run(['--json', 'review', 'wait', doc.opportunityId, '--timeout', '30']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.json()).toMatchObject({ approved: true, state: 'completed' });
  });

  it('retry_required: not approval (exit 7); the identical request repeated after repair sets up the review without a new generation', async () => {
    await sb.control('/__sandbox/settings', { reviewSetupFailures: 1 });
    const id = `gen-retry-${Date.now()}`;
    const r = await run(gen(id));
    expect(r.code).toBe(7);
    const e = r.json().error;
    expect(e).toMatchObject({ code: 'review_setup_required', condition: 'review_integration_unavailable', review: null });
    expect(e.draft.text).toMatch(/^Draft \(release-notes\)/);
    expect(e.hint).toContain(`loopsign generate --retry ${id}`);
    const again = await run(['--json', 'generate', '--retry', id]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().draft.text).toBe(e.draft.text);
    expect(again.json().opportunityId).toMatch(/^opp_/);
  });

  it('after 24 hours the same key is 410: no new generation; start a new request', async () => {
    const id = `gen-old-${Date.now()}`;
    expect((await run(gen(id))).code).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 25 * 3600 });
    const r = await run(['--json', 'generate', '--retry', id]);
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe('generation_expired');
    expect(r.json().error.message).toMatch(/no new generation was made; start a new request/);
  });

  it('an inconclusive review is not approval (exit 7)', async () => {
    await sb.control('/__sandbox/settings', { reviewOutcome: 'inconclusive' });
    const r = await run(gen(`gen-inc-${Date.now()}`));
    await sb.control('/__sandbox/settings', { reviewOutcome: 'approved' });
    await sb.control('/__sandbox/time', { advanceSeconds: 130 });
    const w = await run(['--json', 'review', 'wait', r.json().opportunityId, '--timeout', '30']);
    expect(w.code).toBe(7);
    expect(w.json().error).toMatchObject({ code: 'review_not_approved', approved: false, state: 'inconclusive' });
  });

  it('bad input and missing credentials', async () => {
    expect((await run(['--json', 'generate', '--workflow', 'w', '--agent', 'a', '--message', 'no role here', '--max-output-tokens', '5'])).json().error.code).toBe('invalid_message');
    const noKey = await runCli(gen('gen-nokey'), home, { env: { ...env, LOOPSIGN_API_KEY: '' } });
    expect(noKey.code).toBe(2);
    expect(noKey.json().error.code).toBe('api_key_required');
  });
});
