// A stand-in for Cloud KMS on 127.0.0.1: a gRPC KeyManagementService serving the service definition that ships
// inside @google-cloud/kms (build/protos), driven by the real client. GetPublicKey returns PEM with its CRC32C;
// AsymmetricSign checks the digest's CRC32C, signs the 32 bytes as they are with a test key and returns DER with
// s always HIGH, plus the signature's CRC32C. Hostile modes: another key signs, a corrupted checksum.
import path from 'node:path';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Hex } from 'viem';
import { crc32c } from '../../src/wallet/signers/crc32c.js';
import { highSDer, spkiOf } from './fake-aws-kms.js';

const require = createRequire(import.meta.url);
const kmsProtos = path.join(path.dirname(require.resolve('@google-cloud/kms/package.json')), 'build', 'protos');
// google-gax ships the common protos (google/api, google/protobuf) the KMS service imports; it exports no package.json.
const gaxProtos = path.join(path.dirname(require.resolve('google-gax')), '..', 'protos');

export interface FakeGcpOptions {
  keyVersion: string;
  privateKey: Hex;
  signWith?: Hex;
  algorithm?: string;
  corruptSignatureCrc?: boolean;
}

export interface FakeGcp {
  port: number;
  calls: Array<{ method: string; name: string; digestLength?: number }>;
  /** Client options for KeyManagementServiceClient: loopback, no TLS, a stub auth client. */
  clientOptions: Record<string, unknown>;
  setMode(options: Partial<FakeGcpOptions>): void;
  stop(): Promise<void>;
}

function pem(spki: Uint8Array): string {
  const b64 = Buffer.from(spki).toString('base64');
  return `-----BEGIN PUBLIC KEY-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
}

export async function startFakeGcpKms(initial: FakeGcpOptions): Promise<FakeGcp> {
  let options = { ...initial };
  const calls: FakeGcp['calls'] = [];
  const definition = protoLoader.loadSync('google/cloud/kms/v1/service.proto', {
    includeDirs: [kmsProtos, gaxProtos],
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    google: { cloud: { kms: { v1: { KeyManagementService: { service: grpc.ServiceDefinition } } } } };
  };
  const server = new grpc.Server();
  const notFound = (name: string) => ({ code: grpc.status.NOT_FOUND, details: `CryptoKeyVersion ${name} not found` });
  server.addService(loaded.google.cloud.kms.v1.KeyManagementService.service, {
    GetPublicKey: (call: grpc.ServerUnaryCall<{ name: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      calls.push({ method: 'GetPublicKey', name: call.request.name });
      if (call.request.name !== options.keyVersion) return callback(notFound(call.request.name));
      const text = pem(spkiOf(options.privateKey));
      callback(null, {
        pem: text,
        algorithm: options.algorithm ?? 'EC_SIGN_SECP256K1_SHA256',
        pemCrc32c: { value: String(crc32c(Buffer.from(text))) },
        name: options.keyVersion,
        protectionLevel: 'HSM',
      });
    },
    AsymmetricSign: (
      call: grpc.ServerUnaryCall<{ name: string; digest?: { sha256?: Buffer }; digestCrc32c?: { value: string } }, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      const digest = call.request.digest?.sha256;
      calls.push({ method: 'AsymmetricSign', name: call.request.name, ...(digest ? { digestLength: digest.length } : {}) });
      if (call.request.name !== options.keyVersion) return callback(notFound(call.request.name));
      if (!digest || digest.length !== 32)
        return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'digest.sha256 must be 32 bytes' });
      const verified = call.request.digestCrc32c?.value !== undefined && Number(call.request.digestCrc32c.value) === crc32c(digest);
      const signature = highSDer(options.signWith ?? options.privateKey, new Uint8Array(digest));
      const crc = (crc32c(signature) ^ (options.corruptSignatureCrc ? 1 : 0)) >>> 0;
      callback(null, {
        signature: Buffer.from(signature),
        signatureCrc32c: { value: String(crc) },
        verifiedDigestCrc32c: verified,
        name: options.keyVersion,
        protectionLevel: 'HSM',
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  // A stub auth client: no Google credentials are looked up, none are sent.
  const authClient = {
    getRequestHeaders: async () => new Headers(),
    getClient: async () => authClient,
    getProjectId: async () => 'loopsign-test',
  };
  return {
    port,
    calls,
    clientOptions: { apiEndpoint: '127.0.0.1', port, sslCreds: grpc.credentials.createInsecure(), authClient },
    setMode: (next) => {
      options = { ...initial, ...next };
    },
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
