// Invited workspace review against the sandbox, through the built binary: projects (create journaled, a rerun and an
// ambiguous failure never make two), private reviews (the key journaled and reused, every bad input a documented exit
// code and one line), runs followed to their evidence, and the invited-review client over the workspace MCP —
// only §5.6.4 approval is exit 0; every other ending is exit 7 with its state; hostile answers are refused (exit 5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { capture } from './helpers/capture.js';
import { childEnv, makeHome, registerSecret, runCli, SETTLE_TIMEOUT, type Home, type RunResult } from './helpers/cli.js';
import { createContext } from '../src/context.js';
import { Output } from '../src/output.js';
import { loopsignPaths } from '../src/paths.js';
import { Store } from '../src/store/db.js';
import { evaluate, requestReview } from '../src/review/invited.js';
import { openWorkspace, reviewRecords } from '../src/review/session.js';
import { startSandbox, type SandboxHandle } from './helpers/sandbox.js';

let sb: SandboxHandle;
let home: Home;
let keyFile: string;
let cookie: string;
let trustedKeys: string;
let w: {
  workspaceId: string;
  projectId: string;
  integrationId: string;
  requestProfile: { id: string; version: number; hash: string };
  cohortId: string;
  workflowKey: string;
};
const key = () => ['--api-key-file', keyFile];
const run = (args: string[], env: Record<string, string | undefined> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const settings = (b: Record<string, unknown>) => sb.control('/__sandbox/settings', b);
let n = 0;
const file = (content: string | Buffer, name = `f-${++n}.txt`) => {
  const f = path.join(home.dir, name);
  writeFileSync(f, content);
  return f;
};

/** One clear line: an `error:` line and at most a hint, nothing else (no stack). */
function oneLine(r: RunResult): string {
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('•'));
  expect(lines[0], r.stderr).toMatch(/^error: /);
  expect(lines.length, r.stderr).toBeLessThanOrEqual(2);
  if (lines[1]) expect(lines[1]).toMatch(/^hint: /);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

const createArgs = (o: Record<string, string> = {}) => {
  const a: Record<string, string> = {
    '--project': w.projectId,
    '--integration': w.integrationId,
    '--profile': `${w.requestProfile.id}@${w.requestProfile.version}`,
    '--profile-hash': w.requestProfile.hash,
    '--cohort': w.cohortId,
    '--data-classification': 'confidential',
    ...o,
  };
  return ['review', 'create', ...Object.entries(a).flat(), ...key()];
};

/**
 * evaluate → request an output; returns the opportunity id. For tests whose subject is what comes after (`review
 * wait`, `review result`), the two steps run in this process by default, through the very functions the commands run
 * (src/review/invited.ts), in the test home's environment: the journal `review wait` reads is the one `review evaluate`
 * wrote. `binary` runs them as commands instead (the evaluate → request → wait → result test runs them too).
 */
async function requested(
  externalId: string,
  suggestion = `Reply for ${externalId}: reset it under Settings.`,
  how: 'in-process' | 'binary' = 'in-process',
): Promise<string> {
  const source = file(`Ticket ${externalId}: how do I reset my password?`);
  const out = file(suggestion);
  if (how === 'in-process') {
    const sink = { write: () => true } as unknown as NodeJS.WritableStream;
    const env = childEnv(home, sb.env());
    // The database the commands open (the home's state folder), opened for this call alone and closed after it.
    const store = Store.open(loopsignPaths(env).state);
    const ctx = createContext({
      flags: { json: true },
      out: new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: sink }),
      env,
      store: () => store,
    });
    const mcp = await openWorkspace(ctx, { apiKeyFile: keyFile }).catch(async (error) => {
      (await store).close();
      throw error;
    });
    try {
      const records = await reviewRecords(ctx);
      const e = await evaluate(mcp, records, {
        externalId,
        workflow: w.workflowKey,
        riskTier: 'high',
        source,
        suggestion: out,
        model: 'openai/gpt-5.1',
      });
      const id = e.envelope.opportunityId;
      const r = await requestReview(mcp, records, id, {});
      expect({ action: r.action, state: r.envelope.state }).toEqual({ action: 'private_review_assigned', state: 'pending' });
      return id;
    } finally {
      await mcp.close();
      (await store).close();
    }
  }
  const e = await run([
    '--json',
    'review',
    'evaluate',
    '--external-id',
    externalId,
    '--workflow',
    w.workflowKey,
    '--risk-tier',
    'high',
    '--source',
    source,
    '--suggestion',
    out,
    '--model',
    'openai/gpt-5.1',
    ...key(),
  ]);
  expect(e.code, e.stdout + e.stderr).toBe(0);
  const id = e.json().opportunityId as string;
  const r = await run(['--json', 'review', 'request', id, ...key()]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.json()).toMatchObject({
    action: 'private_review_assigned',
    state: 'pending',
    next: [`loopsign review wait ${id} --api-key-file ${keyFile}`],
  });
  return id;
}

