#!/usr/bin/env node
// The differential evidence corpus (issue 39): valid run evidence packets of every schema loopsign verifies (v2,
// v3, v4; manual and automated runs; Ed25519 and retired P-256 keys with DER and P1363 signatures) and audit
// exports, then mutations of every field in the classes where loopsign and the service's own offline verifier once
// disagreed. Everything is made here, from a seed: the packets, their aggregation, roots, digests and signatures,
// with test keys derived from the seed (never a production key). The service's verdicts are recorded separately
// (test/fixtures/evidence-differential/README.md says how); this script makes the cases only.
//
//   node scripts/evidence-corpus.mjs [--seed 39] [--out test/fixtures/evidence-differential/corpus.json.br]
//
// Replayable: the same seed gives the same cases, byte for byte, except P-256 signatures (ECDSA draws a fresh
// nonce each time; they verify the same). Canonical forms are written here from the spec (evidence.md §3): RFC 8785
// for v4 (keys by UTF-16 code unit), the legacy form for v2/v3 and audit events (keys by localeCompare, ties in
// insertion order).
import { createECDH, createHash, createPrivateKey, createPublicKey, sign as cryptoSign } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';

const SCHEMA = {
  v2: 'rateloop.human-assurance.evidence.v2',
  v3: 'rateloop.human-assurance.evidence.v3',
  v4: 'rateloop.human-assurance.evidence.v4',
};

// --- Seeded randomness (sfc32 seeded through SHA-256) ---------------------------------------------------------------
function rng(seed) {
  const h = createHash('sha256').update(String(seed)).digest();
  let [a, b, c, d] = [0, 4, 8, 12].map((i) => h.readUInt32LE(i));
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    hex: (n) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
  };
}

// --- Canonical forms ---------------------------------------------------------------------------------------------------
function canonical(value, compare) {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, compare)).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort(compare);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k], compare)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
const jcs = (v) => canonical(v, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
const legacy = (v) => canonical(v, (a, b) => a.localeCompare(b, 'en-US'));
const sha = (text) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
const canonFor = (schema) => (schema === SCHEMA.v4 ? jcs : legacy);

function merkleRoot(leaves, canon) {
  let level = [...leaves].sort();
  if (level.length === 0) return sha(canon([]));
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha(canon([level[i], level[i + 1] ?? level[i]])));
    level = next;
  }
  return level[0];
}

// --- Keys from the seed --------------------------------------------------------------------------------------------------
const b64url = (buf) => Buffer.from(buf).toString('base64url');
function keysFrom(seed) {
  const bytes = (label) => createHash('sha256').update(`loopsign-evidence-corpus/${seed}/${label}`).digest();
  const ed = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), bytes('ed25519')]),
    format: 'der',
    type: 'pkcs8',
  });
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(bytes('p256'));
  const point = ecdh.getPublicKey();
  const ec = createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: b64url(bytes('p256')),
      x: b64url(point.subarray(1, 33)),
      y: b64url(point.subarray(33)),
    },
    format: 'jwk',
  });
  const spki = (k) => b64url(createPublicKey(k).export({ format: 'der', type: 'spki' }));
  const keyId = (prefix, s) => `${prefix}:${createHash('sha256').update(Buffer.from(s, 'base64url')).digest('hex').slice(0, 24)}`;
  const edSpki = spki(ed);
  const ecSpki = spki(ec);
  return {
    ed: { priv: ed, spki: edSpki, keyId: keyId('ed25519', edSpki), algorithm: 'Ed25519' },
    ec: { priv: ec, spki: ecSpki, keyId: keyId('p256', ecSpki), algorithm: 'ECDSA-SHA256' },
    keyId,
  };
}

// --- Packets ---------------------------------------------------------------------------------------------------------------

/** The aggregation the spec recomputes (evidence.md §6), as the generator's own arithmetic. */
function aggregationOf(rec, minimum, passRule) {
  const cell = (e) => {
    const submitted = e.validReviewerCount + e.invalidJudgmentCount + e.pendingJudgmentCount;
    const suppressed = e.validReviewerCount < minimum;
    let preference = null;
    let disagreement = null;
    if (!suppressed) {
      const v = e.validReviewerCount;
      preference = {
        candidate: e.candidate,
        baseline: e.baseline,
        tie: e.tie,
        candidateShareBps: Math.round((e.candidate * 10000) / v),
        method: 'descriptive_case_share',
      };
      disagreement = {
        nonCandidateCount: e.baseline + e.tie,
        rateBps: Math.round(((e.baseline + e.tie) * 10000) / v),
        method: 'descriptive_case_share',
      };
    }
    const met = e.validReviewerCount >= passRule.minimumValidResponses;
    return {
      ...(e.source ? { source: e.source } : {}),
      targetReviewerCount: e.targetReviewerCount,
      assignedReviewerCount: e.assignedReviewerCount,
      submittedJudgmentCount: submitted,
      validReviewerCount: e.validReviewerCount,
      invalidJudgmentCount: e.invalidJudgmentCount,
      pendingJudgmentCount: e.pendingJudgmentCount,
      missingTargetJudgmentCount: Math.max(0, e.targetReviewerCount - submitted),
      missingAssignedJudgmentCount: Math.max(0, e.assignedReviewerCount - submitted),
      suppressed,
      quorum: { requiredValidReviewers: passRule.minimumValidResponses, met },
      preference,
      disagreement,
      outcome: suppressed || !met || !preference ? 'insufficient' : preference.candidateShareBps >= passRule.thresholdBps ? 'pass' : 'fail',
    };
  };
  const S = [
    'targetReviewerCount',
    'assignedReviewerCount',
    'paidReviewerCount',
    'respondingReviewerCount',
    'completeJudgmentSetReviewerCount',
  ];
  const panels = rec.reviewerSources.map((s) => ({ source: s.source, ...Object.fromEntries(S.map((k) => [k, s[k]])) }));
  const coverage = { ...Object.fromEntries(S.map((k) => [k, panels.reduce((t, p) => t + p[k], 0)])), sourceSubpanels: panels };
  const cases = rec.cases.map((c) => ({ caseId: c.caseId, ...cell(c.overall), sourceSubpanels: c.sourceCounts.map(cell) }));
  const sum = (k) => cases.reduce((t, c) => t + c[k], 0);
  const pass = cases.filter((c) => c.outcome === 'pass').length;
  const fail = cases.filter((c) => c.outcome === 'fail').length;
  const insufficient = cases.filter((c) => c.outcome === 'insufficient').length;
  return {
    aggregationVersion: 'rateloop.descriptive-case-quorum.v2',
    method: 'descriptive_per_case',
    minimumAggregationSize: minimum,
    reviewerCoverage: coverage,
    judgmentCoverage: {
      caseCount: cases.length,
      targetExpectedJudgmentCount: sum('targetReviewerCount'),
      assignedExpectedJudgmentCount: sum('assignedReviewerCount'),
      submittedJudgmentCount: sum('submittedJudgmentCount'),
      validJudgmentCount: sum('validReviewerCount'),
      invalidJudgmentCount: sum('invalidJudgmentCount'),
      pendingJudgmentCount: sum('pendingJudgmentCount'),
      missingTargetJudgmentCount: sum('missingTargetJudgmentCount'),
      missingAssignedJudgmentCount: sum('missingAssignedJudgmentCount'),
    },
    passRule,
    cases,
    suite: {
      method: 'all_cases_must_pass',
      evaluatedCaseCount: pass + fail,
      passCaseCount: pass,
      failCaseCount: fail,
      insufficientCaseCount: insufficient,
      outcome: fail > 0 ? 'fail' : insufficient > 0 || cases.length === 0 ? 'insufficient' : 'pass',
    },
  };
}

