// The Ledger Ethereum app signs an EIP-7702 authorization only for delegates on its built-in whitelist
// (app-ethereum src/features/sign_authorization_eip7702/whitelist_7702.c). As of app 1.22.0 (master, April 2026)
// the list holds one entry, valid on every chain: Simple7702Account (eth-infinitism). Calibur v1.0.0 was on it
// from June to July 2025 and was removed; a pull request to add it back was open, unmerged, in April 2026. Calibur
// v1.1.0 (0x000000005c84F8Fd50b21CAC312528A64437030e), the batch delegate loopsign pins on Base, was never on it.
// Re-check this list against the app release before changing it: a delegate missing here only means loopsign does
// not ask the device (the app would refuse with 0x6985 anyway).
import type { Address } from './types.js';
import { sameAddress } from '../../hex.js';

export const LEDGER_APP_WHITELIST_VERSION = '1.22.0';
export const LEDGER_7702_WHITELIST: ReadonlyArray<{ name: string; address: Address }> = [
  { name: 'Simple7702Account', address: '0x4Cd241E8d1510e30b2076397afc7508Ae59C66c9' },
];

export function ledgerAuthorizationCapability(delegate: Address | undefined): { authorization: boolean; authorizationReason?: string } {
  if (!delegate) return { authorization: false, authorizationReason: 'no batch delegate is pinned for this chain' };
  if (LEDGER_7702_WHITELIST.some((w) => sameAddress(w.address, delegate))) return { authorization: true };
  return {
    authorization: false,
    authorizationReason: `the Ledger Ethereum app (${LEDGER_APP_WHITELIST_VERSION}) signs EIP-7702 authorizations only for its whitelisted delegates (${LEDGER_7702_WHITELIST.map((w) => w.name).join(', ')}), and this chain's pinned batch delegate ${delegate} is not one of them; ordered plans still work`,
  };
}