beforeAll(async () => {
  // Its own sandbox: `projects list` must show exactly the projects of a new workspace, which the projects other files
  // create on a shared sandbox would change.
  sb = await startSandbox(['--auto-advance']);
  home = makeHome();
  const ws = sb.info as unknown as { workspace: { apiKeyFile: string; sessionCookieFile: string } };
  keyFile = ws.workspace.apiKeyFile;
  registerSecret(readFileSync(keyFile, 'utf8').trim());
  cookie = readFileSync(ws.workspace.sessionCookieFile, 'utf8').trim();
  registerSecret(cookie);
  w = await sb.control('/__sandbox/workspace');
  // Many commands in a minute from one machine: the tests of the limit itself set it back.
  await settings({ workspaceMcpLimit: 100_000 });
  trustedKeys = path.join(home.dir, 'trusted-keys.json');
  expect((await run(['evidence', 'keys', '--out', trustedKeys])).code).toBe(0);
});
afterAll(async () => {
  await sb.stop();
});

describe('projects', () => {
  it('list: the workspace and the projects this key holds', async () => {
    const r = await run(['--json', 'projects', 'list', ...key()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({
      workspaceId: w.workspaceId,
      projects: [{ projectId: w.projectId, dataClassification: 'confidential', status: 'active' }],
    });
  });

  it('create: journaled; a rerun answers with the same project and sends nothing', async () => {
    const args = [
      '--json',
      'projects',
      'create',
      '--name',
      'Support replies',
      '--data-classification',
      'confidential',
      '--retention-days',
      '90',
      ...key(),
    ];
    const a = await run(args);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json()).toMatchObject({
      created: true,
      source: 'created',
      workspaceId: w.workspaceId,
      next: [`loopsign projects show ${a.json().projectId} --api-key-file ${keyFile}`],
    });
    const b = await run(args);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json()).toMatchObject({ projectId: a.json().projectId, created: false, source: 'journal' });
    const list = (await run(['--json', 'projects', 'list', ...key()])).json();
    expect(list.projects.filter((p: { name: string }) => p.name === 'Support replies')).toHaveLength(1);
  });

  it('create after an ambiguous failure (the service made it, the answer was lost): the rerun finds it, never a second one', async () => {
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/v1/assurance/projects', kind: 'after_commit', count: 1 });
    const args = [
      '--json',
      'projects',
      'create',
      '--name',
      'Lost answer',
      '--data-classification',
      'internal',
      '--retention-days',
      '30',
      ...key(),
    ];
    const a = await run(args);
    expect(a.code).toBe(3);
    expect(a.json().error).toMatchObject({ code: 'project_create_unconfirmed' });
    expect(a.json().error.hint).toMatch(/run the same command again/);
    const b = await run(args);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json()).toMatchObject({ created: false, source: 'found_after_ambiguous_failure' });
    const list = (await run(['--json', 'projects', 'list', ...key()])).json();
    expect(list.projects.filter((p: { name: string }) => p.name === 'Lost answer')).toHaveLength(1);
  });

  it('show: a project with its runs; an unknown or malformed project is exit 2', async () => {
    const r = await run(['--json', 'projects', 'show', w.projectId, ...key()]);
    expect(r.code, r.stderr).toBe(0);
    expect(Array.isArray(r.json().runs)).toBe(true);
    const unknown = await run(['projects', 'show', 'hap_00000000000000000000000000000000', ...key()]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toMatch(/no project this key may use/);
    const bad = await run(['projects', 'show', 'project-1', ...key()]);
    expect(bad.code).toBe(2);
    expect(oneLine(bad)).toMatch(/not a project id \(hap_ \+ 32 hex\)/);
    const days = await run(['projects', 'create', '--name', 'x', '--data-classification', 'internal', '--retention-days', '0', ...key()]);
    expect(days.code).toBe(2);
    expect(oneLine(days)).toMatch(/--retention-days/);
  });
});

