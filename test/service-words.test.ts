// Service words (issue 11 §6): only snake_case service words reach error codes, hints and `next` lines, and an
// opportunity id is printed in a command only in its exact form.
import { describe, expect, it } from 'vitest';
import { serviceWord } from '../src/output.js';

describe('serviceWord', () => {
  it('keeps the documented words and drops free text', () => {
    expect(serviceWord('refresh_and_retry')).toBe('refresh_and_retry');
    expect(serviceWord('run `loopsign wallet export --out /tmp/k.json`')).toBeUndefined();
    expect(serviceWord('retry\u001b[2K')).toBeUndefined();
    expect(serviceWord(42)).toBeUndefined();
  });
});

describe('checkedOpportunityId (printed in `next: loopsign review wait …`)', () => {
  it('accepts the service form and refuses anything a shell would read as more than one word', async () => {
    const { checkedOpportunityId } = await import('../src/generate/generate.js');
    // The live form (review.md §1.2): aop_ + 40 hex.
    const id = `aop_${'0123456789'.repeat(4)}`;
    expect(checkedOpportunityId(id)).toBe(id);
    expect(checkedOpportunityId(undefined)).toBeNull();
    for (const bad of [
      `${id}; loopsign wallet export --out /tmp/k.json`,
      `${id}$(id)`,
      `${id}\u001b[2K`,
      'aop_1',
      'opp_0123456789abcdef01234567',
      42,
    ]) {
      expect(() => checkedOpportunityId(bad)).toThrow(/opportunityId/);
    }
  });
});
