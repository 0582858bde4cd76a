// The ask's shape, written once: a zod schema that normalizeAsk runs on every ask (client and sandbox), that emits
// the JSON Schema an MCP client reads in tools/list (loopsign_quote, loopsign_ask: the `ask` argument), and that
// renders the field table and the category list in docs/ask.md (test/ask-schema.test.ts, test/ask-shapes.test.ts
// fail when the page differs). Its tolerance is the normalizer's (numbers or decimal strings for counts, the
// service's aliases): nothing it accepts is refused here.
// Two shapes are taken: the live service's and the interface document's (seed), which loopsign translates or refuses
// field by field (docs/ask.md, "Seed-shaped files"). They differ only in bounty and roundConfig, so those two are
// `oneOf` the two shapes (a seed field makes the interface shape; none, the live one): exactly one fits, and the
// schema stays one object instead of two whole copies (31 KB against 48 KB in tools/list, measured).
// The rules that tie fields together are normalizeAsk's, reported with every other problem; the schema states the
// ones JSON Schema can say (ASK_RULES, QUESTION_RULES: `anyOf`, `not`, `if`/`then`) and the descriptions say the rest
// (values compared with each other: voters against the bounty, the spend cap against the bounty and bonus).
import * as z from 'zod';
import { CATEGORIES } from './categories.js';

export { CATEGORIES };

/** How every amount is written: the one sentence about units, in every amount's description. */
export const UNITS =
  'atomic units as a decimal string: USDC and LREP have 6 decimals, so 1 USDC = "1000000", 1.5 USDC = "1500000", 0.25 USDC = "250000"';

const ATOMIC = /^(0|[1-9][0-9]*)$/;
const atomic = (what: string) => z.string().regex(ATOMIC).describe(`${what}, in ${UNITS}`);
const asset = (fallback: string) => z.enum(['USDC', 'LREP', 'usdc', 'lrep']).describe(`the token: "USDC" or "LREP" (default ${fallback})`);
/** A whole number the normalizer takes as a number or a decimal string. */
const count = (what: string, min: number, max: number) =>
  z
    .union([z.string().regex(/^\s*[0-9]+\s*$/), z.number().int().min(min).max(max)])
    .describe(`${what}: a whole number from ${min} to ${max}, as a decimal string ("3") or a number`);
const address = (what: string) =>
  z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .describe(`${what}: 0x followed by 40 hex characters`);
const seed = (what: string) => z.union([z.string(), z.number()]).describe(`interface (seed) shape only: ${what}`);
const PAYMENT_MODES = [
  'wallet_calls',
  'x402_authorization',
  'agent_wallet',
  'eip3009_usdc_authorization',
  'eip3009_authorization',
  'native_x402',
  'x402',
] as const;

/** `required` in a rule, with its keys named under `properties` too (a strict validator asks for both). */
const req = (...keys: string[]) => ({ required: keys, properties: Object.fromEntries(keys.map((k) => [k, true])) });

/** The two shapes loopsign takes: the live service's, and the interface document's (seed), which it translates. */
type Shape = 'live' | 'seed';

/**
 * A field only the interface (seed) shape has: in the seed shape, what loopsign does with it; in the live shape,
 * absent (`not: {}`), which is what keeps the two shapes apart (`oneOf`).
 */
const seedOnly = (shape: Shape, what: string) =>
  shape === 'seed' ? seed(what).optional() : z.never().optional().describe(`interface (seed) shape only: ${what}`);

const X402_MODES = ['x402_authorization', 'eip3009_usdc_authorization', 'eip3009_authorization', 'native_x402', 'x402'];

const SEED_BOUNTY_KEYS = ['requiredSettledRounds', 'bountyStartBy', 'bountyWindowSeconds', 'feedbackWindowSeconds'];
const SEED_ROUND_KEYS = ['epochDuration', 'maxDuration'];

/**
 * Both shapes of an object, exactly one of which fits (`oneOf`): the live one (no seed field) and the interface
 * document's (at least one seed field: a refinement for zod, `anyOf` of `required` for JSON Schema).
 */
