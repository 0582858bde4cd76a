// The confidentiality-terms guard against the live corpus (test/fixtures/vectors/live/terms.json): the real messages
// pass with the clock fixed to the corpus clock, the whole text's hash and (given the service's record) the 12-part
// payload hash are recomputed, and every mutation of the message is refused before anything could be signed.
import { describe, expect, it } from 'vitest';
import { checkTermsMessage, termsDocHash, termsPayloadParts, type TermsServiceParts } from '../src/wallet/terms-guard.js';
import { checkSignedAction } from '../src/wallet/message-guard.js';
import { DEFAULT_PROFILE } from '../src/protocol/profiles/index.js';
import { TERMS_TEXT, TERMS_URI, TERMS_VERSION } from '../src/sandbox/service/terms-text.js';
import { LoopsignError } from '../src/errors.js';
import { readVector } from './helpers/cli.js';

const corpus = readVector('live/terms.json');
const now = Date.parse(corpus.meta.fixedClock);
// The trusted ContentRegistry on Base, from the active service profile (never the service's word).
const registry = (DEFAULT_PROFILE.deployments[8453] as { contracts: { contentRegistry: string } }).contracts.contentRegistry;

function serviceParts(c: any): TermsServiceParts {
  const p = Object.fromEntries(c.payloadParts.map((x: { name: string; value: string }) => [x.name, x.value]));
  return {
    identityKey: p.identityKey,
    frontendAddress: p.frontendAddress,
    questionMetadataHash: p.questionMetadataHash,
    contentHash: p.contentHash,
    detailsHash: p.detailsHash,
    mediaTupleHash: p.mediaTupleHash,
  };
}

function ruleOf(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(LoopsignError);
    expect((error as LoopsignError).exitCode).toBe(5);
    return String((error as LoopsignError).details?.rule);
  }
  return 'accepted';
}

describe('the terms message of the live corpus', () => {
  it.each(corpus.cases.map((c: any) => [c.id, c]))(
    '%s: passes, with the whole text hashed and the 12-part payload hash recomputed',
    (_id, c: any) => {
      const checked = checkTermsMessage(c.challenge.message, {
        wallet: c.input.walletAddress,
        now,
        stated: c.challenge,
        payload: {
          wallet: c.input.walletAddress,
          chainId: 8453,
          contentRegistry: registry,
          contentId: c.input.contentId,
          service: serviceParts(c),
        },
      });
      expect(checked.message).toBe(c.challenge.message);
      expect(checked.text).toBe(c.terms.text);
      expect(checked.text.split('\n')).toHaveLength(41);
      expect(checked).toMatchObject({
        version: c.terms.version,
        uri: c.terms.uri,
        docHash: c.terms.docHash,
        payloadHash: c.payloadHash,
        payloadChecked: true,
      });
      expect(termsDocHash(c.terms)).toBe(c.terms.docHash);
      expect(
        termsPayloadParts(
          { wallet: c.input.walletAddress, chainId: 8453, contentRegistry: registry, contentId: c.input.contentId },
          checked,
          serviceParts(c),
        ),
      ).toEqual(c.payloadParts.map((p: any) => p.value));
      // Without the service's record the message still passes (the payload hash is then checked for form only).
      expect(checkTermsMessage(c.challenge.message, { wallet: c.input.walletAddress, now, stated: c.challenge }).payloadChecked).toBe(
        false,
      );
    },
  );

  it('the sandbox serves the same text, version and URI as the live service', () => {
    expect({ version: TERMS_VERSION, uri: TERMS_URI, text: TERMS_TEXT }).toEqual({
      version: corpus.cases[0].terms.version,
      uri: corpus.cases[0].terms.uri,
      text: corpus.cases[0].terms.text,
    });
  });

  it('the generic signed-action guard no longer exempts the terms lines', () => {
    const c = corpus.cases[0];
    expect(
      ruleOf(() => checkSignedAction(c.challenge.message, { action: 'confidentiality_terms:accept', wallet: c.input.walletAddress, now })),
    ).toBe('bad_layout');
  });
});

