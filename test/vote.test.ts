// Vote commit vectors (shared/vectors/README.md §6) and a real tlock round trip through the sandbox beacon.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { keccak256, toHex, type Hex } from 'viem';
import { commitHash, commitKey, roundContext, votePlaintext, decodeVotePlaintext } from '../src/vote/commit.js';
import { parseStake, predictedUpBps } from '../src/vote/stake.js';
import { roundTime, targetRoundWindow, sdkCommitWindow, drandChainHash } from '../src/vote/drand.js';
import { parseArmoredCiphertext, checkCiphertextTarget } from '../src/vote/ciphertext.js';
import { buildCommitVoteParams } from '../src/vote/build.js';
import { tlockDecrypt, tlockEncrypt } from '../src/vote/tlock.js';
import { SandboxBeacon } from '../src/sandbox/beacon.js';
import { QUICKNET } from '../src/chains/table.js';
import { readVector, VECTORS } from './helpers/cli.js';

const v = readVector('selectors-domains-commit.json');
const reveal = readVector('reveal-metadata-tlock.json');
const base = {
  salt: `0x${'22'.repeat(32)}` as Hex,
  voter: `0x${'22'.repeat(20)}` as Hex,
  contentId: 42n,
  roundReferenceRatingBps: 5000,
  targetRound: 123n,
  drandChainHash: `0x${'33'.repeat(32)}` as Hex,
  ciphertext: '0x1234' as Hex,
};

describe('commit hash vectors', () => {
  it.each([
    ['commitHash_false_6900', false, 6900, 4n],
    ['commitHash_true_6900', true, 6900, 4n],
    ['commitHash_true_6901', true, 6901, 4n],
    ['commitHash_false_round5', false, 6900, 5n],
  ])('%s', (key, isUp, bps, roundId) => {
    expect(commitHash({ ...base, isUp, predictedUpBps: bps, roundId })).toBe(v[key]);
  });

  it('commit key, ciphertext hash, plaintexts and round contexts', () => {
    expect(keccak256('0x1234')).toBe(v.keccak_ciphertext_0x1234);
    const h = commitHash({ ...base, isUp: false, predictedUpBps: 6900, roundId: 4n });
    expect(commitKey(base.voter, h)).toBe(v.commitKey_false_6900);
    expect(toHex(votePlaintext({ isUp: true, predictedUpBps: 6900, salt: `0x${'55'.repeat(32)}` }))).toBe(v.plaintext_true_6900_salt55);
    expect(toHex(votePlaintext({ isUp: false, predictedUpBps: 100, salt: `0x${'ab'.repeat(32)}` }))).toBe(v.plaintext_false_100_saltab);
    expect(roundContext(4n, 5000).toString()).toBe(String(v.roundContext_round4_ref5000).replace(/ .*/, ''));
    expect(roundContext(1n, 0)).toBe(65536n);
    expect(decodeVotePlaintext(votePlaintext({ isUp: true, predictedUpBps: 6900, salt: base.salt }))).toEqual({
      isUp: true,
      predictedUpBps: 6900,
      salt: base.salt,
    });
  });

  it('the 193-byte preimage', async () => {
    const { commitPreimage } = await import('../src/vote/commit.js');
    expect((commitPreimage({ ...base, isUp: true, predictedUpBps: 6900, roundId: 4n }).length - 2) / 2).toBe(193);
  });

  it('stake and prediction parsing', () => {
    expect(parseStake('2.5')).toBe(2500000n);
    expect(parseStake('0.000001')).toBe(1n);
    expect(parseStake('0')).toBe(0n);
    for (const bad of ['NaN', 'Infinity', '-1', '0.0000004', '1.0000004', '1e3', ''])
      expect(() => parseStake(bad), bad).toThrow(/stakeAmount/);
    expect(() => parseStake(Number.NaN)).toThrow();
    expect([1, 69, 99].map((p) => predictedUpBps(p))).toEqual([100, 6900, 9900]);
    for (const bad of [0, 0.99, 100, 101]) expect(() => predictedUpBps(bad)).toThrow(/predictedUpPercent/);
  });

  it('drand round arithmetic and target windows', () => {
    expect(roundTime(401, QUICKNET.genesis, 3)).toBe(1692804567);
    expect(roundTime(1, 1_000_000, 3)).toBe(1_000_000);
    expect(roundTime(2, 1_000_000, 3)).toBe(1_000_003);
    expect(roundTime(0, 1_000_000, 3)).toBe(0);
    expect(targetRoundWindow(QUICKNET.genesis + 1200, QUICKNET.genesis, 3)).toEqual([401, 403]);
    expect(sdkCommitWindow(QUICKNET.genesis, 1199, QUICKNET.genesis, 3)).toEqual([402, 402]);
    expect(targetRoundWindow(1778908602 + 1200, QUICKNET.genesis, 3)).toEqual([28702146, 28702148]);
    expect(targetRoundWindow(1778908601 + 1200, QUICKNET.genesis, 3)).toEqual([28702146, 28702147]);
    expect(
      drandChainHash(
        3,
        QUICKNET.genesis,
        QUICKNET.publicKey,
        'f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e',
        'quicknet',
      ),
    ).toBe(QUICKNET.chainHash);
  });
});