function bothShapes<L extends z.ZodType, S extends z.ZodObject>(live: L, seedShape: S, seedKeys: string[]) {
  const hasSeedKey = (v: Record<string, unknown>) => seedKeys.some((k) => v[k] !== undefined && v[k] !== null);
  return z.xor([
    live.meta({ title: 'live shape' }),
    seedShape
      .refine(hasSeedKey)
      .meta({ title: 'interface (seed) shape: has at least one of its own fields', anyOf: seedKeys.map((k) => req(k)) }),
  ]);
}

const bountyShape = (shape: Shape) =>
  z.looseObject({
    amount: z
      .string()
      .regex(/^[1-9][0-9]{6,}$/)
      .describe(`what the raters are paid in all, at least 1 USDC = "1000000", in ${UNITS}`),
    asset: asset('"USDC"').optional(),
    requiredVoters: count(
      'how many raters must answer (default 3; at least 5 for a bounty of 1,000 USDC = "1000000000" or more, 8 for 10,000 USDC or more); equals roundConfig.minVoters when roundConfig is given',
      3,
      65535,
    ).optional(),
    bountyEligibility: z
      .literal([0, 8, '0', '8', 'everyone', 'open', 'proof_of_human', 'proof-of-human'])
      .describe('who may earn it: 0 or "everyone" (default), 8 or "proof_of_human"')
      .optional(),
    requiredSettledRounds: seedOnly(shape, '"1" is dropped (the service pays on one round); anything else is refused'),
    bountyStartBy: seedOnly(shape, 'unix seconds; 0 or at least 30 minutes ahead is dropped, anything nearer is refused'),
    bountyWindowSeconds: seedOnly(shape, 'dropped when equal to the question duration, otherwise refused'),
    feedbackWindowSeconds: seedOnly(shape, 'dropped when equal to the question duration, otherwise refused'),
  });

const bounty = bothShapes(bountyShape('live'), bountyShape('seed'), SEED_BOUNTY_KEYS).describe(
  'the payment to the raters: {"amount": "1500000", "asset": "USDC", "requiredVoters": "3"} is 1.5 USDC for 3 raters',
);

const roundConfigShape = (shape: Shape) =>
  z.looseObject({
    questionDurationSeconds: count(
      `how long the question is open, in seconds (default 1200)${shape === 'seed' ? '; if given with epochDuration, equal to it' : ''}`,
      1,
      4294967295,
    ).optional(),
    minVoters: count('equal to bounty.requiredVoters (3 when the bounty does not say)', 1, 65535).optional(),
    maxVoters: count('at most this many raters (default 100; at least minVoters)', 1, 65535).optional(),
    epochDuration: seedOnly(shape, 'the round length in seconds; translated to questionDurationSeconds (must equal maxDuration)'),
    maxDuration: seedOnly(shape, 'the round length in seconds; translated to questionDurationSeconds (must equal epochDuration)'),
  });

const roundConfig = bothShapes(roundConfigShape('live'), roundConfigShape('seed'), SEED_ROUND_KEYS).describe(
  'the round: {"questionDurationSeconds": "1200", "minVoters": "3", "maxVoters": "100"} (interface shape: {"epochDuration": "1200", "maxDuration": "1200", …}); or give roundPreset instead, not both',
);

const roundPreset = z.string().describe('a named round instead of roundConfig: "pure_agent_fast" (60 s, 3 raters) or "default" (1200 s)');

const templateId = z
  .string()
  .describe('the result template (default "generic_rating"; loopsign_templates lists them and their required inputs)');
const templateInputs = z
  .record(z.string(), z.unknown())
  .describe('inputs of the template, strings by name (the ones its templateInputsSchema requires must be given)');
const templateVersion = count('the template version (only 1 is offered)', 1, Number.MAX_SAFE_INTEGER);

const confidentiality = z
  .looseObject({
    visibility: z
      .enum(['public', 'gated'])
      .describe('"public" (default) or "gated": raters see the context only after accepting terms')
      .optional(),
    disclosurePolicy: z
      .enum(['private_forever', 'after_settlement', 'private_until_settlement'])
      .describe('gated only: "private_forever" (default) or "after_settlement"')
      .optional(),
    bond: z
      .looseObject({
        amount: z.union([z.string().regex(ATOMIC), z.number().int().nonnegative()]).describe(`"0", or from 1000000 to 2^64-1, in ${UNITS}`),
        asset: asset('"LREP"').optional(),
      })
      .describe('gated only: a bond raters stake (default {"amount": "0", "asset": "LREP"})')
      .optional(),
  })
  .describe('who may see the context: {"visibility": "gated"} needs a service-hosted detailsUrl and no contextUrl or videoUrl');