describe('review create (private review)', () => {
  it('creates it; a rerun sends the identical request under the journaled key and gets the same review', async () => {
    const src = file('Ticket 3001: customer asks to close the account.');
    const sug = file('Account closure scheduled; data export link sent.');
    const a = await run(['--json', ...createArgs({ '--source': src, '--suggestion': sug })]);
    expect(a.code, a.stderr).toBe(0);
    const doc = a.json();
    expect(doc).toMatchObject({
      status: 'ready_for_assignment',
      keyGenerated: true,
      rerun: false,
      next: [`loopsign projects show ${w.projectId} --api-key-file ${keyFile}`],
    });
    expect(doc.privateReviewId).toMatch(/^hpr_[0-9a-f]{32}$/);
    expect(doc.idempotencyKey).toMatch(/^loopsign-[0-9a-f]{32}$/);
    expect(doc.bodyBytes).toBeLessThanOrEqual(65536);
    const b = await run(['--json', ...createArgs({ '--source': src, '--suggestion': sug })]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json()).toMatchObject({ privateReviewId: doc.privateReviewId, idempotencyKey: doc.idempotencyKey, rerun: true });
  });

  it('bad input: each its documented exit code and one clear line, nothing sent', async () => {
    const src = file('Ticket 3002.');
    const sug = file('Reply 3002.');
    const cases: [string, string[], number, RegExp][] = [
      [
        'missing file',
        createArgs({ '--source': path.join(home.dir, 'nope.txt'), '--suggestion': sug }),
        2,
        /--source .*nope\.txt cannot be read/,
      ],
      [
        'file over the limit',
        createArgs({ '--source': file(Buffer.alloc(60_000, 7), 'big.bin'), '--suggestion': sug }),
        2,
        /would send \d+ bytes; the service accepts at most 65536/,
      ],
      [
        'wrong hash format',
        createArgs({ '--source': src, '--suggestion': sug, '--profile-hash': 'sha256:ABC' }),
        2,
        /--profile-hash must be sha256: followed by 64 lower-case hex/,
      ],
      [
        'unknown project',
        createArgs({ '--source': src, '--suggestion': sug, '--project': 'hap_00000000000000000000000000000000' }),
        2,
        /is not one `projects list` returns/,
      ],
      [
        'profile without a version',
        createArgs({ '--source': src, '--suggestion': sug, '--profile': 'rrp_x' }),
        2,
        /must be <id>@<version>/,
      ],
    ];
    for (const [what, args, code, message] of cases) {
      const r = await run(args);
      expect(r.code, `${what}: ${r.stderr}`).toBe(code);
      expect(oneLine(r), what).toMatch(message);
    }
    // Key reused with another payload: refused locally.
    const k = `reuse-${Date.now()}`;
    expect((await run(createArgs({ '--source': src, '--suggestion': sug, '--idempotency-key': k }))).code).toBe(0);
    const other = await run(createArgs({ '--source': sug, '--suggestion': src, '--idempotency-key': k }));
    expect(other.code).toBe(2);
    expect(oneLine(other)).toMatch(/was already used for another private review/);
  });

  it('the media type is detected from the bytes and can be named; a bad one is exit 2', async () => {
    const png = file(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), 'a.png');
    const sug = file('A caption for the image.');
    const ok = await run(createArgs({ '--source': png, '--suggestion': sug, '--suggestion-type': 'text/markdown; charset=utf-8' }));
    expect(ok.code, ok.stderr).toBe(0);
    const bad = await run(createArgs({ '--source': png, '--suggestion': sug, '--suggestion-type': 'not a type' }));
    expect(bad.code).toBe(2);
    expect(oneLine(bad)).toMatch(/is not a media type/);
  });
});

