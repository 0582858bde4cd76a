// Block 0 as the node answers it is what tells chain instances apart (src/store/chain-identity.ts). A node that answers
// block 0 without a hash (viem formats a missing hash as null, as for a pending block) made genesisHash throw a
// TypeError: internal_error, exit 1, "loopsign hit a bug", for a node's bad answer (helper-37). It is rpc_bad_answer.
import { describe, expect, it } from 'vitest';
import type { PublicClient } from 'viem';
import { genesisHash } from '../src/store/chain-identity.js';
import { ChainError, exitCodeOf } from '../src/errors.js';

const node = (block: unknown) => ({ getBlock: async () => block }) as unknown as PublicClient;

describe('block 0 as the node answers it', () => {
  it.each([[{ hash: null }], [{ hash: 'not a hash' }], [{ hash: `0x${'ab'.repeat(31)}` }]])(
    'without a well-formed hash (%j): rpc_bad_answer, exit 4',
    async (block) => {
      const error = await genesisHash(node(block)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChainError);
      expect(error).toMatchObject({ code: 'rpc_bad_answer' });
      expect(exitCodeOf(error)).toBe(4);
    },
  );

  it('with one: its hash, lower case', async () => {
    expect(await genesisHash(node({ hash: `0x${'AB'.repeat(32)}` }))).toBe(`0x${'ab'.repeat(32)}`);
  });
});
