// Addresses and hex values are compared in one place (src/hex.ts, on viem's isAddressEqual) and checksummed in one
// place (src/address.ts). For well-formed values a comparison is exactly the case-insensitive one the guards made by
// hand before; anything else equals nothing and never throws, so that a malformed answer stays a refusal and never
// becomes an internal error. The guards are held to that with malformed values in the very fields they compare.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sameAddress, sameHex } from '../src/hex.js';
import { toChecksumAddress } from '../src/address.js';
import { checksumAddress } from '../src/wallet/keystore.js';
import { CredentialError, RefusedError } from '../src/errors.js';
import { BUILTIN_CHAINS, type ChainConfig } from '../src/chains/table.js';
import { chainForProfile } from '../src/chains/index.js';
import { normalizeAsk } from '../src/protocol/ask-normalize.js';
import { computeAskHashes } from '../src/protocol/ask-hashes.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { checkAskEnvelope, checkX402Request } from '../src/wallet/plan-guard.js';
import { checkRatingContracts } from '../src/wallet/rating-guard.js';
import { callEffects, type CallLike } from '../src/wallet/spend-effects.js';
import { checkKeyAddress } from '../src/wallet/signers/digest-account.js';
import { TEST_ADDRESS, TEST_PRIVATE_KEY, VECTOR_ASK_BODY } from './helpers/cli.js';
import { assertProperty } from './helpers/property.js';

/** What the guards wrote before (plan-guard's `same`, proof's and spend-effects' `lc`, flow's `same`). */
const byHand = (a: unknown, b: unknown) => String(a).toLowerCase() === String(b).toLowerCase();

const digits = (n: number) => fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: n, maxLength: n }).map((d) => d.join(''));
const recase = (text: string, upper: boolean[]) => [...text].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join('');
const cased = (n: number, prefix: '0x' | '') =>
  fc
    .tuple(digits(n), fc.array(fc.boolean(), { minLength: 1, maxLength: n || 1 }))
    .map(([d, up]) => ({ digits: d, text: prefix + recase(d, up) }));

