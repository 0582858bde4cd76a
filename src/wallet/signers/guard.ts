// The verifying guard every external signer goes through (KMS, remote JSON-RPC, hardware). Such a signer is
// outside loopsign's trust boundary, and so is an endpoint someone redirected (AWS_ENDPOINT_URL_KMS): whatever it
// returns is checked before the caller sees it, and a refusal (exit 5) returns nothing.
//  - Every signature (transaction, EIP-712, EIP-191, EIP-7702 authorization) is normalised to low-s with its parity
//    found by recovery, and must recover to --from over the digest loopsign computed itself.
//  - A signed transaction is parsed and compared field by field with what was asked; the bytes handed back are
//    loopsign's own serialisation of the request with the checked signature, never the signer's bytes.
//  - Authorizations: never chain id 0 (valid on every chain), never a delegate but the chain's pinned ones (the batch
//    delegate, and the budget DeleGator of its trust anchors), and the tuple a signer returns must be the one asked for.
import {
  concatHex,
  hashMessage,
  hashTypedData,
  isAddressEqual,
  keccak256,
  numberToHex,
  parseTransaction,
  serializeSignature,
  serializeTransaction,
  toRlp,
  type Hex,
  type LocalAccount,
  type SignableMessage,
  type TransactionSerializable,
} from 'viem';
import type { RefusedCode } from '../../error-codes.js';
import { RefusedError } from '../../errors.js';
import { rsOf, settleSignature, splitSignature, type RS } from './signature.js';
import type { Address } from './types.js';

export interface GuardOptions {
  /** The pinned address (--from): every signature must recover to it. */
  from: Address;
  /** Names the signer in refusals (describeSource): never a secret. */
  label: string;
  /** The configured chain: a transaction or authorization for another chain is refused. */
  chainId?: number;
  /** The chain's pinned ERC-7821 batch delegate; without one (and no deleGator), every authorization is refused. */
  delegate?: Address;
  /** The chain's pinned budget DeleGator (src/chains/delegation.ts, issue 38): an owner's first grant points the account at it. */
  deleGator?: Address;
  /** Why this signer cannot sign authorizations at all (capabilities.authorizationReason). */
  noAuthorizationReason?: string;
}

export interface AuthorizationTuple {
  address: Address;
  chainId: number;
  nonce: number;
}

type AuthorizationRequest = { address?: Address; contractAddress?: Address; chainId: number; nonce: number };
type SignedAuthorization = AuthorizationTuple & { r: Hex; s: Hex; yParity?: number; v?: bigint };

/** keccak256(0x05 ‖ rlp([chainId, address, nonce])): the EIP-7702 authorization digest. */
export function hashAuthorizationTuple(a: AuthorizationTuple): Hex {
  return keccak256(
    concatHex(['0x05', toRlp([a.chainId ? numberToHex(a.chainId) : '0x', a.address, a.nonce ? numberToHex(a.nonce) : '0x'])]),
  );
}

function refuse(code: RefusedCode, message: string, details?: Record<string, unknown>): never {
  throw new RefusedError(code, `${message}; nothing was signed or sent`, {
    hint: 'an external signer returned something loopsign did not ask for, or was asked for something loopsign never signs: check the signer and its endpoint before retrying',
    ...(details ? { details } : {}),
  });
}

/** The authorization checks that come before any signer is asked (and again on a transaction's list). */
export function checkAuthorizationRequest(
  a: AuthorizationTuple,
  options: Pick<GuardOptions, 'chainId' | 'delegate' | 'deleGator' | 'label'>,
): void {
  if (!Number.isSafeInteger(a.chainId) || a.chainId === 0) {
    refuse(
      'authorization_any_chain',
      `refused an EIP-7702 authorization with chain id ${a.chainId}: chain id 0 makes it valid on every chain`,
    );
  }
  if (options.chainId !== undefined && a.chainId !== options.chainId) {
    refuse(
      'authorization_wrong_chain',
      `refused an EIP-7702 authorization for chain ${a.chainId}: loopsign is configured for chain ${options.chainId}`,
    );
  }
  const pinned = [options.delegate, options.deleGator].filter((d): d is Address => d !== undefined);
  if (pinned.length === 0)
    refuse('no_pinned_delegate', `refused an EIP-7702 authorization to ${a.address}: no batch delegate is pinned for this chain`);
  if (!pinned.some((d) => isAddressEqual(a.address, d))) {
    refuse(
      'authorization_foreign_delegate',
      `refused an EIP-7702 authorization to ${a.address}: the only ${pinned.length === 1 ? 'delegate' : 'delegates'} loopsign authorizes on this chain ${pinned.length === 1 ? 'is' : 'are'} the pinned ${pinned.join(' and ')}`,
    );
  }
}

// Field by field, through one parser, so the request and the signer's answer are compared in the same form.
const TX_FIELDS = [
  'type',
  'chainId',
  'nonce',
  'to',
  'value',
  'data',
  'gas',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'maxFeePerBlobGas',
  'accessList',
  'blobVersionedHashes',
  'authorizationList',
] as const;

function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_k, v) => (typeof v === 'bigint' ? `n${v}` : typeof v === 'string' ? v.toLowerCase() : v));
}

function authorizationListOf(tx: TransactionSerializable): SignedAuthorization[] {
  return ((tx as { authorizationList?: SignedAuthorization[] }).authorizationList ?? []) as SignedAuthorization[];
}

