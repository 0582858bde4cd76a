// Budget asks on the sandbox (issue 38): an owner O with USDC, agents S granted by O (`loopsign budget grant`, then
// `loopsign budget import` with S's key), ask files, and what O moved to S read from the token's own events.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createWalletClient, http, parseAbi, parseAbiItem, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { registerSecret, runCli } from './cli.js';
import { fundedWallet, type Session } from './chain.js';
import { pullCalldata } from '../../src/budget/delegation.js';
import { delegationOf, type GrantFile } from '../../src/budget/grant-file.js';

export const USDC = 1_000_000n;
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export type Owner = Awaited<ReturnType<typeof fundedWallet>>;

export interface Agent {
  address: Hex;
  key: Hex;
  env: Record<string, string | undefined>;
  grantFile: string;
}

/** The owner: a funded wallet with `usdc` more USDC; the chain's clock moved past 00:00 UTC if it is within an hour. */
export async function budgetOwner(s: Session, usdc: bigint): Promise<Owner> {
  const owner = await fundedWallet(s.sb, s.pub);
  await s.sb.control('/__sandbox/fund', { address: owner.address, usdc: String(usdc) });
  const chainNow = Number((await s.pub.getBlock()).timestamp);
  const toMidnight = 86_400 - (chainNow % 86_400);
  if (toMidnight < 3600) await s.sb.control('/__sandbox/time', { advanceSeconds: toMidnight + 60 });
  return owner;
}

export const usdcOf = async (s: Session, who: Hex) =>
  (await s.pub.readContract({ address: s.sb.info.tokens.USDC.address, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;

/** What `from` moved to `to` in USDC over the whole chain (the pulls), from the token's Transfer events. */
export async function transfers(s: Session, from: Hex, to: Hex): Promise<{ total: bigint; count: number; hashes: Hex[] }> {
  const logs = await s.pub.getLogs({ address: s.sb.info.tokens.USDC.address, event: transfer, args: { from, to }, fromBlock: 0n });
  return {
    total: logs.reduce((sum, l) => sum + (l.args.value ?? 0n), 0n),
    count: logs.length,
    hashes: logs.map((l) => l.transactionHash as Hex),
  };
}

/** A fresh agent wallet S with gas and no USDC, granted `perDay`/`per30Days` USDC by O, the grant imported by S. */
export async function agentWithGrant(s: Session, owner: Owner, perDay: string, per30Days: string, expires = '7d'): Promise<Agent> {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const address = privateKeyToAccount(key).address;
  await s.sb.control('/__sandbox/fund', { address, eth: '1' });
  const grantFile = path.join(s.home.dir, `grant-${address}.json`);
  const granted = await runCli(
    [
      '--json',
      'budget',
      'grant',
      '--to',
      address,
      '--usdc-per-day',
      perDay,
      '--usdc-per-30-days',
      per30Days,
      '--expires',
      expires,
      '--out',
      grantFile,
      '--yes',
    ],
    s.home,
    { env: owner.env },
  );
  expect(granted.code, granted.stdout + granted.stderr).toBe(0);
  const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  const imported = await runCli(['--json', 'budget', 'import', grantFile], s.home, { env });
  expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  return { address, key, env, grantFile };
}

let n = 0;
/** An ask file: a `bounty` (display USDC) bounty, and with `bonus` a USDC feedback bonus; its title is returned too. */
export function budgetAsk(s: Session, bounty: string, bonus?: string): { file: string; title: string } {
  const atomic = (v: string) => BigInt(Math.round(Number(v) * 1e6));
  const id = `budget-${process.pid}-${Date.now()}-${n++}`;
  const title = `Budget ask ${id}`;
  const file = s.home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: String(atomic(bounty) + (bonus ? atomic(bonus) : 0n)),
      bounty: { amount: String(atomic(bounty)), asset: 'USDC', requiredVoters: '3' },
      ...(bonus ? { feedbackBonus: { amount: String(atomic(bonus)), asset: 'USDC' } } : {}),
      question: { title, contextUrl: `https://example.com/budget/${id}`, categoryId: '1', tags: ['budget'] },
    }),
  );
  return { file, title };
}

/** An agent's key of its own, funded with 1 ETH for gas, with a wallet client to call the contracts directly. */
export async function directAgent(s: Session) {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const account = privateKeyToAccount(key);
  await s.sb.control('/__sandbox/fund', { address: account.address, eth: '1' });
  return { key, account, wallet: createWalletClient({ account, transport: http(s.sb.info.rpcUrl) }) };
}

/** `loopsign --json budget grant` of 5 USDC a day and 20 per 30 days, for 30 days, to `to`, written to `out`. */
export const grantArgs = (to: Hex, out: string) => [
  '--json',
  'budget',
  'grant',
  '--to',
  to,
  '--usdc-per-day',
  '5',
  '--usdc-per-30-days',
  '20',
  '--expires',
  '30d',
  '--out',
  out,
  '--yes',
];

/** A pull of `amount` USDC by the agent under the grant, sent with fixed gas so that a refusal is mined as a revert. */
export async function directPull(s: Session, agent: Awaited<ReturnType<typeof directAgent>>, file: GrantFile, amount: bigint) {
  const manager = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8')).delegation.contracts.delegationManager as Hex;
  const usdc = s.sb.info.tokens.USDC.address as Hex;
  const hash = await agent.wallet.sendTransaction({
    chain: null,
    to: manager,
    data: pullCalldata(delegationOf(file), usdc, agent.account.address, amount),
    gas: 900_000n,
  });
  return (await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status;
}
