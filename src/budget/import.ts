// The agent's side of a grant (issue 38): `budget import` accepts a grant file only when it is exactly what loopsign's
// owner side signs, for this wallet, on this chain, against the pinned contracts, signed by its owner, with the owner
// on the pinned DeleGator, not expired and not revoked. Each failure has its own code; nothing is stored on any.
import { isAddressEqual, type Hex, type PublicClient } from 'viem';
import { RefusedError } from '../errors.js';
import type { RefusedCode } from '../error-codes.js';
import type { Address } from '../chains/table.js';
import type { DelegationAnchors } from '../chains/delegation.js';
import { delegationHash, delegationSigner, ROOT_AUTHORITY } from './delegation.js';
import { delegationOf, type GrantFile } from './grant-file.js';
import { decodeGrantCaveats, GrantShapeError, type GrantLimits } from './terms.js';
import { delegatedTo } from './grant.js';
import { readGrantState, type GrantState } from './show.js';

export interface ImportDeps {
  client: PublicClient;
  chainId: number;
  wallet: Address;
  usdc: Address;
  anchors: DelegationAnchors;
}

function refuse(code: RefusedCode, message: string, hint: string): never {
  throw new RefusedError(code, `${message}; the grant was not imported`, { hint });
}

const AGAIN = 'ask the owner to run `loopsign budget grant` again for this address';

export async function checkGrant(d: ImportDeps, file: GrantFile): Promise<{ limits: GrantLimits; state: GrantState }> {
  if (file.chainId !== d.chainId)
    refuse(
      'budget_grant_wrong_chain',
      `the grant is for chain ${file.chainId}, not the configured chain ${d.chainId}`,
      'configure the chain the grant is for',
    );
  const c = d.anchors.contracts;
  if (!isAddressEqual(file.delegationManager as Address, c.delegationManager) || !isAddressEqual(file.deleGator as Address, c.deleGator))
    refuse(
      'budget_grant_unknown_contract',
      `the grant names the DelegationManager ${file.delegationManager} and DeleGator ${file.deleGator}, not the pinned ${c.delegationManager} and ${c.deleGator}`,
      AGAIN,
    );
  const delegation = delegationOf(file);
  if (!isAddressEqual(delegation.delegate, d.wallet) || !isAddressEqual(file.session as Address, d.wallet))
    refuse(
      'budget_grant_wrong_session',
      `the grant is to ${delegation.delegate}, not this wallet ${d.wallet} (an open delegate or another agent's grant)`,
      AGAIN,
    );
  if (!isAddressEqual(delegation.delegator, file.owner as Address) || delegation.authority.toLowerCase() !== ROOT_AUTHORITY.toLowerCase())
    refuse('budget_grant_caveats', 'the grant is not a root delegation from its owner', AGAIN);
  let limits: GrantLimits;
  try {
    limits = decodeGrantCaveats(c, delegation.caveats);
  } catch (error) {
    if (!(error instanceof GrantShapeError)) throw error;
    refuse('budget_grant_caveats', `the grant's caveats are not a budget grant's: ${error.message}`, AGAIN);
  }
  if (!isAddressEqual(limits.session, d.wallet))
    refuse('budget_grant_wrong_recipient', `the grant lets USDC go to ${limits.session}, not this wallet ${d.wallet}`, AGAIN);
  if (!isAddressEqual(limits.token, d.usdc))
    refuse('budget_grant_caveats', `the grant caps the token ${limits.token}, not the pinned USDC ${d.usdc}`, AGAIN);
  const l = file.delegations[0]!.limits;
  const copyMatches =
    isAddressEqual(l.token as Address, limits.token) &&
    BigInt(l.perDay) === limits.perDay &&
    BigInt(l.per30Days) === limits.per30Days &&
    l.start === limits.start &&
    l.expiresAt === limits.expiresAt;
  const hash = delegationHash(delegation);
  if (!copyMatches || (file.delegations[0]!.hash as Hex).toLowerCase() !== hash.toLowerCase())
    refuse('budget_grant_caveats', "the grant's limits or hash do not match its signed caveats (the file was edited)", AGAIN);
  const signer = await delegationSigner(delegation, d.chainId, c.delegationManager).catch(() => undefined);
  if (!signer || !isAddressEqual(signer, delegation.delegator))
    refuse('budget_grant_bad_signature', `the grant's signature is not ${delegation.delegator}'s over these caveats`, AGAIN);
  const target = delegatedTo(await d.client.getCode({ address: delegation.delegator }));
  if (!target || !isAddressEqual(target, c.deleGator))
    refuse(
      'budget_owner_not_delegated',
      `the owner ${delegation.delegator} does not run the pinned DeleGator ${c.deleGator}, so the grant cannot be redeemed`,
      'the owner runs `loopsign budget grant` (which sets it) again',
    );
  const state = await readGrantState(d.client, c, file);
  if (state.status === 'expired') refuse('budget_expired', `the grant expired at ${state.expiresAtIso}`, AGAIN);
  if (state.status === 'revoked_disabled' || state.status === 'revoked_nonce')
    refuse('budget_revoked', `the owner revoked the grant (${state.status === 'revoked_nonce' ? 'nonce moved on' : 'disabled'})`, AGAIN);
  return { limits, state };
}