/** Random recomputation inputs that reconcile: sources, per-case per-source cells, overall cells. */
function recomputationOf(r, { cases: caseCount, sources: sourceCount, minimum }) {
  const names = ['customer_invited', 'rateloop_network', 'partner_panel'].slice(0, sourceCount);
  const sources = names.map((source) => {
    const target = 1 + r.int(4);
    return {
      source,
      targetReviewerCount: target,
      assignedReviewerCount: target,
      paidReviewerCount: r.int(target + 1),
      respondingReviewerCount: target,
      completeJudgmentSetReviewerCount: target,
    };
  });
  const cases = Array.from({ length: caseCount }, (_, i) => {
    const perSource = sources.map((s) => {
      const valid = r.int(s.targetReviewerCount + 1);
      const invalid = r.int(s.targetReviewerCount - valid + 1);
      const pending = 0;
      const candidate = r.int(valid + 1);
      const baseline = r.int(valid - candidate + 1);
      return {
        source: s.source,
        targetReviewerCount: s.targetReviewerCount,
        assignedReviewerCount: s.assignedReviewerCount,
        validReviewerCount: valid,
        invalidJudgmentCount: invalid,
        pendingJudgmentCount: pending,
        candidate,
        baseline,
        tie: valid - candidate - baseline,
      };
    });
    const total = (k) => perSource.reduce((t, c) => t + c[k], 0);
    const overall = Object.fromEntries(
      [
        'targetReviewerCount',
        'assignedReviewerCount',
        'validReviewerCount',
        'invalidJudgmentCount',
        'pendingJudgmentCount',
        'candidate',
        'baseline',
        'tie',
      ].map((k) => [k, total(k)]),
    );
    // A cell that is suppressed carries no choices (the service refuses one that does).
    const strip = (c) => {
      if (c.validReviewerCount < minimum) {
        delete c.candidate;
        delete c.baseline;
        delete c.tie;
      }
      return c;
    };
    return { caseId: `case_${i + 1}`, overall: strip(overall), sourceCounts: perSource.map(strip) };
  });
  const leaf = () => `sha256:${r.hex(64)}`;
  return {
    caseLeaves: Array.from({ length: caseCount }, leaf),
    responseLeaves: Array.from({ length: 1 + r.int(4) }, leaf),
    reviewerSources: sources,
    cases,
  };
}

function reviewContextOf(r, run) {
  const policyHash = `sha256:${r.hex(64)}`;
  const admissionHash = `0x${r.hex(64)}`;
  const audiencePolicy = { id: `policy_${r.hex(6)}`, version: 1 + r.int(3), hash: policyHash };
  const admissionPolicies = [{ admissionPolicyHash: admissionHash, derivedFrom: { kind: 'assurance_audience_policy', ...audiencePolicy } }];
  const frozen = { policyHash, admissionPolicyHashes: [admissionHash], admissionPolicies: structuredClone(admissionPolicies) };
  let context;
  if (run === 'manual') {
    context = {
      selectionTrigger: {
        kind: 'owner_required',
        source: 'explicit_workspace_assurance_run',
        reasonCodes: ['explicit_workspace_assurance_run'],
      },
      gate: { type: 'not_applicable', policyReference: null, stopGateEvidenceReference: null },
      versions: { audiencePolicy, admissionPolicies, selectionPolicy: null, requestProfile: null },
    };
  } else {
    const opportunityId = `aop_${r.hex(8)}`;
    const selectionPolicy = {
      id: `rpol_${r.hex(6)}`,
      version: 1 + r.int(5),
      mode: r.pick(['manual', 'always', 'fixed', 'rules', 'adaptive']),
    };
    const blocking = run === 'blocking';
    context = {
      selectionTrigger: {
        kind: r.pick(['adaptive_sample', 'critical_risk', 'guardrail_escalation', 'maximum_gap', 'owner_required', 'policy_rule']),
        source: 'persisted_agent_review_opportunity',
        opportunityId,
        reasonCodes: ['sampled'],
        selectionProbabilityBps: r.int(10001),
        sampleBucket: r.int(10000),
      },
      gate: {
        type: blocking ? 'blocking' : 'advisory',
        policyReference: {
          id: selectionPolicy.id,
          version: selectionPolicy.version,
          enforcementMode: blocking ? 'host_enforced' : 'advisory',
        },
        stopGateEvidenceReference: {
          kind: 'human_review_lifecycle_transition',
          opportunityId,
          lifecycleState: r.pick(['completed', 'inconclusive', 'failed_terminal', 'cancelled_before_commit']),
          lifecycleRevision: 1 + r.int(9),
          transitionEventId: `hrtr_${r.hex(8)}`,
          transitionCommitment: `sha256:${r.hex(64)}`,
        },
      },
      versions: {
        audiencePolicy,
        admissionPolicies,
        selectionPolicy,
        requestProfile: { id: `rrp_${r.hex(8)}`, version: 1 + r.int(3), hash: `sha256:${r.hex(64)}` },
      },
    };
  }
  return { context, frozen };
}

/** A payload whose roots and aggregation are computed from its inputs. */
function payloadOf(r, { schema, run, cases, sources, minimum }) {
  const rec = recomputationOf(r, { cases, sources, minimum });
  const { context, frozen } = reviewContextOf(r, run);
  const passRule = {
    metric: 'candidate_preference_share_bps',
    operator: 'gte',
    thresholdBps: r.pick([5000, 6000, 6667]),
    minimumValidResponses: 1 + r.int(3),
  };
  const canon = canonFor(schema);
  return {
    schemaVersion: schema,
    packetId: `haep_${r.hex(12)}`,
    runId: `run_${r.hex(8)}`,
    generatedAt: '2026-07-13T12:00:00.000Z',
    frozen,
    reviewContext: context,
    roots: { caseRoot: merkleRoot(rec.caseLeaves, canon), responseRoot: merkleRoot(rec.responseLeaves, canon) },
    aggregation: aggregationOf(rec, minimum, passRule),
    recomputation: rec,
  };
}

/** Sign {payload, signing} in the schema's canonical form: the digest and signature a service would write. */
function signPacket(payload, signing, key, { encoding = 'der', canon = canonFor(payload?.schemaVersion) } = {}) {
  const signed = { payload, signing };
  const text = canon(signed);
  const sig =
    key.algorithm === 'Ed25519'
      ? cryptoSign(null, Buffer.from(text), key.priv)
      : cryptoSign('sha256', Buffer.from(text), { key: key.priv, dsaEncoding: encoding });
  return { payload, signing, packetDigest: sha(text), signature: b64url(sig) };
}

const signingOf = (key) => ({ algorithm: key.algorithm, keyId: key.keyId, publicKey: key.spki });

