// The keeper makes asks come alive: simulated raters commit tlock-encrypted votes to each new question, every
// commit (theirs or a user's) is revealed by decrypting it with the beacon once its round is out, and rounds
// settle. Nothing here knows a plaintext it did not decrypt: reveals go through tlock like any keeper's.
import { BaseError, ContractFunctionRevertedError, decodeEventLog, keccak256, toEventSelector, toHex, type Hex } from 'viem';
import { ContentRegistry, RoundVotingEngine } from './contracts/artifacts.js';
import { sameAddress } from '../hex.js';
import { advisoryRecorderAbi, contentRegistryAbi, votingEngineAbi } from '../protocol/abi.js';
import { buildCommitVoteParams } from '../vote/build.js';
import { decodeVotePlaintext } from '../vote/commit.js';
import { roundTime } from '../vote/drand.js';
import { tlockDecrypt } from '../vote/tlock.js';
import type { SandboxBeacon } from './beacon.js';
import type { SandboxChain } from './chain.js';

const ZERO_KEY = `0x${'0'.repeat(64)}`;
/** The engine's rules the keeper plans by (RoundVotingEngine and ProtocolConfig, as live). */
const VOTE_COOLDOWN_SECONDS = 24 * 3600;
const REVEAL_GRACE_SECONDS = 3600;
const SNAPSHOT_TIMEOUT_SECONDS = 3600;
const RESERVATION_HOLD_MS = 120_000;
const SETTLEMENT_PENDING_TOPIC = toEventSelector('RbtsSettlementPending(uint256,uint256,address)');

/** roundCore's first four outputs: startTime, state, voteCount, revealedCount. */
type RoundCore = readonly [number, number, number, number];
/** roundConfigSnapshot: epochDuration, maxDuration, minVoters, maxVoters. */
type RoundConfigView = readonly [number, number, number, number];

interface PendingCommit {
  contentId: bigint;
  roundId: bigint;
  commitKey: Hex;
  targetRound: number;
  ciphertext: Hex;
  advisory?: boolean;
  failed?: string;
}

export interface KeeperSummary {
  raterVotes: number;
  reveals: number;
  settled: number;
  advanced: number;
}

export class Keeper {
  private lastBlock = 0n;
  private readonly voted = new Set<string>(); // `${contentId}:${roundId}`
  private readonly pending = new Map<string, PendingCommit>(); // by commitKey
  private readonly openRounds = new Map<string, { contentId: bigint; roundId: bigint }>();
  /**
   * Rounds settleRound left SettlementPending, with the moment they became ready (the block of their
   * RbtsSettlementPending event): the sandbox runs no payout oracle, so each waits out the engine's snapshot timeout
   * and then gets the empty snapshot, the live engine's own timeout path.
   */
  private readonly pendingSettlements = new Map<string, { contentId: bigint; roundId: bigint; readyAt: number }>();
  /**
   * Reservations seen lately (in real time): an ask reserves, then submits a second or two later, and a clock jump in
   * between (the snapshot timeout's is an hour, longer than a reservation's 30 minutes) would expire it under the
   * asker. --auto-advance never jumps past one; one not used within RESERVATION_HOLD_MS holds nothing.
   */
  private reservations: { submitter: string; expiresAt: number; seenAt: number }[] = [];