/** A string with something in it (loopsign takes an empty or blank URL as absent). */
const FILLED = { type: 'string', pattern: '\\S' };

/**
 * The rules across a question's fields that JSON Schema can state (loopsign's check, ask-normalize.ts, reports the
 * same ones; test/ask-schema.test.ts holds the two in step): some media to look at; a video never with images; a
 * gated question (confidentiality on the question) with a service-hosted detailsUrl and no contextUrl or videoUrl.
 */
const QUESTION_RULES = {
  anyOf: ['contextUrl', 'imageUrls', 'imageFiles', 'videoUrl', 'detailsUrl'].map((k) => req(k)),
  allOf: [
    { not: { required: ['videoUrl', 'imageUrls'], properties: { videoUrl: FILLED, imageUrls: { type: 'array', minItems: 1 } } } },
    {
      if: {
        required: ['confidentiality'],
        properties: { confidentiality: { type: 'object', required: ['visibility'], properties: { visibility: { const: 'gated' } } } },
      },
      then: {
        ...req('detailsUrl'),
        not: {
          anyOf: [
            { required: ['contextUrl'], properties: { contextUrl: FILLED } },
            { required: ['videoUrl'], properties: { videoUrl: FILLED } },
          ],
        },
      },
    },
  ],
};

const question = z
  .looseObject({
    title: z.string().min(1).max(120).describe('the question raters answer, 1 to 120 characters'),
    contextUrl: z
      .string()
      .describe(
        'an https page raters look at (not a direct image file); a question needs contextUrl, imageUrls or videoUrl (a gated one: detailsUrl)',
      )
      .optional(),
    imageUrls: z
      .array(z.string())
      .max(4)
      .describe('up to 4 images uploaded to the service (loopsign_upload_image): …/api/attachments/images/att_<id>.webp#sha256=0x<hash>')
      .optional(),
    imageFiles: z
      .array(z.string())
      .max(4)
      .describe('local image files loopsign uploads first and lists in imageUrls (paths relative to the ask file)')
      .optional(),
    videoUrl: z.string().describe('a YouTube link (never together with imageUrls)').optional(),
    detailsUrl: z.string().describe('written details hosted off-chain (https; for gated questions a service-hosted attachment)').optional(),
    detailsHash: z
      .string()
      .regex(/^(0x[0-9a-fA-F]{64})?$/)
      .describe('0x + 64 hex: the SHA-256 of the details text (given together with detailsUrl)')
      .optional(),
    categoryId: z
      .union([z.string().regex(/^\s*[1-8]\s*$/), z.number().int().min(1).max(8)])
      .describe(`the category, "1" to "8" as a decimal string (or a number): ${CATEGORIES.map((c) => `${c.id} ${c.name}`).join(', ')}`),
    tags: z
      .union([z.array(z.string()).min(1).max(3), z.string().min(1)])
      .describe('1 to 3 tags: an array of strings (or one comma-separated string), e.g. ["release"]'),
    templateId: templateId.optional(),
    templateVersion: templateVersion.optional(),
    templateInputs: templateInputs.optional(),
    confidentiality: confidentiality.optional(),
    targetAudience: z
      .record(z.string(), z.unknown())
      .describe(
        'who should answer: ageGroups, countries, expertise, languages, nationalities, roles (arrays of strings), ai, team, hybrid (objects)',
      )
      .optional(),
    roundConfig: roundConfig.optional(),
    roundPreset: roundPreset.optional(),
  })
  .describe(
    'one question (give question, or questions for a bundle, not both): {"title": "Should this agent ship release 42?", "contextUrl": "https://example.com/release-42", "categoryId": "1", "tags": ["release"]}',
  )
  .meta(QUESTION_RULES);

const EXAMPLE = {
  chainId: 8453,
  clientRequestId: 'release-42-go-no-go',
  maxPaymentAmount: '2500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  feedbackBonus: { amount: '1000000', asset: 'USDC' },
  question: {
    title: 'Should this agent ship release 42?',
    contextUrl: 'https://example.com/release-42',
    categoryId: '1',
    tags: ['release'],
  },
};

