// What every signer suite shares: a real anvil to mine what a wallet signs, the four signature kinds loopsign makes
// (an EIP-1559 call, EIP-3009 typed data, an EIP-191 message, a self-executed EIP-7702 delegation), and the checks
// that each landed or recovered to the wallet's address.
import {
  createPublicClient,
  http,
  numberToHex,
  recoverMessageAddress,
  recoverTypedDataAddress,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from 'viem';
import { expect } from 'vitest';
import { startAnvil, type AnvilProcess } from '../../src/sandbox/anvil.js';
import type { ResolvedConfig } from '../../src/config.js';
import type { Output } from '../../src/output.js';
import type { Address, SignerProgress } from '../../src/wallet/signers/types.js';
import { SECP256K1_N } from '../../src/wallet/signers/signature.js';

export const CHAIN_ID = 31337;
/** The delegate the suites pin: Simple7702Account, the one entry on the Ledger app's EIP-7702 whitelist. */
export const DELEGATE: Address = '0x4Cd241E8d1510e30b2076397afc7508Ae59C66c9';
export const OTHER_DELEGATE: Address = '0x000000005c84F8Fd50b21CAC312528A64437030e';
/** A chain's pinned budget DeleGator, as the Context passes it to external signers (Base's EIP7702StatelessDeleGator v1.3.0). */
export const DELEGATOR: Address = '0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B';
export const TARGET: Address = '0x00000000000000000000000000000000000000c1';

export interface Chain {
  anvil: AnvilProcess;
  pub: ReturnType<typeof createPublicClient>;
  fund(address: Address): Promise<void>;
  mine(raw: Hex): Promise<TransactionReceipt>;
  stop(): Promise<void>;
}

export async function startChain(): Promise<Chain> {
  const anvil = await startAnvil({ accounts: 3 });
  const pub = createPublicClient({ transport: http(anvil.rpcUrl), pollingInterval: 50 });
  return {
    anvil,
    pub,
    fund: async (address) => {
      await pub.request({ method: 'anvil_setBalance' as never, params: [address, numberToHex(10n ** 20n)] as never });
    },
    mine: async (raw) => {
      const hash = await pub.request({ method: 'eth_sendRawTransaction', params: [raw] });
      return pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    },
    stop: () => anvil.stop(),
  };
}

export function quietOut(): Output & { events: SignerProgress[] } {
  const events: SignerProgress[] = [];
  return {
    events,
    progress: (event: string, message: string) => events.push({ event, message }),
    warn: () => undefined,
  } as unknown as Output & { events: SignerProgress[] };
}
export const NO_CONFIG = {} as ResolvedConfig;

/** EIP-3009 ReceiveWithAuthorization, as the x402 flow signs it (USDC's domain). */
export function receiveWithAuthorization(from: Address) {
  return {
    domain: {
      name: 'USD Coin',
      version: '2',
      chainId: CHAIN_ID,
      verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address,
    },
    types: {
      ReceiveWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'ReceiveWithAuthorization' as const,
    message: { from, to: TARGET, value: 1_500_000n, validAfter: 0n, validBefore: 2_000_000_000n, nonce: `0x${'ab'.repeat(32)}` as Hex },
  };
}

export const MESSAGE = 'loopsign signer check: sign in to RateLoop';

export async function fees(chain: Chain) {
  const block = await chain.pub.getBlock();
  return { maxFeePerGas: block.baseFeePerGas! * 2n + 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n };
}

/** An EIP-1559 call, signed by the account and mined: the receipt's sender is the account. */
export async function signAndMineCall(chain: Chain, account: LocalAccount): Promise<TransactionReceipt> {
  const nonce = await chain.pub.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: CHAIN_ID,
    to: TARGET,
    data: '0x1234',
    value: 1n,
    nonce,
    gas: 60_000n,
    ...(await fees(chain)),
  });
  const receipt = await chain.mine(raw);
  expect(receipt.status).toBe('success');
  expect(receipt.from.toLowerCase()).toBe(account.address.toLowerCase());
  return receipt;
}

/** s in the low half (EIP-2) and v ∈ {27, 28}: what USDC's EIP-3009 and every node accept. */
export function expectLowS(signature: Hex) {
  expect(BigInt(`0x${signature.slice(66, 130)}`) <= SECP256K1_N / 2n).toBe(true);
  expect(['1b', '1c']).toContain(signature.slice(130));
}

export async function expectTypedDataAndMessage(account: LocalAccount) {
  const td = receiveWithAuthorization(account.address);
  const typed = await account.signTypedData(td);
  expectLowS(typed);
  expect(await recoverTypedDataAddress({ ...td, signature: typed })).toBe(account.address);
  const message = await account.signMessage({ message: MESSAGE });
  expectLowS(message);
  expect(await recoverMessageAddress({ message: MESSAGE, signature: message })).toBe(account.address);
}

/** The self-executed delegation loopsign's executor makes: authorization nonce = transaction nonce + 1. */
export async function delegateAndMine(chain: Chain, account: LocalAccount, target: Address = DELEGATE): Promise<TransactionReceipt> {
  const nonce = await chain.pub.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const authorization = await account.signAuthorization!({ chainId: CHAIN_ID, address: target, nonce: nonce + 1 });
  expect(BigInt(authorization.s) <= SECP256K1_N / 2n).toBe(true);
  const raw = await account.signTransaction({
    type: 'eip7702',
    chainId: CHAIN_ID,
    to: account.address,
    data: '0x',
    value: 0n,
    nonce,
    gas: 100_000n,
    authorizationList: [authorization],
    ...(await fees(chain)),
  });
  const receipt = await chain.mine(raw);
  expect(receipt.status).toBe('success');
  expect(receipt.from.toLowerCase()).toBe(account.address.toLowerCase());
  expect((await chain.pub.getCode({ address: account.address }))?.toLowerCase()).toBe(`0xef0100${target.slice(2).toLowerCase()}`);
  return receipt;
}

/** A promise that must fail with this exit code and error code. */
export async function expectExit(
  promise: Promise<unknown>,
  exitCode: number,
  code?: string | RegExp,
): Promise<Error & { code: string; exitCode: number }> {
  const error = (await promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
    },
    (e) => e,
  )) as Error & { code: string; exitCode: number };
  expect({ exitCode: error.exitCode, message: error.message }).toMatchObject({ exitCode });
  if (code !== undefined) expect(error.code).toMatch(code);
  return error;
}
