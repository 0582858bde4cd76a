// The verifying guard on its own, around signers that lie in every way one can: a field changed in the transaction
// they sign, another key's signature, high-s, another authorization tuple, garbage. Each lie is refused (exit 5)
// and nothing comes back; the requests loopsign never signs are refused before the signer is asked.
import { describe, expect, it } from 'vitest';
import {
  keccak256,
  parseTransaction,
  recoverMessageAddress,
  recoverTransactionAddress,
  toHex,
  type Hex,
  type LocalAccount,
  type TransactionSerializableEIP1559,
} from 'viem';
import { privateKeyToAccount, toAccount } from 'viem/accounts';
import { guardAccount, hashAuthorizationTuple } from '../src/wallet/signers/guard.js';
import { SECP256K1_N } from '../src/wallet/signers/signature.js';
import { CHAIN_ID, DELEGATE, DELEGATOR, OTHER_DELEGATE, TARGET, expectExit, expectLowS } from './helpers/signers.js';

const key = privateKeyToAccount(keccak256(toHex('loopsign guard test key')));
const other = privateKeyToAccount(keccak256(toHex('loopsign guard other key')));
const FROM = key.address;

const highS = (sig: Hex): Hex => {
  const s = BigInt(`0x${sig.slice(66, 130)}`);
  const flipped = s > SECP256K1_N / 2n ? s : SECP256K1_N - s;
  return `${sig.slice(0, 66)}${flipped.toString(16).padStart(64, '0')}${sig.slice(130)}` as Hex;
};

/** A signer built on `key` with the given lies; records whether it was asked at all. */
function signer(lies: Partial<LocalAccount> = {}) {
  const asked: string[] = [];
  const inner = {
    ...toAccount({
      address: FROM,
      signMessage: (p) => (asked.push('message'), key.signMessage(p)),
      signTypedData: (p) => (asked.push('typedData'), key.signTypedData(p as never)),
      signTransaction: (tx, o) => (asked.push('transaction'), key.signTransaction(tx as never, o as never)),
      signAuthorization: (a) => (asked.push('authorization'), key.signAuthorization(a)),
      ...lies,
    }),
    publicKey: key.publicKey,
  } as LocalAccount;
  return { asked, account: guardAccount(inner, { from: FROM, label: 'test signer', chainId: CHAIN_ID, delegate: DELEGATE }) };
}

const tx: TransactionSerializableEIP1559 = {
  type: 'eip1559',
  chainId: CHAIN_ID,
  nonce: 7,
  to: TARGET,
  value: 3n,
  data: '0xdeadbeef',
  gas: 90_000n,
  maxFeePerGas: 3n * 10n ** 9n,
  maxPriorityFeePerGas: 10n ** 9n,
  accessList: [{ address: TARGET, storageKeys: [`0x${'00'.repeat(31)}01`] }],
};