/** An interface (seed) shaped ask: the interface document's round and bounty fields, which loopsign translates. */
const SEED_EXAMPLE = {
  chainId: 8453,
  clientRequestId: 'release-42-go-no-go-seed',
  maxPaymentAmount: '1500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3', requiredSettledRounds: '1' },
  roundConfig: { epochDuration: '1200', maxDuration: '1200', minVoters: '3', maxVoters: '100' },
  question: {
    title: 'Should this agent ship release 42?',
    contextUrl: 'https://example.com/release-42',
    categoryId: '1',
    tags: ['release'],
  },
};

/** Whether a body holds a field of the interface (seed) shape (null counts as absent, as the normalizer takes it). */
export function isSeedShaped(body: unknown): boolean {
  const obj = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const has = (o: Record<string, unknown>, keys: string[]) => keys.some((k) => o[k] !== undefined && o[k] !== null);
  const b = obj(body);
  return (
    has(obj(b.bounty), SEED_BOUNTY_KEYS) ||
    has(obj(b.roundConfig), SEED_ROUND_KEYS) ||
    has(obj(obj(b.question).roundConfig), SEED_ROUND_KEYS)
  );
}

/**
 * The rules across the ask's fields that JSON Schema can state: question or questions (not both); x402 pays a single
 * USDC question (and a USDC bonus) only; a feedback bonus is for single questions. The rest are in the descriptions
 * (voters against the bounty, the spend cap against the bounty and bonus); loopsign's check reports all of them.
 */
const ASK_RULES = [
  { anyOf: [req('question'), req('questions')] },
  { not: req('question', 'questions') },
  {
    if: {
      anyOf: [
        { required: ['paymentMode'], properties: { paymentMode: { enum: X402_MODES } } },
        { not: req('paymentMode'), required: ['fundingMode'], properties: { fundingMode: { enum: X402_MODES } } },
      ],
    },
    then: {
      properties: {
        questions: { type: 'array', maxItems: 1 },
        bounty: { type: 'object', properties: { asset: { enum: ['USDC', 'usdc'] } } },
        feedbackBonus: { type: 'object', properties: { asset: { enum: ['USDC', 'usdc'] } } },
      },
    },
  },
  {
    if: { required: ['questions'], properties: { questions: { type: 'array', minItems: 2 } } },
    then: { not: req('feedbackBonus') },
  },
];

/** What an ask takes, besides the service's own pass-through fields (webhooks, transport, …). */
const fields = {
  chainId: z
    .literal([8453, 84532, 31337, '8453', '84532', '31337'])
    .describe('the chain, the configured one: 8453 (Base), 84532 (Base Sepolia) or 31337 (the local sandbox)'),
  clientRequestId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{4,160}$/)
    .describe(
      'your idempotency label: 4-160 letters, digits, ".", "_", ":" or "-" (e.g. "release-42-go-no-go"); the same id resumes the same ask and never pays twice',
    ),
  maxPaymentAmount: atomic(
    'the most this ask may spend: at least the bounty plus a feedback bonus in the same asset (e.g. "2500000" for a 1.5 USDC bounty and a 1 USDC bonus)',
  ).optional(),
  bounty,
  question: question.optional(),
  questions: z
    .array(question)
    .min(1)
    .max(10)
    .describe('a bundle of 1 to 10 questions (instead of question; no feedbackBonus, no x402, no gated questions)')
    .optional(),
  feedbackBonus: z
    .looseObject({
      amount: atomic('the bonus for written feedback, more than 0'),
      asset: asset("the bounty's asset").optional(),
      awarder: address('who awards it (default: the asking wallet)').optional(),
      feedbackClosesAt: z
        .never()
        .optional()
        .describe('refused (interface shape): the service closes the bonus with the question and takes no close time'),
    })
    .describe('an optional bonus for the best written feedback (single questions only): {"amount": "1000000", "asset": "USDC"}')
    .optional(),
  roundConfig: roundConfig.optional(),
  roundPreset: roundPreset.optional(),
  templateId: templateId.optional(),
  templateVersion: templateVersion.optional(),
  templateInputs: templateInputs.optional(),
  confidentiality: confidentiality.optional(),
  paymentMode: z
    .enum(PAYMENT_MODES)
    .describe(
      '"wallet_calls" or "x402_authorization" (x402: a single question with a USDC bounty and any bonus in USDC); default: x402 where it can pay, else wallet calls',
    )
    .optional(),
  fundingMode: z.enum(PAYMENT_MODES).describe('another name for paymentMode').optional(),
  walletAddress: address('the paying wallet (loopsign fills in its own)').optional(),
  agentWalletAddress: address('another name for walletAddress').optional(),
  dryRun: z.boolean().describe('ask the service for a dry run (no payment)').optional(),
  // The service's own fields, passed through untouched.
  ...Object.fromEntries(
    [
      'mode',
      'executionMode',
      'sandbox',
      'signatureMode',
      'transport',
      'paymentAuthorization',
      'webhookUrl',
      'webhookSecret',
      'webhookEvents',
      'webhookChallengeId',
      'webhookSignature',
    ].map((k) => [k, z.unknown().describe('passed to the service as given').optional()]),
  ),
};