describe('runs', () => {
  it('status --wait: exit 7 on timeout with how to continue; completed prints the evidence command, which verifies the packet', async () => {
    await settings({ autoAdvance: false, reviewOutcome: 'approved' });
    try {
      const before = (await run(['--json', 'projects', 'show', w.projectId, ...key()])).json().runs.map((r: { runId: string }) => r.runId);
      expect((await run(createArgs({ '--source': file('Ticket 4001.'), '--suggestion': file('Reply 4001.') }))).code).toBe(0);
      const runs = (await run(['--json', 'projects', 'show', w.projectId, ...key()])).json().runs;
      const fresh = runs.find((r: { runId: string }) => !before.includes(r.runId));
      expect(fresh.status).toBe('collecting');
      const t = await run(['--json', 'runs', 'status', fresh.runId, '--wait', '--timeout', '2', ...key()]);
      expect(t.code).toBe(7);
      expect(t.json().error).toMatchObject({ code: 'run_wait_timeout', runStatus: 'collecting' });
      expect(t.json().error.hint).toBe(`continue waiting: loopsign runs status ${fresh.runId} --wait --api-key-file ${keyFile}`);
      await sb.control('/__sandbox/time', { advanceSeconds: 200 });
      const done = await run(['--json', 'runs', 'status', fresh.runId, '--wait', '--timeout', '30', ...key()]);
      expect(done.code, done.stderr).toBe(0);
      const next = done.json().next as string[];
      expect(done.json()).toMatchObject({ runStatus: 'completed', terminal: true });
      expect(next).toEqual([
        `loopsign evidence fetch run ${fresh.runId} --workspace ${w.workspaceId} --session-cookie-env RATELOOP_SESSION --trusted-keys trusted-keys.json`,
      ]);
      // The printed command, run as printed (cwd holds trusted-keys.json; the cookie in the named variable).
      const fetched = await run(['--json', ...next[0]!.split(' ').slice(1)], { RATELOOP_SESSION: cookie });
      expect(fetched.code, fetched.stdout + fetched.stderr).toBe(0);
      expect(fetched.json()).toMatchObject({ kind: 'packet', valid: true });
    } finally {
      await settings({ autoAdvance: true });
    }
  });

  it('bad run ids: exit 2', async () => {
    const bad = await run(['runs', 'status', 'run_1', ...key()]);
    expect(bad.code).toBe(2);
    expect(oneLine(bad)).toMatch(/not a run id/);
    const unknown = await run(['runs', 'status', `hau_${'0'.repeat(32)}`, ...key()]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toMatch(/no such run/);
  });
});

describe('the invited-review client (workspace MCP)', () => {
  let approvedId: string;
  let scopeId: string;

  it('policy: the bound context', async () => {
    const r = await run(['--json', 'review', 'policy', ...key()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({
      workspaceId: w.workspaceId,
      integrationId: w.integrationId,
      allowedWorkflowKeys: [w.workflowKey],
      requestProfile: { id: w.requestProfile.id, hash: w.requestProfile.hash, audienceType: 'private_invited' },
    });
  });

  it("evaluate → request → wait → result: approval, verified with the pinned gate key, is exit 0; --verify verifies the run's packet", async () => {
    await settings({ reviewOutcome: 'approved' });
    const src = file('Ticket 5001: where is my invoice?');
    const sug = file('Invoices are under Billing > History.');
    const e = await run([
      '--json',
      'review',
      'evaluate',
      '--external-id',
      'ticket-5001',
      '--workflow',
      w.workflowKey,
      '--risk-tier',
      'high',
      '--source',
      src,
      '--suggestion',
      sug,
      '--model',
      'openai/gpt-5.1',
      ...key(),
    ]);
    expect(e.code, e.stderr).toBe(0);
    approvedId = e.json().opportunityId;
    scopeId = e.json().scopeId;
    expect(e.json()).toMatchObject({
      state: 'request_ready',
      decision: 'required',
      repeated: false,
      next: [`loopsign review request ${approvedId} --api-key-file ${keyFile}`],
    });
    // The identical evaluation again: the journaled inputs, the same opportunity.
    const again = await run([
      '--json',
      'review',
      'evaluate',
      '--external-id',
      'ticket-5001',
      '--workflow',
      w.workflowKey,
      '--risk-tier',
      'high',
      '--source',
      src,
      '--suggestion',
      sug,
      '--model',
      'openai/gpt-5.1',
      ...key(),
    ]);
    expect(again.json()).toMatchObject({ opportunityId: approvedId, repeated: true });
    // Another output under the same id is refused before anything is sent.
    const changed = await run([
      'review',
      'evaluate',
      '--external-id',
      'ticket-5001',
      '--workflow',
      w.workflowKey,
      '--risk-tier',
      'high',
      '--source',
      src,
      '--suggestion',
      file('A different reply.'),
      '--model',
      'openai/gpt-5.1',
      ...key(),
    ]);
    expect(changed.code).toBe(2);
    expect(oneLine(changed)).toMatch(/already evaluated with other inputs/);
    expect((await run(['review', 'request', approvedId, ...key()])).code).toBe(0);
    const waited = await run([
      '--json',
      'review',
      'wait',
      approvedId,
      '--trusted-keys',
      trustedKeys,
      '--timeout',
      SETTLE_TIMEOUT,
      ...key(),
    ]);
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(waited.json()).toMatchObject({
      opportunityId: approvedId,
      state: 'completed',
      approved: true,
      evidence: 'verified',
      releaseDisposition: 'authorized_positive',
      resultOutcome: 'positive',
    });
    expect(waited.json().cursor).toMatch(/^\d+:\d+$/);
    const result = await run(
      [
        '--json',
        'review',
        'result',
        approvedId,
        '--trusted-keys',
        trustedKeys,
        '--verify',
        '--session-cookie-env',
        'RATELOOP_SESSION',
        ...key(),
      ],
      { RATELOOP_SESSION: cookie },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ approved: true, run: { workspaceId: w.workspaceId, valid: true } });
    expect(result.json().run.runId).toMatch(/^hau_[0-9a-f]{40}$/);
    // The same result with the output file that was released, and with another one.
    expect((await run(['review', 'result', approvedId, '--trusted-keys', trustedKeys, '--output', sug, ...key()])).code).toBe(0);
    const other = await run(['--json', 'review', 'result', approvedId, '--trusted-keys', trustedKeys, '--output', src, ...key()]);
    expect(other.code).toBe(5);
    expect(other.json().error.code).toBe('output_mismatch');
  });

  it('approval needs the pinned key: without one it is exit 7, unverifiable', async () => {
    const r = await run(['--json', 'review', 'result', approvedId, ...key()]);
    expect(r.code).toBe(7);
    expect(r.json().error).toMatchObject({ code: 'review_unverifiable', state: 'completed', approved: false, reason: 'no_gate_key' });
  });

  it.each([
    ['rejected', 'completed', 'negative'],
    ['inconclusive', 'inconclusive', 'inconclusive'],
    ['failed', 'failed_terminal', 'failed'],
  ])('a review that ends %s is not approval: exit 7 naming %s', async (outcome, state, resultOutcome) => {
    await settings({ reviewOutcome: outcome });
    try {
      const id = await requested(`ticket-${outcome}-${Date.now()}`);
      const r = await run(['--json', 'review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', SETTLE_TIMEOUT, ...key()]);
      expect(r.code, r.stdout + r.stderr).toBe(7);
      expect(r.json().error).toMatchObject({
        code: 'review_not_approved',
        state,
        approved: false,
        evidence: 'verified',
        releaseDisposition: 'not_authorized',
        resultOutcome,
      });
      expect(r.json().error.message).toContain(state);
    } finally {
      await settings({ reviewOutcome: 'approved' });
    }
  });

  it('a wait that times out is exit 7 with the state and the cursor, and says to wait on the same opportunity; list shows it; the wait resumes', async () => {
    await settings({ autoAdvance: false });
    let id: string;
    try {
      id = await requested(`ticket-timeout-${Date.now()}`, undefined, 'binary');
      const r = await run(['--json', 'review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', '2', ...key()]);
      expect(r.code).toBe(7);
      const e = r.json().error;
      expect(e).toMatchObject({ code: 'review_wait_timeout', opportunityId: id, state: 'pending', approved: false, cursor: '3:0' });
      // It runs as printed: the key and the gate key given by flag travel with it (issue 19).
      expect(e.hint).toBe(
        `wait again on the same opportunity (never evaluate a new one): loopsign review wait ${id} --cursor 3:0 --api-key-file ${keyFile} --trusted-keys ${trustedKeys}`,
      );
      const list = await run(['--json', 'review', 'list', '--all', ...key()]);
      expect(list.code, list.stderr).toBe(0);
      expect(list.json().items).toContainEqual({ opportunityId: id, state: 'pending', nextAction: 'rateloop_wait_for_review' });
      expect(list.json().next).toContain(`loopsign review wait ${id} --api-key-file ${keyFile}`);
    } finally {
      await settings({ autoAdvance: true });
    }
    const resumed = await run([
      '--json',
      'review',
      'wait',
      id!,
      '--cursor',
      '3:0',
      '--trusted-keys',
      trustedKeys,
      '--timeout',
      '120',
      ...key(),
    ]);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json()).toMatchObject({ approved: true, state: 'completed' });
  });

  it("on a machine that did not evaluate it, approval needs the output to release (--output): the service's commitment is never taken as local", async () => {
    const text = `Reply for ticket-elsewhere: reset it under Settings.`;
    const id = await requested(`ticket-elsewhere-${Date.now()}`, text);
    const other = makeHome();
    const elsewhere = (args: string[]) => runCli(args, other, { env: sb.env() });
    const r = await elsewhere(['--json', 'review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', SETTLE_TIMEOUT, ...key()]);
    expect(r.code, r.stdout + r.stderr).toBe(7);
    expect(r.json().error).toMatchObject({
      code: 'review_unverifiable',
      state: 'completed',
      reason: 'no_local_output',
      evidence: 'verified',
    });
    const again = await elsewhere(['--json', 'review', 'result', id, '--trusted-keys', trustedKeys, ...key()]);
    expect(again.json().error).toMatchObject({ reason: 'no_local_output' });
    const out = path.join(other.dir, 'released.txt');
    writeFileSync(out, text);
    const ok = await elsewhere(['--json', 'review', 'result', id, '--trusted-keys', trustedKeys, '--output', out, ...key()]);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.json()).toMatchObject({ approved: true });
  });

  it('a terminal review without signed evidence is exit 7, unverifiable', async () => {
    await settings({ unsignedReviewEvidence: true });
    try {
      const id = await requested(`ticket-unsigned-${Date.now()}`);
      const r = await run(['--json', 'review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', SETTLE_TIMEOUT, ...key()]);
      expect(r.code).toBe(7);
      expect(r.json().error).toMatchObject({ code: 'review_unverifiable', state: 'completed', reason: 'unsigned', approved: false });
    } finally {
      await settings({ unsignedReviewEvidence: false });
    }
  });

  it('state: the scope of an evaluation; a malformed scope is exit 2', async () => {
    const r = await run(['--json', 'review', 'state', scopeId, ...key()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ scopeId, stage: 'calibrating', reviewRateBps: 10000 });
    expect((await run(['review', 'state', 'scope-1', ...key()])).code).toBe(2);
  });

  it('bad input before anything is sent: malformed opportunity, unknown opportunity locally, a cursor of the wrong form', async () => {
    const bad = await run(['review', 'wait', 'opp_123', ...key()]);
    expect(bad.code).toBe(2);
    expect(oneLine(bad)).toMatch(/not a opportunity id \(aop_ \+ 40 hex\)/);
    const unknown = await run(['review', 'request', `aop_${'1'.repeat(40)}`, ...key()]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toMatch(/was not evaluated from this machine/);
    const cursor = await run(['review', 'wait', approvedId, '--cursor', 'abc', ...key()]);
    expect(cursor.code).toBe(2);
  });
});

describe('credentials', () => {
  it('missing, malformed, or on the command line: exit 6 or 2, never echoed', async () => {
    const none = await run(['review', 'policy']);
    expect(none.code).toBe(6);
    expect(oneLine(none)).toMatch(/need the workspace API key/);
    const malformed = await run(['review', 'policy', '--api-key-file', file('not-a-key')]);
    expect(malformed.code).toBe(6);
    expect(oneLine(malformed)).toMatch(/does not hold a workspace API key/);
    // A key pasted where the variable's name belongs is refused without echoing it (a made-up key: real ones never go in argv).
    const pasted = 'rlk_0123456789abcdef_pasted-by-mistake-xxxxxxxxxxxxxxxxxxxxxxxxx';
    const asName = await run(['review', 'policy', '--api-key-env', pasted]);
    expect(asName.code).toBe(2);
    expect(asName.stderr).not.toContain(pasted);
    const value = readFileSync(keyFile, 'utf8').trim();
    const env = await run(['--json', 'review', 'policy', '--api-key-env', 'MY_RATELOOP_KEY'], { MY_RATELOOP_KEY: value });
    expect(env.code, env.stderr).toBe(0);
  });

  it('a key without a scope: exit 6 naming the scope and how to grant it', async () => {
    const narrow = (
      await sb.control('/__sandbox/workspace/keys', {
        kind: 'integration',
        scopes: ['panel:publish', 'review:decide', 'telemetry:write', 'payment:submit'],
      })
    ).key as string;
    registerSecret(narrow);
    const f = file(narrow + '\n');
    const list = await run(['--json', 'projects', 'list', '--api-key-file', f]);
    expect(list.code).toBe(6);
    expect(list.json().error).toMatchObject({ code: 'insufficient_scope', scope: 'evaluation:read' });
    expect(list.json().error.hint).toMatch(/create a workspace API key that includes evaluation:read/);
    const wait = await run(['--json', 'review', 'wait', `aop_${'2'.repeat(40)}`, '--api-key-file', f]);
    expect(wait.code).toBe(6);
    expect(wait.json().error).toMatchObject({ code: 'insufficient_scope', scope: 'result:read' });
  });

  it('a plain workspace key on the workspace MCP: 401, exit 6 naming the scopes of the challenge; a pairing key: not approved yet', async () => {
    const plain = (await sb.control('/__sandbox/workspace/keys', { kind: 'plain' })).key as string;
    registerSecret(plain);
    const r = await run(['--json', 'review', 'policy', '--api-key-file', file(plain)]);
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({
      code: 'invalid_agent_credential',
      scopes: ['connection:claim', 'context:read', 'evaluation:read', 'review:decide'],
    });
    const pairing = (await sb.control('/__sandbox/workspace/keys', { kind: 'pairing' })).key as string;
    registerSecret(pairing);
    const p = await run(['--json', 'review', 'policy', '--api-key-file', file(pairing)]);
    expect(p.code).toBe(6);
    expect(p.json().error.code).toBe('agent_pairing_not_approved');
  });

  it('the shared MCP limit: a 429 is waited out (Retry-After) and the same request sent again', async () => {
    // Two requests per 4-second window: a command's third request (after initialize and its notification) is refused.
    await settings({ workspaceMcpLimit: 2, workspaceMcpWindowSeconds: 4 });
    try {
      const stderrs: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await run(['review', 'policy', ...key()]);
        expect(r.code, r.stderr).toBe(0);
        stderrs.push(r.stderr);
      }
      // (One command's requests may straddle a window's end; two in a row cannot both.)
      expect(stderrs.join('\n')).toMatch(/the service asked to wait \d+ s \(HTTP 429\); retrying the same request/);
    } finally {
      await settings({ workspaceMcpLimit: 100_000, workspaceMcpWindowSeconds: 60 });
    }
  });
});

