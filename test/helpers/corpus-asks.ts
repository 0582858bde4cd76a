// What test/corpus-asks.test.ts (in-process) and test/corpus-asks.cli.test.ts (the built check-plan) both use: the live
// ask and rating corpora, their fixed clock, the field a service refusal names, the rating request's arguments, and
// the corpus's accepted answers as check-plan jobs; also the corpus's chain and the commit a rating request carries, for
// the boundary tests (check-plan-input, plan-guard-input, rate-boundary).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { keccak256, toHex } from 'viem';
import type { AnswerKind } from '../../src/ask/check-plan.js';
import { chainForProfile } from '../../src/chains/index.js';
import type { ChainConfig } from '../../src/chains/table.js';
import type { BuiltCommit } from '../../src/vote/build.js';
import { roundContext } from '../../src/vote/commit.js';
import { readVector, VECTORS } from './cli.js';

export const corpus = readVector('live/asks.json');
export const rating = readVector('live/rating.json');
export const NOW = Date.parse(corpus.meta.fixedClock) / 1000;
export type Case = (typeof corpus.cases)[number];

/** What the service names as the field of a refusal, in loopsign's terms (`question.` for a single question). */
export function serviceField(c: Case): string {
  const first = /^([A-Za-z0-9_.[\]]+?)(?::|\s)/.exec(c.verdict.message)![1]!;
  return c.request.body.question !== undefined ? first.replace(/^questions\[0\]\./, 'question.') : first;
}

export const ciphertext = toHex(readFileSync(path.join(VECTORS, 'sample-quicknet-round403.age')));
export function ratingArgs(c: any) {
  return { ...c.request.arguments, ciphertext };
}

/** Every accepted ask's plan or x402 request, and every x402 ask's signed follow-up: [name, ask, answer, kind]. */
export function acceptedAnswers(): [string, unknown, unknown, AnswerKind][] {
  const jobs: [string, unknown, unknown, AnswerKind][] = [];
  for (const c of corpus.cases.filter((x: Case) => x.verdict.accepted)) {
    jobs.push([c.id, c.request.body, c.ask.body, c.ask.body.paymentMode === 'wallet_calls' ? 'wallet_plan' : 'x402_request']);
    if (c.x402) jobs.push([`${c.id}-follow-up`, c.x402.signedFollowUp.request.body, c.x402.signedFollowUp.body, 'x402_plan']);
  }
  return jobs;
}

/** The corpus's chain: 8453 with exactly the contract addresses the service used (meta.contracts). */
export function corpusChain(): ChainConfig {
  const m = corpus.meta.contracts;
  const chain = chainForProfile(8453);
  chain.contracts = {
    ...chain.contracts,
    contentRegistry: m.contentRegistry,
    questionRewardPoolEscrow: m.questionRewardPoolEscrow,
    x402QuestionSubmitter: m.x402QuestionSubmitter,
    feedbackBonusEscrow: m.feedbackBonusEscrow,
    protocolConfig: m.protocolConfig,
    roundVotingEngine: m.roundVotingEngine,
    advisoryVoteRecorder: m.advisoryVoteRecorder,
  };
  chain.tokens.USDC.address = m.usdc;
  chain.tokens.LREP.address = m.lrep;
  return chain;
}

/** The commit the guard compares with, from what a rating request carried (the vote itself stays local). */
export function commitOf(c: any): BuiltCommit {
  const a = ratingArgs(c);
  return {
    roundId: a.roundId,
    roundReferenceRatingBps: a.roundReferenceRatingBps,
    targetRound: a.targetRound,
    drandChainHash: a.drandChainHash,
    commitHash: a.commitHash,
    ciphertext: a.ciphertext,
    stakeWei: a.stakeWei,
    stakeAtomicUnits: a.stakeWei,
    frontend: a.frontend,
    secret: {
      isUp: true,
      predictedUpBps: 0,
      salt: '0x',
      commitKey: '0x',
      ciphertextHash: keccak256(a.ciphertext),
      roundContext: roundContext(BigInt(a.roundId), a.roundReferenceRatingBps).toString(),
    },
  };
}
