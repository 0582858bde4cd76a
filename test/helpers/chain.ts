// What end-to-end suites read from the sandbox's chain to prove what moved: token balances, submitted questions,
// stored vote commits. And the usual session: a sandbox, an isolated home, a public client on its RPC. The sandbox
// is the worker's shared one (test/setup/sandbox-pool.ts) with a wallet of the file's own; LOOPSIGN_TEST_SANDBOX=per-file
// (or a run without the pool's global setup) starts one for the file, as every file once did.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPublicClient, http, parseAbi, parseAbiItem, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { makeHome, registerSecret, type Home } from './cli.js';
import { startSandbox, type SandboxHandle } from './sandbox.js';
import { poolBroker, sharedSandbox } from './sandbox-pool.js';

export type Pub = ReturnType<typeof createPublicClient>;

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
// The live engine's views of a commit (RateLoop 0b442ae; chain.md §4.2 commitCore): what a vote stored on chain is.
const engineAbi = parseAbi([
  'function commitCore(uint256 contentId, uint256 roundId, bytes32 commitKey) view returns (address voter, uint64 stakeAmount, address frontend, uint48 revealableAfter, bool revealed, bool isUp, uint8 epochIndex)',
  'function commitRevealData(uint256 contentId, uint256 roundId, bytes32 commitKey) view returns (bytes32 ciphertextHash, uint64 targetRound, bytes32 drandChainHash, uint48 revealableAfter, bool revealed, uint64 stakeAmount)',
  'function rbtsCommitState(uint256 contentId, uint256 roundId, bytes32 commitKey) view returns (uint16 predictedUpBps, uint16 scoreBps, uint256 scoringWeight, uint256 rewardWeight, uint256 stakeReturned)',
  'function voterCommitKey(uint256 contentId, uint256 roundId, address voter) view returns (bytes32 commitHash, bytes32 commitKey)',
]);

export interface StoredCommit {
  voter: Hex;
  commitHash: Hex;
  targetRound: bigint;
  ciphertextHash: Hex;
  stake: bigint;
  revealed: boolean;
  isUp: boolean;
  predictedUpBps: number;
}

/** A vote as the engine stores it, read through the live engine's views only (no sandbox-only view). */
export async function storedCommit(pub: Pub, engine: Hex, contentId: bigint, roundId: bigint, commitKey: Hex): Promise<StoredCommit> {
  const at = { address: engine, abi: engineAbi } as const;
  const args = [contentId, roundId, commitKey] as const;
  const [voter, stake, , , revealed, isUp] = await pub.readContract({ ...at, functionName: 'commitCore', args });
  const [ciphertextHash, targetRound] = await pub.readContract({ ...at, functionName: 'commitRevealData', args });
  const [predictedUpBps] = await pub.readContract({ ...at, functionName: 'rbtsCommitState', args });
  const [commitHash] = await pub.readContract({ ...at, functionName: 'voterCommitKey', args: [contentId, roundId, voter] });
  return { voter, commitHash, targetRound, ciphertextHash, stake, revealed, isUp, predictedUpBps };
}
const submitted = parseAbiItem(
  'event ContentSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 contentHash, string url, string title, string tags, uint256 indexed categoryId)',
);

export interface Session {
  sb: SandboxHandle;
  home: Home;
  pub: Pub;
}

/**
 * A sandbox (settings applied), a fresh home and a public client; the dev wallet's password is a known secret. Its
 * stop() in afterAll gives a shared sandbox back, reset to its start-up settings for the next file.
 */
export async function openSession(settings: Record<string, unknown> = {}): Promise<Session> {
  const broker = poolBroker();
  const sb = broker ? await sharedSandbox(broker) : await startSandbox();
  if (Object.keys(settings).length) await sb.control('/__sandbox/settings', settings);
  registerSecret(readFileSync(sb.info.devWallet.passwordFile, 'utf8').trim());
  return { sb, home: makeHome(), pub: createPublicClient({ transport: http(sb.info.rpcUrl), pollingInterval: 50 }) };
}

