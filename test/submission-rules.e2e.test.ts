// RateLoop's submission rules (notes/real-contract-rules.md, issue 37), on the sandbox's ContentRegistry and through
// loopsign. First the registry itself (raw transactions and eth_call, no loopsign code on the path): each question is
// reserved with its own commitment, so a refusal is the rule's and not a missing reservation, and every rule the live
// registry checks with a bare `require` reverts with empty data, the round bounds with ProtocolConfig's
// InvalidConfig(). Then loopsign: the same question twice, and category 9, are refused before anything is signed (no
// approval mined, the wallet's USDC and nonce unchanged). Last, where the live service's preflight (the vendored
// corpus) meets these rules: the question key it reads from submissionKeyUsed, and its reward minimum.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  encodeAbiParameters,
  parseAbi,
  encodeFunctionData,
  keccak256,
  maxUint256,
  parseAbiParameters,
  toBytes,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { runCli } from './helpers/cli.js';
import { fundedWallet, openSession, submissionsTitled, type Session } from './helpers/chain.js';
import { contentRegistryAbi, erc20Abi, x402SubmitterAbi } from '../src/protocol/abi.js';
import { normalizeAsk } from '../src/protocol/ask-normalize.js';
import { submissionKey } from '../src/protocol/ask-hashes.js';
import { readFileSync } from 'node:fs';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

const tag = (t: string) => keccak256(toBytes(t));
const CONTEXT_TAG = tag('rateloop-question-context-v5');
const REVEAL_TAG = tag('rateloop-question-reveal-v9');
const INVALID_CONFIG = toFunctionSelector('InvalidConfig()');
const HASH = `0x${'11'.repeat(32)}` as Hex;
const ZERO = `0x${'00'.repeat(32)}` as Hex;
let counter = 0;
const unique = () => `${process.pid}-${Date.now()}-${counter++}-${randomBytes(3).toString('hex')}`;

interface Question {
  contextUrl: string;
  imageUrls: string[];
  videoUrl: string;
  title: string;
  tags: string;
  categoryId: bigint;
  details: { detailsUrl: string; detailsHash: Hex };
  salt: Hex;
  rewardTerms: { asset: number; amount: bigint; requiredVoters: bigint; bountyEligibility: number };
  roundConfig: { epochDuration: number; maxDuration: number; minVoters: number; maxVoters: number };
  spec: { questionMetadataHash: Hex; resultSpecHash: Hex };
  confidentiality: { gated: boolean; bondAsset: number; bondAmount: bigint; flags: number };
}

/** A question every rule accepts, with a key of its own. */
function valid(over: Partial<Question> = {}): Question {
  return {
    contextUrl: `https://example.com/rules/${unique()}`,
    imageUrls: [],
    videoUrl: '',
    title: `Submission rules ${unique()}`,
    tags: 'rules',
    categoryId: 1n,
    details: { detailsUrl: '', detailsHash: ZERO },
    salt: `0x${randomBytes(32).toString('hex')}`,
    rewardTerms: { asset: 1, amount: 1_000_000n, requiredVoters: 3n, bountyEligibility: 0 },
    roundConfig: { epochDuration: 1200, maxDuration: 1200, minVoters: 3, maxVoters: 100 },
    spec: { questionMetadataHash: HASH, resultSpecHash: HASH },
    confidentiality: { gated: false, bondAsset: 0, bondAmount: 0n, flags: 0 },
    ...over,
  };
}

const enc = (types: string, values: readonly unknown[]) => encodeAbiParameters(parseAbiParameters(types), values as never);

/** The question key (chain.md §6.6), as the live registry derives it. */
function keyOf(q: Question): Hex {
  const media = keccak256(enc('string[], string', [q.imageUrls, q.videoUrl]));
  const details = keccak256(enc('string, bytes32', [q.details.detailsUrl, q.details.detailsHash]));
  return keccak256(
    enc('bytes32, uint256, bytes32, bytes32, string, string, string', [
      CONTEXT_TAG,
      q.categoryId,
      media,
      details,
      q.contextUrl,
      q.title,
      q.tags,
    ]),
  );
}

