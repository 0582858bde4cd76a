// The wallet factory: one call from a resolved signer (spec.ts) to a Wallet. The keystore unlocks as today; an
// external source is opened in the background (its SDK loaded lazily, its key or accounts checked against --from)
// and its account is wrapped by the verifying guard. Nothing here signs.
import type { LocalAccount } from 'viem';
import type { ResolvedConfig } from '../../config.js';
import type { Output } from '../../output.js';
import type { Env } from '../../env.js';
import { guardAccount } from './guard.js';
import { openKeystoreWallet } from './keystore-wallet.js';
import { ledgerAuthorizationCapability } from './ledger-whitelist.js';
import { RPC_NO_AUTHORIZATION } from './rpc-signer.js';
import type { ResolvedSigner } from './spec.js';
import { describeSource, type Address, type ProgressSink, type SignerCapabilities, type SignerSource, type Wallet } from './types.js';
import type { OpenedSigner } from './opened.js';
import type { AwsKmsOptions } from './aws-kms.js';
import type { GcpKmsOptions } from './gcp-kms.js';
import type { LedgerOptions } from './ledger.js';

export interface OpenWalletOptions {
  /** The keystore path, password source and KDF floor (keystore and env sources only). */
  config: ResolvedConfig;
  /** Warnings (keystore), and device prompts when no `progress` sink is given. */
  out: Output;
  /** The run's environment: LOOPSIGN_PRIVATE_KEY and the password's variable (keystore and env sources only). */
  env: Env;
  /** The configured chain: signatures for another chain are refused. */
  chainId: number;
  /** The chain's pinned batch delegate (chain.batchDelegate): an authorization may name it, or the pinned DeleGator. */
  delegate?: Address;
  /** The chain's pinned budget DeleGator (its trust anchors, src/chains/delegation.ts): an owner's grant delegates to it. */
  deleGator?: Address;
  /** Device prompts and waits; defaults to out.progress. */
  progress?: ProgressSink;
  /** Per-source client settings: tests point them at loopback fakes; production passes none. */
  aws?: AwsKmsOptions;
  gcp?: GcpKmsOptions;
  rpc?: { timeoutMs?: number };
  ledger?: LedgerOptions;
}

/** What a source can sign on this chain, known before anything is opened. */
export function capabilitiesOf(source: SignerSource, delegate: Address | undefined): SignerCapabilities {
  const all = { transaction: true, typedData: true, message: true };
  switch (source.kind) {
    case 'rpc':
      return { ...all, authorization: false, authorizationReason: RPC_NO_AUTHORIZATION };
    case 'ledger':
      return { ...all, ...ledgerAuthorizationCapability(delegate) };
    default:
      return { ...all, authorization: true };
  }
}

export async function openWallet(resolved: ResolvedSigner, options: OpenWalletOptions): Promise<Wallet> {
  const { source } = resolved;
  if (source.kind === 'keystore' || source.kind === 'env')
    return openKeystoreWallet(options.config, options.out, options.env, source, resolved.from);
  const from = resolved.from!;
  const label = describeSource(source);
  const progress: ProgressSink = options.progress ?? ((p) => options.out.progress(p.event, p.message));
  const capabilities = capabilitiesOf(source, options.delegate);

  const opening: Promise<OpenedSigner> = (async () => {
    switch (source.kind) {
      case 'aws':
        return (await import('./aws-kms.js')).openAwsKms(source.keyId, from, label, options.aws);
      case 'gcp':
        return (await import('./gcp-kms.js')).openGcpKms(source.keyVersion, from, label, options.gcp);
      case 'rpc':
        return (await import('./rpc-signer.js')).openRpcSigner(source.url, from, label, options.rpc);
      case 'ledger':
        return (await import('./ledger.js')).openLedger(source.path, from, label, {
          ...options.ledger,
          progress,
          chainId: options.chainId,
          authorization: capabilities.authorization,
        });
    }
  })();
  opening.catch(() => undefined); // awaited through `account`; an unreachable signer must not be an unhandled rejection meanwhile
  const account: Promise<LocalAccount> = opening.then((opened) =>
    guardAccount(opened.account, {
      from,
      label,
      chainId: options.chainId,
      ...(options.delegate ? { delegate: options.delegate } : {}),
      ...(options.deleGator ? { deleGator: options.deleGator } : {}),
      ...(capabilities.authorizationReason ? { noAuthorizationReason: capabilities.authorizationReason } : {}),
    }),
  );
  account.catch(() => undefined);
  let closed = false;
  return {
    address: from,
    source,
    account,
    capabilities,
    close: async () => {
      if (closed) return;
      closed = true;
      const opened = await opening.catch(() => undefined);
      await opened?.close();
    },
  };
}
