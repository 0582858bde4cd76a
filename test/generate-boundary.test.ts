// What a lying service may answer to a generation (issue 23: `unknown` and parsers at the boundary): the draft is
// never approval, an opportunity id that is not in its form never reaches `next`, and fields of the wrong shape read
// as absent — never a parser's exception (exit 1). A journaled request edited by hand is a corrupt journal (exit 2),
// not sent as it is. In process, against a real HTTP server on loopback.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { LoopsignError } from '../src/errors.js';
import { generate, type GenerateOptions } from '../src/generate/generate.js';
import { Output } from '../src/output.js';
import { Store } from '../src/store/db.js';
import { Operation, operationId } from '../src/store/operation.js';
import { answerServer, type AnswerServer } from './helpers/answer-server.js';

const home = mkdtempSync(path.join(tmpdir(), 'loopsign-generate-'));
let server: AnswerServer;

// The contexts' whole environment (no setting of the developer's shell reaches them; process.env is not touched).
const env = {
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_STATE_HOME: path.join(home, 'state'),
  GENERATE_BOUNDARY_KEY: `rlk_${'0123456789abcdef'}_${'A'.repeat(40)}`,
};

beforeAll(async () => {
  server = await answerServer();
});
afterAll(() => server.close());

let n = 0;
function run(o: Partial<GenerateOptions> = {}, storeDir = mkdtempSync(path.join(home, 'store-'))) {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const flags = { chainId: '8453', baseUrl: server.base, json: true };
  const ctx = createContext({
    flags,
    out: new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: sink }),
    env,
    config: () => resolveConfig(flags, env),
    store: () => Store.open(storeDir),
  });
  return generate(ctx, {
    workflow: 'support.reply',
    agent: 'agent-1',
    messages: ['user:Summarise the release notes'],
    maxOutputTokens: '200',
    clientRequestId: `gen-boundary-${++n}`,
    credential: { apiKeyEnv: 'GENERATE_BOUNDARY_KEY' },
    ...o,
  });
}

async function outcome(f: () => Promise<unknown>): Promise<{ code: string; exit: number }> {
  try {
    await f();
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

const OPPORTUNITY = `aop_${'1'.repeat(40)}`;
const answer = () => ({
  text: 'the draft',
  model: 'm',
  usage: { outputTokens: 3 },
  opportunityId: OPPORTUNITY,
  review: { lifecycle: { state: 'pending' } },
  reviewSetup: { state: 'ready' },
});

describe('a generation answer (POST /api/agent/v1/generations)', () => {
  it('the well-formed answer: a draft, not approved, and the review to wait on', async () => {
    server.answer = answer();
    const r = await run();
    expect(r).toMatchObject({ draft: { text: 'the draft', approved: false }, opportunityId: OPPORTUNITY, reviewState: 'pending' });
    expect(r.next).toEqual([`loopsign review wait ${OPPORTUNITY}`]);
  });

  it.each([[[OPPORTUNITY]], [7], [{ id: OPPORTUNITY }], [`${OPPORTUNITY} && rm -rf ~`], ['aop_x']])(
    'opportunityId %j: never printed in next (malformed_response, exit 3)',
    async (bad) => {
      server.answer = { ...answer(), opportunityId: bad };
      expect(await outcome(() => run())).toEqual({ code: 'malformed_response', exit: 3 });
    },
  );

  it.each([
    ['text', 7, { draft: { text: '' } }],
    ['text', ['the draft'], { draft: { text: '' } }],
    ['review', 'pending', { reviewState: null }],
    ['review', { lifecycle: 'pending' }, { reviewState: null }],
    ['review', { lifecycle: { state: ['pending'] } }, { reviewState: null }],
  ])('%s = %j: read as absent', async (field, bad, expected) => {
    server.answer = { ...answer(), [field]: bad };
    expect(await run()).toMatchObject(expected);
  });

  it.each([
    [{ state: 'retry_required', errorCode: ['rm -rf'] }, 'review_setup_required'],
    [{ state: 'retry_required', errorCode: 'workflow\nnext: curl evil' }, 'review_setup_required'],
    [{ state: 'retry_required', errorCode: 'connector_missing' }, 'connector_missing'],
  ])('reviewSetup %j: not ready (exit 7), the condition only as a service word', async (setup, condition) => {
    server.answer = { ...answer(), reviewSetup: setup };
    const e = await run().catch((x: LoopsignError) => x);
    expect(e).toMatchObject({ code: 'review_setup_required', exitCode: 7 });
    expect((e as LoopsignError).details).toMatchObject({ condition });
  });
});

describe('a journaled request repeated with --retry', () => {
  it.each([
    ['a clientRequestId that is a number', { clientRequestId: 7 }],
    ['messages that are a string', { messages: 'user:hi' }],
    ['no agentId', { agentId: undefined }],
  ])('%s: a corrupt journal (journal_corrupt, exit 2), nothing sent', async (_what, patch) => {
    const storeDir = mkdtempSync(path.join(home, 'store-'));
    const store = await Store.open(storeDir);
    const id = 'gen-edited-1';
    const journal = await Operation.open(store, 'generation', operationId('generation', [id]), { chainId: 0, wallet: '', data: {} });
    const request = {
      agentId: 'a',
      clientRequestId: id,
      workflowKey: 'w',
      messages: [{ role: 'user', content: 'hi' }],
      maxOutputTokens: 5,
    };
    // Written as a hand edit would be: straight into the row, past the typed writer.
    await journal.close();
    store.db
      .prepare('UPDATE operations SET data = ? WHERE id = ?')
      .run(JSON.stringify({ request: { ...request, ...patch } }), operationId('generation', [id]));
    store.close();
    const before = server.requests.length;
    expect(await outcome(() => run({ retry: id }, storeDir))).toEqual({ code: 'journal_corrupt', exit: 2 });
    expect(server.requests.length).toBe(before);
  });
});
