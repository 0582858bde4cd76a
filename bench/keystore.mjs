// Keystore unlock at loopsign's parameters (scrypt n=2^18, r=8, p=1): node:crypto scrypt, as used,
// against the pure-JS scrypt of @noble/hashes as the baseline.
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { encryptKeystore, decryptKeystore, parsePrivateKey } from '../build/wallet/keystore.js';
import { medianAsync } from './lib.mjs';

export async function run({ runs = 5 } = {}) {
  const key = parsePrivateKey('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  const ks = await encryptKeystore(key, 'bench password');
  const salt = Buffer.from(ks.crypto.kdfparams.salt, 'hex');
  const pure = await medianAsync(() => scryptAsync('bench password', salt, { N: 262144, r: 8, p: 1, dkLen: 32 }), Math.min(runs, 3));
  const unlock = await medianAsync(() => decryptKeystore(ks, 'bench password'), runs);
  return [
    { name: 'keystore unlock: pure-JS scrypt n=2^18 (baseline)', ms: pure, baseline: pure },
    { name: 'keystore unlock: loopsign (node:crypto scrypt)', ms: unlock, baseline: pure },
  ];
}
