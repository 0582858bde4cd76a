// The --signer grammar and the choice of source (pure functions): every mistake is one usage error (exit 2) naming
// the flag, variable or config key; two sources at once are refused, never resolved by a silent priority.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { parseFrom, parseSignerSpec, resolveSigner } from '../src/wallet/signers/spec.js';
import { describeSource } from '../src/wallet/signers/types.js';

const FROM = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const GCP = 'projects/my-project/locations/europe-west1/keyRings/loopsign/cryptoKeys/signer/cryptoKeyVersions/3';

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    return error as UsageError;
  }
  throw new Error('expected a usage error');
}

describe('parseSignerSpec', () => {
  it.each([
    ['keystore', { kind: 'keystore' }],
    ['aws:1234abcd-12ab-34cd-56ef-1234567890ab', { kind: 'aws', keyId: '1234abcd-12ab-34cd-56ef-1234567890ab' }],
    [
      'aws:arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      { kind: 'aws', keyId: 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
    ],
    ['aws:alias/loopsign', { kind: 'aws', keyId: 'alias/loopsign' }],
    [`gcp:${GCP}`, { kind: 'gcp', keyVersion: GCP }],
    ['ledger', { kind: 'ledger', path: "m/44'/60'/0'/0/0" }],
    ["ledger:m/44'/60'/2'/0/0", { kind: 'ledger', path: "m/44'/60'/2'/0/0" }],
    ['ledger:44h/60h/0h/0/7', { kind: 'ledger', path: "m/44'/60'/0'/0/7" }],
    ['LEDGER', { kind: 'ledger', path: "m/44'/60'/0'/0/0" }],
  ])('%s', (spec, expected) => {
    expect(parseSignerSpec(spec)).toEqual(expected);
  });

  it('keeps an RPC URL out of everything printable', () => {
    const source = parseSignerSpec('rpc:https://user:pa55word-secret@signer.example:9000/api/key123456?token=abcdefgh');
    expect(source).toMatchObject({ kind: 'rpc', endpoint: 'https://signer.example:9000/…' });
    expect((source as { url: string }).url).toBe('https://user:pa55word-secret@signer.example:9000/api/key123456?token=abcdefgh');
    expect(JSON.stringify(source)).not.toMatch(/pa55word|key123456|abcdefgh/);
    expect(describeSource(source)).toBe('rpc:https://signer.example:9000/…');
    expect(parseSignerSpec('rpc:http://127.0.0.1:8550')).toMatchObject({ kind: 'rpc', endpoint: 'http://127.0.0.1:8550' });
  });

  it.each([
    ['', /--signer is empty/],
    ['trezor', /unknown signer "trezor"/],
    ['aws:', /"aws:" needs a KMS key id/],
    ['aws:not a key', /is not an AWS KMS key id/],
    ['gcp:projects/p/keys/k', /is not a Cloud KMS key version name/],
    ['rpc:not-a-url', /is not a URL/],
    ['rpc:ftp://example.com', /must use https/],
    ['ledger:m/44/60/0', /not an Ethereum derivation path/],
    ["ledger:m/44'/0'/0'/0/0", /not an Ethereum derivation path/],
    ['keystore:/tmp/k.json', /takes no argument/],
  ])('refuses %j', (spec, message) => {
    expect(usage(() => parseSignerSpec(spec)).message).toMatch(message);
  });

  it("refuses plain http to a remote signer, without showing the URL's secrets", () => {
    const error = usage(() => parseSignerSpec('rpc:http://user:hunter2-secret@signer.example/path-token-123'));
    expect(error.code).toBe('insecure_signer_url');
    expect(error.message).not.toMatch(/hunter2|path-token/);
  });

  it('names where a bad value came from', () => {
    expect(usage(() => resolveSigner({ flags: {}, env: { LOOPSIGN_SIGNER: 'hsm:1' }, file: {} })).message).toMatch(
      /^LOOPSIGN_SIGNER: unknown signer/,
    );
    expect(usage(() => resolveSigner({ flags: {}, env: {}, file: { signer: 'hsm:1' } })).message).toMatch(
      /^config "signer": unknown signer/,
    );
    expect(usage(() => parseFrom('0x1234')).message).toMatch(/^--from: "0x1234" is not a 0x-prefixed 20-byte address/);
    expect(usage(() => resolveSigner({ flags: {}, env: { LOOPSIGN_FROM: 'me' }, file: {} })).message).toMatch(/^LOOPSIGN_FROM:/);
  });
});