export function guardAccount(inner: LocalAccount, options: GuardOptions): LocalAccount {
  const { from, label } = options;

  async function settled(hash: Hex, sig: RS | undefined, what: string) {
    const ok = sig && (await settleSignature(hash, sig, from));
    if (!ok)
      refuse(
        'signature_not_from_signer',
        `${label} returned a ${what} signature that does not recover to ${from} over the digest loopsign computed`,
      );
    return ok;
  }

  async function signMessage({ message }: { message: SignableMessage }): Promise<Hex> {
    const hash = hashMessage(message);
    const returned = await inner.signMessage({ message });
    return serializeSignature(await settled(hash, splitSignature(returned), 'message (EIP-191)'));
  }

  async function signTypedData(typedData: Parameters<LocalAccount['signTypedData']>[0]): Promise<Hex> {
    const hash = hashTypedData(typedData as Parameters<typeof hashTypedData>[0]);
    const returned = await inner.signTypedData(typedData);
    return serializeSignature(await settled(hash, splitSignature(returned), 'typed data (EIP-712)'));
  }

  async function signAuthorization(request: AuthorizationRequest) {
    const tuple: AuthorizationTuple = {
      address: (request.contractAddress ?? request.address) as Address,
      chainId: request.chainId,
      nonce: request.nonce,
    };
    checkAuthorizationRequest(tuple, options);
    if (!inner.signAuthorization) {
      throw new RefusedError(
        'signer_cannot_delegate',
        `${label} cannot sign an EIP-7702 authorization${options.noAuthorizationReason ? ` (${options.noAuthorizationReason})` : ''}; nothing was signed or sent`,
        {
          hint: 'run the plan ordered (without --atomic), or delegate this wallet with another signer first',
        },
      );
    }
    const returned = (await inner.signAuthorization({
      address: tuple.address,
      chainId: tuple.chainId,
      nonce: tuple.nonce,
    })) as SignedAuthorization;
    const returnedAddress = (returned as { contractAddress?: Address }).contractAddress ?? returned.address;
    if (
      !returnedAddress ||
      !isAddressEqual(returnedAddress, tuple.address) ||
      Number(returned.chainId) !== tuple.chainId ||
      Number(returned.nonce) !== tuple.nonce
    ) {
      refuse('authorization_changed', `${label} returned an EIP-7702 authorization for another tuple than the one asked for`, {
        asked: { ...tuple },
        returned: { address: returnedAddress, chainId: Number(returned.chainId), nonce: Number(returned.nonce) },
      });
    }
    const sig = await settled(hashAuthorizationTuple(tuple), rsOf(returned), 'EIP-7702 authorization');
    return { ...tuple, r: sig.r, s: sig.s, yParity: sig.yParity };
  }

  async function signTransaction(tx: TransactionSerializable, opts?: { serializer?: (tx: never, sig?: never) => Hex }): Promise<Hex> {
    const serializer = (opts?.serializer ?? serializeTransaction) as (
      tx: TransactionSerializable,
      sig?: { r: Hex; s: Hex; yParity: number; v?: bigint },
    ) => Hex;
    if (tx.chainId === undefined || tx.chainId === 0)
      refuse('transaction_without_chain', 'refused a transaction without a chain id (it could be replayed on any chain)');
    if (options.chainId !== undefined && tx.chainId !== options.chainId) {
      refuse(
        'transaction_wrong_chain',
        `refused a transaction for chain ${tx.chainId}: loopsign is configured for chain ${options.chainId}`,
      );
    }
    for (const auth of authorizationListOf(tx)) {
      const tuple = {
        address: ((auth as { contractAddress?: Address }).contractAddress ?? auth.address) as Address,
        chainId: Number(auth.chainId),
        nonce: Number(auth.nonce),
      };
      checkAuthorizationRequest(tuple, options);
      // loopsign only ever delegates the signing wallet itself: every authorization it carries is --from's own.
      await settled(hashAuthorizationTuple(tuple), rsOf(auth), 'carried EIP-7702 authorization');
    }
    const unsigned = serializer(tx);
    const asked = parseTransaction(unsigned) as Record<string, unknown>;
    const raw = await inner.signTransaction(tx, opts as never);
    let got: Record<string, unknown>;
    try {
      got = parseTransaction(raw as Hex) as Record<string, unknown>;
    } catch {
      return refuse('transaction_unreadable', `${label} returned bytes that are not a signed transaction`);
    }
    for (const field of TX_FIELDS) {
      if (canonical(asked[field]) !== canonical(got[field])) {
        refuse('transaction_changed', `${label} returned a transaction whose ${field} differs from the one asked for`, { field });
      }
    }
    if (got.r === undefined || got.s === undefined) refuse('transaction_unsigned', `${label} returned an unsigned transaction`);
    const sig = await settled(keccak256(unsigned), rsOf(got as { r: Hex; s: Hex }), 'transaction');
    return serializer(tx, { ...sig, v: 27n + BigInt(sig.yParity) });
  }

  return {
    address: from,
    publicKey: inner.publicKey ?? '0x',
    source: 'custom',
    type: 'local',
    signMessage,
    signTypedData: signTypedData as LocalAccount['signTypedData'],
    signTransaction: signTransaction as LocalAccount['signTransaction'],
    signAuthorization: signAuthorization as LocalAccount['signAuthorization'],
  } as LocalAccount;
}
