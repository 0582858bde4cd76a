// A stand-in for AWS KMS on 127.0.0.1 speaking its wire protocol (AWS JSON 1.1: POST /, X-Amz-Target
// TrentService.GetPublicKey / TrentService.Sign, base64 blobs), driven by the real @aws-sdk/client-kms. It holds one
// secp256k1 test key and, like a real KMS, returns DER ECDSA with no low-s guarantee — here always HIGH-s, so the
// guard's normalisation is exercised on every signature. Hostile modes sign with another key or report another key.
import { createServer, type Server } from 'node:http';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { hexToBytes, type Hex } from 'viem';
import { SECP256K1_N } from '../../src/wallet/signers/signature.js';

const SPKI_HEADER = hexToBytes('0x3056301006072a8648ce3d020106052b8104000a034200');

export function spkiOf(privateKey: Hex): Uint8Array {
  const point = secp256k1.getPublicKey(hexToBytes(privateKey), false);
  return new Uint8Array([...SPKI_HEADER, ...point]);
}

/** A DER signature over `digest` with s forced into the high half (what half of a real KMS's signatures look like). */
export function highSDer(privateKey: Hex, digest: Uint8Array): Uint8Array {
  const sig = secp256k1.sign(digest, hexToBytes(privateKey), { prehash: false, lowS: false });
  const high = sig.s > SECP256K1_N / 2n ? sig : new secp256k1.Signature(sig.r, SECP256K1_N - sig.s);
  return high.toDERRawBytes();
}

export interface FakeKmsOptions {
  keyId: string;
  privateKey: Hex;
  /** Sign with this key instead (a KMS, or a redirected endpoint, that answers for another key). */
  signWith?: Hex;
  keySpec?: string;
}

export interface FakeKms {
  endpoint: string;
  calls: Array<{ target: string; keyId: string; messageType?: string; digest?: string }>;
  authorizations: string[];
  setMode(options: Partial<FakeKmsOptions>): void;
  stop(): Promise<void>;
}

export async function startFakeAwsKms(initial: FakeKmsOptions): Promise<FakeKms> {
  let options = { ...initial };
  const calls: FakeKms['calls'] = [];
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      authorizations.push(String(req.headers.authorization ?? ''));
      const send = (status: number, doc: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `req-${calls.length}` });
        res.end(JSON.stringify(doc));
      };
      let input: { KeyId?: string; Message?: string; MessageType?: string; SigningAlgorithm?: string };
      try {
        input = JSON.parse(body);
      } catch {
        return send(400, { __type: 'SerializationException', message: 'bad JSON' });
      }
      const digest = input.Message ? Buffer.from(input.Message, 'base64') : undefined;
      calls.push({
        target,
        keyId: input.KeyId ?? '',
        ...(input.MessageType ? { messageType: input.MessageType } : {}),
        ...(digest ? { digest: digest.toString('hex') } : {}),
      });
      if (input.KeyId !== options.keyId) return send(400, { __type: 'NotFoundException', message: `Key '${input.KeyId}' does not exist` });
      if (target === 'TrentService.GetPublicKey') {
        return send(200, {
          KeyId: `arn:aws:kms:us-east-1:111122223333:key/${options.keyId}`,
          KeySpec: options.keySpec ?? 'ECC_SECG_P256K1',
          KeyUsage: 'SIGN_VERIFY',
          PublicKey: Buffer.from(spkiOf(options.privateKey)).toString('base64'),
          SigningAlgorithms: ['ECDSA_SHA_256'],
        });
      }
      if (target === 'TrentService.Sign') {
        if (input.MessageType !== 'DIGEST' || input.SigningAlgorithm !== 'ECDSA_SHA_256' || !digest || digest.length !== 32) {
          return send(400, { __type: 'ValidationException', message: 'expected a 32-byte DIGEST with ECDSA_SHA_256' });
        }
        const der = highSDer(options.signWith ?? options.privateKey, new Uint8Array(digest));
        return send(200, { KeyId: options.keyId, Signature: Buffer.from(der).toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' });
      }
      return send(400, { __type: 'UnknownOperationException', message: target });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    authorizations,
    setMode: (next) => {
      options = { ...initial, ...next };
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
