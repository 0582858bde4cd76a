// The policy `loopsign mcp` enforces when the user has written none (issue 22): an agent is never given an unlimited
// budget. The CLI, run by a person, keeps its behaviour (no limit, a notice on every spend). The numbers are in
// docs/policy.md; a policy file replaces them whole (the user may then raise or lower any limit).
import type { LoadedPolicy, PolicyFile } from './file.js';

/** How messages and `loopsign_policy` name it (in place of a file's path). */
export const BUILT_IN_POLICY = 'the built-in default policy of loopsign mcp';

const USDC = (n: number) => String(n * 1_000_000);
const LREP = USDC;
const day = { maxUsdc: USDC(20), maxLrep: LREP(20) };

export const MCP_DEFAULT_POLICY: PolicyFile = {
  version: 1,
  // At most 5 USDC per ask (bounty plus any bonus), and 5 LREP for an ask paid in LREP.
  perAsk: { maxUsdc: USDC(5), maxLrep: LREP(5) },
  // A vote stakes 1 … 10 LREP: at most half of that without a policy.
  perRating: { maxStakeLrep: LREP(5) },
  // 20 USDC and 20 LREP per 24 hours on each chain.
  rolling24h: { '8453': day, '84532': day, '31337': day },
  // Above 2 USDC (an ask) or 2 LREP (an ask or a stake) the person must say yes.
  approvalThreshold: { maxUsdc: USDC(2), maxLrep: LREP(2) },
};

/** The default in one line (the server's start line, `loopsign_policy`). */
export const DEFAULT_POLICY_SUMMARY =
  "at most 5 USDC per ask and 20 USDC per 24 hours on each chain, a person's approval above 2 USDC; a stake of at most 5 LREP, 20 LREP per 24 hours, approval above 2 LREP";

/** How the person replaces the default (a hint an MCP user can act on). */
export const CHANGE_DEFAULT_POLICY =
  "write a policy file (docs/policy.md) as policy.json in loopsign's config folder, or name one with LOOPSIGN_POLICY in the server's environment; it replaces this default whole, from the next call";

export function builtInPolicy(): LoadedPolicy {
  return { file: BUILT_IN_POLICY, source: 'built-in default', policy: structuredClone(MCP_DEFAULT_POLICY) };
}
