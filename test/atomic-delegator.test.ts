// `--atomic` with a signer that cannot sign an EIP-7702 authorization (a JSON-RPC signer) is refused before the service
// is asked, unless the wallet already runs a delegate that needs none: the chain's pinned batch delegate, or (issue 38)
// its pinned budget DeleGator, which an owner's `budget grant` put there. Any other delegate is still refused. The
// wallet's code is set on a real anvil; the chain's anchors are a sandbox manifest's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { refuseDelegationIfUnsupported } from '../src/ask/prepare.js';
import type { Context } from '../src/context.js';
import type { Wallet } from '../src/wallet/signers/types.js';
import { CHAIN_ID, DELEGATE, DELEGATOR, OTHER_DELEGATE, expectExit, startChain, type Chain } from './helpers/signers.js';

const FROM: Hex = '0x00000000000000000000000000000000000a11ce';
const ZERO: Hex = '0x0000000000000000000000000000000000000001';

let chain: Chain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(async () => {
  await chain?.stop();
});

const wallet = {
  address: FROM,
  source: { kind: 'rpc', url: 'http://127.0.0.1:9' },
  capabilities: { transaction: true, typedData: true, message: true, authorization: false, authorizationReason: 'no method' },
} as unknown as Wallet;

function ctx(): Context {
  const contracts = {
    delegationManager: ZERO,
    deleGator: DELEGATOR,
    erc20PeriodTransferEnforcer: ZERO,
    multiTokenPeriodEnforcer: ZERO,
    allowedCalldataEnforcer: ZERO,
    timestampEnforcer: ZERO,
    nonceEnforcer: ZERO,
  };
  const settings = { chain: { chainId: CHAIN_ID, batchDelegate: DELEGATE }, manifest: { delegation: { contracts, codeHashes: {} } } };
  return { chain: async () => ({ settings, client: chain.pub }) } as unknown as Context;
}

const runs = async (delegate: Hex) => {
  await chain.pub.request({ method: 'anvil_setCode' as never, params: [FROM, `0xef0100${delegate.slice(2)}`] as never });
  return refuseDelegationIfUnsupported(wallet, ctx());
};

describe('--atomic with a signer that cannot delegate', () => {
  it("goes ahead when the wallet runs the chain's pinned batch delegate or its pinned budget DeleGator", async () => {
    await expect(runs(DELEGATE)).resolves.toBeUndefined();
    await expect(runs(DELEGATOR)).resolves.toBeUndefined();
  });

  it('is refused (exit 5) when the wallet runs any other delegate', async () => {
    await expectExit(runs(OTHER_DELEGATE), 5, 'signer_cannot_delegate');
  });
});
