// The spending policy file (issue 14 §1): limits the user sets for what loopsign may spend, whatever an agent asks.
// Every policy file that applies is enforced: the one in loopsign's config folder (policy.json) always, and the one
// named by --policy / LOOPSIGN_POLICY on top of it. So a flag or a variable can add limits but never lift one; the
// policy changes only when its file is edited. Amounts are decimal strings of atomic units (6 decimals), like ask files.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import type { LoopsignPaths } from '../paths.js';
import type { Env } from '../env.js';
import { jsonProblem } from '../json-problem.js';

const atomic = z.string().regex(/^(0|[1-9][0-9]{0,30})$/, 'must be a decimal string of atomic units (6 decimals), e.g. "2500000" for 2.5');
const amounts = z.object({ maxUsdc: atomic.optional(), maxLrep: atomic.optional() }).strict();
const chainKey = z.string().regex(/^(8453|84532|31337)$/, 'must be a chain id: 8453, 84532 or 31337');

export const policySchema = z
  .object({
    version: z.literal(1),
    /** Per ask: bounty plus any bonus, per asset. */
    perAsk: amounts.optional(),
    /** Per rating: the stake. */
    perRating: z.object({ maxStakeLrep: atomic }).strict().optional(),
    /** Per chain, over the last 24 hours, counted from every journal's spend ledger. */
    rolling24h: z.record(chainKey, amounts).optional(),
    /** Per chain, over the current calendar month (UTC). */
    calendarMonth: z.record(chainKey, amounts).optional(),
    allowedChains: z
      .array(z.union([z.literal(8453), z.literal(84532), z.literal(31337)]))
      .min(1)
      .optional(),
    allowedCategories: z
      .array(z.string().regex(/^[0-9]+$/, 'must be a category id (decimal string)'))
      .min(1)
      .optional(),
    allowedTemplates: z.array(z.string().min(1)).min(1).optional(),
    /** Above these amounts (per ask or rating) a human must approve the spend, else it is refused. */
    approvalThreshold: amounts.optional(),
  })
  .strict();

export type PolicyFile = z.infer<typeof policySchema>;

export interface LoadedPolicy {
  /** The file's path (for the built-in default of `loopsign mcp`, its name: src/policy/default.ts). */
  file: string;
  source: 'config folder' | 'flag' | 'env' | 'built-in default';
  policy: PolicyFile;
}

export function defaultPolicyFile(paths: LoopsignPaths): string {
  return path.join(paths.config, 'policy.json');
}

/** Where a run's policies are named: --policy, else LOOPSIGN_POLICY of the run's environment; the config folder. */
export interface PolicySources {
  flag: string | undefined;
  env: Env;
  paths: LoopsignPaths;
}

/** Reads and validates one policy file; undefined when it does not exist. One clear line for every bad field. */
export async function readPolicyFile(file: string, source: LoadedPolicy['source']): Promise<LoadedPolicy | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && source === 'config folder') return undefined;
    throw new UsageError(
      'policy_unreadable',
      `cannot read the policy file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        hint:
          source === 'config folder'
            ? 'fix its permissions'
            : `check the path given by ${source === 'flag' ? '--policy' : 'LOOPSIGN_POLICY'}`,
      },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError('invalid_policy', `policy file ${file} is ${jsonProblem(error, text)}`);
  }
  const parsed = policySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : '(top level)';
    throw new UsageError('invalid_policy', `policy file ${file}: ${where}: ${issue.message}`, {
      hint: 'see docs/policy.md for every field and a complete example',
      details: { field: where },
    });
  }
  return { file, source, policy: parsed.data };
}

/** Every policy that applies to this run (see the header); empty when none is set. */
export async function loadPolicies({ flag, env, paths }: PolicySources): Promise<LoadedPolicy[]> {
  const out: LoadedPolicy[] = [];
  const base = await readPolicyFile(defaultPolicyFile(paths), 'config folder');
  if (base) out.push(base);
  const extra =
    flag !== undefined
      ? { file: flag, source: 'flag' as const }
      : env.LOOPSIGN_POLICY
        ? { file: env.LOOPSIGN_POLICY, source: 'env' as const }
        : undefined;
  if (extra && path.resolve(extra.file) !== path.resolve(defaultPolicyFile(paths))) {
    const p = await readPolicyFile(extra.file, extra.source);
    if (p) out.push(p);
  }
  return out;
}
