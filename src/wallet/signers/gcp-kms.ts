// Google Cloud KMS: a key version with algorithm EC_SIGN_SECP256K1_SHA256 signs the digests loopsign computes
// (AsymmetricSign with digest.sha256 = the 32-byte digest). @google-cloud/kms 5.x: 6.x needs Node 22. Requests
// and responses carry CRC32C checksums as Google recommends, checked both ways.
import type { KeyManagementServiceClient } from '@google-cloud/kms';
import type { Hex } from 'viem';
import { CredentialError } from '../../errors.js';
import { crc32c } from './crc32c.js';
import { checkKeyAddress, digestAccount, secp256k1KeyFromSpki, spkiFromPem } from './digest-account.js';
import { loadSdk } from './load-sdk.js';
import type { OpenedSigner } from './opened.js';
import type { Address } from './types.js';

export const GCP_SDK = { install: '@google-cloud/kms@~5.7', forWhat: '--signer gcp:…' };

export interface GcpKmsOptions {
  /** Passed to the client (tests: a loopback endpoint, insecure channel credentials and a stub auth client). */
  clientOptions?: Record<string, unknown>;
}

type Int64 = { value?: number | string | { toString(): string } | null } | null | undefined;
const int64 = (v: Int64): number | undefined => (v?.value === undefined || v.value === null ? undefined : Number(v.value.toString()));

function gcpFailure(error: unknown, label: string, what: string): CredentialError {
  const code = (error as { code?: number }).code;
  const message = ((error as Error).message ?? '').split('\n')[0]!.slice(0, 200);
  return new CredentialError('kms_unavailable', `${label}: ${what} failed (${code !== undefined ? `gRPC ${code}: ` : ''}${message})`, {
    hint: 'check the Google credentials (Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`) and that this identity has roles/cloudkms.signerVerifier on the key',
    cause: error,
  });
}

export async function openGcpKms(keyVersion: string, from: Address, label: string, options: GcpKmsOptions = {}): Promise<OpenedSigner> {
  const sdk = await loadSdk(() => import('@google-cloud/kms'), GCP_SDK);
  const client: KeyManagementServiceClient = new sdk.KeyManagementServiceClient(options.clientOptions as never);
  try {
    let key;
    try {
      [key] = await client.getPublicKey({ name: keyVersion });
    } catch (error) {
      throw gcpFailure(error, label, 'GetPublicKey');
    }
    if (String(key.algorithm) !== 'EC_SIGN_SECP256K1_SHA256') {
      throw new CredentialError(
        'kms_key_unsuitable',
        `${label} is a ${String(key.algorithm ?? 'unknown')} key; Ethereum needs EC_SIGN_SECP256K1_SHA256`,
        {
          hint: 'create one with: gcloud kms keys create NAME --keyring RING --location LOC --purpose asymmetric-signing --default-algorithm ec-sign-secp256k1-sha256 --protection-level hsm',
        },
      );
    }
    const pem = key.pem ?? '';
    const pemCrc = int64(key.pemCrc32c as Int64);
    if (pemCrc !== undefined && pemCrc !== crc32c(Buffer.from(pem, 'utf8'))) {
      throw new CredentialError('kms_corrupted', `${label}: the public key arrived corrupted (CRC32C mismatch)`, {
        hint: 'retry; if it persists, check the network path to Cloud KMS',
      });
    }
    const spki = spkiFromPem(pem);
    const publicKey = spki && secp256k1KeyFromSpki(spki);
    if (!publicKey) throw new CredentialError('kms_key_unsuitable', `${label}: GetPublicKey returned no secp256k1 public key`);
    checkKeyAddress(publicKey as Hex, from, label);
    const account = digestAccount({
      address: from,
      publicKey: publicKey as Hex,
      label,
      signDigest: async (digest) => {
        let out;
        try {
          [out] = await client.asymmetricSign({ name: keyVersion, digest: { sha256: digest }, digestCrc32c: { value: crc32c(digest) } });
        } catch (error) {
          throw gcpFailure(error, label, 'AsymmetricSign');
        }
        const signature = out.signature ? new Uint8Array(out.signature as Uint8Array) : undefined;
        if (!signature || out.verifiedDigestCrc32c !== true || int64(out.signatureCrc32c as Int64) !== crc32c(signature)) {
          throw new CredentialError(
            'kms_corrupted',
            `${label}: the signing request or its answer arrived corrupted (CRC32C not verified)`,
            { hint: 'retry; if it persists, check the network path to Cloud KMS' },
          );
        }
        return signature;
      },
    });
    return { account, close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}
