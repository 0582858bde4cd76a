// Reading evidence files as an auditor must: a size cap, and a pass over the text that refuses what JSON.parse
// would silently accept or mangle — duplicate keys (last one wins), numbers beyond the double range (become
// Infinity), nesting deep enough to exhaust the stack later, and more objects and arrays than real evidence
// has for its size (each costs JSON.parse about 40 bytes of heap: a file of "[]," takes fourteen times its size).
// Lone surrogates parse, and are refused by canonicalisation during verification.

export class StrictJsonError extends Error {}

export const MAX_DEPTH = 200;

/**
 * At most one object or array per 16 characters beyond the first 10,000 — real packets, audit chains and coverage
 * exports have about one per 100 — so that what JSON.parse builds stays within a few times the file's size.
 */
export function maxContainers(length: number): number {
  return 10_000 + Math.floor(length / 16);
}

export function parseStrictJson(text: string): unknown {
  scan(text);
  return JSON.parse(text);
}

function scan(text: string): void {
  const budget = maxContainers(text.length);
  let containers = 0;
  // A stack of key sets: one per open object, null per open array.
  const stack: (Set<string> | null)[] = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push(c === 0x7b ? new Set() : null);
      if (stack.length > MAX_DEPTH) throw new StrictJsonError(`nesting deeper than ${MAX_DEPTH} levels`);
      if (++containers > budget) throw new StrictJsonError(`more than ${budget} objects and arrays for ${text.length} characters; real evidence has far fewer`);
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] instanceof Set;
      i++;
    } else if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const keys = stack[stack.length - 1] as Set<string>;
        if (keys.has(key)) throw new StrictJsonError(`duplicate key ${JSON.stringify(key)}`);
        keys.add(key);
        expectKey = false;
      }
      i = j + 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < text.length && /[0-9eE.+-]/.test(text[j]!)) j++;
      const n = Number(text.slice(i, j));
      if (!Number.isFinite(n)) throw new StrictJsonError(`number ${text.slice(i, Math.min(j, i + 24))}… is out of range`);
      i = j;
    } else {
      i++;
    }
  }
}
