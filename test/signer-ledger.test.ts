// --signer ledger through Ledger's Device Management Kit and Ethereum signer kit (the real client code: device
// session, device actions, APDU framing and chunking, EIP-712 full flow) over an emulated device at the APDU level
// (test/helpers/ledger-device.ts). What stays untested without a device: the real firmware and its screens, USB HID
// (node-hid, udev rules, Ledger Live holding the device), whether the shipped app's whitelist matches the one read
// from its source, blind-signing settings, PIN entry, and real timing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { openWallet } from '../src/wallet/signers/open.js';
import type { ResolvedSigner } from '../src/wallet/signers/spec.js';
import type { Address, SignerProgress } from '../src/wallet/signers/types.js';
import { emulatedLedger, type EmulatedLedger } from './helpers/ledger-device.js';
import {
  CHAIN_ID,
  DELEGATE,
  NO_CONFIG,
  OTHER_DELEGATE,
  delegateAndMine,
  expectExit,
  expectTypedDataAndMessage,
  quietOut,
  receiveWithAuthorization,
  signAndMineCall,
  startChain,
  type Chain,
} from './helpers/signers.js';

const KEY = keccak256(toHex('loopsign ledger emulated device key'));
let chain: Chain;
let device: EmulatedLedger;

beforeAll(async () => {
  chain = await startChain();
  device = emulatedLedger(KEY);
  await chain.fund(device.address);
});
afterAll(async () => {
  await chain?.stop();
});

function open(options: { from?: Address; delegate?: Address; timeoutMs?: number; progress?: SignerProgress[] } = {}) {
  const resolved: ResolvedSigner = {
    source: { kind: 'ledger', path: "m/44'/60'/0'/0/0" },
    from: options.from ?? device.address,
    origin: 'flag',
  };
  const events = options.progress ?? [];
  return openWallet(resolved, {
    config: NO_CONFIG,
    out: quietOut(),
    chainId: CHAIN_ID,
    delegate: options.delegate ?? DELEGATE,
    progress: (p) => events.push(p),
    ledger: { transportFactory: device.transportFactory, timeoutMs: options.timeoutMs ?? 20_000 },
  });
}

describe('Ledger signer (emulated device)', () => {
  it('signs an EIP-1559 call (APDU E0 04) that anvil mines from --from, with the prompt reported as progress', async () => {
    device.human = 'approve';
    const progress: SignerProgress[] = [];
    const wallet = await open({ progress });
    const account = await wallet.account;
    await signAndMineCall(chain, account);
    expect(device.prompts.at(-1)).toBe('transaction');
    expect(device.apdus.some((a) => a.startsWith('e004'))).toBe(true);
    expect(progress.map((p) => p.message)).toContain('review and sign the transaction on the Ledger: a transaction (nonce 0)');
    await wallet.close();
  });
});

describe('Ledger signer (emulated device), the other kinds', () => {
  it('signs EIP-712 through the full struct flow (E0 1A, E0 1C, E0 0C P2=01) and EIP-191 (E0 08), recovering to --from', async () => {
    device.human = 'approve';
    const wallet = await open();
    const before = device.apdus.length;
    await expectTypedDataAndMessage(await wallet.account);
    const sent = device.apdus.slice(before);
    expect(sent.some((a) => a.startsWith('e01a00ff'))).toBe(true);
    expect(sent.some((a) => a.startsWith('e01c00ff'))).toBe(true);
    expect(sent.some((a) => a.startsWith('e00c0001'))).toBe(true);
    expect(sent.some((a) => a.startsWith('e00c0000'))).toBe(false); // no fallback to hashed (blind) mode
    expect(sent.some((a) => a.startsWith('e00800'))).toBe(true);
    expect(device.prompts.slice(-2)).toEqual(['typedData', 'message']);
    await wallet.close();
  });

  it("signs the self-executed EIP-7702 delegation (E0 34) when the pinned delegate is on the app's whitelist", async () => {
    device.human = 'approve';
    const wallet = await open({ delegate: DELEGATE });
    expect(wallet.capabilities.authorization).toBe(true);
    await delegateAndMine(chain, await wallet.account);
    expect(device.apdus.some((a) => a.startsWith('e0340100'))).toBe(true);
    await wallet.close();
  });

  it('cannot delegate to Calibur v1.1.0 (pinned on Base): capability off with the reason, refused (exit 5) without a device prompt', async () => {
    const wallet = await open({ delegate: OTHER_DELEGATE });
    expect(wallet.capabilities).toMatchObject({
      authorization: false,
      authorizationReason: expect.stringMatching(/whitelisted delegates \(Simple7702Account\)/),
    });
    const account = await wallet.account;
    const prompts = device.prompts.length;
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 1 }), 5, 'signer_cannot_delegate');
    await expectExit(account.signAuthorization!({ chainId: 0, address: OTHER_DELEGATE, nonce: 1 }), 5, 'authorization_any_chain');
    expect(device.prompts.length).toBe(prompts);
    await wallet.close();
  });

  it('a rejection on the device is a refusal (exit 5) for a transaction, typed data and a delegation', async () => {
    const wallet = await open();
    const account = await wallet.account;
    device.human = 'reject';
    try {
      const nonce = await chain.pub.getTransactionCount({ address: device.address });
      await expectExit(
        account.signTransaction({
          type: 'eip1559',
          chainId: CHAIN_ID,
          to: device.address,
          nonce,
          gas: 21_000n,
          maxFeePerGas: 10n ** 10n,
          maxPriorityFeePerGas: 1n,
        }),
        5,
        'device_rejected',
      );
      await expectExit(account.signTypedData(receiveWithAuthorization(device.address)), 5, 'device_rejected');
      await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 9 }), 5, 'device_rejected');
      expect(device.prompts.slice(-3)).toEqual(['transaction', 'typedData', 'authorization']);
    } finally {
      device.human = 'approve';
      await wallet.close();
    }
  });

  it('an app that refuses the delegation itself (EIP-7702 setting off) is a refusal (exit 5)', async () => {
    const wallet = await open();
    const account = await wallet.account;
    device.eip7702Enabled = false;
    try {
      await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 9 }), 5, 'signer_cannot_delegate');
    } finally {
      device.eip7702Enabled = true;
      await wallet.close();
    }
  });

  it('a device nobody answers is cancelled after the bounded wait (exit 7), nothing signed', async () => {
    const wallet = await open({ timeoutMs: 1_500 });
    const account = await wallet.account;
    device.human = 'never';
    const disconnects = device.disconnects;
    try {
      await expectExit(account.signMessage({ message: 'anyone there?' }), 7, 'device_timeout');
      await expect.poll(() => device.disconnects).toBe(disconnects + 1);
      // The session is gone: nothing more is signed with this wallet.
      device.human = 'approve';
      await expect(account.signMessage({ message: 'late' })).rejects.toThrow();
    } finally {
      device.human = 'approve';
      await wallet.close();
    }
  });

  it('refuses a --from the device does not hold (exit 6), and a device that signs with another key (exit 5)', async () => {
    await expectExit((await open({ from: '0x000000000000000000000000000000000000dEaD' })).account, 6, 'signer_address_mismatch');
    const wallet = await open();
    const account = await wallet.account;
    device.signWith = keccak256(toHex('another key'));
    try {
      await expectExit(account.signMessage({ message: 'x' }), 5, 'signature_not_from_signer');
      await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 9 }), 5, 'signature_not_from_signer');
    } finally {
      device.signWith = undefined;
      await wallet.close();
    }
  });
});