/** The ask as the service parses it (maxPaymentAmount optional): what normalizeAsk checks every body against. */
export const askSchema = z.strictObject(fields).meta({ allOf: ASK_RULES, examples: [EXAMPLE, SEED_EXAMPLE] });

/** The ask as loopsign sends it (ask, quote): the same, with maxPaymentAmount required (the spend cap is yours). */
export const clientAskSchema = z
  .strictObject({ ...fields, maxPaymentAmount: fields.maxPaymentAmount.unwrap() })
  .describe(
    `A paid ask. Amounts are ${UNITS}. Give chainId, clientRequestId, maxPaymentAmount, bounty and question (or questions); the first example pays 1.5 USDC to 3 raters plus a 1 USDC feedback bonus, at most 2.5 USDC. Two shapes are taken: the live service's and the interface document's (seed), which differ in bounty and roundConfig (each oneOf the two; loopsign translates the seed fields or refuses them, naming the field); the second example is seed-shaped.`,
  )
  .meta({ allOf: ASK_RULES, examples: [EXAMPLE, SEED_EXAMPLE] });

type JsonSchema = Record<string, any>;

const CHAIN_NAMES: Record<number, string> = { 8453: 'Base', 84532: 'Base Sepolia', 31337: 'the local sandbox' };

/**
 * The JSON Schema of the ask as loopsign takes it (no $schema: it is embedded in a tool's inputSchema). Given the
 * chain a server is configured for, chainId is that chain alone and the examples use it: a client that copies the
 * example then asks on the right chain (an ask for another chain is refused, chain_mismatch).
 */
export function askJsonSchema(chainId?: number): JsonSchema {
  const { $schema: _, ...schema } = z.toJSONSchema(clientAskSchema, { io: 'input', target: 'draft-7' }) as JsonSchema;
  if (chainId === undefined) return schema;
  schema.properties.chainId = {
    enum: [chainId, String(chainId)],
    description: `the chain this server is configured for: ${chainId}${CHAIN_NAMES[chainId] ? ` (${CHAIN_NAMES[chainId]})` : ''}; an ask for another chain is refused`,
  };
  schema.examples = (schema.examples as JsonSchema[]).map((e) => ({ ...e, chainId }));
  return schema;
}

// --- Problems: every way a body misses the shape, each with its path and the fix (the field's description) ----------

export interface ShapeProblem {
  field: string;
  message: string;
}

const jsonOf = new WeakMap<z.ZodType, JsonSchema>();
function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  let json = jsonOf.get(schema);
  if (!json) jsonOf.set(schema, (json = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema));
  return json;
}

/** The schema node at a path (properties, items, and the branches of oneOf and anyOf, the live shape first). */
function nodeAt(root: JsonSchema, path: PropertyKey[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    if (!node) return undefined;
    const candidates: JsonSchema[] = [
      node,
      ...((node.oneOf as JsonSchema[] | undefined) ?? []),
      ...((node.anyOf as JsonSchema[] | undefined) ?? []),
    ];
    node = candidates
      .map((c) => (typeof key === 'number' ? c.items : c.properties?.[key as string]) as JsonSchema | undefined)
      .find(Boolean);
  }
  return node;
}

/** `questions[0].title` from ['questions', 0, 'title']. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, k) => (typeof k === 'number' ? `${out}[${k}]` : out ? `${out}.${String(k)}` : String(k)), '');
}

/** The schema's description of a field: what to write there (undefined for a path the schema does not describe). */
export function fieldDescription(field: string, schema: z.ZodType = clientAskSchema): string | undefined {
  const path = field.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== '');
  return nodeAt(
    jsonSchemaOf(schema),
    path.map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
  )?.description as string | undefined;
}