describe('hostile answers are refused (exit 5)', () => {
  it('review_binding_other_project: the private review is bound to another project', async () => {
    await sb.control('/__sandbox/hostile', { scenario: 'review_binding_other_project' });
    const r = await run(['--json', ...createArgs({ '--source': file('Ticket 6001.'), '--suggestion': file('Reply 6001.') })]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('binding_mismatch');
    expect(r.json().error.message).toMatch(/another project/);
    capture.count('hostile scenarios refused with exit 5', 'review_binding_other_project');
  });

  it('review_binding_other_profile: the envelope names another request profile', async () => {
    await sb.control('/__sandbox/hostile', { scenario: 'review_binding_other_profile' });
    const r = await run([
      '--json',
      'review',
      'evaluate',
      '--external-id',
      `ticket-hostile-${Date.now()}`,
      '--workflow',
      w.workflowKey,
      '--risk-tier',
      'low',
      '--source',
      file('Ticket 6002.'),
      '--suggestion',
      file('Reply 6002.'),
      '--model',
      'openai/gpt-5.1',
      ...key(),
    ]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'binding_mismatch', field: 'request profile' });
    capture.count('hostile scenarios refused with exit 5', 'review_binding_other_profile');
  });

  it('review_result_other_opportunity: the result of another review', async () => {
    const id = await requested(`ticket-other-${Date.now()}`);
    expect((await run(['review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', SETTLE_TIMEOUT, ...key()])).code).toBe(0);
    await sb.control('/__sandbox/hostile', { scenario: 'review_result_other_opportunity' });
    const r = await run(['--json', 'review', 'result', id, '--trusted-keys', trustedKeys, ...key()]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'other_opportunity', expected: id });
    capture.count('hostile scenarios refused with exit 5', 'review_result_other_opportunity');
  });

  it('review_evidence_other_run: the evidence packet of another run', async () => {
    const id = await requested(`ticket-packet-${Date.now()}`);
    expect((await run(['review', 'wait', id, '--trusted-keys', trustedKeys, '--timeout', SETTLE_TIMEOUT, ...key()])).code).toBe(0);
    await sb.control('/__sandbox/hostile', { scenario: 'review_evidence_other_run' });
    const r = await run(
      ['--json', 'review', 'result', id, '--trusted-keys', trustedKeys, '--verify', '--session-cookie-env', 'RATELOOP_SESSION', ...key()],
      { RATELOOP_SESSION: cookie },
    );
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('run_id_mismatch');
    capture.count('hostile scenarios refused with exit 5', 'review_evidence_other_run');
  });

  it('covers every review scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios
      .filter((s: { flow: string }) => s.flow === 'review')
      .map((s: { name: string }) => s.name);
    expect(offered.sort()).toEqual([
      'review_binding_other_profile',
      'review_binding_other_project',
      'review_evidence_other_run',
      'review_result_other_opportunity',
    ]);
  });
});
