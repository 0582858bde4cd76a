// Canonical JSON with sorted keys. One function serves both forms the spec uses:
// - code-unit order (RFC 8785 / JCS; also the question-metadata and result-spec hashes), and
// - the legacy evidence form, ordered with localeCompare (pinned to en-US so the host locale cannot change it).
// Values serialise exactly as ECMAScript JSON.stringify does, which is what RFC 8785 prescribes for strings and
// numbers. Inputs JSON cannot carry faithfully are refused instead of being silently changed.

export type KeyOrder = 'code-unit' | 'locale-en-US';

const collator = new Intl.Collator('en-US');
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class CanonicalizationError extends Error {}

function checkString(s: string): void {
  // A lone surrogate cannot be encoded as UTF-8; RFC 8785 rejects it.
  if (!s.isWellFormed()) throw new CanonicalizationError('string contains a lone surrogate');
}

// Sorting keys is the costly part, and documents repeat key sets (every audit event has the same columns):
// remember the sorted order per key set.
const orderCache = { 'code-unit': new Map<string, string[]>(), 'locale-en-US': new Map<string, string[]>() };

function sortedKeys(keys: string[], order: KeyOrder, compare: (a: string, b: string) => number): string[] {
  const cache = orderCache[order];
  const id = keys.join('\u0000');
  let sorted = cache.get(id);
  if (!sorted) {
    sorted = [...keys].sort(compare);
    if (cache.size > 10_000) cache.clear();
    cache.set(id, sorted);
  }
  return sorted;
}

export function canonicalJson(value: unknown, order: KeyOrder = 'code-unit'): string {
  const compare = order === 'code-unit' ? byCodeUnit : collator.compare;
  const seen = new Set<object>();
  const walk = (v: unknown): string => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(v)) throw new CanonicalizationError('non-finite number');
        return JSON.stringify(v);
      case 'string':
        checkString(v);
        return JSON.stringify(v);
      case 'object':
        break;
      default:
        throw new CanonicalizationError(`cannot canonicalize a ${typeof v}`);
    }
    const obj = v as object;
    if (seen.has(obj)) throw new CanonicalizationError('cycle');
    seen.add(obj);
    let out: string;
    if (Array.isArray(obj)) {
      const parts: string[] = [];
      for (let i = 0; i < obj.length; i++) {
        if (!(i in obj)) throw new CanonicalizationError('sparse array');
        parts.push(walk(obj[i]));
      }
      out = `[${parts.join(',')}]`;
    } else {
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) throw new CanonicalizationError('not a plain object');
      const record = obj as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of sortedKeys(Object.keys(record), order, compare)) {
        const x = record[k];
        if (x === undefined) continue;
        checkString(k);
        parts.push(`${JSON.stringify(k)}:${walk(x)}`);
      }
      out = `{${parts.join(',')}}`;
    }
    seen.delete(obj);
    return out;
  };
  return walk(value);
}