describe('ciphertext sample', () => {
  const bytes = readFileSync(path.join(VECTORS, 'sample-quicknet-round403.age'));

  it('parses and passes the on-chain validity rules', () => {
    expect(bytes.length).toBe(597);
    const p = checkCiphertextTarget(bytes, 403n, reveal.parsedMeta.drandChainHash);
    expect(p.round).toBe(403n);
    expect(keccak256(bytes)).toBe(reveal.sdkCommit.ciphertextHash);
    const h = commitHash({
      isUp: true,
      predictedUpBps: 6900,
      salt: `0x${'66'.repeat(32)}`,
      voter: base.voter,
      contentId: 7n,
      roundId: 3n,
      roundReferenceRatingBps: 5000,
      targetRound: 403n,
      drandChainHash: `0x${QUICKNET.chainHash}`,
      ciphertext: toHex(bytes),
    });
    expect(h).toBe(reveal.sdkCommit.commitHash);
  });

  it('refuses the wrong round or chain, and mangled armor', () => {
    expect(() => checkCiphertextTarget(bytes, 404n, QUICKNET.chainHash)).toThrow(/round 403/);
    expect(() => checkCiphertextTarget(bytes, 403n, 'cc'.repeat(32))).toThrow(/drand chain/);
    const text = bytes.toString('ascii');
    expect(() => parseArmoredCiphertext(Buffer.from(text.replace('BEGIN', 'BEGAN')))).toThrow(/header/);
    expect(() => parseArmoredCiphertext(Buffer.from(text.replace(/\n/, '\u0001\n')))).toThrow(/printable/);
    expect(() => parseArmoredCiphertext(Buffer.alloc(3000, 0x41))).toThrow(/2048/);
  });
});

