// The core both cloud KMS sources share: a key that signs a 32-byte digest and returns DER (AWS KMS Sign with
// MessageType DIGEST, Cloud KMS AsymmetricSign with digest.sha256 — the "sha256" is only the field's name: the
// 32 bytes given are signed as they are, so a keccak256 digest works). Every Ethereum signature kind is a digest
// loopsign computes itself; the key never sees more than 32 bytes.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import {
  bytesToHex,
  hashMessage,
  hashTypedData,
  hexToBytes,
  keccak256,
  serializeSignature,
  serializeTransaction,
  type Hex,
  type LocalAccount,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';
import { CredentialError, RefusedError } from '../../errors.js';
import { sameAddress } from '../../hex.js';
import { hashAuthorizationTuple, type AuthorizationTuple } from './guard.js';
import { settleSignature } from './signature.js';
import type { Address } from './types.js';

// SubjectPublicKeyInfo header for an uncompressed secp256k1 key: id-ecPublicKey (1.2.840.10045.2.1),
// secp256k1 (1.3.132.0.10), then a 66-byte BIT STRING (no unused bits, 0x04 ‖ X ‖ Y).
const SPKI_SECP256K1_HEADER = '3056301006072a8648ce3d020106052b8104000a034200';

/** The uncompressed public key (0x04 ‖ X ‖ Y) from DER SubjectPublicKeyInfo; undefined unless it is a secp256k1 key. */
export function secp256k1KeyFromSpki(spki: Uint8Array): Hex | undefined {
  const hex = bytesToHex(spki).slice(2);
  if (hex.length !== SPKI_SECP256K1_HEADER.length + 130 || !hex.startsWith(SPKI_SECP256K1_HEADER)) return undefined;
  const key = `0x${hex.slice(SPKI_SECP256K1_HEADER.length)}` as Hex;
  if (!key.startsWith('0x04')) return undefined;
  try {
    secp256k1.ProjectivePoint.fromHex(hexToBytes(key)); // on the curve
  } catch {
    return undefined;
  }
  return key;
}

export function spkiFromPem(pem: string): Uint8Array | undefined {
  const m = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  return m ? new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')) : undefined;
}

/** The address a KMS public key stands for, or exit 6 when it is not --from (nothing has been signed yet). */
export function checkKeyAddress(publicKey: Hex, from: Address, label: string): void {
  const address = publicKeyToAddress(publicKey);
  if (!sameAddress(address, from)) {
    throw new CredentialError(
      'signer_address_mismatch',
      `${label} holds the key of ${address}, not --from ${from}; nothing was signed or sent`,
      {
        hint: 'pass the address the key stands for as --from, or name the key that holds --from',
      },
    );
  }
}

export interface DigestSigner {
  address: Address;
  publicKey: Hex;
  label: string;
  /** Sign 32 bytes as they are; returns a DER ECDSA signature. */
  signDigest(digest: Uint8Array): Promise<Uint8Array>;
}

export function digestAccount(signer: DigestSigner): LocalAccount {
  const sign = async ({ hash }: { hash: Hex }): Promise<Hex> => {
    const der = await signer.signDigest(hexToBytes(hash));
    let parsed: { r: bigint; s: bigint };
    try {
      parsed = secp256k1.Signature.fromDER(der);
    } catch {
      throw new RefusedError(
        'signature_unreadable',
        `${signer.label} returned a signature that is not DER ECDSA; nothing was signed or sent`,
      );
    }
    // Parity by recovery against the key's own address (KMS returns none); the guard checks it all again.
    const settled = await settleSignature(hash, parsed, signer.address);
    if (!settled)
      throw new RefusedError(
        'signature_not_from_signer',
        `${signer.label} returned a signature that does not recover to ${signer.address}; nothing was signed or sent`,
      );
    return serializeSignature(settled);
  };
  return {
    ...toAccount({
      address: signer.address,
      signMessage: ({ message }) => sign({ hash: hashMessage(message) }),
      signTypedData: (typedData) => sign({ hash: hashTypedData(typedData as Parameters<typeof hashTypedData>[0]) }),
      signTransaction: async (tx, options) => {
        const serializer = (options?.serializer ?? serializeTransaction) as typeof serializeTransaction;
        const signature = await sign({ hash: keccak256(serializer(tx)) });
        const { r, s } = { r: `0x${signature.slice(2, 66)}` as Hex, s: `0x${signature.slice(66, 130)}` as Hex };
        const yParity = signature.endsWith('1c') ? 1 : 0;
        return serializer(tx, { r, s, yParity, v: 27n + BigInt(yParity) });
      },
      signAuthorization: async (request) => {
        const tuple: AuthorizationTuple = {
          address: (request.contractAddress ?? request.address) as Address,
          chainId: request.chainId,
          nonce: request.nonce,
        };
        const signature = await sign({ hash: hashAuthorizationTuple(tuple) });
        return {
          ...tuple,
          r: `0x${signature.slice(2, 66)}` as Hex,
          s: `0x${signature.slice(66, 130)}` as Hex,
          yParity: signature.endsWith('1c') ? 1 : 0,
        };
      },
    }),
    publicKey: signer.publicKey,
  } as LocalAccount;
}