// --- Audit exports ---------------------------------------------------------------------------------------------------------
const GENESIS = `sha256:${'0'.repeat(64)}`;
const COLUMNS = [
  ['eventId', 'event_id'],
  ['workspaceId', 'workspace_id'],
  ['previousDigest', 'previous_digest'],
  ['homeRegion', 'home_region'],
  ['actorKind', 'actor_kind'],
  ['actorReference', 'actor_reference'],
  ['assuranceMethod', 'assurance_method'],
  ['action', 'action'],
  ['targetKind', 'target_kind'],
  ['targetId', 'target_id'],
  ['purpose', 'purpose'],
  ['reason', 'reason'],
  ['requestCorrelation', 'request_correlation'],
  ['result', 'result'],
  ['occurredAt', 'occurred_at'],
  ['eventDigest', 'event_digest'],
];

/** The digest of an event's payload (evidence.md §11): the legacy form of the sixteen fields after the previous digest. */
const auditDigest = (previous, payload) => sha(`${previous}\n${legacy(payload)}`);

/** An event's logical values (camelCase), before they are spelled as columns. */
function eventValues(r, i, workspaceId) {
  return {
    eventId: `evt_${r.hex(10)}`,
    workspaceId,
    sequence: i + 1,
    homeRegion: r.pick(['eu', 'us']),
    actorKind: r.pick(['agent', 'member', 'system']),
    actorReference: `wallet:0x${r.hex(8)}`,
    assuranceMethod: r.pick(['wallet_signature', 'session']),
    action: r.pick(['ask.create', 'ask.confirm', 'evidence.export']),
    targetKind: r.pick(['ask', 'run']),
    targetId: `op_${r.hex(6)}`,
    purpose: 'paid_feedback',
    reason: r.pick(['requested', 'scheduled']),
    requestCorrelation: r.pick([null, `req_${r.hex(6)}`]),
    result: 'success',
    metadata: { amount: String(r.int(100)), alpha: r.int(9), nested: { B: 1, a: 2 } },
    occurredAt: new Date(1_780_000_000_000 + i * 1000 + r.int(999)).toISOString(),
  };
}

const payloadOfValues = (v) => ({
  action: v.action,
  actorKind: v.actorKind,
  actorReference: v.actorReference,
  assuranceMethod: v.assuranceMethod,
  eventId: v.eventId,
  homeRegion: v.homeRegion,
  metadata: v.metadata,
  occurredAt: v.occurredAt,
  purpose: v.purpose,
  reason: v.reason,
  requestCorrelation: v.requestCorrelation ?? null,
  result: v.result,
  targetId: v.targetId,
  targetKind: v.targetKind,
  workspaceId: v.workspaceId,
  sequence: v.sequence,
});

/** Spell an event's values as columns: snake_case (metadata as metadata_json text) or camelCase (metadata object). */
function spell(v, style) {
  const e = { sequence: v.sequence };
  for (const [camel, snake] of COLUMNS) {
    if (!(camel in v)) continue;
    e[style === 'camel' ? camel : snake] = v[camel];
  }
  if (style === 'camel') e.metadata = v.metadata;
  else e.metadata_json = JSON.stringify(v.metadata);
  return e;
}

/** A valid export of n events; `edit(values, i)` may change an event's values before it is hashed and spelled. */
function auditExport(r, n, style, edit) {
  const workspaceId = `ws_${r.hex(6)}`;
  let previous = GENESIS;
  const events = [];
  for (let i = 0; i < n; i++) {
    const v = eventValues(r, i, workspaceId);
    v.previousDigest = previous;
    v.eventDigest = auditDigest(previous, payloadOfValues(v));
    events.push(spell(v, style === 'mixed' ? (i % 2 ? 'camel' : 'snake') : style));
    previous = v.eventDigest;
  }
  return {
    format: 'rateloop-audit-v1',
    workspaceId,
    exportedAt: '2026-07-13T12:00:00.000Z',
    events,
    integrity: { valid: true, eventCount: n, headDigest: previous },
    retention: {},
  };
}

/** Re-chain an export after its events were edited: each digest as `payloadFor(event)` hashes it. */
function rechain(doc, payloadFor) {
  let previous = GENESIS;
  for (const e of doc.events) {
    if (!e || typeof e !== 'object') continue;
    const prevKey = 'previousDigest' in e ? 'previousDigest' : 'previous_digest';
    const digestKey = 'eventDigest' in e ? 'eventDigest' : 'event_digest';
    e[prevKey] = previous;
    e[digestKey] = auditDigest(previous, payloadFor(e));
    previous = e[digestKey];
  }
  doc.integrity = { valid: true, eventCount: doc.events.length, headDigest: previous };
  return doc;
}

const col = (e, camel, snake) => e[camel] ?? e[snake];
/** The payload as the service's offline checker builds it (String() of each column, metadata parsed, the date re-formatted). */
function servicePayload(e, workspaceId) {
  const meta = col(e, 'metadata', 'metadata_json');
  return {
    action: String(col(e, 'action', 'action')),
    actorKind: String(col(e, 'actorKind', 'actor_kind')),
    actorReference: String(col(e, 'actorReference', 'actor_reference')),
    assuranceMethod: String(col(e, 'assuranceMethod', 'assurance_method')),
    eventId: String(col(e, 'eventId', 'event_id')),
    homeRegion: String(col(e, 'homeRegion', 'home_region')),
    metadata: meta && typeof meta === 'object' && !Array.isArray(meta) ? meta : typeof meta === 'string' ? safeParse(meta) : meta,
    occurredAt: safeIso(col(e, 'occurredAt', 'occurred_at')),
    purpose: String(col(e, 'purpose', 'purpose')),
    reason: String(col(e, 'reason', 'reason')),
    requestCorrelation: col(e, 'requestCorrelation', 'request_correlation') ?? null,
    result: String(col(e, 'result', 'result')),
    targetId: String(col(e, 'targetId', 'target_id')),
    targetKind: String(col(e, 'targetKind', 'target_kind')),
    workspaceId: String(workspaceId ?? ''),
    sequence: typeof e.sequence === 'number' ? e.sequence : Number(e.sequence),
  };
}
/** The payload with every column as it is written (snake_case read first, then camelCase; metadata as it is). */
function rawPayload(e) {
  const c = (camel, snake) => (e[snake] !== undefined ? e[snake] : e[camel]);
  const meta = c('metadata', 'metadata_json');
  return {
    action: e.action,
    actorKind: c('actorKind', 'actor_kind'),
    actorReference: c('actorReference', 'actor_reference'),
    assuranceMethod: c('assuranceMethod', 'assurance_method'),
    eventId: c('eventId', 'event_id'),
    homeRegion: c('homeRegion', 'home_region'),
    metadata: typeof meta === 'string' ? safeParse(meta) : (meta ?? {}),
    occurredAt: c('occurredAt', 'occurred_at'),
    purpose: e.purpose,
    reason: e.reason,
    requestCorrelation: c('requestCorrelation', 'request_correlation') ?? null,
    result: e.result,
    targetId: c('targetId', 'target_id'),
    targetKind: c('targetKind', 'target_kind'),
    workspaceId: c('workspaceId', 'workspace_id'),
    sequence: e.sequence,
  };
}
function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
function safeIso(v) {
  const d = new Date(String(v));
  return Number.isFinite(d.getTime()) ? d.toISOString() : String(v);
}

