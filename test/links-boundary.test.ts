// What a lying service may answer when it creates a hand-off or a signing link (issue 23: `unknown` and parsers at the
// boundary): the link, its times, its id and its warnings are each read in their form before the one-time token is
// kept or printed, or refused with the documented code — never a value read as another (an array as its only item),
// never a parser's exception (exit 1). In process, against a real HTTP server on loopback that answers as told.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { LoopsignError } from '../src/errors.js';
import { createHandoff, createSigningLink } from '../src/images/links.js';
import { Output } from '../src/output.js';
import { Store } from '../src/store/db.js';
import { answerServer, type AnswerServer } from './helpers/answer-server.js';

const home = mkdtempSync(path.join(tmpdir(), 'loopsign-links-'));
let server: AnswerServer;
let base: string;

// The contexts' whole environment: no setting of the developer's shell reaches it (process.env is not touched).
const env = {
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_STATE_HOME: path.join(home, 'state'),
};

beforeAll(async () => {
  server = await answerServer();
  base = server.base;
});
afterAll(() => server.close());

const askFile = path.join(home, 'ask.json');
writeFileSync(
  askFile,
  JSON.stringify({
    chainId: 8453,
    clientRequestId: 'links-boundary-1',
    maxPaymentAmount: '1000000',
    bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
    question: { title: 'Is this clear?', contextUrl: 'https://example.com/links', categoryId: '1', tags: ['links'] },
  }),
);

function context() {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const flags = { chainId: '8453', baseUrl: base, json: true };
  const storeDir = mkdtempSync(path.join(home, 'store-'));
  return createContext({
    flags,
    out: new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: sink }),
    env,
    config: () => resolveConfig(flags, env),
    store: () => Store.open(storeDir),
  });
}

const HANDOFF_ID = `ahf_${'ab'.repeat(16)}`;
const INTENT_ID = `asi_${'cd'.repeat(16)}`;
const CREATED = '2026-11-22T12:00:00.000Z';
const EXPIRES = '2026-11-22T12:30:00.000Z';
const handoff = () => ({
  handoffId: HANDOFF_ID,
  id: HANDOFF_ID,
  handoffUrl: `${base}/agent/handoff/${HANDOFF_ID}#token=tok_1`,
  createdAt: CREATED,
  expiresAt: EXPIRES,
  effectiveTtlMs: 1_800_000,
  status: 'pending',
  warnings: [],
});
const intent = () => ({ id: INTENT_ID, signingUrl: `${base}/agent/sign/${INTENT_ID}#token=tok_2`, createdAt: CREATED, expiresAt: EXPIRES });

async function outcome(f: () => Promise<unknown>): Promise<{ code: string; exit: number }> {
  try {
    await f();
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

describe('a hand-off the service created (POST /api/agent/handoffs)', () => {
  const create = (patch: Record<string, unknown>) => {
    server.answer = { ...handoff(), ...patch };
    return outcome(() => createHandoff(context(), askFile, []));
  };

  it('the well-formed answer is kept and reported (the mutations below are what fails)', async () => {
    server.answer = handoff();
    const r = await createHandoff(context(), askFile, []);
    expect(r).toMatchObject({ handoffId: HANDOFF_ID, handoffUrl: handoff().handoffUrl, expiresAt: EXPIRES, warnings: [] });
  });

  it.each([
    ['an array holding the URL', () => [handoff().handoffUrl]],
    ['a number', () => 7],
    ['null', () => null],
    ['an object', () => ({ href: handoff().handoffUrl })],
  ])('handoffUrl as %s: not a URL (invalid_response, exit 3)', async (_what, bad) => {
    expect(await create({ handoffUrl: bad() })).toEqual({ code: 'invalid_response', exit: 3 });
  });

  it.each([
    ['createdAt', [CREATED]],
    ['createdAt', Date.parse(CREATED)],
    ['expiresAt', [EXPIRES]],
    ['expiresAt', { at: EXPIRES }],
    ['expiresAt', true],
    ['effectiveTtlMs', '1800000'],
    ['effectiveTtlMs', [1_800_000]],
  ])('%s = %j: no lifetime loopsign can read (link_lifetime_refused, exit 5)', async (field, bad) => {
    expect(await create({ [field]: bad })).toEqual({ code: 'link_lifetime_refused', exit: 5 });
  });

  it.each([
    ['no id at all', { handoffId: undefined, id: undefined }],
    ['a number', { handoffId: 7 }],
    ['an array', { handoffId: [HANDOFF_ID] }],
    ['another form', { handoffId: 'ahf_../../x' }],
    ['an object', { handoffId: { id: HANDOFF_ID } }],
  ])('an id that is %s: refused before the token is kept (malformed_service_id, exit 5)', async (_what, patch) => {
    expect(await create(patch)).toEqual({ code: 'malformed_service_id', exit: 5 });
  });

  it.each([
    ['a number', 7, []],
    ['an object', { a: 'b' }, []],
    ['texts and others', ['one', 7, null, { x: 1 }, 'two'], ['one', 'two']],
  ])('warnings that are %s: only texts are shown and reported', async (_what, warnings, shown) => {
    server.answer = { ...handoff(), warnings };
    const r = await createHandoff(context(), askFile, []);
    expect(r.warnings).toEqual(shown);
  });
});

describe('a signing link the service created (POST /api/agent/signing-intents)', () => {
  const create = (patch: Record<string, unknown>) => {
    server.answer = { ...intent(), ...patch };
    return outcome(() => createSigningLink(context(), askFile));
  };

  it('the well-formed answer is kept and reported', async () => {
    server.answer = intent();
    expect(await createSigningLink(context(), askFile)).toMatchObject({ intentId: INTENT_ID, expiresAt: EXPIRES, warnings: [] });
  });

  it.each([
    ['signingUrl', 'array'],
    ['createdAt', 'array'],
    ['id', 'absent'],
    ['id', 'array'],
    ['id', 'handoff'],
  ])('%s as %s: refused', async (field, how) => {
    const good = intent()[field as keyof ReturnType<typeof intent>];
    const value = how === 'array' ? [good] : how === 'handoff' ? HANDOFF_ID : undefined;
    const expected = {
      signingUrl: { code: 'invalid_response', exit: 3 },
      createdAt: { code: 'link_lifetime_refused', exit: 5 },
      id: { code: 'malformed_service_id', exit: 5 },
    }[field];
    expect(await create({ [field]: value })).toEqual(expected);
  });
});
