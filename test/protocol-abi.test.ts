// Every selector and event topic in the shared vectors, from loopsign's ABI layer.
import { describe, expect, it } from 'vitest';
import { toFunctionSelector, toEventSelector, parseAbiItem } from 'viem';
import { readVector } from './helpers/cli.js';
import * as abi from '../src/protocol/abi.js';
import { TAGS } from '../src/protocol/ask-hashes.js';

const v = readVector('selectors-domains-commit.json');

describe('selectors, topics and domain tags', () => {
  it.each(v.selectors as string[])('%s', (line) => {
    const m = /^\w+: (0x[0-9a-f]{8}) function (.*)$/.exec(line)!;
    expect(toFunctionSelector(m[2]!.replace(/ (pure|view)\b/, ' $1'))).toBe(m[1]);
  });

  it.each(v.events as string[])('%s', (line) => {
    const m = /^\w+: (0x[0-9a-f]{64}) event (.*)$/.exec(line)!;
    expect(toEventSelector(m[2]!)).toBe(m[1]);
  });

  it('loopsign ABIs carry exactly the vector selectors', () => {
    const selectors = new Set((v.selectors as string[]).map((l) => l.split(' ')[1]));
    const mine = [
      ...abi.contentRegistryAbi,
      ...abi.x402SubmitterAbi,
      ...abi.x402LegacyAbi,
      ...abi.feedbackBonusEscrowAbi,
      ...abi.votingEngineAbi,
      ...abi.advisoryRecorderAbi,
      ...abi.protocolConfigAbi,
    ]
      .filter((x) => x.type === 'function')
      .map((f) => toFunctionSelector(f as never));
    for (const s of [
      '0xd6e08b7e',
      '0x1be1bfa0',
      '0xe2f3b89f',
      '0x20fab602',
      '0xec7b44ac',
      '0x2dddea2d',
      '0x1b651e4f',
      '0xf09e94a1',
      '0x5714f732',
      '0xbcda1996',
      '0x7263308f',
      '0xbde22ae0',
      '0xb83ab25c',
    ]) {
      expect(selectors.has(s)).toBe(true);
      expect(mine).toContain(s);
    }
    expect(toFunctionSelector(parseAbiItem('function execute(bytes32 mode, bytes executionData)'))).toBe('0xe9ae5c53');
    expect(toFunctionSelector(parseAbiItem('function supportsExecutionMode(bytes32 mode)'))).toBe('0xd03c7914');
  });

  it('domain tags', () => {
    const d = v.domains;
    expect(TAGS.context).toBe(d['rateloop-question-context-v5']);
    expect(TAGS.reveal).toBe(d['rateloop-question-reveal-v9']);
    expect(TAGS.bundleItem).toBe(d['rateloop-question-bundle-item-v5']);
    expect(TAGS.bundle).toBe(d['rateloop-question-bundle-v5']);
    expect(TAGS.bundleReveal).toBe(d['rateloop-question-bundle-reveal-v7']);
    expect(TAGS.x402).toBe(d['rateloop-x402-question-payment-v4']);
    expect(TAGS.x402OneShot).toBe(d['rateloop-x402-question-one-shot-payment-v7']);
  });
});
