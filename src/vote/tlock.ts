// tlock encryption and decryption through tlock-js. Encryption needs only the network's public key and the round,
// so it runs fully offline with a chain client built from loopsign's own pinned network data.
import type { DrandNetwork } from '../chains/table.js';

export interface Beacon {
  round: number;
  randomness: string;
  signature: string;
}

function chainInfo(network: DrandNetwork, genesisOverride?: number) {
  return {
    public_key: network.publicKey,
    period: network.period,
    genesis_time: genesisOverride ?? network.genesis,
    hash: network.chainHash,
    groupHash: '',
    schemeID: network.scheme,
    metadata: { beaconID: network.name },
  };
}

function client(network: DrandNetwork, get: (round: number) => Promise<Beacon>, genesisOverride?: number, verify = true) {
  const info = chainInfo(network, genesisOverride);
  return {
    options: { disableBeaconVerification: !verify, noCache: true },
    chain: () => ({ baseUrl: 'loopsign:local', info: async () => info }),
    get,
    latest: async () => {
      throw new Error('not available offline');
    },
  };
}

export async function tlockEncrypt(network: DrandNetwork, round: number, plaintext: Uint8Array): Promise<string> {
  // tlock-js is CommonJS: its exports are taken from import()'s `default`, which node and the bundle both give (the
  // bundle gives no named exports for it: scripts/bundle.mjs).
  const { timelockEncrypt, Buffer: TBuffer } = (await import('tlock-js')).default;
  const offline = client(network, async () => {
    throw new Error('encryption needs no beacon');
  });
  return timelockEncrypt(round, TBuffer.from(plaintext), offline as never);
}

/**
 * Decrypt with beacons from `getBeacon` (verified against the network's public key by tlock-js, unless
 * `beacons: 'own'` says the caller made them itself: the sandbox's keeper decrypting with its own beacon, where the
 * check would only prove its own signature, at two pairings a vote — most of the CPU a sandbox spends on reveals).
 * `clockSkewSeconds` tells how far the beacon's clock runs ahead of this machine's (the sandbox can fast-forward
 * time); tlock-js's "too early" check uses the local clock, so its view of genesis is shifted by that much.
 * tlock-js logs the beacon to stdout while decrypting; that line is swallowed to keep stdout clean.
 */
export async function tlockDecrypt(
  network: DrandNetwork,
  armored: string,
  getBeacon: (round: number) => Promise<Beacon>,
  clockSkewSeconds = 0,
  beacons: 'verify' | 'own' = 'verify',
): Promise<Uint8Array> {
  const { timelockDecrypt } = (await import('tlock-js')).default; // CommonJS: see tlockEncrypt
  const c = client(network, getBeacon, network.genesis - Math.ceil(clockSkewSeconds), beacons === 'verify');
  const log = console.log;
  console.log = () => undefined;
  try {
    return new Uint8Array(await timelockDecrypt(armored, c as never));
  } finally {
    console.log = log;
  }
}