  /**
   * An x402 authorization the service just asked `wallet` to sign holds the clock as a reservation does: the asker
   * signs, then sends its one call, and a jump in between (an hour for a snapshot timeout, past the authorization's 30
   * minutes) made USDC refuse it (ERC3009InvalidAuthorizationTime) under an ask that did nothing wrong.
   */
  holdFor(wallet: string, validBefore: number): void {
    this.reservations.push({ submitter: wallet.toLowerCase(), expiresAt: validBefore, seenAt: Date.now() });
  }
  // What a pass reads of each open round, and the newest block it had seen before reading it. Both views read storage
  // only, which changes only in a new block, so a pass that finds no block newer than that reuses the answer: every
  // pass (one each 400 ms) read two views per open round, and a sandbox with 30 rounds open in one test file spent
  // 0.17 CPU-s a second, it and anvil, reading answers that had not changed. A round's configuration is fixed when it
  // opens.
  private readonly roundCores = new Map<string, { block: bigint; core: RoundCore }>();
  private readonly roundConfigs = new Map<string, RoundConfigView>();
  readonly revealed = new Map<string, { isUp: boolean; predictedUpBps: number }>(); // by commitKey
  /**
   * What this keeper's own raters committed, by commitKey: the keeper made those votes, so their reveal needs no
   * decryption (a pairing and a G2 multiplication each: about a fifth of a busy sandbox's CPU). Their ciphertexts are
   * real tlock all the same (buildCommitVoteParams, as loopsign's own votes), and a vote from anyone else is decrypted.
   */
  private readonly ownVotes = new Map<string, { isUp: boolean; predictedUpBps: number; salt: Hex }>();
  // Passes run one after another; a tick always gets a pass that starts after it was asked for (a pass already in
  // flight may have started before the ask that the caller wants handled).
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private intervals = { fast: 400, idle: 1600 };
  private sleepingIdle = false;
  private quietPasses = 0;
  private lastNudge = 0;
  private stopped = false;
  autoAdvance = false;
  /** Whether simulated raters vote on new questions. */
  ratersEnabled = true;
  /** Whether the keeper reveals commits (off: users reveal their own, e.g. `loopsign rate reveal`). */
  revealsEnabled = true;
  /** Whether passes also run on the timer (off: only ticks and time jumps run them, for deterministic tests). */
  background = true;
  /** Other sandbox services' next moments (an invited reviewer answering): --auto-advance moves the clock to them too. */
  readonly wakeups: (() => number | undefined)[] = [];

