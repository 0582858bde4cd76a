// The live service's chain preflight before it builds a plan (RateLoop 0b442ae, lib/x402/questionSubmission.ts; the
// vendored corpus's chainReads show each read): the registry's ProtocolConfig, then validateRoundConfig with the ask's
// round settings. A refusal there is no class the live service knows, so it answers as for any unexpected exception:
// HTTP 500 failed_submission, the error's own message, retryable, no originalCode (the corpus's failed_submission
// cases have that shape). Nothing is stored and no plan is given, so no money can move.
import type { Hex } from 'viem';
import type { NormalizedAsk } from '../../protocol/ask-normalize.js';
import { ContentRegistry, ProtocolConfig } from '../contracts/artifacts.js';
import type { SandboxChain } from '../chain.js';
import { ApiError } from './envelope.js';

export async function checkRoundBounds(chain: SandboxChain, ask: NormalizedAsk): Promise<void> {
  const protocolConfig = (await chain.publicClient.readContract({
    address: chain.addresses.contentRegistry,
    abi: ContentRegistry.abi,
    functionName: 'protocolConfig',
  })) as Hex;
  const r = ask.roundConfig;
  try {
    await chain.publicClient.readContract({
      address: protocolConfig,
      abi: ProtocolConfig.abi,
      functionName: 'validateRoundConfig',
      args: [BigInt(r.epochDuration), BigInt(r.maxDuration), BigInt(r.minVoters), BigInt(r.maxVoters)],
    });
  } catch (error) {
    throw new ApiError(500, 'failed_submission', (error as Error).message, 'retry_or_contact_operator');
  }
}