/** The dev wallet's balance of a sandbox token, in atomic units. */
export async function tokenBalance(s: Session, token: 'USDC' | 'LREP'): Promise<bigint> {
  return (await s.pub.readContract({
    address: s.sb.info.tokens[token].address,
    abi: erc20,
    functionName: 'balanceOf',
    args: [s.sb.info.devWallet.address],
  })) as bigint;
}

const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/**
 * What the dev wallet sent of a sandbox token in the blocks after `afterBlock`: what it paid, exactly, even while the
 * keeper refunds an earlier stake into the same balance (a balance read would count that refund against the payment).
 */
export async function tokenSentAfter(s: Session, token: 'USDC' | 'LREP', afterBlock: bigint): Promise<bigint> {
  const logs = await s.pub.getLogs({
    address: s.sb.info.tokens[token].address,
    event: transfer,
    args: { from: s.sb.info.devWallet.address },
    fromBlock: afterBlock + 1n,
    toBlock: 'latest',
  });
  return logs.reduce((sum, l) => sum + (l.args.value ?? 0n), 0n);
}

/** How many questions with this title the dev wallet (or `submitter`) has submitted on chain. */
export async function submissionsTitled(s: Session, title: string, submitter: Hex = s.sb.info.devWallet.address): Promise<number> {
  const logs = await s.pub.getLogs({
    address: s.sb.info.contracts.contentRegistry,
    event: submitted,
    args: { submitter },
    fromBlock: 0n,
  });
  return logs.filter((l) => l.args.title === title).length;
}

const poolCreated = parseAbiItem(
  'event FeedbackBonusPoolCreated(uint256 indexed poolId, uint256 indexed contentId, uint256 indexed roundId, address funder, address awarder, uint256 amount, uint256 feedbackClosesAt, uint256 frontendFeeBps, uint8 asset)',
);

/** How many feedback bonus pools the dev wallet funded (for one question, or in all). */
export async function bonusPoolsFunded(s: Session, contentId?: string): Promise<number> {
  const logs = await s.pub.getLogs({
    address: s.sb.info.contracts.feedbackBonusEscrow,
    event: poolCreated,
    args: contentId === undefined ? {} : { contentId: BigInt(contentId) },
    fromBlock: 0n,
  });
  return logs.filter((l) => l.args.funder?.toLowerCase() === s.sb.info.devWallet.address.toLowerCase()).length;
}

/**
 * A wallet of the test's own, funded by the sandbox (its nonces, balances and events are the test's alone), used by
 * its private key: env runs loopsign as it; usdcOf and lrepOf read its balances.
 */
export async function fundedWallet(sb: SandboxHandle, pub: Pub) {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const account = privateKeyToAccount(key);
  const address = account.address;
  await sb.control('/__sandbox/fund', { address, usdc: '10000000', lrep: '10000000', eth: '10' });
  const env = { ...sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  const balanceOf = (token: 'USDC' | 'LREP') => async () =>
    (await pub.readContract({ address: sb.info.tokens[token].address, abi: erc20, functionName: 'balanceOf', args: [address] })) as bigint;
  return { key, account, address, env, usdcOf: balanceOf('USDC'), lrepOf: balanceOf('LREP') };
}

/** A JSON-RPC call straight to the sandbox's anvil (its own methods: anvil_rollback, anvil_mine, …); an error throws. */
export async function anvilRpc(s: Session, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(s.sb.info.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const doc = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (doc.error) throw new Error(`${method}: ${doc.error.message}`);
  return doc.result;
}

const bonusPoolCreated = parseAbiItem(
  'event FeedbackBonusPoolCreated(uint256 indexed poolId, uint256 indexed contentId, uint256 indexed roundId, address funder, address awarder, uint256 amount, uint256 feedbackClosesAt, uint256 frontendFeeBps, uint8 asset)',
);

/** How many feedback bonus pools `funder` created for the question, read from the sandbox's node directly. */
export async function bonusPoolsBy(s: Session, funder: Hex, contentId: string | bigint): Promise<number> {
  const logs = await s.pub.getLogs({
    address: s.sb.info.contracts.feedbackBonusEscrow as Hex,
    event: bonusPoolCreated,
    args: { contentId: BigInt(contentId) },
    fromBlock: 0n,
  });
  return logs.filter((l) => l.args.funder?.toLowerCase() === funder.toLowerCase()).length;
}
