// The agent's side of a grant (issue 38): `budget import` accepts a grant file only when it is exactly what loopsign's
// owner side signs, for this wallet, on this chain, against the pinned contracts, signed by its owner, with the owner
// on the pinned DeleGator, not expired and not revoked. Each failure has its own code; nothing is stored on any.
import { isAddressEqual, type Hex, type PublicClient } from 'viem';
import { RefusedError } from '../errors.js';
import type { RefusedCode } from '../error-codes.js';
import type { Address } from '../chains/table.js';
import type { DelegationAnchors } from '../chains/delegation.js';
import { delegationHash, delegationSigner, ROOT_AUTHORITY } from './delegation.js';
import { delegationOf, grantEntry, type GrantAsset, type GrantFile } from './grant-file.js';
import { decodeGrantCaveats, GrantShapeError, type GrantLimits } from './terms.js';
import { delegatedTo } from './grant.js';
import { readGrantState, type GrantState } from './show.js';

export interface ImportDeps {
  client: PublicClient;
  chainId: number;
  wallet: Address;
  usdc: Address;
  /** The chain's LREP token: a grant's LREP delegation is checked against it. */
  lrep?: Address;
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
  // Each delegation (USDC, then LREP when granted) is checked alike: the same codes for the same faults.
  let usdcLimits: GrantLimits | undefined;
  for (const entry of file.delegations) {
    const token = entry.asset === 'USDC' ? d.usdc : d.lrep;
    if (!token) refuse('budget_grant_caveats', `the grant caps ${entry.asset}, which chain ${d.chainId} does not configure`, AGAIN);
    const limits = await checkEntry(d, file, entry.asset, token);
    if (entry.asset === 'USDC') usdcLimits = limits;
  }
  const delegation = delegationOf(file);
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
  if (file.delegations.length > 1) {
    const lrep = await readGrantState(d.client, c, file, 'LREP');
    if (lrep.status === 'revoked_disabled') refuse('budget_revoked', "the owner revoked the grant's LREP delegation (disabled)", AGAIN);
  }
  return { limits: usdcLimits!, state };
}

/** One delegation of the grant: to this wallet, a root delegation from its owner, exactly a grant's caveats for `token`. */
async function checkEntry(d: ImportDeps, file: GrantFile, asset: GrantAsset, token: Address): Promise<GrantLimits> {
  const c = d.anchors.contracts;
  const delegation = delegationOf(file, asset);
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
    refuse('budget_grant_wrong_recipient', `the grant lets ${asset} go to ${limits.session}, not this wallet ${d.wallet}`, AGAIN);
  if (!isAddressEqual(limits.token, token))
    refuse('budget_grant_caveats', `the grant caps the token ${limits.token}, not the pinned ${asset} ${token}`, AGAIN);
  const l = grantEntry(file, asset)!.limits;
  const copyMatches =
    isAddressEqual(l.token as Address, limits.token) &&
    BigInt(l.perDay) === limits.perDay &&
    BigInt(l.per30Days) === limits.per30Days &&
    l.start === limits.start &&
    l.expiresAt === limits.expiresAt;
  const hash = delegationHash(delegation);
  if (!copyMatches || (grantEntry(file, asset)!.hash as Hex).toLowerCase() !== hash.toLowerCase())
    refuse('budget_grant_caveats', "the grant's limits or hash do not match its signed caveats (the file was edited)", AGAIN);
  const signer = await delegationSigner(delegation, d.chainId, c.delegationManager).catch(() => undefined);
  if (!signer || !isAddressEqual(signer, delegation.delegator))
    refuse('budget_grant_bad_signature', `the grant's signature is not ${delegation.delegator}'s over these caveats`, AGAIN);
  return limits;
}