/** The reveal commitment a single question's reservation holds (chain.md §6.9). */
function commitmentOf(q: Question, submitter: Hex): Hex {
  const media = keccak256(enc('string[], string', [q.imageUrls, q.videoUrl]));
  const details = keccak256(enc('string, bytes32', [q.details.detailsUrl, q.details.detailsHash]));
  const t = q.rewardTerms;
  const r = q.roundConfig;
  const c = q.confidentiality;
  return keccak256(
    enc('bytes32, bytes32, bytes32, bytes32, bytes32, uint256, bytes32, address, bytes32, bytes32, bytes32, bytes32, bytes32', [
      REVEAL_TAG,
      keyOf(q),
      media,
      keccak256(enc('string, string', [q.title, q.tags])),
      details,
      q.categoryId,
      q.salt,
      submitter,
      keccak256(enc('uint8, uint256, uint256, uint8', [t.asset, t.amount, t.requiredVoters, t.bountyEligibility])),
      keccak256(enc('uint32, uint32, uint16, uint16', [r.epochDuration, r.maxDuration, r.minVoters, r.maxVoters])),
      q.spec.questionMetadataHash,
      q.spec.resultSpecHash,
      keccak256(enc('bool, uint8, uint64, uint8', [c.gated, c.bondAsset, c.bondAmount, c.flags])),
    ]),
  );
}

const submitData = (q: Question) =>
  encodeFunctionData({
    abi: contentRegistryAbi,
    functionName: 'submitQuestionWithRewardAndRoundConfig',
    args: [
      q.contextUrl,
      q.imageUrls,
      q.videoUrl,
      q.title,
      q.tags,
      q.categoryId,
      q.details,
      q.salt,
      q.rewardTerms,
      q.roundConfig,
      q.spec,
      q.confidentiality,
    ] as never,
  });

type Wallet = Awaited<ReturnType<typeof fundedWallet>>;

async function rpc(method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string; data?: string } }> {
  const res = await fetch(s.sb.info.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as never;
}

/** The revert data of a call from `from`, or 'ok' when it would not revert. */
async function simulate(from: Hex, to: Hex, data: Hex): Promise<'ok' | { reverted: string }> {
  const r = await rpc('eth_call', [{ from, to, data }, 'latest']);
  return r.error ? { reverted: r.error.data ?? '0x' } : 'ok';
}

/** Sends the calls from `w` in order (consecutive nonces), and waits for them all. */
async function sendAll(w: Wallet, calls: { to: Hex; data: Hex }[]) {
  let nonce = await s.pub.getTransactionCount({ address: w.address, blockTag: 'pending' });
  const hashes: Hex[] = [];
  for (const c of calls) {
    const raw = await w.account.signTransaction({
      type: 'eip1559',
      chainId: s.sb.info.chainId,
      to: c.to,
      data: c.data,
      nonce: nonce++,
      gas: 3_000_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    hashes.push(await s.pub.sendRawTransaction({ serializedTransaction: raw }));
  }
  return Promise.all(hashes.map((hash) => s.pub.waitForTransactionReceipt({ hash })));
}

const registry = () => s.sb.info.contracts.contentRegistry! as Hex;

/** A wallet with 20,000 USDC, its reward escrow approved, so a valid submit's simulation passes. */
async function submitter(): Promise<Wallet> {
  const w = await fundedWallet(s.sb, s.pub);
  await s.sb.control('/__sandbox/fund', { address: w.address, usdc: '20000000000' });
  const escrow = s.sb.info.contracts.questionRewardPoolEscrow! as Hex;
  await sendAll(w, [
    {
      to: s.sb.info.tokens.USDC.address as Hex,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [escrow, maxUint256] }),
    },
  ]);
  return w;
}

/** Each question reserved by `w` (its own commitment), the reservations a few seconds old, then each submit simulated. */
async function simulatedAfterReserving(w: Wallet, questions: Question[]) {
  const receipts = await sendAll(
    w,
    questions.map((q) => ({
      to: registry(),
      data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [commitmentOf(q, w.address)] }),
    })),
  );
  expect(receipts.every((r) => r.status === 'success')).toBe(true);
  await s.sb.control('/__sandbox/time', { advanceSeconds: 5 });
  return Promise.all(questions.map((q) => simulate(w.address, registry(), submitData(q))));
}