describe('verifying guard', () => {
  it('passes honest signatures through unchanged in meaning: low-s, v 27/28, recovering to --from', async () => {
    const { account } = signer();
    const raw = await account.signTransaction(tx);
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(FROM);
    expectLowS(await account.signMessage({ message: 'x' }));
  });

  it('normalises high-s from the signer (flipping the parity), for every kind', async () => {
    const { account } = signer({
      signMessage: async (p) => highS(await key.signMessage(p)),
      signTypedData: async (p) => highS(await key.signTypedData(p as never)),
      signAuthorization: async (a) => {
        const signed = await key.signAuthorization(a);
        return {
          ...signed,
          s: `0x${(SECP256K1_N - BigInt(signed.s)).toString(16).padStart(64, '0')}` as Hex,
          yParity: signed.yParity === 1 ? 0 : 1,
        };
      },
      signTransaction: async (t) => {
        const parsed = parseTransaction(await key.signTransaction(t as never));
        const { serializeTransaction } = await import('viem');
        return serializeTransaction(t as never, {
          r: parsed.r!,
          s: `0x${(SECP256K1_N - BigInt(parsed.s!)).toString(16).padStart(64, '0')}`,
          yParity: parsed.yParity === 1 ? 0 : 1,
        });
      },
    });
    const message = await account.signMessage({ message: 'x' });
    expectLowS(message);
    expect(await recoverMessageAddress({ message: 'x', signature: message })).toBe(FROM);
    const raw = await account.signTransaction(tx);
    expect(BigInt(parseTransaction(raw).s!) <= SECP256K1_N / 2n).toBe(true);
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(FROM);
    const auth = await account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 });
    expect(BigInt(auth.s) <= SECP256K1_N / 2n).toBe(true);
  });

  it.each([
    ['nonce', { nonce: 8 }],
    ['to', { to: FROM }],
    ['value', { value: 4n }],
    ['data', { data: '0xdeadbeee' }],
    ['gas', { gas: 90_001n }],
    ['maxFeePerGas', { maxFeePerGas: 4n * 10n ** 9n }],
    ['maxPriorityFeePerGas', { maxPriorityFeePerGas: 2n * 10n ** 9n }],
    ['accessList', { accessList: [] }],
    ['chainId', { chainId: 8453 }],
    ['type', { type: 'eip2930', gasPrice: 3n * 10n ** 9n, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }],
  ])('refuses a signed transaction whose %s was changed, and returns nothing', async (field, change) => {
    const { account } = signer({ signTransaction: (t) => key.signTransaction({ ...(t as object), ...change } as never) });
    const error = await expectExit(account.signTransaction(tx), 5, 'transaction_changed');
    expect(error.message).toContain(`whose ${field} differs`);
  });

  it('refuses a type-4 transaction whose authorization list was changed', async () => {
    const authorization = await key.signAuthorization({ chainId: CHAIN_ID, address: DELEGATE, nonce: 8 });
    const t = { ...tx, type: 'eip7702' as const, accessList: undefined, authorizationList: [authorization] };
    const forged = await key.signAuthorization({ chainId: CHAIN_ID, address: DELEGATE, nonce: 9 });
    const { account } = signer({ signTransaction: (x) => key.signTransaction({ ...(x as object), authorizationList: [forged] } as never) });
    expect((await expectExit(account.signTransaction(t as never), 5, 'transaction_changed')).message).toContain(
      'authorizationList differs',
    );
  });

  it("refuses another key's signature on every kind", async () => {
    const { account } = signer({
      signMessage: (p) => other.signMessage(p),
      signTypedData: (p) => other.signTypedData(p as never),
      signTransaction: (t, o) => other.signTransaction(t as never, o as never),
      signAuthorization: (a) => other.signAuthorization(a),
    });
    await expectExit(account.signMessage({ message: 'x' }), 5, 'signature_not_from_signer');
    await expectExit(
      account.signTypedData({
        types: { M: [{ name: 'a', type: 'uint256' }] },
        primaryType: 'M',
        message: { a: 1n },
        domain: { name: 'd' },
      }),
      5,
      'signature_not_from_signer',
    );
    await expectExit(account.signTransaction(tx), 5, 'signature_not_from_signer');
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'signature_not_from_signer');
  });

  it('refuses an authorization for another tuple than the one asked for', async () => {
    const { account } = signer({ signAuthorization: (a) => key.signAuthorization({ ...a, nonce: a.nonce + 1 }) });
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'authorization_changed');
  });

  it('refuses, before the signer is asked, what loopsign never signs', async () => {
    const { account, asked } = signer();
    await expectExit(account.signAuthorization!({ chainId: 0, address: DELEGATE, nonce: 1 }), 5, 'authorization_any_chain');
    await expectExit(
      account.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 1 }),
      5,
      'authorization_foreign_delegate',
    );
    await expectExit(account.signTransaction({ ...tx, chainId: 8453 }), 5, 'transaction_wrong_chain');
    // A type-4 transaction carrying a chain-id-0, foreign-delegate or someone else's authorization.
    const anyChain = await key.signAuthorization({ chainId: 0, address: DELEGATE, nonce: 8 });
    const foreign = await key.signAuthorization({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 8 });
    const theirs = await other.signAuthorization({ chainId: CHAIN_ID, address: DELEGATE, nonce: 8 });
    const t4 = (a: unknown) => ({ ...tx, type: 'eip7702', accessList: undefined, authorizationList: [a] }) as never;
    await expectExit(account.signTransaction(t4(anyChain)), 5, 'authorization_any_chain');
    await expectExit(account.signTransaction(t4(foreign)), 5, 'authorization_foreign_delegate');
    await expectExit(account.signTransaction(t4(theirs)), 5, 'signature_not_from_signer');
    expect(asked).toEqual([]);
    const unpinned = guardAccount(key, { from: FROM, label: 'x', chainId: CHAIN_ID });
    await expectExit(unpinned.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'no_pinned_delegate');
  });

  it("authorizes the chain's pinned budget DeleGator beside the batch delegate, alone or with it, and still no other address", async () => {
    const both = guardAccount(key, { from: FROM, label: 'x', chainId: CHAIN_ID, delegate: DELEGATE, deleGator: DELEGATOR });
    const signed = await both.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 3 });
    expect(signed.address).toBe(DELEGATOR);
    const t4 = { ...tx, type: 'eip7702', accessList: undefined, authorizationList: [signed] } as never;
    expect(parseTransaction(await both.signTransaction(t4)).authorizationList?.[0]?.address.toLowerCase()).toBe(DELEGATOR.toLowerCase());
    await expectExit(
      both.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 3 }),
      5,
      'authorization_foreign_delegate',
    );
    const onlyDeleGator = guardAccount(key, { from: FROM, label: 'x', chainId: CHAIN_ID, deleGator: DELEGATOR });
    expect((await onlyDeleGator.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 3 })).address).toBe(DELEGATOR);
    await expectExit(
      onlyDeleGator.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 3 }),
      5,
      'authorization_foreign_delegate',
    );
    // Without it pinned (another chain, or no anchors), the DeleGator is a foreign delegate like any other.
    await expectExit(
      signer().account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 3 }),
      5,
      'authorization_foreign_delegate',
    );
  });

  it('refuses bytes that are no transaction, and an unsigned one', async () => {
    await expectExit(signer({ signTransaction: async () => '0x1234' }).account.signTransaction(tx), 5, 'transaction_unreadable');
    const { serializeTransaction } = await import('viem');
    await expectExit(
      signer({ signTransaction: async (t) => serializeTransaction(t as never) }).account.signTransaction(tx),
      5,
      'transaction_unsigned',
    );
  });

  it("the authorization digest is EIP-7702's", () => {
    expect(hashAuthorizationTuple({ chainId: CHAIN_ID, address: DELEGATE, nonce: 0 })).toBe(
      keccak256(`0x05d9827a6994${DELEGATE.slice(2).toLowerCase()}80` as Hex),
    );
  });
});
