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
  const report = scanJson(text, 0, maxContainers(text.length));
  if (report.error) throw report.error.syntax ? new SyntaxError(report.error.message) : new StrictJsonError(report.error.message);
  return JSON.parse(text);
}

export const tooManyContainers = (budget: number, length: number): string =>
  `more than ${budget} objects and arrays for ${length} characters; real evidence has far fewer`;

/** What a scan found: the objects and arrays opened, and the first problem with how many were opened before it. */
export interface ScanReport {
  containers: number;
  error?: { message: string; before: number; syntax?: boolean };
}

/**
 * Scan `text`, a piece of a document that starts `depth` levels deep (a streamed audit export is scanned piece by
 * piece, the budget applied over the whole), stopping at the first problem. Never throws.
 */
export function scanJson(text: string, depth = 0, budget = Infinity): ScanReport {
  let containers = 0;
  const stop = (message: string, syntax = false): ScanReport => ({
    containers,
    error: { message, before: containers, ...(syntax ? { syntax } : {}) },
  });
  // A stack of key sets: one per open object, null per open array.
  const stack: (Set<string> | null)[] = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push(c === 0x7b ? new Set() : null);
      if (stack.length + depth > MAX_DEPTH) return stop(`nesting deeper than ${MAX_DEPTH} levels`);
      if (++containers > budget) return stop(tooManyContainers(budget, text.length));
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
      const j = closingQuote(text, i + 1);
      if (expectKey) {
        let key: string;
        try {
          // A key without escapes or control characters is its own text (the common case, and a hot one).
          key =
            j < text.length && !NOT_PLAIN.test(text.slice(i + 1, j)) ? text.slice(i + 1, j) : (JSON.parse(text.slice(i, j + 1)) as string);
        } catch (error) {
          return stop((error as Error).message, true);
        }
        const keys = stack[stack.length - 1] as Set<string>;
        if (keys.has(key)) return stop(`duplicate key ${JSON.stringify(key)}`);
        keys.add(key);
        expectKey = false;
      }
      i = j + 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      const n = Number(text.slice(i, j));
      // Said without quoting it: the file may be any text (a password file named by mistake, or by an agent).
      if (!Number.isFinite(n)) return stop('a number is out of range (beyond what a double holds)');
      i = j;
    } else {
      i++;
    }
  }
  return { containers };
}

const NOT_PLAIN = /[\\\x00-\x1f]/;

/** [0-9eE.+-] */
const isNumberChar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || c === 0x65 || c === 0x45 || c === 0x2e || c === 0x2b || c === 0x2d;

/**
 * The index of the quote that ends the string whose text starts at `from` (text.length if none): the first quote
 * not escaped by an odd run of backslashes — found by indexOf rather than char by char.
 */
function closingQuote(text: string, from: number): number {
  for (let q = text.indexOf('"', from); q !== -1; q = text.indexOf('"', q + 1)) {
    let k = q - 1;
    while (k >= from && text.charCodeAt(k) === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
  return text.length;
}