describe('resolveSigner', () => {
  it('defaults to the keystore, as today', () => {
    expect(resolveSigner({ flags: {}, env: {}, file: {} })).toEqual({ source: { kind: 'keystore' }, origin: 'default' });
    expect(resolveSigner({ flags: { keystore: '/k.json' }, env: {}, file: {} })).toEqual({ source: { kind: 'keystore' }, origin: 'flag' });
    expect(resolveSigner({ flags: {}, env: { LOOPSIGN_PRIVATE_KEY: '0x01' }, file: { keystore: '~/k.json' } })).toEqual({
      source: { kind: 'env' },
      origin: 'env',
    });
  });

  it('takes the signer and --from from flags, then the environment, then the config file', () => {
    expect(resolveSigner({ flags: { signer: 'ledger', from: FROM }, env: { LOOPSIGN_SIGNER: 'aws:alias/x' }, file: {} })).toMatchObject({
      source: { kind: 'ledger' },
      from: FROM,
      origin: 'flag',
      fromOrigin: 'flag',
    });
    expect(
      resolveSigner({ flags: {}, env: { LOOPSIGN_SIGNER: 'aws:alias/x', LOOPSIGN_FROM: FROM }, file: { signer: 'ledger' } }),
    ).toMatchObject({ source: { kind: 'aws' }, origin: 'env', fromOrigin: 'env' });
    expect(resolveSigner({ flags: {}, env: {}, file: { signer: `gcp:${GCP}`, from: FROM } })).toMatchObject({
      source: { kind: 'gcp' },
      origin: 'config',
      fromOrigin: 'config',
    });
    expect(resolveSigner({ flags: { from: FROM }, env: {}, file: {} })).toMatchObject({ source: { kind: 'keystore' }, from: FROM });
  });

  it('requires --from for every external signer', () => {
    for (const signer of ['aws:alias/x', `gcp:${GCP}`, 'rpc:http://127.0.0.1:8550', 'ledger']) {
      const error = usage(() => resolveSigner({ flags: { signer }, env: {}, file: {} }));
      expect(error.code).toBe('from_required');
      expect(error.message).toMatch(/needs --from ADDRESS/);
    }
  });

  it('refuses two sources at once', () => {
    const conflicts: Array<Parameters<typeof resolveSigner>[0]> = [
      { flags: { signer: 'ledger', from: FROM, keystore: '/k.json' }, env: {}, file: {} },
      { flags: { signer: 'ledger', from: FROM }, env: { LOOPSIGN_PRIVATE_KEY: '0x01' }, file: {} },
      { flags: {}, env: { LOOPSIGN_SIGNER: 'aws:alias/x', LOOPSIGN_FROM: FROM, LOOPSIGN_KEYSTORE: '/k.json' }, file: {} },
      { flags: {}, env: {}, file: { signer: 'aws:alias/x', from: FROM, keystore: '/k.json' } },
      { flags: { keystore: '/k.json' }, env: {}, file: { signer: 'aws:alias/x', from: FROM } },
      { flags: {}, env: { LOOPSIGN_PRIVATE_KEY: '0x01' }, file: { signer: 'ledger', from: FROM } },
      { flags: { signer: 'keystore' }, env: { LOOPSIGN_PRIVATE_KEY: '0x01' }, file: {} },
      { flags: { keystore: '/k.json' }, env: { LOOPSIGN_PRIVATE_KEY: '0x01' }, file: {} },
    ];
    for (const input of conflicts) {
      const error = usage(() => resolveSigner(input));
      expect(error.code, JSON.stringify(input)).toBe('signer_conflict');
      expect(error.message).toMatch(/name two different signers/);
    }
    // A keystore named below the signer's level is only a location, not a second source.
    expect(
      resolveSigner({ flags: { signer: 'ledger', from: FROM }, env: { LOOPSIGN_KEYSTORE: '/k.json' }, file: { keystore: '/other.json' } })
        .source.kind,
    ).toBe('ledger');
    expect(resolveSigner({ flags: { signer: 'keystore', keystore: '/k.json' }, env: {}, file: {} }).source.kind).toBe('keystore');
  });

  it("names the sources in a conflict without an RPC URL's secrets", () => {
    const error = usage(() =>
      resolveSigner({
        flags: { signer: 'rpc:https://u:topsecret-pw@signer.example/k', from: FROM },
        env: { LOOPSIGN_PRIVATE_KEY: '0x01' },
        file: {},
      }),
    );
    expect(error.message).toBe(
      '--signer rpc:https://signer.example/… and LOOPSIGN_PRIVATE_KEY name two different signers; loopsign will not pick one for you',
    );
  });
});