const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
};

const DISPLAY = /^\s*([0-9]*\.?[0-9]+)\s*(USDC|LREP)?\s*$/i;

/** The atomic units a display amount ("1.5", "1.5 USDC", 1.5) stands for, and its asset if named; undefined if none. */
export function displayAmount(value: unknown): { atomic: string; asset?: string } | undefined {
  const m = typeof value === 'number' ? DISPLAY.exec(String(value)) : typeof value === 'string' ? DISPLAY.exec(value) : null;
  if (!m) return undefined;
  const [whole, frac = ''] = m[1]!.split('.');
  if (frac.length > 6) return undefined;
  const atomic = BigInt(`${whole || '0'}${frac.padEnd(6, '0')}`).toString();
  return m[2] ? { atomic, asset: m[2].toUpperCase() } : { atomic };
}

/**
 * For a value that looks like a display amount where atomic units belong: the question a message ends with ("did you
 * mean "1500000"?"). Never applied: the person or agent decides.
 */
export function didYouMeanAtomic(value: unknown): string {
  if (typeof value === 'string' && ATOMIC.test(value)) return '';
  const d = displayAmount(value);
  return d ? `; that looks like a display amount: did you mean "${d.atomic}"?` : '';
}

/** For a display amount given where an object {amount, asset} belongs (`"bounty": "1.5 USDC"`). */
export function didYouMeanAmountObject(value: unknown, fallbackAsset = 'USDC'): string {
  const d = displayAmount(value);
  return d ? `; did you mean {"amount": "${d.atomic}", "asset": "${d.asset ?? fallbackAsset}"}?` : '';
}

const AMOUNT_KEYS = new Set(['amount', 'maxPaymentAmount']);

/**
 * The body without what the normalizer takes as absent: null anywhere in an object, and `"feedbackBonus": false`.
 * Where null is no answer (chainId, bounty, question), normalizeAsk names the field itself.
 */
function absentDropped(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => absentDropped(v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || (k === 'feedbackBonus' && v === false && key === undefined)) continue;
    out[k] = absentDropped(v, k);
  }
  return out;
}

/** Every place `body` misses the schema's shape, each with the field's path and what to write there. */
export function shapeProblems(body: unknown, schema: z.ZodType = askSchema): ShapeProblem[] {
  const parsed = schema.safeParse(absentDropped(body), { reportInput: true });
  if (parsed.success) return [];
  const json = jsonSchemaOf(schema);
  const known = Object.keys((json.properties as object | undefined) ?? {});
  const out: ShapeProblem[] = [];
  const report = (issue: z.core.$ZodIssue, prefix: PropertyKey[]) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length === 2 && !issue.errors.some((e) => e.length === 0)) {
      // bounty or roundConfig in neither shape: the problems of the shape it has the fields of (seed fields make it
      // the interface shape), each with its own path.
      const value = valueAt(body, path);
      const seedShaped = isSeedShaped({ bounty: value, roundConfig: value });
      for (const inner of issue.errors[seedShaped ? 1 : 0]!) report(inner, path);
      return;
    }
    if (issue.code === 'custom' && issue.path.length === 0 && prefix.length > 0) return; // the seed shape's refinement
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const near = path.length === 0 ? nearest(key, known) : undefined;
        out.push({ field: fieldPath([...path, key]), message: `unknown field "${key}"${near ? `; did you mean "${near}"?` : ''}` });
      }
      return;
    }
    const field = fieldPath(path);
    const description = (nodeAt(json, path)?.description as string | undefined) ?? issue.message;
    const input = (issue as { input?: unknown }).input;
    const last = path.at(-1);
    const hint =
      typeof last === 'string' && AMOUNT_KEYS.has(last)
        ? didYouMeanAtomic(input)
        : (last === 'bounty' || last === 'feedbackBonus') && typeof input !== 'object'
          ? didYouMeanAmountObject(input)
          : '';
    out.push({ field, message: `${input === undefined ? 'is required' : `${show(input)} is not valid`}: ${description}${hint}` });
  };
  for (const issue of parsed.error.issues) report(issue, []);
  return out;
}

function valueAt(body: unknown, path: PropertyKey[]): unknown {
  let node = body;
  for (const key of path) node = node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
  return node;
}