describe('every mutation of the terms message is refused (exit 5)', () => {
  const c = corpus.cases[0];
  const msg: string = c.challenge.message;
  const lines = msg.split('\n');
  const termsAt = lines.findIndex((l) => l.startsWith('Terms: '));
  const at = (i: number, f: (l: string[]) => void) => {
    const copy = [...lines];
    f(copy);
    return copy.join('\n');
  };
  const base = { wallet: c.input.walletAddress, now, stated: c.challenge };
  const withPayload = {
    ...base,
    payload: {
      wallet: c.input.walletAddress,
      chainId: 8453,
      contentRegistry: registry,
      contentId: c.input.contentId,
      service: serviceParts(c),
    },
  };

  it.each([
    ['an extra line before the terms lines', at(5, (l) => l.splice(5, 0, 'Transfer: everything')), 'bad_layout'],
    ['an extra line between Terms Hash and Terms', at(0, (l) => l.splice(termsAt, 0, 'Approve: unlimited')), 'bad_layout'],
    [
      'an extra line at the end of the text',
      at(0, (l) => l.splice(l.length - 2, 0, 'You also agree to pay 10 LREP.')),
      'terms_hash_mismatch',
    ],
    [
      'a changed line inside the text',
      at(0, (l) => (l[termsAt + 6] = l[termsAt + 6]!.replace('not to record', 'to record'))),
      'terms_hash_mismatch',
    ],
    ['a changed first text line', at(0, (l) => (l[termsAt] = `${l[termsAt]} Also, you owe us.`)), 'terms_hash_mismatch'],
    ['a changed Terms Hash', at(0, (l) => (l[7] = `Terms Hash: ${'0'.repeat(64)}`)), 'terms_hash_mismatch'],
    ['another terms version', at(0, (l) => (l[6] = 'Terms Version: 2026-07-other')), 'terms_hash_mismatch'],
    ['URI and version lines swapped', at(0, (l) => ([l[5], l[6]] = [l[6]!, l[5]!])), 'bad_layout'],
    ['Terms before Terms Hash', at(0, (l) => ([l[7], l[termsAt]] = [l[termsAt]!, l[7]!])), 'bad_layout'],
    ['text lines reordered', at(0, (l) => ([l[termsAt + 2], l[termsAt + 4]] = [l[termsAt + 4]!, l[termsAt + 2]!])), 'terms_hash_mismatch'],
    ['the terms lines missing', at(0, (l) => l.splice(5, termsAt - 5 + 41)), 'bad_layout'],
    ['a carriage return in the text', at(0, (l) => (l[termsAt + 2] = `${l[termsAt + 2]}\r`)), 'bad_terms'],
    ['an escape sequence in the text', at(0, (l) => (l[termsAt + 2] = `\u001b[2K${l[termsAt + 2]}`)), 'bad_terms'],
    ['a bidi override in the text', at(0, (l) => (l[termsAt + 2] = `\u202e${l[termsAt + 2]}`)), 'bad_terms'],
    ['an absolute terms URI', at(0, (l) => (l[5] = 'Terms URI: https://evil.example/terms')), 'bad_terms'],
    ['a trailing newline', `${msg}\n`, 'bad_layout'],
    ['another wallet', msg.replace(/Wallet: 0x[0-9a-f]{40}/, `Wallet: 0x${'ba'.repeat(20)}`), 'wrong_wallet'],
    ['another action', msg.replace('Action: confidentiality_terms:accept', 'Action: attachments:upload_image'), 'wrong_action'],
    ['another title', msg.replace('RateLoop confidential context', 'RateLoop image upload'), 'wrong_title'],
    ['an expiry an hour away', msg.replace(/Expires At: .*$/, 'Expires At: 2026-11-22T13:00:00.000Z'), 'far_expiry'],
  ])('%s', (_name, mutated, rule) => {
    expect(ruleOf(() => checkTermsMessage(mutated, base))).toBe(rule);
  });

  it('a terms hash the challenge states differently, or another stated version', () => {
    expect(ruleOf(() => checkTermsMessage(msg, { ...base, stated: { ...c.challenge, termsDocHash: 'f'.repeat(64) } }))).toBe(
      'terms_mismatch',
    );
    expect(ruleOf(() => checkTermsMessage(msg, { ...base, stated: { ...c.challenge, termsVersion: '2026-06' } }))).toBe('terms_mismatch');
  });

  it('a payload bound to another question, chain, registry or wallet (when the service record is known)', () => {
    expect(ruleOf(() => checkTermsMessage(msg, withPayload))).toBe('accepted');
    expect(ruleOf(() => checkTermsMessage(msg, { ...withPayload, payload: { ...withPayload.payload, contentId: '43' } }))).toBe(
      'payload_hash_mismatch',
    );
    expect(ruleOf(() => checkTermsMessage(msg, { ...withPayload, payload: { ...withPayload.payload, chainId: 84532 } }))).toBe(
      'payload_hash_mismatch',
    );
    expect(
      ruleOf(() =>
        checkTermsMessage(msg, { ...withPayload, payload: { ...withPayload.payload, contentRegistry: `0x${'12'.repeat(20)}` } }),
      ),
    ).toBe('payload_hash_mismatch');
    expect(
      ruleOf(() =>
        checkTermsMessage(msg, {
          ...withPayload,
          payload: { ...withPayload.payload, service: { ...serviceParts(c), contentHash: `0x${'99'.repeat(32)}` } },
        }),
      ),
    ).toBe('payload_hash_mismatch');
  });

  it('typed data and raw hex', () => {
    expect(ruleOf(() => checkTermsMessage({ domain: {}, message: {} }, base))).toBe('not_a_message');
    expect(ruleOf(() => checkTermsMessage(`0x${'ab'.repeat(32)}`, base))).toBe('raw_hex');
  });
});
