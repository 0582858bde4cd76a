// The one wallet shape every signing flow uses, whatever holds the key: an address known before any signature,
// the parsed source (printable: no secret in it), and a viem LocalAccount that resolves once the signer is ready
// (the keystore: when scrypt is done; an external signer: once it has shown it holds --from).
import type { LocalAccount } from 'viem';

export type Address = `0x${string}`;

/** Where the key lives. Printable as is: an RPC URL's credentials, path and query are never enumerable here. */
export type SignerSource =
  | { kind: 'keystore' }
  | { kind: 'env' }
  | { kind: 'aws'; keyId: string }
  | { kind: 'gcp'; keyVersion: string }
  | { kind: 'rpc'; endpoint: string; readonly url: string }
  | { kind: 'ledger'; path: string };

export type SignerKind = SignerSource['kind'];
export type ExternalSignerKind = Exclude<SignerKind, 'keystore' | 'env'>;

export interface SignerCapabilities {
  transaction: boolean;
  typedData: boolean;
  message: boolean;
  /** EIP-7702 authorization for this chain's pinned batch delegate (needed for a first --atomic plan). */
  authorization: boolean;
  authorizationReason?: string;
}

export interface Wallet {
  /** Known before any signature: the keystore's address field, or --from. */
  address: Address;
  source: SignerSource;
  /** The viem account; every external source's is wrapped by the verifying guard (guard.ts). */
  account: Promise<LocalAccount>;
  capabilities: SignerCapabilities;
  /** Releases what the source holds open (a device session, a client's sockets). Idempotent. */
  close(): Promise<void>;
}

/** A device prompt or a wait, for the CLI's progress line or an MCP progress notification. */
export interface SignerProgress {
  event: string;
  message: string;
}
export type ProgressSink = (progress: SignerProgress) => void;

export function isExternal(source: SignerSource): source is Extract<SignerSource, { kind: ExternalSignerKind }> {
  return source.kind !== 'keystore' && source.kind !== 'env';
}

/** One line naming the source, for output and errors: never a secret. */
export function describeSource(source: SignerSource): string {
  switch (source.kind) {
    case 'keystore':
      return 'keystore';
    case 'env':
      return 'LOOPSIGN_PRIVATE_KEY';
    case 'aws':
      return `aws:${source.keyId}`;
    case 'gcp':
      return `gcp:${source.keyVersion}`;
    case 'rpc':
      return `rpc:${source.endpoint}`;
    case 'ledger':
      return `ledger:${source.path}`;
  }
}
