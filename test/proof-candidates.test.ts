// Which transactions loopsign reads to prove a submission (src/ask/proof.ts): its own journaled ones first, then the
// well-formed hashes the service named, at most as many as the service's own confirm accepts.
import { describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { candidateTransactions } from '../src/ask/proof.js';
import type { Operation } from '../src/store/operation.js';
import type { TxRecord } from '../src/store/records.js';

const hash = (i: number) => `0x${i.toString(16).padStart(64, '0')}` as Hex;
const journalOf = (txs: Pick<TxRecord, 'hash' | 'status'>[]) => ({ txsFor: () => txs }) as unknown as Operation<'ask'>;

describe('the candidates for a submission proof', () => {
  it('the journal’s live transactions, then the service’s well-formed hashes without repeats', () => {
    const journal = journalOf([
      { hash: hash(1), status: 'mined' },
      { hash: hash(2), status: 'dropped' },
    ]);
    expect(candidateTransactions(journal, [hash(3), 'nonsense', 7, hash(1).toUpperCase().replace('0X', '0x'), hash(3)])).toEqual([
      hash(1),
      hash(3),
    ]);
    expect(candidateTransactions(journal, { not: 'an array' })).toEqual([hash(1)]);
  });

  it('at most 32 hashes the service names (what its confirm accepts): a service naming thousands costs no more reads', () => {
    const named = Array.from({ length: 10_000 }, (_, i) => hash(100 + i));
    const candidates = candidateTransactions(journalOf([{ hash: hash(1), status: 'signed' }]), named);
    expect(candidates).toEqual([hash(1), ...named.slice(0, 32)]);
  });
});