describe('comparing addresses and hex values', () => {
  it('two addresses, in any case (a checksum or not): sameAddress is the comparison made by hand', () => {
    assertProperty(
      fc.property(cased(40, '0x'), cased(40, '0x'), fc.boolean(), (a, b, same) => {
        const other = same ? { ...b, text: `0x${recase(a.digits, [true, false, false])}` } : b;
        expect(sameAddress(a.text, other.text)).toBe(byHand(a.text, other.text));
      }),
      { numRuns: 500 },
    );
  });

  it('two hex values, 0x-prefixed or bare, of any length and case: sameHex is the comparison made by hand', () => {
    // One property (a nested one would draw from a seed of its own, which no failure line could name): a length, a
    // prefix and whether the two are equal, then the two values of that length; as many cases as the 100 × 5 before.
    const pair = fc
      .tuple(fc.nat({ max: 80 }), fc.constantFrom('0x' as const, '' as const), fc.boolean())
      .chain(([n, prefix, same]) => fc.tuple(cased(n, prefix), cased(n, prefix)).map(([a, b]) => ({ prefix, same, a, b })));
    assertProperty(
      fc.property(pair, ({ prefix, same, a, b }) => {
        const other = same ? `${prefix}${a.digits.toUpperCase()}` : b.text;
        expect(sameHex(a.text, other)).toBe(byHand(a.text, other));
      }),
      { numRuns: 500 },
    );
  });

  it('anything else equals nothing, and never throws', () => {
    assertProperty(
      fc.property(fc.anything(), fc.anything(), (a, b) => {
        expect(() => sameAddress(a, b)).not.toThrow();
        expect(() => sameHex(a, b)).not.toThrow();
        if (typeof a !== 'string' || typeof b !== 'string') {
          expect(sameAddress(a, b)).toBe(false);
          expect(sameHex(a, b)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
    // Where the hand-made comparison said "equal" and these do not: two values that are not addresses (or not hex).
    const lower = TEST_ADDRESS.toLowerCase();
    for (const [a, b] of [
      [undefined, undefined],
      [null, 'null'],
      ['', ''],
      ['wallet', 'WALLET'],
      [`0X${lower.slice(2)}`, lower],
      [[lower], lower],
    ] as const) {
      expect(byHand(a, b), `${String(a)} ~ ${String(b)}`).toBe(true);
      expect(sameAddress(a, b), `${String(a)} ~ ${String(b)}`).toBe(false);
    }
    for (const [a, b] of [
      [undefined, undefined],
      ['0x12', ['0x12']],
      ['0Xab', '0xab'],
      ['xyz', 'XYZ'],
    ] as const) {
      expect(byHand(a, b)).toBe(true);
      expect(sameHex(a, b)).toBe(false);
    }
  });

  it("the one EIP-55 checksum (src/address.ts, the keystore too) is viem's getAddress", () => {
    assertProperty(
      fc.property(cased(40, '0x'), (a) => {
        expect(toChecksumAddress(a.text)).toBe(getAddress(a.text));
        expect(checksumAddress(a.digits)).toBe(getAddress(`0x${a.digits}`));
        expect(checksumAddress(a.text)).toBe(getAddress(a.text));
      }),
      { numRuns: 300 },
    );
  });
});

/** The error a call throws (or undefined). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** Not addresses; the last but one held the right address and passed the comparison made by hand (String([a]) is a). */
const MALFORMED: unknown[] = ['not an address', '0x1234', `0X${TEST_ADDRESS.slice(2)}`, 12345, {}, [TEST_ADDRESS], null];

describe('the guards refuse a malformed address where they compare one, never with an internal error', () => {
  const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Hex;
  const chain: ChainConfig = {
    ...structuredClone(BUILTIN_CHAINS[31337]!),
    contracts: {
      contentRegistry: a(1),
      questionRewardPoolEscrow: a(2),
      feedbackBonusEscrow: a(3),
      roundVotingEngine: a(4),
      advisoryVoteRecorder: a(5),
      x402QuestionSubmitter: a(6),
    },
  };
  chain.tokens.USDC.address = a(10);
  chain.tokens.LREP.address = a(11);

  // (null is "not named": the context may leave a contract out.) An array holding the trusted address was equal by hand.
  it.each([...MALFORMED.filter((v) => v !== null), [a(4)]])(
    'the rating context naming %j as the voting engine: untrusted_contract',
    (value) => {
      const e = thrown(() => checkRatingContracts(chain, { votingEngine: value }));
      expect(e).toBeInstanceOf(RefusedError);
      expect((e as RefusedError).details).toMatchObject({ rule: 'untrusted_contract' });
    },
  );

  it.each(MALFORMED)('a call to %j: unaccounted_call', (to) => {
    const e = thrown(() => callEffects(chain, { to, data: '0x095ea7b3' } as unknown as CallLike));
    expect(e).toBeInstanceOf(RefusedError);
    expect((e as RefusedError).code).toBe('unaccounted_call');
  });

  const resolver = (id: string, v: number) => resultSpecHash(id, v, TEMPLATES.find((t) => t.id === id)!.voteSemantics);
  const ask = normalizeAsk({ ...VECTOR_ASK_BODY, chainId: 8453, walletAddress: TEST_ADDRESS, paymentMode: 'x402_authorization' });
  const ctx = {
    chain: chainForProfile(8453),
    signer: TEST_ADDRESS.toLowerCase() as Hex,
    ask,
    hashes: computeAskHashes(ask, TEST_ADDRESS, resolver),
    verifyPayload: true,
  };

  it.each(MALFORMED)('an ask answer for wallet %j: wrong_wallet', (address) => {
    const e = thrown(() => checkAskEnvelope(ctx, { chainId: 8453, wallet: { address }, operationKey: ctx.hashes.operationKey }));
    expect(e).toBeInstanceOf(RefusedError);
    expect((e as RefusedError).details).toMatchObject({ rule: 'wrong_wallet' });
  });

  it.each(MALFORMED)('an x402 authorization from (and to) %j, the same in both copies: refused', (value) => {
    const message = { from: value, to: value, value: '1', validAfter: '0', validBefore: '1', nonce: `0x${'11'.repeat(32)}` };
    const request = {
      x402AuthorizationRequest: {
        authorization: { ...message },
        eip712: {
          domain: { chainId: 8453, name: 'USD Coin', verifyingContract: ctx.chain.tokens.USDC.address, version: '2' },
          primaryType: 'ReceiveWithAuthorization',
          types: {
            ReceiveWithAuthorization: [
              ['from', 'address'],
              ['to', 'address'],
              ['value', 'uint256'],
              ['validAfter', 'uint256'],
              ['validBefore', 'uint256'],
              ['nonce', 'bytes32'],
            ].map(([name, type]) => ({ name, type })),
          },
          message,
        },
      },
    };
    const e = thrown(() => checkX402Request(ctx, request, 1_800_000_000));
    expect(e).toBeInstanceOf(RefusedError);
    expect((e as RefusedError).code).toBe('plan_refused');
  });

  it.each(MALFORMED)('a signer key that is not --from %j: signer_address_mismatch', (from) => {
    const { publicKey } = privateKeyToAccount(TEST_PRIVATE_KEY as Hex);
    const e = thrown(() => checkKeyAddress(publicKey, from as Hex, 'the key'));
    expect(e).toBeInstanceOf(CredentialError);
    expect((e as CredentialError).code).toBe('signer_address_mismatch');
  });
});
