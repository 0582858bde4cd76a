import type { LocalAccount } from 'viem';

/** What a source's opener returns: its own account (not yet guarded) and how to release it. */
export interface OpenedSigner {
  account: LocalAccount;
  close(): Promise<void>;
}