const EMPTY = { reverted: '0x' };
const cid = (c: string) => `ipfs://Qm${c.repeat(44)}`;

describe("the sandbox's ContentRegistry: RateLoop's submission rules, empty revert data", () => {
  let w: Wallet;
  beforeAll(async () => {
    w = await submitter();
  });

  const refused: [string, () => Question][] = [
    ['no context URL and no media', () => valid({ contextUrl: '' })],
    ['a context URL that is not https', () => valid({ contextUrl: `http://example.com/${unique()}` })],
    ['a context URL with userinfo (@)', () => valid({ contextUrl: `https://user@example.com/${unique()}` })],
    ['a context URL with an empty host', () => valid({ contextUrl: `https:///${unique()}` })],
    ['a context URL with a space', () => valid({ contextUrl: `https://example.com/a b/${unique()}` })],
    ['a context URL with an escape in the host', () => valid({ contextUrl: `https://ex%41mple.com/${unique()}` })],
    ['five images', () => valid({ imageUrls: ['A', 'B', 'C', 'D', 'E'].map(cid) })],
    ['images out of order', () => valid({ imageUrls: [cid('B'), cid('A')] })],
    ['an image URL without a sha256 anchor', () => valid({ imageUrls: [`https://example.com/${unique()}.png`] })],
    ['a video that is not YouTube', () => valid({ contextUrl: '', videoUrl: `https://vimeo.com/${unique()}` })],
    ['an empty title', () => valid({ title: '' })],
    ['a 121-byte title', () => valid({ title: `${unique()} `.padEnd(121, 'x') })],
    ['empty tags', () => valid({ tags: '' })],
    ['257 bytes of tags', () => valid({ tags: 't'.repeat(257) })],
    ['a details URL without its hash', () => valid({ details: { detailsUrl: `https://example.com/d/${unique()}`, detailsHash: ZERO } })],
    ['a details hash without its URL', () => valid({ details: { detailsUrl: '', detailsHash: HASH } })],
    ['category 0', () => valid({ categoryId: 0n })],
    ['category 9', () => valid({ categoryId: 9n })],
    ['a zero salt', () => valid({ salt: ZERO })],
    [
      'a reward below max(min pool, 100 voters × 0.01 USDC)',
      () => valid({ rewardTerms: { asset: 1, amount: 999_999n, requiredVoters: 3n, bountyEligibility: 0 } }),
    ],
    [
      '1,000 USDC with 3 required voters (the high-value floor is 5)',
      () => valid({ rewardTerms: { asset: 1, amount: 1_000_000_000n, requiredVoters: 3n, bountyEligibility: 0 } }),
    ],
    [
      '10,000 USDC with 5 required voters (the very-high-value floor is 8)',
      () =>
        valid({
          rewardTerms: { asset: 1, amount: 10_000_000_000n, requiredVoters: 5n, bountyEligibility: 0 },
          roundConfig: { epochDuration: 1200, maxDuration: 1200, minVoters: 5, maxVoters: 100 },
        }),
    ],
    [
      'an eligibility of the recheck flag alone',
      () => valid({ rewardTerms: { asset: 1, amount: 1_000_000n, requiredVoters: 3n, bountyEligibility: 0x80 } }),
    ],
  ];

  it('refuses each broken rule with empty revert data, and takes the valid questions at each boundary', async () => {
    const accepted: [string, Question][] = [
      ['a valid question', valid()],
      ['four sorted content-addressed images, no context URL', valid({ contextUrl: '', imageUrls: ['A', 'B', 'C', 'D'].map(cid) })],
      ['a sha256-anchored https image', valid({ imageUrls: [`https://example.com/${unique()}.webp#sha256=0x${'ab'.repeat(32)}`] })],
      ['a YouTube video alone', valid({ contextUrl: '', videoUrl: `https://youtu.be/dQw4w9WgXcQ?t=${unique()}` })],
      ['a 120-byte title', valid({ title: `${unique()} `.padEnd(120, 'x') })],
      ['256 bytes of tags', valid({ tags: `${unique()},`.padEnd(256, 't') })],
      ['a details URL with its hash', valid({ details: { detailsUrl: `https://example.com/d/${unique()}`, detailsHash: HASH } })],
      ['category 8', valid({ categoryId: 8n })],
      ['a context URL with a port and an escape in the path', valid({ contextUrl: `https://example.com:8443/a%20b/${unique()}` })],
      [
        '1,000 USDC with 5 required voters',
        valid({
          rewardTerms: { asset: 1, amount: 1_000_000_000n, requiredVoters: 5n, bountyEligibility: 0 },
          roundConfig: { epochDuration: 1200, maxDuration: 1200, minVoters: 5, maxVoters: 100 },
        }),
      ],
      // A single question's requiredVoters need not equal its round's minVoters on the live registry.
      [
        'requiredVoters 4 with minVoters 3',
        valid({ rewardTerms: { asset: 1, amount: 1_000_000n, requiredVoters: 4n, bountyEligibility: 0 } }),
      ],
    ];
    const bad = refused.map(([name, make]) => [name, make()] as const);
    const all = [...accepted, ...bad];
    const results = await simulatedAfterReserving(
      w,
      all.map(([, q]) => q),
    );
    const got = Object.fromEntries(all.map(([name], i) => [name, results[i]]));
    const want = Object.fromEntries([...accepted.map(([name]) => [name, 'ok']), ...bad.map(([name]) => [name, EMPTY])]);
    expect(got).toEqual(want);
  });

  it("refuses round settings outside ProtocolConfig's bounds with InvalidConfig(), as the live ProtocolConfig does", async () => {
    const round = (r: Partial<Question['roundConfig']>) =>
      valid({ roundConfig: { epochDuration: 1200, maxDuration: 1200, minVoters: 3, maxVoters: 100, ...r } });
    const cases: [string, Question][] = [
      ['an epoch under 20 seconds', round({ epochDuration: 10, maxDuration: 10 })],
      ['a round longer than its epoch', round({ maxDuration: 2400 })],
      ['2 settlement voters', round({ minVoters: 2 })],
      ['a cap of 201 voters', round({ maxVoters: 201 })],
      ['a cap below the settlement voters', round({ minVoters: 10, maxVoters: 5 })],
    ];
    const results = await simulatedAfterReserving(
      w,
      cases.map(([, q]) => q),
    );
    expect(Object.fromEntries(cases.map(([name], i) => [name, results[i]]))).toEqual(
      Object.fromEntries(cases.map(([name]) => [name, { reverted: INVALID_CONFIG }])),
    );
    // The bounds themselves are accepted: 20 seconds, and a cap of 200.
    expect(await simulatedAfterReserving(w, [round({ epochDuration: 20, maxDuration: 20, maxVoters: 200 })])).toEqual(['ok']);
  });

  it('takes a question key once per chain: the same question again (new salt, even another wallet) reverts with empty data', async () => {
    const first = valid();
    expect(
      await s.pub.readContract({ address: registry(), abi: contentRegistryAbi, functionName: 'submissionKeyUsed', args: [keyOf(first)] }),
    ).toBe(false);
    expect(await simulatedAfterReserving(w, [first])).toEqual(['ok']);
    const [mined] = await sendAll(w, [{ to: registry(), data: submitData(first) }]);
    expect(mined!.status).toBe('success');
    expect(
      await s.pub.readContract({ address: registry(), abi: contentRegistryAbi, functionName: 'submissionKeyUsed', args: [keyOf(first)] }),
    ).toBe(true);
    const other = await submitter();
    const again = { ...first, salt: `0x${randomBytes(32).toString('hex')}` as Hex };
    expect(await simulatedAfterReserving(w, [again]), 'same wallet, new salt').toEqual([EMPTY]);
    expect(await simulatedAfterReserving(other, [again]), 'another wallet').toEqual([EMPTY]);
    // One field changed is another question.
    expect(await simulatedAfterReserving(w, [{ ...again, tags: 'rules,again' }])).toEqual(['ok']);
  });

  it('refuses a submit without a reservation with empty data (no ReservationNotFound)', async () => {
    expect(await simulate(w.address, registry(), submitData(valid()))).toEqual(EMPTY);
  });

  it("the x402 submitter's refusals carry no data either (a nonce not bound to the question)", async () => {
    const q = valid();
    const x402 = s.sb.info.contracts.x402QuestionSubmitter! as Hex;
    const data = encodeFunctionData({
      abi: x402SubmitterAbi,
      functionName: 'submitQuestionWithX402Payment',
      args: [
        q.contextUrl,
        q.imageUrls,
        q.videoUrl,
        q.title,
        q.tags,
        q.categoryId,
        q.details,
        q.salt,
        q.rewardTerms,
        q.roundConfig,
        q.spec,
        q.confidentiality,
        {
          from: w.address,
          to: x402,
          value: q.rewardTerms.amount,
          validAfter: 0n,
          validBefore: 2n ** 40n,
          nonce: `0x${randomBytes(32).toString('hex')}`,
          v: 27,
          r: HASH,
          s: HASH,
        },
      ] as never,
    });
    expect(await simulate(w.address, x402, data)).toEqual(EMPTY);
  });
});

