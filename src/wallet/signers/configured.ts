// The configured signer, as the Context opens it: the source resolved with the rest of the configuration, on the
// configured chain, allowed to delegate only to that chain's pinned batch delegate and its pinned budget DeleGator.
import type { ResolvedConfig } from '../../config.js';
import type { ResolvedChain } from '../../chains/index.js';
import type { Output } from '../../output.js';
import type { Env } from '../../env.js';
import { addressOfPrivateKey, claimedAddress, parsePrivateKey } from '../keystore.js';
import { readKeystoreFile, unlockWallet } from '../unlock.js';
import type { Address, Wallet } from './types.js';
import type { ResolvedSigner } from './spec.js';

export async function openConfiguredWallet(
  config: ResolvedConfig,
  chain: ResolvedChain,
  out: Output,
  env: Env,
  signer: ResolvedSigner = config.signer,
): Promise<Wallet> {
  // Loaded here, not at the top: open.js brings viem and every signer's wrapper, which `wallet address` and the
  // lookups that only need the address (configuredAddress) never use.
  const { openWallet } = await import('./open.js');
  // Only an external signer is guarded (the keystore signs what loopsign asks): its DeleGator is that of the configured
  // chain's own trust anchors, never an address from anywhere else.
  const external = signer.source.kind !== 'keystore' && signer.source.kind !== 'env';
  const deleGator = external ? await pinnedDeleGator(chain) : undefined;
  return openWallet(signer, {
    config,
    out,
    env,
    chainId: chain.chain.chainId,
    ...(chain.chain.batchDelegate ? { delegate: chain.chain.batchDelegate as Address } : {}),
    ...(deleGator ? { deleGator } : {}),
  });
}

/** The configured chain's pinned DeleGator (Base, Base Sepolia, a sandbox that deployed one), if it has one. */
async function pinnedDeleGator(chain: ResolvedChain): Promise<Address | undefined> {
  const { delegationAnchors, hasDelegationAnchors } = await import('../../chains/delegation.js');
  if (!hasDelegationAnchors(chain.chain.chainId, chain.manifest)) return undefined;
  return delegationAnchors(chain.chain.chainId, chain.manifest).contracts.deleGator;
}

/** The signer's address without unlocking or opening anything when it can be known so (a lookup needs no key). */
export async function configuredAddress(
  config: ResolvedConfig,
  out: Output,
  env: Env,
  signer: ResolvedSigner = config.signer,
): Promise<Address> {
  const { source, from } = signer;
  if (from) return from;
  if (source.kind === 'env') {
    out.warn('using the raw private key from LOOPSIGN_PRIVATE_KEY; keep this for throwaway CI wallets only');
    return addressOfPrivateKey(parsePrivateKey(env.LOOPSIGN_PRIVATE_KEY ?? '')) as Address;
  }
  return (claimedAddress(await readKeystoreFile(config.keystore.value)) ?? (await unlockWallet(config, out, env)).address) as Address;
}
