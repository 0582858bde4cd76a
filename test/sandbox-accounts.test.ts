// The sandbox derives anvil's accounts from one seed computed with node's PBKDF2 (src/sandbox/chain.ts): they must be
// the accounts viem's mnemonicToAccount gives for the same mnemonic and indexes, the ones anvil funds at start.
import { mnemonicToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ANVIL_MNEMONIC, SandboxChain } from '../src/sandbox/chain.js';

describe("the sandbox's anvil accounts", () => {
  it('are the mnemonic accounts viem derives: the deployer at index 0, the raters from index 2', () => {
    const chain = new SandboxChain('http://127.0.0.1:9', 10);
    expect(chain.deployer.address).toBe(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 0 }).address);
    // anvil's first account, as its start-up log lists it.
    expect(chain.deployer.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(chain.raters.map((r) => r.address)).toEqual(
      Array.from({ length: 10 }, (_, i) => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i + 2 }).address),
    );
  });
});