describe('loopsign refuses what the registry would refuse after money moved, before anything is signed', () => {
  /** An ask file of `title` in `category`; a new clientRequestId each time. */
  function askFile(title: string, contextUrl: string, categoryId = '1') {
    const id = unique();
    return s.home.file(
      `rules-${id}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `rules-${id}`,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: { title, contextUrl, categoryId, tags: ['rules'] },
        roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
      }),
    );
  }

  /** The wallet's USDC and its nonce count, the two things any signed transaction would change. */
  const footprint = async (w: Wallet) => ({ usdc: await w.usdcOf(), nonce: await s.pub.getTransactionCount({ address: w.address }) });

  it.each(['wallet_calls', 'x402_authorization'])(
    'the same question twice (%s): the second ask, under a new clientRequestId, is refused with no approval mined and no USDC moved',
    async (mode) => {
      const w = await fundedWallet(s.sb, s.pub);
      const title = `Asked twice ${unique()}`;
      const url = `https://example.com/twice/${unique()}`;
      const first = await runCli(['--json', 'ask', '--file', askFile(title, url), '--payment-mode', mode], s.home, { env: w.env });
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(await submissionsTitled(s, title, w.address)).toBe(1);
      const before = await footprint(w);
      const second = await runCli(['--json', 'ask', '--file', askFile(title, url), '--payment-mode', mode], s.home, { env: w.env });
      expect(second.code, second.stdout + second.stderr).toBe(5);
      const error = second.json().error;
      expect(error.code).toBe('question_already_submitted');
      expect(error.message).toMatch(/already on chain 31337 .*nothing was signed$/);
      expect(await footprint(w), 'no transaction signed, no USDC moved').toEqual(before);
      expect(await submissionsTitled(s, title, w.address)).toBe(1);
    },
  );

  it('the same question from another wallet is refused too (the key is per chain, not per wallet)', async () => {
    const [a, b] = [await fundedWallet(s.sb, s.pub), await fundedWallet(s.sb, s.pub)];
    const title = `Asked by two ${unique()}`;
    const url = `https://example.com/two/${unique()}`;
    const first = await runCli(['--json', 'ask', '--file', askFile(title, url), '--payment-mode', 'wallet_calls'], s.home, { env: a.env });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = await footprint(b);
    const second = await runCli(['--json', 'ask', '--file', askFile(title, url), '--payment-mode', 'wallet_calls'], s.home, { env: b.env });
    expect(second.code, second.stdout + second.stderr).toBe(5);
    expect(second.json().error.code).toBe('question_already_submitted');
    expect(await footprint(b)).toEqual(before);
  });

  // The ask's schema takes categoryId 1 to 8 (src/protocol/categories.ts); the registry (above) refuses 9 only at the
  // submit, after the reservation and approval, with no reason.
  it('category 9 is refused before the service is asked: no approval mined, no USDC moved', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const before = await footprint(w);
    const r = await runCli(
      [
        '--json',
        'ask',
        '--file',
        askFile(`Category nine ${unique()}`, `https://example.com/nine/${unique()}`, '9'),
        '--payment-mode',
        'wallet_calls',
      ],
      s.home,
      { env: w.env },
    );
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const error = r.json().error;
    expect(error.code).toBe('invalid_ask');
    expect(error.message).toMatch(/question\.categoryId: "9" is not valid: the category, "1" to "8"/);
    expect(await footprint(w)).toEqual(before);
  });
});

