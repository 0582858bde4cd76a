// The DER a cloud KMS returns, read by digestAccount as a hostile KMS could write it. Only the strict DER encoding of
// a signature by the key is used (either half of s); every other encoding of that same signature (BER lengths,
// padding, sign errors, trailing bytes), and r or s out of range, is refused with exit 5 before anything is returned.
// A lax reader would not be a forgery (the signature must still recover to --from) but would make what loopsign
// accepts depend on the DER library's version: these cases pinned @noble/curves 1.9.1 against 2.4.
import { describe, expect, it } from 'vitest';
import { hashMessage, keccak256, serializeSignature, toHex, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { RefusedError } from '../src/errors.js';
import { digestAccount } from '../src/wallet/signers/digest-account.js';
import { SECP256K1_N } from '../src/wallet/signers/signature.js';
import { expectExit } from './helpers/signers.js';

const KEY = keccak256(toHex('loopsign digest account test key'));
const OTHER_KEY = keccak256(toHex('loopsign digest account other key'));
const FROM = privateKeyToAccount(KEY).address;

const bytesOf = (n: bigint): number[] => {
  const hex = n.toString(16);
  return [...Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')];
};
/** The minimal two's-complement content of a positive INTEGER. */
const intContent = (n: bigint): number[] => {
  const b = n === 0n ? [0] : bytesOf(n);
  return b[0]! & 0x80 ? [0, ...b] : b;
};
const tlv = (tag: number, content: number[]): number[] => [tag, content.length, ...content];
const der = (r: number[], s: number[], extra: number[] = []): number[] => tlv(0x30, [...tlv(2, r), ...tlv(2, s), ...extra]);

/** A message whose signature by KEY has r with its top bit set (so its DER carries a sign-padding zero). */
async function fixture() {
  for (let i = 0; ; i++) {
    const message = `digest account ${i}`;
    const hash = hashMessage(message);
    const sig = await sign({ hash, privateKey: KEY });
    const r = BigInt(sig.r);
    const s = BigInt(sig.s);
    if (r >> 255n === 1n && s >> 248n !== 0n) return { message, hash, r, s, expected: serializeSignature(sig) };
  }
}

/** A wallet over a KMS that answers every Sign with `answer`; records the digests it was given. */
function kms(answer: number[] | Uint8Array) {
  const digests: Hex[] = [];
  const account = digestAccount({
    address: FROM,
    publicKey: privateKeyToAccount(KEY).publicKey,
    label: 'test KMS',
    signDigest: async (digest) => {
      digests.push(toHex(digest));
      return new Uint8Array(answer);
    },
  });
  return { account, digests };
}

describe('digestAccount reading a KMS signature', async () => {
  const { message, hash, r, s, expected } = await fixture();
  const R = intContent(r);
  const S = intContent(s);
  const highS = intContent(SECP256K1_N - s);

  it('takes the strict DER of the signature, either half of s, as the one low-s signature', async () => {
    for (const answer of [der(R, S), der(R, highS)]) {
      const { account, digests } = kms(answer);
      expect(await account.signMessage({ message })).toBe(expected);
      expect(digests).toEqual([hash]);
    }
  });

  const sequence = der(R, S);
  const refused: [string, number[]][] = [
    ['an unneeded leading zero on r', der([0, ...R], S)],
    ['an unneeded leading zero on s', der(R, [0, ...S])],
    ['r without its sign-padding zero (negative)', der(R.slice(1), S)],
    ['s negated by a 0xff byte', der(R, [0xff, ...S])],
    ['r as 0', der([0], S)],
    ['s as 0', der(R, [0])],
    ['an empty r', der([], S)],
    ['r = n', der(intContent(SECP256K1_N), S)],
    ['s = n', der(R, intContent(SECP256K1_N))],
    ['s + n', der(R, intContent(s + SECP256K1_N))],
    ['r = 2^256 - 1', der(intContent(2n ** 256n - 1n), S)],
    ['a byte after the SEQUENCE', [...sequence, 0]],
    ['a third INTEGER in the SEQUENCE', der(R, S, tlv(2, [1]))],
    ['a byte after s inside the SEQUENCE', der(R, S, [0])],
    ['a SEQUENCE length one too long', [0x30, sequence[1]! + 1, ...sequence.slice(2)]],
    ['a SEQUENCE length one too short', [0x30, sequence[1]! - 1, ...sequence.slice(2)]],
    ["r's length one too long", [0x30, sequence[1]!, 2, R.length + 1, ...sequence.slice(4)]],
    ['a BER long-form SEQUENCE length', [0x30, 0x81, sequence[1]!, ...sequence.slice(2)]],
    ['a long form with a zero length byte', [0x30, 0x82, 0, sequence[1]!, ...sequence.slice(2)]],
    ['a long-form INTEGER length', [0x30, sequence[1]! + 1, 2, 0x81, R.length, ...sequence.slice(4)]],
    ['an indefinite length', [0x30, 0x80, ...sequence.slice(2), 0, 0]],
    ['a SET, not a SEQUENCE', [0x31, ...sequence.slice(1)]],
    ['a BIT STRING for r', [0x30, sequence[1]!, 3, ...sequence.slice(3)]],
    ['the compact r ‖ s', [...Buffer.from(expected.slice(2, 130), 'hex')]],
    ['r ‖ s ‖ v', [...Buffer.from(expected.slice(2), 'hex')]],
    ['nothing', []],
    ['the SEQUENCE cut short', sequence.slice(0, -1)],
  ];
  it.each(refused)('refuses (exit 5) %s', async (_name, answer) => {
    const error = await expectExit(kms(answer).account.signMessage({ message }), 5, 'signature_unreadable');
    expect(error).toBeInstanceOf(RefusedError);
  });

  it('refuses (exit 5) strict DER that does not recover to --from: s off by one, another key', async () => {
    const other = await sign({ hash, privateKey: OTHER_KEY });
    for (const answer of [der(R, intContent(s + 1n)), der(intContent(BigInt(other.r)), intContent(BigInt(other.s)))]) {
      await expectExit(kms(answer).account.signMessage({ message }), 5, 'signature_not_from_signer');
    }
  });
});