/** The known name nearest to a misspelt one (at most 2 edits, or a difference of letter case only). */
export function nearest(word: string, names: string[]): string | undefined {
  let best: [string, number] | undefined;
  for (const name of names) {
    const d = name.toLowerCase() === word.toLowerCase() ? 0 : distance(word.toLowerCase(), name.toLowerCase());
    if (d <= 2 && (!best || d < best[1])) best = [name, d];
  }
  return best?.[0];
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

// --- The field table of docs/ask.md, rendered from the same schema ---------------------------------------------------

const PASSED_THROUGH = 'passed to the service as given';

function typeOf(node: JsonSchema): string {
  if (Array.isArray(node.anyOf)) return (node.anyOf as JsonSchema[]).map(typeOf).join(' or ');
  if (Array.isArray(node.enum)) return (node.enum as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(', ');
  const type = Array.isArray(node.type) ? node.type.join(' or ') : ((node.type as string | undefined) ?? 'any');
  if (node.pattern) return `${type} \`${node.pattern}\``;
  if (type === 'array') return `array of ${typeOf(node.items ?? {})}`;
  return type;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** A field the shape does not take (`not: {}`). */
const absent = (node: JsonSchema | undefined) => !node || (node.not !== undefined && Object.keys(node.not).length === 0);

/**
 * The rows of the table: every field of the ask in either shape (objects opened, bundles' questions as question's), in
 * schema order; a field of the interface (seed) shape only is marked so in its type.
 */
export function askFieldRows(): { field: string; type: string; required: boolean; description: string }[] {
  const rows: { field: string; type: string; required: boolean; description: string }[] = [];
  const walk = (live: JsonSchema, seedShape: JsonSchema, prefix: string) => {
    const required = new Set((live.required as string[] | undefined) ?? []);
    const liveProps = (live.properties as Record<string, JsonSchema> | undefined) ?? {};
    const seedProps = (seedShape.properties as Record<string, JsonSchema> | undefined) ?? {};
    for (const key of new Set([...Object.keys(liveProps), ...Object.keys(seedProps)])) {
      const field = `${prefix}${key}`;
      const inLive = !absent(liveProps[key]);
      const inSeed = !absent(seedProps[key]);
      const child = (inLive ? liveProps[key] : inSeed ? seedProps[key] : (liveProps[key] ?? seedProps[key]))!;
      if (child.description === PASSED_THROUGH) continue;
      const shapes = Array.isArray(child.oneOf) ? (child.oneOf as JsonSchema[]) : undefined;
      const opened = child.properties || shapes ? child : undefined;
      const items = child.type === 'array' && child.items?.properties ? child.items : undefined;
      const type = shapes
        ? 'object (oneOf: live or interface shape)'
        : opened
          ? 'object'
          : items
            ? 'array of objects'
            : !inLive && !inSeed
              ? 'refused in both shapes'
              : typeOf(child);
      rows.push({
        field,
        type: inLive || !inSeed ? type : `${type} (interface shape only)`,
        required: required.has(key),
        description: (child.description as string | undefined) ?? '',
      });
      if (shapes) walk(shapes[0]!, shapes[1]!, `${field}.`);
      else if (opened) walk(opened, seedProps[key] ?? opened, `${field}.`);
      else if (items && key !== 'questions') walk(items, seedProps[key]?.items ?? items, `${field}[].`);
    }
  };
  const schema = askJsonSchema();
  walk(schema, schema, '');
  return rows;
}

/** The markdown table docs/ask.md holds between its ask-fields markers. */
export function askFieldTable(): string {
  const lines = ['| Field | Type | Required | What to write |', '|---|---|---|---|'];
  for (const r of askFieldRows()) lines.push(`| \`${r.field}\` | ${cell(r.type)} | ${r.required ? 'yes' : ''} | ${cell(r.description)} |`);
  return lines.join('\n');
}

/** The category list docs/ask.md holds between its categories markers. */
export function categoryTable(): string {
  const lines = ['| `categoryId` | Name | Slug | Suggested tags |', '|---|---|---|---|'];
  for (const c of CATEGORIES) lines.push(`| \`"${c.id}"\` | ${cell(c.name)} | \`${c.slug}\` | ${c.tags.join(', ')} |`);
  return lines.join('\n');
}