describe("the live service's preflight (the vendored corpus) and the sandbox's registry agree", () => {
  const corpus = JSON.parse(readFileSync(new URL('./fixtures/vectors/live/asks.json', import.meta.url), 'utf8'));
  const caseOf = (id: string) => corpus.cases.find((c: any) => c.id === id);

  it('on the question key: the key the service reads from submissionKeyUsed is the one the registry marks when that question is submitted', async () => {
    const c = caseOf('context-with-port');
    const read = c.chainReads.find((r: any) => r.functionName === 'submissionKeyUsed');
    const serviceKey = read.args[0] as Hex;
    const ask = normalizeAsk(c.request.body);
    expect(submissionKey(ask.questions[0]!), "loopsign's key").toBe(serviceKey);
    const q = ask.questions[0]!;
    const onChain = valid({ contextUrl: q.contextUrl, title: q.title, tags: q.tags.join(','), categoryId: q.categoryId });
    expect(keyOf(onChain)).toBe(serviceKey);
    const used = () =>
      s.pub.readContract({ address: registry(), abi: contentRegistryAbi, functionName: 'submissionKeyUsed', args: [serviceKey] });
    // Another file on this worker's sandbox may have asked the corpus question already: then the registry holds it.
    if (!(await used())) {
      const w = await submitter();
      expect(await simulatedAfterReserving(w, [onChain])).toEqual(['ok']);
      const [mined] = await sendAll(w, [{ to: registry(), data: submitData(onChain) }]);
      expect(mined!.status).toBe('success');
    }
    expect(await used()).toBe(true);
  });

  /** A POST to the sandbox service (its HTTP routes, as loopsign and any client reach them). */
  async function post(route: string, body: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${s.sb.info.baseUrl}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** The corpus's baseline ask, made this file's own: the sandbox chain, a new id and question, `w` as the wallet. */
  function sandboxAsk(c: any, wallet: Hex, over: Record<string, unknown> = {}) {
    const id = unique();
    const body = structuredClone(c.request.body);
    return {
      ...body,
      chainId: 31337,
      clientRequestId: `bounds-${id}`,
      walletAddress: wallet,
      question: { ...body.question, title: `Round bounds ${id}`, contextUrl: `https://example.com/bounds/${id}` },
      ...over,
    };
  }

  it("on the round bounds: the service's preflight asks validateRoundConfig (the corpus), and the sandbox service refuses what ProtocolConfig refuses, answered as the live service answers it, before any plan or money", async () => {
    const c = caseOf('baseline-wallet-calls');
    // The live service's preflight: the registry's ProtocolConfig, then validateRoundConfig with the ask's settings.
    const names = c.chainReads.map((r: any) => r.functionName);
    expect(names.indexOf('protocolConfig')).toBeLessThan(names.indexOf('validateRoundConfig'));
    const read = c.chainReads.find((r: any) => r.functionName === 'validateRoundConfig');
    const rc = normalizeAsk(c.request.body).roundConfig;
    expect(read.args).toEqual([rc.epochDuration, rc.maxDuration, rc.minVoters, rc.maxVoters].map(String));
    // What the live service answers for an exception it has no class for (a reverted read is one): the corpus's
    // failed_submission body.
    const failed = corpus.cases.find((x: any) => x.verdict.code === 'failed_submission').ask.body;

    const pc = (await s.pub.readContract({
      address: registry(),
      abi: parseAbi(['function protocolConfig() view returns (address)']),
      functionName: 'protocolConfig',
    })) as Hex;
    const validate = (r: [number, number, number, number]) =>
      simulate(
        s.sb.info.devWallet.address,
        pc,
        encodeFunctionData({
          abi: parseAbi(['function validateRoundConfig(uint256,uint256,uint256,uint256) view returns ((uint32,uint32,uint16,uint16))']),
          functionName: 'validateRoundConfig',
          args: r.map(BigInt) as never,
        }),
      );
    expect(await validate(read.args.map(Number)), "the corpus's settings").toBe('ok');

    const w = await submitter();
    const cases: [string, Record<string, string>, [number, number, number, number]][] = [
      ['a 10-second question', { questionDurationSeconds: '10', minVoters: '3', maxVoters: '100' }, [10, 10, 3, 100]],
      ['a cap of 201 voters', { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '201' }, [1200, 1200, 3, 201]],
    ];
    for (const [name, roundConfig, tuple] of cases) {
      // The contract rule: ProtocolConfig refuses the settings, and so does the registry at the submit.
      expect(await validate(tuple), name).toEqual({ reverted: INVALID_CONFIG });
      const [epochDuration, maxDuration, minVoters, maxVoters] = tuple;
      expect(
        await simulatedAfterReserving(w, [valid({ roundConfig: { epochDuration, maxDuration, minVoters, maxVoters } })]),
        name,
      ).toEqual([{ reverted: INVALID_CONFIG }]);
      // The service: refused at the quote and at the ask, with the corpus's shape, and nothing recorded.
      const nonce = await s.pub.getTransactionCount({ address: w.address });
      const usdc = await w.usdcOf();
      const body = sandboxAsk(c, w.address, { roundConfig });
      for (const route of ['/api/agent/quote', '/api/agent/asks']) {
        const r = await post(route, body);
        expect(r.status, `${name}: ${route}`).toBe(500);
        expect(Object.keys(r.body).sort(), `${name}: ${route}`).toEqual(Object.keys(failed).sort());
        expect(r.body).toMatchObject({
          code: failed.code,
          recoverWith: failed.recoverWith,
          retryable: failed.retryable,
          status: failed.status,
        });
        expect(r.body.message).toMatch(/validateRoundConfig/);
        expect(r.body.message).toMatch(/InvalidConfig\(\)/);
      }
      const lookup = await fetch(
        `${s.sb.info.baseUrl}/api/agent/asks/by-client-request?chainId=31337&clientRequestId=${body.clientRequestId}&walletAddress=${w.address}`,
      );
      expect((await lookup.json()).status, `${name}: nothing recorded`).not.toBe('awaiting_wallet_signature');
      expect(await s.pub.getTransactionCount({ address: w.address })).toBe(nonce);
      expect(await w.usdcOf()).toBe(usdc);
    }
    // The same ask within the bounds gets its plan.
    const ok = await post('/api/agent/asks', sandboxAsk(c, w.address));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.transactionPlan.calls).toHaveLength(3);
  });

  it("on a reused clientRequestId: the sandbox answers another payload with the corpus's duplicate_ask envelope, and the corpus's own duplicate_ask case the same", async () => {
    const dup = caseOf('bundle-x402-rejected');
    const envelope = dup.ask.body;
    const w = await fundedWallet(s.sb, s.pub);
    const first = sandboxAsk(caseOf('baseline-wallet-calls'), w.address);
    expect((await post('/api/agent/asks', first)).status).toBe(200);
    const again = await post('/api/agent/asks', { ...first, question: { ...first.question, title: `${first.question.title} (edited)` } });
    expect(again.status).toBe(envelope.status);
    expect(again.body).toEqual({
      ...envelope,
      // service-api.md §5.4: the message of a reused id with another payload.
      message: 'clientRequestId has already been used for a different question payload.',
    });
    // The corpus's case itself (an x402 bundle), on the sandbox: the same status and body.
    const bundle = { ...structuredClone(dup.request.body), chainId: 31337, clientRequestId: `dup-${unique()}`, walletAddress: w.address };
    const r = await post('/api/agent/asks', bundle);
    expect(r.status).toBe(dup.verdict.httpStatus);
    expect(r.body).toEqual(envelope);
  });

  it("on the reward minimum: max(minSubmissionUsdcPool, config().maxVoters × 0.01 USDC) from the service's chain reads is where the registry starts to take a bounty", async () => {
    const c = caseOf('baseline-wallet-calls');
    const minPool = BigInt(c.chainReads.find((r: any) => r.functionName === 'minSubmissionUsdcPool').result);
    const maxVoters = BigInt(c.chainReads.find((r: any) => r.functionName === 'config').result.maxVoters);
    const floor = minPool > maxVoters * 10_000n ? minPool : maxVoters * 10_000n;
    const w = await submitter();
    const at = (amount: bigint) => valid({ rewardTerms: { asset: 1, amount, requiredVoters: 3n, bountyEligibility: 0 } });
    expect(await simulatedAfterReserving(w, [at(floor), at(floor - 1n)])).toEqual(['ok', EMPTY]);
  });
});
