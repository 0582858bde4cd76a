// The legacy (en-US localeCompare) key order is computed without Intl.Collator for keys of letters and digits:
// it must agree with the collator on every pair, or legacy digests (evidence packets, audit chains) would change.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, legacyCompare } from '../src/protocol/canonical.js';
import { assertProperty } from './helpers/property.js';

const collator = new Intl.Collator('en-US');
const ALNUM = [...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'];

describe('the legacy key order without a collator', () => {
  it('agrees with Intl.Collator("en-US") on every pair of letters and digits, and of two-character keys', () => {
    const keys = ['', ...ALNUM, ...ALNUM.flatMap((a) => ['a', 'A', 'z', '0', 'Z'].map((b) => a + b)), ...ALNUM.map((a) => `x${a}`)];
    for (const a of keys) for (const b of keys) expect(Math.sign(legacyCompare(a, b)), `${a} ${b}`).toBe(Math.sign(collator.compare(a, b)));
  });

  it('agrees on random keys that differ in case, length and digits', () => {
    const key = fc.array(fc.constantFrom(...ALNUM, 'a', 'A', 'e', 'E'), { maxLength: 12 }).map((cs) => cs.join(''));
    assertProperty(
      fc.property(key, key, (a, b) => Math.sign(legacyCompare(a, b)) === Math.sign(collator.compare(a, b))),
      { numRuns: 20_000 },
    );
    // camelCase keys that differ only in case, as evidence payloads have them.
    for (const [a, b] of [
      ['eventId', 'eventID'],
      ['actorKind', 'actorkind'],
      ['targetId', 'targetID'],
      ['Amount', 'amount'],
      ['a1', 'A1'],
      ['ab', 'Aa'],
    ]) {
      expect(Math.sign(legacyCompare(a!, b!))).toBe(Math.sign(collator.compare(a!, b!)));
    }
  });

  it('leaves any other key to the collator', () => {
    for (const [a, b] of [
      ['_a', 'a'],
      ['é', 'f'],
      ['a-b', 'ab'],
      ['a b', 'ab'],
      ['Ä', 'a'],
      ['', '_'],
    ]) {
      expect(Math.sign(legacyCompare(a!, b!)), `${a} ${b}`).toBe(Math.sign(collator.compare(a!, b!)));
    }
    const doc = { b: 1, _x: 2, A: 3, é: 4, a: { Z: 1, z: 2 } };
    expect(canonicalJson(doc, 'locale-en-US')).toBe(
      `{${Object.keys(doc)
        .sort(collator.compare)
        .map((k) => `${JSON.stringify(k)}:${k === 'a' ? '{"z":2,"Z":1}' : JSON.stringify((doc as any)[k])}`)
        .join(',')}}`,
    );
  });
});
