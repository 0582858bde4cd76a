// Service text printed by loopsign (issue 11 §7): escape sequences and control characters never reach a terminal,
// and only snake_case service words reach error codes and hints.
import { describe, expect, it } from 'vitest';
import { printable, serviceWord } from '../src/output.js';

describe('printable', () => {
  it.each([
    ['CSI colour and cursor moves', 'paid\u001b[1A\u001b[2K\r\u001b[32mok\u001b[0m', 'paid ok'],
    ['an OSC hyperlink / title', '\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007', 'click'],
    ['an OSC ended by ST', '\u001b]0;title\u001b\\text', 'text'],
    ['C1 CSI and a bell', 'a\u009b31mb\u0007c', 'a 31mb c'],
    ['plain text', 'Payment failed: retry later.', 'Payment failed: retry later.'],
  ])('%s', (_label, input, want) => {
    const out = printable(input);
    expect(out).toBe(want);
    expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

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
    expect(checkedOpportunityId('opp_0123456789abcdef01234567')).toBe('opp_0123456789abcdef01234567');
    expect(checkedOpportunityId(undefined)).toBeNull();
    for (const bad of ['opp_1; loopsign wallet export --out /tmp/k.json', 'opp_1$(id)', 'opp_1\u001b[2K', 'op', 42]) {
      expect(() => checkedOpportunityId(bad)).toThrow(/opportunityId/);
    }
  });
});
