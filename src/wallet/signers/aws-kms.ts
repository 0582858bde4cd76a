// AWS KMS: an ECC_SECG_P256K1 key with usage SIGN_VERIFY signs the digests loopsign computes (MessageType DIGEST).
// The client is the official one with its default credential chain and region; AWS_ENDPOINT_URL_KMS can redirect
// it, which is harmless because the key's address is pinned (--from) and every signature is recovered (guard.ts).
import type { KMSClient, KMSClientConfig } from '@aws-sdk/client-kms';
import type { Hex } from 'viem';
import { CredentialError } from '../../errors.js';
import { checkKeyAddress, digestAccount, secp256k1KeyFromSpki } from './digest-account.js';
import { loadSdk } from './load-sdk.js';
import type { OpenedSigner } from './opened.js';
import type { Address } from './types.js';

export const AWS_SDK = { install: '@aws-sdk/client-kms@~3.1164', forWhat: '--signer aws:…' };

export interface AwsKmsOptions {
  /** Merged into the client's configuration (tests: a loopback endpoint and fixed credentials). */
  clientConfig?: KMSClientConfig;
}

function kmsFailure(error: unknown, label: string, what: string): CredentialError {
  const name = (error as { name?: string }).name ?? 'Error';
  const message = ((error as Error).message ?? '').split('\n')[0]!.slice(0, 200);
  return new CredentialError('kms_unavailable', `${label}: ${what} failed (${name}: ${message})`, {
    hint: 'check the AWS credentials and region (the default AWS chain: environment, ~/.aws, instance role), that the key exists and that this identity may call kms:GetPublicKey and kms:Sign',
    cause: error,
  });
}

export async function openAwsKms(keyId: string, from: Address, label: string, options: AwsKmsOptions = {}): Promise<OpenedSigner> {
  const sdk = await loadSdk(() => import('@aws-sdk/client-kms'), AWS_SDK);
  // A key ARN names its region; anything else uses the default chain's (AWS_REGION, ~/.aws/config).
  const arnRegion = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):/.exec(keyId)?.[1];
  // The SDK warns on Node 20 about its own future releases as multi-line text on stderr, which would break the
  // output contract (--json: one JSON line per stderr event); the version loopsign pins runs on Node 20. The SDK
  // reads this switch from the process's own environment (not from anything loopsign could hand it), so this is the
  // one place the core writes process.env (an allowed exception in test/env-boundary.test.ts); it reads nothing there.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client: KMSClient = new sdk.KMSClient({ ...(arnRegion ? { region: arnRegion } : {}), ...options.clientConfig });
  try {
    let key;
    try {
      key = await client.send(new sdk.GetPublicKeyCommand({ KeyId: keyId }));
    } catch (error) {
      throw kmsFailure(error, label, 'GetPublicKey');
    }
    if (key.KeySpec !== 'ECC_SECG_P256K1' || key.KeyUsage !== 'SIGN_VERIFY') {
      throw new CredentialError(
        'kms_key_unsuitable',
        `${label} is a ${key.KeySpec ?? 'unknown'} key for ${key.KeyUsage ?? 'unknown use'}; Ethereum needs ECC_SECG_P256K1 for SIGN_VERIFY`,
        {
          hint: 'create one with: aws kms create-key --key-spec ECC_SECG_P256K1 --key-usage SIGN_VERIFY',
        },
      );
    }
    const publicKey = key.PublicKey && secp256k1KeyFromSpki(key.PublicKey);
    if (!publicKey) throw new CredentialError('kms_key_unsuitable', `${label}: GetPublicKey returned no secp256k1 public key`);
    checkKeyAddress(publicKey as Hex, from, label);
    const account = digestAccount({
      address: from,
      publicKey: publicKey as Hex,
      label,
      signDigest: async (digest) => {
        let out;
        try {
          out = await client.send(
            new sdk.SignCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
          );
        } catch (error) {
          throw kmsFailure(error, label, 'Sign');
        }
        if (!out.Signature) throw new CredentialError('kms_unavailable', `${label}: Sign returned no signature`);
        return out.Signature;
      },
    });
    return { account, close: async () => client.destroy() };
  } catch (error) {
    client.destroy();
    throw error;
  }
}