// --- Mutation helpers ------------------------------------------------------------------------------------------------------
const clone = (v) => structuredClone(v);
/** Every path to a value in `doc` (objects and arrays included), depth-first. */
function paths(doc, prefix = []) {
  const out = [];
  if (doc && typeof doc === 'object') {
    for (const k of Object.keys(doc)) {
      const p = [...prefix, Array.isArray(doc) ? Number(k) : k];
      out.push(p, ...paths(doc[k], p));
    }
  }
  return out;
}
function getAt(doc, p) {
  return p.reduce((v, k) => (v == null ? undefined : v[k]), doc);
}
function setAt(doc, p, value) {
  const parent = getAt(doc, p.slice(0, -1));
  if (parent == null || typeof parent !== 'object') return false;
  const k = p[p.length - 1];
  if (value === DELETE) {
    if (Array.isArray(parent)) parent.splice(k, 1);
    else delete parent[k];
  } else parent[k] = value;
  return true;
}
const DELETE = Symbol('delete');
const pathText = (p) =>
  p
    .map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`))
    .join('')
    .slice(1);

/** The type mutations of a value: other JSON types, the value in a one-element array, and its removal. */
function typeMutations(v) {
  const list = [
    ['delete', DELETE],
    ['null', null],
    ['zero', 0],
    ['float', 1.5],
    ['negative', -1],
    ['empty-string', ''],
    ['string', 'x'],
    ['true', true],
    ['empty-array', []],
    ['empty-object', {}],
    ['one-element-array', [v]],
    ['object-0', { 0: v }],
  ];
  if (typeof v === 'number') list.push(['number-as-string', String(v)], ['plus-one', v + 1]);
  if (typeof v === 'string')
    list.push(['padded', `${v} `], ['upper', v.toUpperCase()], ['number-from-string', Number.isFinite(Number(v)) ? Number(v) : 7]);
  if (typeof v === 'boolean') list.push(['negated', !v], ['boolean-as-string', String(v)]);
  return list;
}

// --- The corpus ---------------------------------------------------------------------------------------------------------------
export function buildCorpus(seed = 39) {
  const r = rng(seed);
  const keys = keysFrom(seed);
  const cases = [];
  const ids = new Set();
  const add = (cls, name, kind, doc, trust, text) => {
    const id = `${cls}/${name}`;
    if (ids.has(id)) throw new Error(`duplicate case id ${id}`);
    ids.add(id);
    cases.push({ id, class: cls, kind, text: text ?? JSON.stringify(doc), trust });
  };
  const trustOf = (key) => ({ publicKey: key.spki, keyId: key.keyId });

  // Valid bases: every schema × run kind × key/encoding × shape.
  const bases = [];
  for (const [sv, schema] of Object.entries(SCHEMA)) {
    for (const run of ['manual', 'blocking', 'advisory']) {
      for (const [kn, key, encoding] of [
        ['ed25519', keys.ed, undefined],
        ['p256-der', keys.ec, 'der'],
        ['p256-p1363', keys.ec, 'ieee-p1363'],
      ]) {
        for (const [shape, params] of [
          ['one-case', { cases: 1, sources: 1, minimum: 1 }],
          ['three-cases', { cases: 3, sources: 2, minimum: 2 }],
          ['no-case', { cases: 0, sources: 1, minimum: 1 }],
        ]) {
          const payload = payloadOf(r, { schema, run, ...params });
          const packet = signPacket(payload, signingOf(key), key, { encoding });
          const name = `${sv}-${run}-${kn}-${shape}`;
          bases.push({ name, sv, run, kn, shape, key, encoding, packet });
          add('valid', name, 'packet', packet, trustOf(key));
        }
      }
    }
  }
  // The bases mutated below: each schema and run kind, one case and three, under one of the three keys in turn.
  const turnOf = (b) =>
    ['ed25519', 'p256-der', 'p256-p1363'][(Object.keys(SCHEMA).indexOf(b.sv) + ['manual', 'blocking', 'advisory'].indexOf(b.run)) % 3];
  const mainBases = bases.filter((b) => b.shape !== 'no-case' && b.kn === turnOf(b));
  const resign = (b, packet) => signPacket(packet.payload, packet.signing, b.key, { encoding: b.encoding });

  // Signatures written as something other than one unpadded base64url string.
  for (const b of mainBases) {
    const s = b.packet.signature;
    const sigBytes = Buffer.from(s, 'base64url');
    const variants = {
      array: [s],
      'nested-array': [[s]],
      object: { 0: s },
      number: 123,
      null: null,
      true: true,
      missing: DELETE,
      empty: '',
      'padded-1': `${s}=`,
      'padded-2': `${s}==`,
      'leading-space': ` ${s}`,
      'trailing-newline': `${s}\n`,
      'standard-base64': sigBytes.toString('base64'),
      'standard-base64-unpadded': sigBytes.toString('base64').replace(/=+$/, ''),
      truncated: s.slice(0, -1),
      'one-byte-short': b64url(sigBytes.subarray(0, -1)),
      'one-byte-long': b64url(Buffer.concat([sigBytes, Buffer.from([0])])),
      'array-of-bytes': [...sigBytes],
    };
    if (b.key === keys.ec) {
      const other = cryptoSign(
        'sha256',
        Buffer.from(canonFor(b.packet.payload.schemaVersion)({ payload: b.packet.payload, signing: b.packet.signing })),
        {
          key: b.key.priv,
          dsaEncoding: b.encoding === 'der' ? 'ieee-p1363' : 'der',
        },
      );
      variants['other-encoding'] = b64url(other);
    }
    for (const [name, value] of Object.entries(variants)) {
      const p = clone(b.packet);
      setAt(p, ['signature'], value);
      add('signature-shape', `${b.name}/${name}`, 'packet', p, trustOf(b.key));
    }
  }

  // Leaves that are not a list of strings, with the root of [] or the old root, re-signed.
  for (const b of mainBases.filter((_, i) => i % 2 === 0)) {
    const canon = canonFor(b.packet.payload.schemaVersion);
    for (const [leavesKey, rootKey] of [
      ['caseLeaves', 'caseRoot'],
      ['responseLeaves', 'responseRoot'],
    ]) {
      const leaves = b.packet.payload.recomputation[leavesKey];
      const variants = {
        missing: DELETE,
        null: null,
        'empty-object': {},
        zero: 0,
        number: 5,
        'empty-string': '',
        string: 'abc',
        true: true,
        'empty-array': [],
        'number-leaves': [1, 2],
        'null-leaf': [null],
        'nested-leaf': [[leaves[0] ?? 'x']],
        'object-leaves': { 0: leaves[0] ?? 'x' },
        'one-leaf-as-root': leaves.slice(0, 1),
      };
      for (const [name, value] of Object.entries(variants)) {
        for (const root of ['empty-root', 'same-root', 'computed-root']) {
          const p = clone(b.packet);
          setAt(p, ['payload', 'recomputation', leavesKey], value === DELETE ? DELETE : clone(value));
          if (root === 'empty-root') p.payload.roots[rootKey] = sha(canon([]));
          if (root === 'computed-root') {
            try {
              p.payload.roots[rootKey] = merkleRoot(
                value === DELETE || value == null || (typeof value !== 'object' && typeof value !== 'string')
                  ? []
                  : Array.isArray(value) || typeof value === 'string'
                    ? [...value]
                    : [],
                canon,
              );
            } catch {
              continue;
            }
          }
          add('leaves-shape', `${b.name}/${leavesKey}-${name}-${root}`, 'packet', resign(b, p), trustOf(b.key));
        }
      }
      for (const [name, value] of Object.entries({ array: [b.packet.payload.roots[rootKey]], number: 1, null: null, missing: DELETE })) {
        const p = clone(b.packet);
        setAt(p, ['payload', 'roots', rootKey], value === DELETE ? DELETE : clone(value));
        add('leaves-shape', `${b.name}/${rootKey}-${name}`, 'packet', resign(b, p), trustOf(b.key));
      }
    }
  }

  // Values a canonical form must refuse or keep: a case without caseId, a reviewer source without source.
  for (const b of mainBases) {
    const edits = {
      'case-without-caseId': (p) => {
        delete p.payload.recomputation.cases[0].caseId;
        delete p.payload.aggregation.cases[0].caseId;
      },
      'case-caseId-null': (p) => {
        p.payload.recomputation.cases[0].caseId = null;
        p.payload.aggregation.cases[0].caseId = null;
      },
      'case-caseId-number': (p) => {
        p.payload.recomputation.cases[0].caseId = 7;
        p.payload.aggregation.cases[0].caseId = 7;
      },
      'source-without-source': (p) => {
        delete p.payload.recomputation.reviewerSources[0].source;
        delete p.payload.aggregation.reviewerCoverage.sourceSubpanels[0].source;
      },
      'source-null': (p) => {
        p.payload.recomputation.reviewerSources[0].source = null;
        p.payload.aggregation.reviewerCoverage.sourceSubpanels[0].source = null;
      },
      'source-number': (p) => {
        p.payload.recomputation.reviewerSources[0].source = 3;
        p.payload.aggregation.reviewerCoverage.sourceSubpanels[0].source = 3;
      },
      'cell-without-source': (p) => {
        delete p.payload.recomputation.cases[0].sourceCounts[0].source;
        delete p.payload.aggregation.cases[0].sourceSubpanels[0].source;
      },
      'cell-source-empty': (p) => {
        p.payload.recomputation.cases[0].sourceCounts[0].source = '';
        delete p.payload.aggregation.cases[0].sourceSubpanels[0].source;
      },
      'case-without-caseId-only-in-aggregation': (p) => {
        delete p.payload.aggregation.cases[0].caseId;
      },
    };
    for (const [name, edit] of Object.entries(edits)) {
      const p = clone(b.packet);
      if (!p.payload.recomputation.cases.length) continue;
      edit(p);
      add('undefined-in-canonical', `${b.name}/${name}`, 'packet', resign(b, p), trustOf(b.key));
    }
  }

  // Keys localeCompare ranks equal, in opposite insertion order in versions and frozen (and elsewhere), re-signed.
  const TIES = [
    ['\u00e9', 'e\u0301'],
    ['a', 'a\u0000'],
    ['ab', 'a\u00adb'],
    ['k', 'k\u200b'],
  ];
  for (const b of mainBases) {
    TIES.forEach(([x, y], t) => {
      const place = {
        'admission-policies': (p, first, second) => {
          Object.assign(p.payload.reviewContext.versions.admissionPolicies[0], first);
          Object.assign(p.payload.frozen.admissionPolicies[0], second);
        },
        'admission-policies-same-order': (p, first) => {
          Object.assign(p.payload.reviewContext.versions.admissionPolicies[0], first);
          Object.assign(p.payload.frozen.admissionPolicies[0], clone(first));
        },
        'payload-extra': (p, first) => {
          p.payload.extra = first;
        },
      };
      for (const [name, edit] of Object.entries(place)) {
        const p = clone(b.packet);
        edit(p, { [x]: 1, [y]: 2 }, { [y]: 2, [x]: 1 });
        add('locale-ties', `${b.name}/${name}-${t}`, 'packet', resign(b, p), trustOf(b.key));
      }
    });
  }

  // Algorithm confusion: a label that is not the key's type, signed with the key's own algorithm.
  for (const b of mainBases.filter((x) => x.run === 'blocking')) {
    const canon = canonFor(b.packet.payload.schemaVersion);
    const confusions = [
      ['ed25519-label-p256-key', keys.ec, 'Ed25519', 'ed25519'],
      ['ed25519-label-p256-key-p256-id', keys.ec, 'Ed25519', 'p256'],
      ['ecdsa-label-ed25519-key', keys.ed, 'ECDSA-SHA256', 'p256'],
      ['ecdsa-label-ed25519-key-ed25519-id', keys.ed, 'ECDSA-SHA256', 'ed25519'],
    ];
    for (const [name, key, label, prefix] of confusions) {
      const signing = { algorithm: label, keyId: keys.keyId(prefix, key.spki), publicKey: key.spki };
      const signed = { payload: b.packet.payload, signing };
      const text = canon(signed);
      const sig =
        key.algorithm === 'Ed25519' ? cryptoSign(null, Buffer.from(text), key.priv) : cryptoSign('sha256', Buffer.from(text), key.priv);
      const p = { payload: b.packet.payload, signing, packetDigest: sha(text), signature: b64url(sig) };
      add('algorithm-confusion', `${b.name}/${name}`, 'packet', p, { publicKey: key.spki, keyId: signing.keyId });
    }
    for (const label of ['ed25519', 'EdDSA', 'ES256', 'ECDSA', ['Ed25519'], null, 1]) {
      const p = clone(b.packet);
      p.signing.algorithm = label;
      add('algorithm-confusion', `${b.name}/label-${JSON.stringify(label)}`, 'packet', resign(b, p), trustOf(b.key));
    }
  }

  // Keys, pins and key ids in another spelling.
  for (const b of mainBases) {
    const spki = b.key.spki;
    const spkiPadded = Buffer.from(spki, 'base64url').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    const variants = {
      'padded-key-and-pin': [{ publicKey: spkiPadded }, { publicKey: spkiPadded }],
      'padded-key-plain-pin': [{ publicKey: spkiPadded }, {}],
      'plain-key-padded-pin': [{}, { publicKey: spkiPadded }],
      'pin-with-space': [{}, { publicKey: ` ${spki}` }],
      'pin-with-newline': [{}, { publicKey: `${spki}\n` }],
      'key-as-array': [{ publicKey: [spki] }, {}],
      'key-number': [{ publicKey: 5 }, {}],
      'key-standard-base64': [
        { publicKey: Buffer.from(spki, 'base64url').toString('base64') },
        { publicKey: Buffer.from(spki, 'base64url').toString('base64') },
      ],
      'keyid-upper': [{ keyId: b.key.keyId.toUpperCase() }, { keyId: b.key.keyId.toUpperCase() }],
      'keyid-array': [{ keyId: [b.key.keyId] }, {}],
      'keyid-other-prefix': [
        { keyId: b.key.keyId.replace(/^[a-z0-9]+:/, b.key === keys.ed ? 'p256:' : 'ed25519:') },
        { keyId: b.key.keyId.replace(/^[a-z0-9]+:/, b.key === keys.ed ? 'p256:' : 'ed25519:') },
      ],
      'pin-only': [{}, { keyId: undefined }],
      'keyid-only': [{}, { publicKey: undefined }],
      'no-anchor': [{}, { publicKey: undefined, keyId: undefined }],
      'other-pin': [{}, { publicKey: (b.key === keys.ed ? keys.ec : keys.ed).spki }],
      'other-keyid': [{}, { keyId: (b.key === keys.ed ? keys.ec : keys.ed).keyId }],
    };
    for (const [name, [signingEdit, trustEdit]] of Object.entries(variants)) {
      const p = clone(b.packet);
      Object.assign(p.signing, signingEdit);
      const trust = { ...trustOf(b.key), ...trustEdit };
      for (const k of Object.keys(trust)) if (trust[k] === undefined) delete trust[k];
      add('keys-and-pins', `${b.name}/${name}`, 'packet', resign(b, p), trust);
    }
  }

  // Pass rules and aggregation numbers in other types (the service compares them with JavaScript's coercions).
  for (const b of mainBases) {
    for (const field of ['thresholdBps', 'minimumValidResponses']) {
      const v = b.packet.payload.aggregation.passRule[field];
      for (const [name, value] of [
        ['string', String(v)],
        ['one-element-array', [v]],
        ['true', true],
        ['null', null],
        ['float', v + 0.5],
        ['negative', -1],
        ['missing', DELETE],
        ['object', {}],
        ['big', 1e21],
      ]) {
        const p = clone(b.packet);
        setAt(p, ['payload', 'aggregation', 'passRule', field], value);
        // Recompute what depends on the rule, as the service would, so only the type differs.
        const rule = p.payload.aggregation.passRule;
        try {
          const again = aggregationOf(p.payload.recomputation, p.payload.aggregation.minimumAggregationSize, rule);
          p.payload.aggregation = again;
        } catch {}
        add('pass-rule', `${b.name}/${field}-${name}`, 'packet', resign(b, p), trustOf(b.key));
      }
    }
    for (const [name, value] of [
      ['string', String(b.packet.payload.aggregation.minimumAggregationSize)],
      ['zero', 0],
      ['array', [b.packet.payload.aggregation.minimumAggregationSize]],
    ]) {
      const p = clone(b.packet);
      p.payload.aggregation.minimumAggregationSize = value;
      add('pass-rule', `${b.name}/minimumAggregationSize-${name}`, 'packet', resign(b, p), trustOf(b.key));
    }
    for (const [name, value] of [
      ['null', null],
      ['array', []],
      ['string', 'x'],
      ['missing', DELETE],
    ]) {
      const p = clone(b.packet);
      setAt(p, ['payload', 'aggregation', 'passRule'], value);
      add('pass-rule', `${b.name}/passRule-${name}`, 'packet', resign(b, p), trustOf(b.key));
    }
  }

  // One-element arrays (and other types) where a regular expression or a comparison would stringify them.
  for (const b of mainBases.filter((x) => x.run !== 'manual' && x.sv !== 'v2')) {
    const targets = [
      ['reviewContext', 'versions', 'requestProfile', 'hash'],
      ['reviewContext', 'gate', 'stopGateEvidenceReference', 'transitionCommitment'],
      ['reviewContext', 'versions', 'admissionPolicies', 0, 'admissionPolicyHash'],
      ['reviewContext', 'selectionTrigger', 'opportunityId'],
      ['reviewContext', 'selectionTrigger', 'selectionProbabilityBps'],
      ['reviewContext', 'gate', 'type'],
      ['reviewContext', 'selectionTrigger', 'kind'],
      ['reviewContext', 'versions', 'selectionPolicy', 'mode'],
      ['reviewContext', 'selectionTrigger', 'reasonCodes', 0],
    ];
    for (const t of targets) {
      const v = getAt(b.packet.payload, t);
      for (const [name, value] of [
        ['one-element-array', [v]],
        ['nested-array', [[v]]],
        ['object-0', { 0: v }],
      ]) {
        const p = clone(b.packet);
        setAt(p.payload, t, value);
        if (t.includes('admissionPolicies')) setAt(p.payload, ['frozen', 'admissionPolicies', 0, 'admissionPolicyHash'], clone(value));
        add('regexp-stringify', `${b.name}/${pathText(t)}-${name}`, 'packet', resign(b, p), trustOf(b.key));
      }
    }
  }

  // An audience policy that is absent (or not an object) where every comparison with it is undefined === undefined.
  for (const b of mainBases.filter((x) => x.sv !== 'v2')) {
    for (const [name, value] of [
      ['absent', DELETE],
      ['null', null],
      ['string', 'policy'],
      ['empty-object', {}],
      ['array', []],
    ]) {
      const p = clone(b.packet);
      setAt(p.payload, ['reviewContext', 'versions', 'audiencePolicy'], value);
      for (const ap of [p.payload.reviewContext.versions.admissionPolicies[0], p.payload.frozen.admissionPolicies[0]]) {
        delete ap.derivedFrom.id;
        delete ap.derivedFrom.version;
        delete ap.derivedFrom.hash;
      }
      delete p.payload.frozen.policyHash;
      add('audience-absent', `${b.name}/${name}`, 'packet', resign(b, p), trustOf(b.key));
    }
  }

  // Text-level oddities: duplicate keys, lone surrogates, number spellings, a byte order mark, deep nesting.
  for (const b of mainBases) {
    const base = JSON.stringify(b.packet);
    const canon = canonFor(b.packet.payload.schemaVersion);
    add(
      'text',
      `${b.name}/duplicate-key-same`,
      'packet',
      null,
      trustOf(b.key),
      base.replace('"payload":{', `"payload":{"runId":${JSON.stringify(b.packet.payload.runId)},`),
    );
    add(
      'text',
      `${b.name}/duplicate-key-other`,
      'packet',
      null,
      trustOf(b.key),
      base.replace('"payload":{', '"payload":{"runId":"run_other",'),
    );
    add('text', `${b.name}/duplicate-top-signature`, 'packet', null, trustOf(b.key), base.replace(/^\{/, '{"signature":"AAAA",'));
    {
      const p = clone(b.packet);
      p.payload.note = '\ud800';
      add(
        'text',
        `${b.name}/lone-surrogate`,
        'packet',
        signPacket(p.payload, p.signing, b.key, { encoding: b.encoding, canon }),
        trustOf(b.key),
      );
      const q = clone(b.packet);
      q.payload['\udc00'] = 1;
      add(
        'text',
        `${b.name}/lone-surrogate-key`,
        'packet',
        signPacket(q.payload, q.signing, b.key, { encoding: b.encoding, canon }),
        trustOf(b.key),
      );
    }
    {
      const p = clone(b.packet);
      p.payload.emoji = 'a\ud83d\ude00b';
      add('text', `${b.name}/surrogate-pair`, 'packet', resign(b, p), trustOf(b.key));
    }
    {
      const p = clone(b.packet);
      let deep = 'x';
      for (let i = 0; i < 210; i++) deep = [deep];
      p.payload.deep = deep;
      add('text', `${b.name}/nesting-211`, 'packet', resign(b, p), trustOf(b.key));
    }
    add('text', `${b.name}/bom`, 'packet', null, trustOf(b.key), `\ufeff${base}`);
    add(
      'text',
      `${b.name}/number-spelling`,
      'packet',
      null,
      trustOf(b.key),
      base.replace(/"minimumAggregationSize":(\d+)/, '"minimumAggregationSize":$1.0'),
    );
    add('text', `${b.name}/number-huge`, 'packet', null, trustOf(b.key), base.replace('"payload":{', '"payload":{"huge":1e400,'));
    add('text', `${b.name}/whitespace`, 'packet', null, trustOf(b.key), JSON.stringify(b.packet, null, 2));
    add('text', `${b.name}/not-json`, 'packet', null, trustOf(b.key), base.slice(0, -1));
  }

  // Every field of the payload and signing, in every other type, re-signed (and, for some, left unsigned).
  const structuredBases = bases.filter((x) => x.kn === 'ed25519' && x.shape === 'one-case' && x.run === 'blocking');
  for (const b of structuredBases) {
    // Every path of the v4 packet; a third of them (drawn from the seed) for v2 and v3.
    for (const p0 of paths(b.packet.payload)
      .map((p) => ['payload', ...p])
      .concat([['signing', 'algorithm'], ['signing', 'keyId'], ['signing', 'publicKey'], ['packetDigest']])) {
      if (b.sv !== 'v4' && r.next() > 1 / 3) continue;
      const original = getAt(b.packet, p0);
      for (const [name, value] of typeMutations(original)) {
        if (value !== DELETE && typeof value !== 'object' && value === original) continue;
        const p = clone(b.packet);
        if (!setAt(p, p0, value === DELETE ? DELETE : clone(value))) continue;
        const signed = p0[0] === 'packetDigest' ? p : resign(b, p);
        add('structured', `${b.name}/${pathText(p0)}/${name}`, 'packet', signed, trustOf(b.key));
      }
    }
  }
  for (const b of mainBases) {
    const all = paths(b.packet.payload).map((p) => ['payload', ...p]);
    for (let n = 0; n < 20; n++) {
      const p0 = r.pick(all);
      const [name, value] = r.pick(typeMutations(getAt(b.packet, p0)));
      const p = clone(b.packet);
      if (!setAt(p, p0, value === DELETE ? DELETE : clone(value))) continue;
      const id = `${b.name}/${pathText(p0)}/${name}`;
      if (ids.has(`structured/${id}`) || ids.has(`resigned/${id}`)) continue;
      add('resigned', id, 'packet', resign(b, p), trustOf(b.key));
      add('unsigned', id, 'packet', p, trustOf(b.key));
    }
  }

  // --- Audit exports ---
  const auditBases = [];
  for (const n of [0, 1, 2, 5]) {
    for (const style of ['snake', 'camel', 'mixed']) {
      if (n === 0 && style !== 'snake') continue;
      const doc = auditExport(r, n, style);
      const name = `${n}-${style}`;
      auditBases.push({ name, doc, style });
      add('audit-valid', name, 'audit', doc, {});
      add('audit-valid', `${name}/expected-head`, 'audit', doc, { expectedHead: doc.integrity.headDigest });
    }
  }
  const chains = auditBases.filter((x) => x.doc.events.length >= 2);
  const eventAt = (doc, i) => doc.events[i];
  const snakeOf = Object.fromEntries(COLUMNS);
  // A camelCase column beside its snake_case column, with another value (and with the same value).
  for (const b of chains.filter((x) => x.style === 'snake')) {
    for (const [camel, snake] of COLUMNS.filter(([c, s]) => c !== s)) {
      for (const form of ['other-hashed-snake', 'other-hashed-camel', 'same-value']) {
        const doc = clone(b.doc);
        const e = eventAt(doc, 1);
        const other =
          camel === 'previousDigest' || camel === 'eventDigest'
            ? `sha256:${'1'.repeat(64)}`
            : camel === 'occurredAt'
              ? '2020-01-01T00:00:00.000Z'
              : camel === 'workspaceId'
                ? 'ws_other'
                : `other_${camel}`;
        e[camel] = form === 'same-value' ? e[snake] : other;
        if (camel !== 'previousDigest' && camel !== 'eventDigest') {
          const ws = doc.workspaceId;
          rechain(doc, (ev) => (form === 'other-hashed-camel' ? servicePayload(ev, ws) : rawPayload(ev)));
          // rechain wrote the digests into the snake_case spelling; keep a camel spelling of a digest column beside it.
        }
        add('audit-camel-beside-snake', `${b.name}/${camel}-${form}`, 'audit', doc, { expectedHead: doc.integrity.headDigest });
      }
    }
    // metadata object beside metadata_json text.
    for (const form of ['other', 'same']) {
      const doc = clone(b.doc);
      const e = eventAt(doc, 1);
      e.metadata = form === 'same' ? JSON.parse(e.metadata_json) : { other: true };
      const ws = doc.workspaceId;
      rechain(doc, (ev) => servicePayload(ev, ws));
      add('audit-camel-beside-snake', `${b.name}/metadata-${form}-hashed-camel`, 'audit', doc, {});
    }
  }
  // A column that is not a string, or missing: chained over the raw value and over String(value).
  const NON_STRINGS = [
    ['number', 5],
    ['null', null],
    ['true', true],
    ['object', { a: 1 }],
    ['array', ['x']],
    ['missing', DELETE],
    ['empty', ''],
  ];
  for (const b of chains.filter((x) => x.style !== 'mixed')) {
    for (const [camel, snake] of COLUMNS.filter(([c]) => c !== 'previousDigest' && c !== 'eventDigest')) {
      const key = b.style === 'camel' ? camel : snake;
      for (const [name, value] of NON_STRINGS) {
        for (const form of ['raw', 'string']) {
          const doc = clone(b.doc);
          setAt(doc, ['events', 1, key], value === DELETE ? DELETE : clone(value));
          const ws = doc.workspaceId;
          rechain(doc, (ev) => (form === 'string' ? servicePayload(ev, ws) : rawPayload(ev)));
          add('audit-column-type', `${b.name}/${camel}-${name}-hashed-${form}`, 'audit', doc, {});
        }
      }
    }
    for (const [name, value] of [...NON_STRINGS, ['string', '1'], ['float', 1.5], ['one-element-array', [2]]]) {
      const doc = clone(b.doc);
      setAt(doc, ['events', 1, 'sequence'], value === DELETE ? DELETE : clone(value));
      const ws = doc.workspaceId;
      rechain(doc, (ev) => servicePayload(ev, ws));
      add('audit-column-type', `${b.name}/sequence-${name}`, 'audit', doc, {});
    }
  }
  // Metadata that is not an object, or absent.
  for (const b of chains.filter((x) => x.style !== 'mixed')) {
    const key = b.style === 'camel' ? 'metadata' : 'metadata_json';
    for (const [name, value] of [
      ['absent', DELETE],
      ['null', null],
      ['number', 5],
      ['array', [1]],
      ['string-array', '[1]'],
      ['string-null', 'null'],
      ['string-number', '5'],
      ['string-bad', '{bad'],
      ['string-object', '{"a":1}'],
      ['object', { a: 1 }],
      ['empty-object', {}],
      ['true', true],
    ]) {
      for (const form of ['empty-object', 'as-service']) {
        const doc = clone(b.doc);
        setAt(doc, ['events', 1, key], value === DELETE ? DELETE : clone(value));
        const ws = doc.workspaceId;
        rechain(doc, (ev) => {
          const p = servicePayload(ev, ws);
          if (form === 'empty-object' && (p.metadata == null || typeof p.metadata !== 'object')) p.metadata = {};
          return p;
        });
        add('audit-metadata', `${b.name}/${name}-${form}`, 'audit', doc, {});
      }
    }
  }
  // Null purpose, reason and targetId: hashed as the server keeps them (null) and as the checker writes them ("null").
  for (const b of chains) {
    for (const camel of ['purpose', 'reason', 'targetId']) {
      for (const form of ['null-kept', 'null-as-string']) {
        const doc = clone(b.doc);
        for (const e of doc.events) {
          if (camel === 'targetId') {
            if ('targetId' in e) e.targetId = null;
            else e.target_id = null;
          } else e[camel] = null;
        }
        const ws = doc.workspaceId;
        rechain(doc, (ev) => (form === 'null-kept' ? rawPayload(ev) : servicePayload(ev, ws)));
        add('audit-null-columns', `${b.name}/${camel}-${form}`, 'audit', doc, {});
      }
    }
  }
  // Values in the checker's String() or Date form, and export-level fields in other types.
  for (const b of chains.filter((x) => x.style !== 'mixed')) {
    const occ = b.style === 'camel' ? 'occurredAt' : 'occurred_at';
    const iso = eventAt(b.doc, 1)[occ];
    for (const [name, value] of [
      ['date-only', iso.slice(0, 10)],
      ['no-millis', iso.replace(/\.\d{3}Z$/, 'Z')],
      ['offset', iso.replace('Z', '+00:00')],
      ['epoch-number', Date.parse(iso)],
      ['rfc2822', new Date(iso).toUTCString()],
      ['not-a-date', 'yesterday'],
    ]) {
      const doc = clone(b.doc);
      eventAt(doc, 1)[occ] = value;
      const ws = doc.workspaceId;
      rechain(doc, (ev) => servicePayload(ev, ws));
      add('audit-string-form', `${b.name}/occurredAt-${name}`, 'audit', doc, {});
    }
    for (const [name, edit] of Object.entries({
      'eventCount-string': (d) => (d.integrity.eventCount = String(d.integrity.eventCount)),
      'eventCount-array': (d) => (d.integrity.eventCount = [d.integrity.eventCount]),
      'valid-string': (d) => (d.integrity.valid = 'true'),
      'headDigest-array': (d) => (d.integrity.headDigest = [d.integrity.headDigest]),
      'integrity-array': (d) => (d.integrity = []),
      'integrity-missing': (d) => delete d.integrity,
      'workspace-number': (d) => {
        d.workspaceId = 77;
        for (const e of d.events) {
          if ('workspaceId' in e) e.workspaceId = 77;
          else e.workspace_id = 77;
        }
        rechain(d, (ev) => servicePayload(ev, 77));
      },
      'workspace-event-number': (d) => {
        d.workspaceId = '77';
        for (const e of d.events) {
          if ('workspaceId' in e) e.workspaceId = 77;
          else e.workspace_id = 77;
        }
        rechain(d, (ev) => servicePayload(ev, '77'));
      },
      'workspace-empty': (d) => (d.workspaceId = ''),
      'workspace-missing': (d) => delete d.workspaceId,
      'format-other': (d) => (d.format = 'rateloop-audit-v2'),
      'events-object': (d) => (d.events = {}),
      'event-null': (d) => (d.events[1] = null),
      'event-array': (d) => (d.events[1] = []),
      'event-string': (d) => (d.events[1] = 'x'),
      'sequence-gap': (d) => {
        d.events[1].sequence = 3;
        rechain(d, (ev) => servicePayload(ev, d.workspaceId));
      },
      'previous-wrong': (d) => {
        const e = d.events[1];
        e[e.previous_digest !== undefined ? 'previous_digest' : 'previousDigest'] = GENESIS;
      },
      'digest-wrong': (d) => {
        const e = d.events[1];
        e[e.event_digest !== undefined ? 'event_digest' : 'eventDigest'] = GENESIS;
      },
      'head-wrong': (d) => (d.integrity.headDigest = GENESIS),
      'count-wrong': (d) => (d.integrity.eventCount += 1),
      'valid-false': (d) => (d.integrity.valid = false),
      'unknown-column': (d) => (d.events[1].extra_column = 'x'),
      'workspace-other-event': (d) => {
        const e = d.events[1];
        e[e.workspace_id !== undefined ? 'workspace_id' : 'workspaceId'] = 'ws_other';
        rechain(d, (ev) => servicePayload(ev, d.workspaceId));
      },
      'request-correlation-object': (d) => {
        const e = d.events[1];
        e[e.request_correlation !== undefined || !('requestCorrelation' in e) ? 'request_correlation' : 'requestCorrelation'] = { id: 1 };
        rechain(d, (ev) => servicePayload(ev, d.workspaceId));
      },
      'request-correlation-number': (d) => {
        const e = d.events[1];
        e[e.request_correlation !== undefined || !('requestCorrelation' in e) ? 'request_correlation' : 'requestCorrelation'] = 5;
        rechain(d, (ev) => servicePayload(ev, d.workspaceId));
      },
    })) {
      const doc = clone(b.doc);
      edit(doc);
      add('audit-structural', `${b.name}/${name}`, 'audit', doc, {});
    }
    add('audit-structural', `${b.name}/expected-head-other`, 'audit', b.doc, { expectedHead: GENESIS });
    add(
      'audit-text',
      `${b.name}/duplicate-key`,
      'audit',
      null,
      {},
      JSON.stringify(b.doc).replace('"format":', '"format":"rateloop-audit-v1","format":'),
    );
    add('audit-text', `${b.name}/not-json`, 'audit', null, {}, JSON.stringify(b.doc).slice(0, -2));
    {
      const doc = clone(b.doc);
      eventAt(doc, 1)[b.style === 'camel' ? 'reason' : 'reason'] = '\udc00';
      const ws = doc.workspaceId;
      rechain(doc, (ev) => servicePayload(ev, ws));
      add('audit-text', `${b.name}/lone-surrogate`, 'audit', doc, {});
    }
    {
      const doc = clone(b.doc);
      const e = eventAt(doc, 1);
      if (b.style === 'camel') e.metadata = { note: '\udc00' };
      else e.metadata_json = JSON.stringify({ note: '\udc00' });
      const ws = doc.workspaceId;
      rechain(doc, (ev) => servicePayload(ev, ws));
      add('audit-text', `${b.name}/lone-surrogate-metadata`, 'audit', doc, {});
    }
  }
  return {
    meta: { seed, keys: { ed25519: { spki: keys.ed.spki, keyId: keys.ed.keyId }, p256: { spki: keys.ec.spki, keyId: keys.ec.keyId } } },
    cases,
  };
}

// --- CLI ---------------------------------------------------------------------------------------------------------------
const invoked = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (invoked) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? fallback : process.argv[i + 1];
  };
  const seed = Number(arg('--seed', '39'));
  const out = arg('--out', 'test/fixtures/evidence-differential/corpus.json.br');
  const corpus = buildCorpus(seed);
  const text = JSON.stringify(corpus);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(
    out,
    out.endsWith('.br')
      ? brotliCompressSync(text, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 9,
            [constants.BROTLI_PARAM_LGWIN]: 24,
            [constants.BROTLI_PARAM_SIZE_HINT]: text.length,
          },
        })
      : text,
  );
  const perClass = {};
  for (const c of corpus.cases) perClass[c.class] = (perClass[c.class] ?? 0) + 1;
  console.log(`${corpus.cases.length} cases (seed ${seed}) -> ${out}`);
  for (const [k, n] of Object.entries(perClass)) console.log(`  ${k}: ${n}`);
}