describe('tlock round trip with the sandbox beacon', () => {
  it('builds a commit offline whose ciphertext decrypts to the committed plaintext once the round is out', async () => {
    let now = 1_800_000_000;
    const beacon = new SandboxBeacon(now - 300, () => now);
    const network = beacon.network;
    const built = await buildCommitVoteParams(
      {
        voter: base.voter,
        contentId: 9n,
        isUp: true,
        predictedUpPercent: 69,
        stakeAmount: '2.5',
        epochDuration: 60,
        roundId: 1n,
        roundReferenceRatingBps: 5000,
        runtime: {
          drandChainHash: network.chainHash,
          drandGenesisTimeSeconds: network.genesis,
          drandPeriodSeconds: 3,
          roundStartTimeSeconds: now - 10,
        },
        salt: `0x${'77'.repeat(32)}`,
        now,
      },
      [network],
    );
    expect(built.stakeWei).toBe('2500000');
    const target = Number(built.targetRound);
    const epochEnd = now - 10 + 60;
    expect(target).toBe(targetRoundWindow(epochEnd, network.genesis, 3)[1]);
    const armored = Buffer.from(built.ciphertext.slice(2), 'hex').toString('utf8');
    const get = async (r: number) => {
      const b = beacon.round(r);
      if (!b) throw new Error('too early');
      return b;
    };
    await expect(tlockDecrypt(network, armored, get, 0)).rejects.toThrow();
    now = epochEnd + 10; // time passes on the chain, not on this machine
    const plain = await tlockDecrypt(network, armored, get, now - Math.floor(Date.now() / 1000));
    expect(decodeVotePlaintext(plain)).toEqual({ isUp: true, predictedUpBps: 6900, salt: `0x${'77'.repeat(32)}` });
    expect(built.commitHash).toBe(
      commitHash({
        isUp: true,
        predictedUpBps: 6900,
        salt: `0x${'77'.repeat(32)}`,
        voter: base.voter,
        contentId: 9n,
        roundId: 1n,
        roundReferenceRatingBps: 5000,
        targetRound: BigInt(target),
        drandChainHash: built.drandChainHash,
        ciphertext: built.ciphertext,
      }),
    );
  });

  it("checks the beacon's signature unless it is the caller's own; a wrong beacon decrypts nothing either way", async () => {
    const now = 1_800_000_000;
    const beacon = new SandboxBeacon(now - 300, () => now);
    const network = beacon.network;
    const armored = await tlockEncrypt(network, 50, votePlaintext({ isUp: false, predictedUpBps: 1200, salt: `0x${'55'.repeat(32)}` }));
    const right = beacon.round(50)!;
    const other = beacon.round(51)!;
    // Round 50's number with round 51's signature (and randomness): a beacon the network never signed.
    const forged = async () => ({ ...other, round: 50 });
    const skew = now - Math.floor(Date.now() / 1000); // the beacon's clock runs on chain time
    await expect(tlockDecrypt(network, armored, forged, skew)).rejects.toThrow(/verif|signature|beacon/i);
    await expect(tlockDecrypt(network, armored, forged, skew, 'own')).rejects.toThrow();
    for (const mode of ['verify', 'own'] as const) {
      const plain = await tlockDecrypt(network, armored, async () => right, skew, mode);
      expect(decodeVotePlaintext(plain)).toEqual({ isUp: false, predictedUpBps: 1200, salt: `0x${'55'.repeat(32)}` });
    }
  });

  it('refuses a runtime naming an unpinned drand chain', async () => {
    await expect(
      buildCommitVoteParams(
        {
          voter: base.voter,
          contentId: 1n,
          isUp: false,
          predictedUpPercent: 50,
          stakeAmount: '1',
          epochDuration: 60,
          roundId: 1n,
          roundReferenceRatingBps: 0,
          runtime: {
            drandChainHash: '7672797f548f3f4748ac4bf3352fc6c6b6468c9ad40ad456a397545c6e2df5bf',
            drandGenesisTimeSeconds: 0,
            drandPeriodSeconds: 3,
          },
        },
        [QUICKNET],
      ),
    ).rejects.toThrow(/unsupported drand chain/);
  });
});

describe("a resumed commit and the round's target window (issue 11 §6)", () => {
  it('a commit built in one epoch is still valid in that epoch and no longer in the next (it is then built again)', async () => {
    const { targetStillValid } = await import('../src/rate/flow.js');
    const { BUILTIN_CHAINS } = await import('../src/chains/table.js');
    const chain = BUILTIN_CHAINS[8453]!;
    const start = QUICKNET.genesis + 3_000_000;
    const round = { startTime: start, epochDuration: 1200 };
    const [, hi] = targetRoundWindow(start + 1200, QUICKNET.genesis, QUICKNET.period);
    const commit = { targetRound: String(hi) } as never;
    expect(targetStillValid(commit, round, chain, start + 10)).toBe(true);
    expect(targetStillValid(commit, round, chain, start + 1199)).toBe(true);
    expect(targetStillValid(commit, round, chain, start + 1200 + 5)).toBe(false);
  });
});
