// Canonical JSON with sorted keys. One function serves both forms the spec uses:
// - code-unit order (RFC 8785 / JCS; also the question-metadata and result-spec hashes), and
// - the legacy evidence form, ordered with localeCompare (pinned to en-US so the host locale cannot change it).
// Values serialise exactly as ECMAScript JSON.stringify does, which is what RFC 8785 prescribes for strings and
// numbers. Inputs JSON cannot carry faithfully are refused instead of being silently changed.

export type KeyOrder = 'code-unit' | 'locale-en-US';

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// The legacy order without building an Intl.Collator, which costs a cold start 5–10 ms, for the keys evidence
// has: letters and digits only. For those, ICU's en-US order compares the whole strings ignoring case first
// (digits before letters, a string before the longer ones it begins), and only then case, lowercase first, at the
// first difference. test/canonical.test.ts checks this against Intl.Collator('en-US') over every pair of such
// characters and random keys. Any other key is compared by the collator, built the first time it is needed.
const ALNUM = /^[A-Za-z0-9]*$/;
let collator: Intl.Collator | undefined;

/** The en-US localeCompare order of the legacy evidence form (sign only). */
export function legacyCompare(a: string, b: string): number {
  if (!ALNUM.test(a) || !ALNUM.test(b)) return (collator ??= new Intl.Collator('en-US')).compare(a, b);
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i) | (a.charCodeAt(i) >= 0x41 ? 0x20 : 0); // A–Z folded onto a–z; digits stay below
    const y = b.charCodeAt(i) | (b.charCodeAt(i) >= 0x41 ? 0x20 : 0);
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x > y ? -1 : 1; // the same letter in another case: lowercase (the higher code) first
  }
  return 0;
}

export class CanonicalizationError extends Error {}

function checkString(s: string): void {
  // A lone surrogate cannot be encoded as UTF-8; RFC 8785 rejects it.
  if (!s.isWellFormed()) throw new CanonicalizationError('string contains a lone surrogate');
}

// Sorting keys is the costly part, and documents repeat key sets (every audit event has the same columns):
// remember, per key set, the sorted keys already rendered as JSON strings.
type SortedKeys = { key: string; json: string }[];
interface CacheEntry {
  keys: string[];
  sorted: SortedKeys;
}
const orderCache = { 'code-unit': new Map<string, CacheEntry[]>(), 'locale-en-US': new Map<string, CacheEntry[]>() };

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sortedKeys(keys: string[], order: KeyOrder, compare: (a: string, b: string) => number): SortedKeys {
  const cache = orderCache[order];
  // A cheap bucket id, then an exact comparison: no string is built per object.
  const id = `${keys.length}:${keys[0] ?? ''}:${keys[keys.length - 1] ?? ''}`;
  let bucket = cache.get(id);
  const hit = bucket?.find((e) => sameKeys(e.keys, keys));
  if (hit) return hit.sorted;
  const sorted = [...keys].sort(compare).map((key) => {
    checkString(key);
    return { key, json: quote(key) };
  });
  if (cache.size > 10_000) cache.clear();
  if (!bucket) cache.set(id, (bucket = []));
  bucket.push({ keys: [...keys], sorted });
  return sorted;
}

// Printable ASCII without quote or backslash serialises as itself: skip JSON.stringify for the common case.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
function quote(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** One string as canonical JSON (the same text canonicalJson gives it), without a walk: for hot, flat callers. */
export function canonicalString(s: string): string {
  checkString(s);
  return quote(s);
}

// Parsed JSON has no cycles; anything nested this deep is refused (and a cycle would hit the limit too).
const MAX_DEPTH = 1000;

export function canonicalJson(value: unknown, order: KeyOrder = 'code-unit'): string {
  return walk(value, 0, order, order === 'code-unit' ? byCodeUnit : legacyCompare);
}

// A plain function, not a closure per call: hot callers (audit chains) canonicalise one small object per event.
function walk(v: unknown, depth: number, order: KeyOrder, compare: (a: string, b: string) => number): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      checkString(v);
      return quote(v);
    case 'number':
      if (!Number.isFinite(v)) throw new CanonicalizationError('non-finite number');
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new CanonicalizationError(`cannot canonicalize a ${typeof v}`);
  }
  if (depth > MAX_DEPTH) throw new CanonicalizationError('nesting too deep (or a cycle)');
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw new CanonicalizationError('sparse array');
      out += (i ? ',' : '') + walk(v[i], depth + 1, order, compare);
    }
    return out + ']';
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw new CanonicalizationError('not a plain object');
  const record = v as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const { key, json } of sortedKeys(Object.keys(record), order, compare)) {
    const x = record[key];
    if (x === undefined) continue;
    out += (first ? '' : ',') + json + ':' + walk(x, depth + 1, order, compare);
    first = false;
  }
  return out + '}';
}