  constructor(
    private readonly chain: SandboxChain,
    private readonly beacon: SandboxBeacon,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  /**
   * Passes on a timer: every 400 ms while anything moves, every 1.6 s once several passes in a row found no new
   * block and had nothing to do and no request reached the sandbox meanwhile (`nudge`). A sandbox shared by a run of
   * test files lives for minutes and is idle most of it: each pass asks anvil for its block number, and polling at
   * the fast rate cost about 0.035 CPU-s a second, the sandbox and anvil, doing nothing. Idle, a reveal or rater is at
   * most 1.2 s later; a request brings the fast rate back at once.
   */
  start(intervalMs = 400, idleIntervalMs = 1600): void {
    this.intervals = { fast: intervalMs, idle: idleIntervalMs };
    this.schedule(intervalMs);
  }

  /** Something reached the sandbox (a request): keep passes at the fast rate, and run one soon if they had slowed. */
  nudge(): void {
    this.lastNudge = Date.now();
    // A stopped keeper stays stopped: the sandbox stops it before closing its server and anvil, and a request that
    // arrives meanwhile must not start a pass against a node that is going away.
    if (this.stopped) return;
    if (this.timer && this.sleepingIdle) {
      clearTimeout(this.timer);
      this.schedule(this.intervals.fast);
    }
  }

  private schedule(ms: number): void {
    this.sleepingIdle = ms > this.intervals.fast;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.background) return this.schedule(this.intervals.fast);
      const before = this.lastBlock;
      void this.tick()
        .then(
          (s) => {
            const quiet = this.lastBlock === before && s.raterVotes + s.reveals + s.settled + s.advanced === 0;
            this.quietPasses = quiet ? this.quietPasses + 1 : 0;
          },
          (e) => {
            this.quietPasses = 0;
            // A pass cut short by the sandbox stopping (anvil gone under it) is no news.
            if (!this.stopped) this.log(`keeper: ${(e as Error).message}`);
          },
        )
        .finally(() => {
          if (this.stopped) return;
          const idle = this.quietPasses >= 5 && Date.now() - this.lastNudge > 2000;
          this.schedule(idle ? this.intervals.idle : this.intervals.fast);
        });
    }, ms);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.queue;
  }

  /** One pass, queued after any pass in flight. */
  tick(): Promise<KeeperSummary> {
    return this.enqueue(() => this.pass());
  }

  /**
   * Make time pass on the chain. Simulated raters live in real time, so a pass first lets them answer every
   * question asked before the jump; without it a question submitted just before could be seen only afterwards,
   * when its commit window has closed.
   */
  advance(seconds: number): Promise<number> {
    return this.enqueue(async () => {
      await this.pass();
      return this.chain.advanceTime(seconds);
    });
  }

  /**
   * Stop following every round and commit seen so far (after any pass in flight); new questions and votes are
   * followed as before. For a reset between test files sharing one sandbox: the questions of a file that is done
   * must not get raters, reveals, settlements or clock jumps in the next file's time (nor cost it a read each pass).
   */
  forget(): Promise<void> {
    return this.enqueue(async () => {
      await this.scanLogs();
      this.openRounds.clear();
      this.pendingSettlements.clear();
      this.pending.clear();
      this.ownVotes.clear();
      this.roundCores.clear();
      this.roundConfigs.clear();
    });
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private engine() {
    return { address: this.chain.addresses.roundVotingEngine, abi: RoundVotingEngine.abi } as const;
  }

  private async read<T>(functionName: string, args: unknown[]): Promise<T> {
    return (await this.chain.publicClient.readContract({
      ...this.engine(),
      functionName: functionName as never,
      args: args as never,
    })) as T;
  }

  /** The round's core view as of the newest block seen, read again only when a newer block has been seen. */
  private async roundCore(contentId: bigint, roundId: bigint): Promise<RoundCore> {
    const key = `${contentId}:${roundId}`;
    const cached = this.roundCores.get(key);
    if (cached && cached.block === this.lastBlock) return cached.core;
    const block = this.lastBlock;
    const core = await this.read<RoundCore>('roundCore', [contentId, roundId]);
    this.roundCores.set(key, { block, core });
    return core;
  }

  private async roundConfig(contentId: bigint, roundId: bigint): Promise<RoundConfigView> {
    const key = `${contentId}:${roundId}`;
    const cached = this.roundConfigs.get(key);
    if (cached) return cached;
    const config = await this.read<RoundConfigView>('roundConfigSnapshot', [contentId, roundId]);
    // A round not opened yet reads as all zeros: only an opened round's configuration is fixed.
    if (config[0] !== 0) this.roundConfigs.set(key, config);
    return config;
  }

  private async scanLogs(): Promise<void> {
    // Never cached (as viem's getBlockNumber would within its cacheTime): a number from just before the newest block
    // would hide that block's events.
    const latest = await this.chain.blockNumber();
    if (latest <= this.lastBlock) return;
    const logs = await this.chain.publicClient.getLogs({
      address: [this.chain.addresses.contentRegistry, this.chain.addresses.roundVotingEngine, this.chain.addresses.advisoryVoteRecorder],
      fromBlock: this.lastBlock + 1n,
      toBlock: latest,
    });
    this.lastBlock = latest;
    for (const l of logs) {
      if (sameAddress(l.address, this.chain.addresses.contentRegistry)) {
        try {
          const d = decodeEventLog({ abi: contentRegistryAbi, data: l.data, topics: l.topics });
          if (d.eventName === 'ContentSubmitted')
            this.openRounds.set(`${d.args.contentId}:1`, { contentId: d.args.contentId, roundId: 1n });
          if (d.eventName === 'SubmissionReserved')
            this.reservations.push({
              submitter: d.args.submitter.toLowerCase(),
              expiresAt: Number(d.args.expiresAt),
              seenAt: Date.now(),
            });
          // A reservation used (its submitter's submission follows it) holds the clock no longer: without
          // this, every ask's result waited out RESERVATION_HOLD_MS before the snapshot timeout's jump.
          if (d.eventName === 'ContentSubmitted' || d.eventName === 'QuestionBundleSubmitted') {
            const used = this.reservations.findIndex((r) => r.submitter === d.args.submitter.toLowerCase());
            if (used >= 0) this.reservations.splice(used, 1);
          }
        } catch {
          // other registry events
        }
        continue;
      }
      if (sameAddress(l.address, this.chain.addresses.advisoryVoteRecorder)) {
        try {
          const d = decodeEventLog({ abi: advisoryRecorderAbi, data: l.data, topics: l.topics });
          if (d.eventName === 'AdvisoryVoteRecorded') {
            const a = d.args;
            this.pending.set(a.advisoryCommitKey, {
              contentId: a.contentId,
              roundId: a.roundId,
              commitKey: a.advisoryCommitKey,
              targetRound: Number(a.targetRound),
              ciphertext: a.ciphertext,
              advisory: true,
            });
          }
        } catch {
          // not an advisory record
        }
        continue;
      }
      if (l.topics[0] === SETTLEMENT_PENDING_TOPIC) {
        const d = decodeEventLog({ abi: RoundVotingEngine.abi, data: l.data, topics: l.topics, eventName: 'RbtsSettlementPending' });
        const { contentId, roundId } = d.args as { contentId: bigint; roundId: bigint };
        const block = await this.chain.publicClient.getBlock({ blockNumber: l.blockNumber! });
        this.pendingSettlements.set(`${contentId}:${roundId}`, { contentId, roundId, readyAt: Number(block.timestamp) });
        continue;
      }
      try {
        const d = decodeEventLog({ abi: votingEngineAbi, data: l.data, topics: l.topics });
        if (d.eventName === 'VoteCommitted') {
          const a = d.args;
          const commitKey = keccak256(`0x${a.voter.slice(2)}${a.commitHash.slice(2)}` as Hex);
          this.pending.set(commitKey, {
            contentId: a.contentId,
            roundId: a.roundId,
            commitKey,
            targetRound: Number(a.targetRound),
            ciphertext: a.ciphertext,
          });
          this.openRounds.set(`${a.contentId}:${a.roundId}`, { contentId: a.contentId, roundId: a.roundId });
        }
      } catch {
        // RoundOpened / VoteRevealed / RoundSettled and the like are not in the shared ABI; handled by reading state
      }
    }
  }

  private async raterVotes(contentId: bigint, roundId: bigint): Promise<number> {
    const key = `${contentId}:${roundId}`;
    if (this.voted.has(key) || !this.ratersEnabled) return 0;
    const [startTime, state] = await this.roundCore(contentId, roundId);
    const [epochDuration, , minVoters] = await this.roundConfig(contentId, roundId);
    const [openRoundId, reference] = await this.read<readonly [bigint, number]>('previewCommitContext', [contentId]);
    // Raters answer within the round's first epoch: the engine accepts their target rounds only there.
    if (state !== 0 || openRoundId !== roundId || this.chain.now() >= startTime + epochDuration) {
      this.voted.add(key);
      return 0;
    }
    // The live registry's `contents` entry (its third field is the submitter), which never votes on its own question.
    const [, , submitter] = (await this.chain.publicClient.readContract({
      address: this.chain.addresses.contentRegistry,
      abi: ContentRegistry.abi,
      functionName: 'contents',
      args: [contentId],
    })) as readonly [bigint, Hex, Hex, ...unknown[]];
    const raters = this.chain.raters.filter((r) => !sameAddress(r.address, submitter)).slice(0, minVoters);
    let count = 0;
    for (const [i, rater] of raters.entries()) {
      // The chain is the record of who voted, so a pass that failed half-way is finished by the next one.
      if ((await this.read<readonly [Hex, Hex]>('voterCommitKey', [contentId, roundId, rater.address]))[1] !== ZERO_KEY) continue;
      // A rater who voted on this question in the last 24 hours (an earlier round) may not vote again yet (live rule).
      const [lastVote] = await this.read<readonly [bigint, bigint, bigint]>('voteCooldownTimestamps', [
        contentId,
        rater.address,
        rater.address,
        ZERO_KEY,
      ]);
      if (lastVote > 0n && this.chain.now() < Number(lastVote) + VOTE_COOLDOWN_SECONDS) continue;
      // Deterministic opinions per question: most raters like it, a seeded minority does not.
      const h = BigInt(keccak256(toHex(`${contentId}:${roundId}:${i}`)));
      const isUp = h % 10n < 7n;
      const built = await buildCommitVoteParams(
        {
          voter: rater.address,
          contentId,
          isUp,
          predictedUpPercent: 50 + Number(h % 40n),
          stakeAmount: '1',
          epochDuration,
          roundId,
          roundReferenceRatingBps: reference,
          runtime: {
            drandChainHash: this.beacon.network.chainHash,
            drandGenesisTimeSeconds: this.beacon.network.genesis,
            drandPeriodSeconds: this.beacon.network.period,
            roundStartTimeSeconds: startTime,
          },
          now: this.chain.now(),
        },
        [this.beacon.network],
      );
      await this.chain.send(rater, this.chain.addresses.roundVotingEngine, votingEngineAbi, 'commitVote', [
        contentId,
        BigInt(built.secret.roundContext),
        BigInt(built.targetRound),
        built.drandChainHash,
        built.commitHash,
        built.ciphertext,
        BigInt(built.stakeWei),
        built.frontend,
      ]);
      const { isUp: up, predictedUpBps, salt } = built.secret;
      this.ownVotes.set(built.secret.commitKey.toLowerCase(), { isUp: up, predictedUpBps, salt });
      count++;
    }
    this.voted.add(key);
    return count;
  }

  private async reveal(p: PendingCommit): Promise<boolean> {
    const n = this.beacon.network;
    if (this.chain.now() < roundTime(p.targetRound, n.genesis, n.period) || !this.beacon.round(p.targetRound)) return false;
    if (!p.advisory) {
      // The voter may have revealed it already (`loopsign rate reveal`): the chain says so, and sending the reveal
      // again would revert and stall every pass after it.
      // Through the live engine's own views: commitCore (revealed, direction) and rbtsCommitState (prediction).
      const [, , , , revealed, isUp] = await this.read<readonly [Hex, bigint, Hex, number, boolean, boolean, number]>('commitCore', [
        p.contentId,
        p.roundId,
        p.commitKey,
      ]);
      if (revealed) {
        const [predictedUpBps] = await this.read<readonly [number, ...unknown[]]>('rbtsCommitState', [p.contentId, p.roundId, p.commitKey]);
        this.revealed.set(p.commitKey.toLowerCase(), { isUp, predictedUpBps });
        this.pending.delete(p.commitKey);
        return false;
      }
    }
    let plain = this.ownVotes.get(p.commitKey.toLowerCase());
    if (!plain)
      try {
        const armored = Buffer.from(p.ciphertext.slice(2), 'hex').toString('utf8');
        const get = async (r: number) => {
          const b = this.beacon.round(r);
          if (!b) throw new Error(`round ${r} not out`);
          return b;
        };
        // The beacon is this sandbox's own (this.beacon): checking its signature would prove nothing here. A forged or
        // wrong beacon cannot decrypt the vote anyway, and the commit is then marked undecryptable below.
        plain = decodeVotePlaintext(await tlockDecrypt(n, armored, get, this.chain.now() - Math.floor(Date.now() / 1000), 'own'));
      } catch (error) {
        p.failed = `undecryptable: ${(error as Error).message}`;
        this.log(`keeper: commit ${p.commitKey} cannot be decrypted (${(error as Error).message})`);
        return false;
      }
    // Advisory votes have no on-chain reveal: decrypting them is the reveal the status reports.
    if (!p.advisory)
      await this.chain.send(this.chain.deployer, this.chain.addresses.roundVotingEngine, votingEngineAbi, 'revealVoteByCommitKey', [
        p.contentId,
        p.roundId,
        p.commitKey,
        plain.isUp,
        plain.predictedUpBps,
        plain.salt,
      ]);
    this.revealed.set(p.commitKey.toLowerCase(), { isUp: plain.isUp, predictedUpBps: plain.predictedUpBps });
    this.pending.delete(p.commitKey);
    this.ownVotes.delete(p.commitKey.toLowerCase());
    return true;
  }

  private async pass(): Promise<KeeperSummary> {
    const summary: KeeperSummary = { raterVotes: 0, reveals: 0, settled: 0, advanced: 0 };
    await this.scanLogs();
    for (const { contentId, roundId } of this.openRounds.values()) summary.raterVotes += await this.raterVotes(contentId, roundId);
    // The raters' commits, to reveal in this pass (a block someone else made meanwhile waits for the next pass).
    if (summary.raterVotes > 0) await this.scanLogs();
    // One commit whose reveal fails must not hold up the others or the settlements: go on, then report it.
    const failures: string[] = [];
    if (this.revealsEnabled) {
      for (const p of [...this.pending.values()]) {
        if (p.failed) continue;
        try {
          if (await this.reveal(p)) summary.reveals++;
        } catch (error) {
          // A revert will revert again: reported once, then left alone. Anything else (a node hiccup) is retried.
          if (error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError))
            p.failed = `reveal reverted: ${error.shortMessage}`;
          failures.push(`reveal of ${p.commitKey}: ${(error as Error).message}`);
        }
      }
    }
    // The earliest moment something on chain waits for (a reveal window, a reveal grace, a snapshot timeout).
    let waitUntil = 0;
    const waitFor = (t: number) => {
      if (t > this.chain.now() && (waitUntil === 0 || t < waitUntil)) waitUntil = t;
    };
    for (const [key, { contentId, roundId }] of this.openRounds) {
      // Read per round: a pass with no open round needs no beacon.
      const p = this.beacon.network.period;
      const [startTime, state, voteCount, revealedCount] = await this.roundCore(contentId, roundId);
      if (state !== 0) {
        this.openRounds.delete(key);
        this.roundCores.delete(key);
        continue;
      }
      const [epochDuration, maxDuration, minVoters] = await this.roundConfig(contentId, roundId);
      const now = this.chain.now();
      const epochEnd = startTime + epochDuration;
      const roundEnd = startTime + maxDuration;
      // Every commit is revealable by epochEnd + 2 periods (its target round's window), so the reveal grace is surely
      // over this long after it (or after the round's end, when later).
      const graceOver = Math.max(roundEnd, epochEnd + 2 * p) + REVEAL_GRACE_SECONDS;
      const allRevealed = voteCount > 0 && revealedCount === voteCount;
      let call: string | undefined;
      if (revealedCount >= minVoters && (allRevealed || now >= graceOver)) call = 'settleRound';
      // An expired round without enough commits is cancelled once its reveal grace is over too (the engine allows it at
      // once; the keeper waits, as it always has, so a round closed to votes stays visible a while).
      else if (now >= graceOver && voteCount < minVoters) call = 'cancelExpiredRound';
      else if (now >= graceOver && revealedCount < minVoters) call = 'finalizeRevealFailedRound';
      if (call) {
        await this.chain.send(this.chain.deployer, this.chain.addresses.roundVotingEngine, RoundVotingEngine.abi, call as never, [
          contentId,
          roundId,
        ]);
        this.openRounds.delete(key);
        this.roundCores.delete(key);
        summary.settled++;
      } else if (voteCount >= minVoters && now < epochEnd + 2 * p + 1) waitFor(epochEnd + 2 * p + 1);
    }
    // A settled round (this pass's included) gets its RbtsSettlementPending event read, then waits out the timeout.
    if (summary.settled > 0) await this.scanLogs();
    for (const [key, s] of this.pendingSettlements) {
      const due = s.readyAt + SNAPSHOT_TIMEOUT_SECONDS;
      if (this.chain.now() < due) {
        waitFor(due);
        continue;
      }
      await this.chain.send(
        this.chain.deployer,
        this.chain.addresses.roundVotingEngine,
        RoundVotingEngine.abi,
        'applyRbtsSettlementSnapshot',
        [s.contentId, s.roundId, [], []],
      );
      this.pendingSettlements.delete(key);
      summary.settled++;
    }
    if (waitUntil === 0) {
      // Nothing on chain to wait for: the earliest moment another service waits for, if any.
      for (const wake of this.wakeups) {
        const t = wake();
        if (t !== undefined) waitFor(t);
      }
    }
    if (this.autoAdvance && waitUntil > this.chain.now() && summary.raterVotes + summary.reveals + summary.settled === 0) {
      // A question asked while this pass ran gets its raters (next pass) before the clock jumps past its window.
      const known = this.openRounds.size;
      await this.scanLogs();
      // Never past a reservation an ask may be about to use (see `reservations`).
      this.reservations = this.reservations.filter((r) => Date.now() - r.seenAt < RESERVATION_HOLD_MS && r.expiresAt > this.chain.now());
      for (const r of this.reservations) if (waitUntil > r.expiresAt - 60) waitUntil = r.expiresAt - 60;
      if (this.openRounds.size === known && waitUntil > this.chain.now()) {
        await this.chain.advanceTime(waitUntil - this.chain.now());
        summary.advanced = 1;
      }
    }
    if (failures.length > 0) throw new Error(failures.join('; '));
    return summary;
  }
}
