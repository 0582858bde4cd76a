// Taking a streamed audit export apart as its bytes arrive (for audit-stream.ts). The top-level object is followed
// exactly: its fields other than `events` are small and kept, parsed strictly as the whole-file path parses them;
// the events array is cut at its commas into batches, each checked elsewhere (a worker) as soon as it is whole.
//
// Cutting the events array exactly means following every string of every event on this thread. Instead, while
// cutting speculatively, only the places that look like the boundary between two events — `}` `,` `{"`, white
// space allowed — are looked for, one search per event. That guess is proven by the batches themselves: a batch that
// starts at a real boundary and parses as the list of values it was cut as ends at one too (JSON has one parse),
// so if every batch parses with the number of events counted for it, every cut was real. If one does not (a
// string that ends in `},{`, events that are not objects, a file that is not JSON), the file is read again and
// cut exactly, which finds the same verdict the whole-file path would.
import { UsageError } from '../errors.js';
import { chainResult, exportShapeFailure, failureResult, joinRuns, type AuditResult } from './audit.js';
import type { BatchReport, BatchTask } from './audit-batch.js';
import { maxContainers, scanJson, tooManyContainers, type ScanReport } from './strict-json.js';

const MiB = 1024 * 1024;
/** A streamed export may hold at most this much outside its events array, and no single event may be larger. */
export const AUDIT_FIELDS_MAX_BYTES = 4 * MiB;
export const AUDIT_EVENT_MAX_BYTES = 4 * MiB;

/** Where batches go. */
export interface Checker {
  /** A buffer of `size` bytes for a batch's text (recycled from batches already checked). */
  buffer(size: number): Buffer;
  /** Hands the batch on (to a worker, or checks it at once), with its report to come (boxed: not awaited). */
  submit(task: BatchTask): Promise<{ report: Promise<BatchReport> }>;
}

export interface Verdict {
  /** The export without its events: an empty array stands for an events array that was streamed. */
  shell: Record<string, unknown>;
  /** When the file is usable JSON. */
  result?: AuditResult;
  /** Why it is not: the reason the whole-file path would give, in the same order of precedence. */
  jsonError?: string;
}

/** A stretch of the file in text order, for the strict scan's verdict over the whole: its objects and arrays, characters and first problem. */
interface Piece {
  containers: number;
  chars: number;
  error?: ScanReport['error'];
  syntax?: string;
}

interface Batch {
  start: number;
  count: number;
  report: Promise<BatchReport>;
}

const WS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const BOUNDARY = Buffer.from('},');

const OPEN_STRING = -1;
const OPEN_ESCAPE = -2;

/**
 * The index of the quote that ends the string whose bytes start at `from`; when the chunk ends first, OPEN_STRING,
 * or OPEN_ESCAPE if it ends inside an escape (an odd run of backslashes), so the next chunk's first byte is escaped.
 */
function closingQuote(b: Buffer, from: number): number {
  for (let q = b.indexOf(QUOTE, from); q !== -1; q = b.indexOf(QUOTE, q + 1)) {
    let k = q - 1;
    while (k >= from && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
  let k = b.length - 1;
  while (k >= from && b[k] === BACKSLASH) k--;
  return (b.length - 1 - k) % 2 === 0 ? OPEN_STRING : OPEN_ESCAPE;
}

const NO = -1;
const UNDECIDED = -2;

/**
 * After a `},` at `from`: does an event (an object whose first key starts, `{"`, white space allowed) follow?
 * Inside a string a quote is escaped, so `},{"` there can only be the end of a string: the guess is rarely wrong.
 */
function nextEventStart(b: Buffer, from: number): number {
  let q = from;
  while (q < b.length && WS(b[q]!)) q++;
  if (q === b.length) return UNDECIDED;
  if (b[q] !== 0x7b) return NO;
  q++;
  while (q < b.length && WS(b[q]!)) q++;
  if (q === b.length) return UNDECIDED;
  return b[q] === QUOTE ? q : NO;
}

const enum State {
  BeforeRoot,
  FirstKey,
  Key,
  InKey,
  Colon,
  Value,
  Held,
  Events,
  AfterValue,
  AfterRoot,
}

/** Never holds more than a batch of events and the other fields. */
export class ExportSplitter {
  readonly shell: Record<string, unknown> = {};
  /** A speculative cut proved wrong: the file must be read again, cut exactly. */
  misjudged = false;
  /** The file is not JSON from some byte on (a syntax error here): nothing more needs reading. */
  stopped = false;
  private readonly pieces: (Piece | Batch)[] = [];
  private readonly keys = new Set<string>();
  /** Objects, arrays and characters met here since the last piece (the root, the events array, keys, punctuation). */
  private current: Piece = { containers: 0, chars: 0 };
  private state = State.BeforeRoot;
  private offset = 0; // file offset of the chunk being read
  private syntax?: string;
  // What is being gathered across chunks: a key, a field's value, or the batch of events being cut.
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;
  private heldBytes = 0; // everything gathered outside the events array
  private key = '';
  // Inside a field's value or the events array, cut exactly.
  private depth = 0;
  private inString = false;
  private escaped = false;
  // The events array.
  private events = 0; // events in the batches sent so far
  private batchCount = 0; // events ended in the batch being gathered
  private batchStart = 0; // file offset of the batch's first byte
  private elementStart = 0;
  private content = false; // the current element has something other than white space
  private sawComma = false;
  // Speculative cutting: the last boundary found (file offset just after its comma), and where the search resumes.
  private lastBoundary = 0;
  private searchFrom = 0;
  private toExact = false;

  constructor(
    private readonly checker: Checker,
    private readonly batchBytes: number,
    private readonly name: string,
    private speculative: boolean,
  ) {}

  /** Take in the next chunk of the file. */
  async push(chunk: Buffer): Promise<void> {
    let i = 0;
    const n = chunk.length;
    while (i < n && !this.stopped) {
      const c = chunk[i]!;
      switch (this.state) {
        case State.BeforeRoot:
          if (WS(c)) this.current.chars++;
          else if (c === 0x7b) this.open(State.FirstKey);
          else return this.fail(c, i);
          i++;
          break;
        case State.FirstKey:
        case State.Key:
          if (WS(c)) this.current.chars++;
          else if (c === QUOTE) this.gather(State.InKey);
          else if (c === 0x7d && this.state === State.FirstKey) this.close(State.AfterRoot);
          else return this.fail(c, i);
          i++;
          break;
        case State.InKey:
          i = this.gatherKey(chunk, i);
          break;
        case State.Colon:
          if (WS(c)) this.current.chars++;
          else if (c === 0x3a) this.close(State.Value);
          else return this.fail(c, i);
          i++;
          break;
        case State.Value:
          if (WS(c)) {
            this.current.chars++;
            i++;
          } else if (c === 0x5b && this.key === 'events') {
            this.open(State.Events);
            setField(this.shell, 'events', []);
            i++;
            this.gather(State.Events);
            this.batchStart = this.elementStart = this.lastBoundary = this.searchFrom = this.offset + i;
            this.content = this.sawComma = false;
          } else this.gather(State.Held);
          break;
        case State.Held:
          i = this.gatherHeld(chunk, i);
          break;
        case State.Events:
          i = this.speculative ? await this.scoutEvents(chunk, i) : await this.cutEvents(chunk, i);
          break;
        case State.AfterValue:
          if (WS(c)) this.current.chars++;
          else if (c === COMMA) this.close(State.Key);
          else if (c === 0x7d) this.close(State.AfterRoot);
          else return this.fail(c, i);
          i++;
          break;
        case State.AfterRoot:
          if (WS(c)) this.current.chars++;
          else return this.fail(c, i);
          i++;
          break;
      }
    }
    this.offset += n;
    if (this.toExact) await this.cutExactlyFromBatchStart();
    if (this.state === State.Events && !this.speculative && this.offset - this.elementStart > AUDIT_EVENT_MAX_BYTES)
      throw this.eventTooLarge();
  }

  /** The file has ended. */
  async end(): Promise<void> {
    // The end of the events array was never looked for while guessing: find it exactly in what is left.
    if (this.state === State.Events && this.speculative && !this.stopped) await this.cutExactlyFromBatchStart();
    if (!this.stopped && this.state !== State.AfterRoot) this.syntax = `unexpected end of the file after ${this.offset} bytes`;
  }

  private open(next: State): void {
    this.current.containers++;
    this.close(next);
  }

  private close(next: State): void {
    this.current.chars++;
    this.state = next;
  }

  private gather(next: State): void {
    this.gathered = [];
    this.gatheredBytes = 0;
    this.depth = 0;
    this.inString = this.escaped = false;
    this.state = next;
  }

  private fail(c: number, i: number): void {
    const what = c >= 0x21 && c <= 0x7e ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`;
    this.syntax = `unexpected ${what} at byte ${this.offset + i}`;
    this.stopped = true;
  }

  private keep(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.gathered.push(chunk.subarray(from, to));
    this.gatheredBytes += to - from;
    this.heldBytes += to - from;
    if (this.heldBytes > AUDIT_FIELDS_MAX_BYTES) throw this.tooLarge(`more than ${AUDIT_FIELDS_MAX_BYTES} bytes outside its events array`);
  }

  /** A top-level key: its text up to the closing quote; then parsed and checked for a duplicate as the strict scan does. */
  private gatherKey(chunk: Buffer, i: number): number {
    const n = chunk.length;
    let j = i;
    for (; j < n; j++) {
      const c = chunk[j]!;
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) break;
    }
    this.keep(chunk, i, j);
    if (j === n) return n;
    const raw = `"${Buffer.concat(this.gathered).toString('utf8')}"`;
    this.current.chars += raw.length;
    try {
      this.key = JSON.parse(raw) as string;
      if (this.keys.has(this.key))
        this.piece({ containers: 0, chars: 0, error: { message: `duplicate key ${JSON.stringify(this.key)}`, before: 0 } });
      this.keys.add(this.key);
    } catch (error) {
      this.key = '';
      this.piece({ containers: 0, chars: 0, error: { message: (error as Error).message, before: 0, syntax: true } });
    }
    this.state = State.Colon;
    return j + 1;
  }

  /** A field other than events: gathered whole (bounded), then scanned and parsed strictly, one level deep. */
  private gatherHeld(chunk: Buffer, i: number): number {
    const n = chunk.length;
    let j = i;
    let { depth, inString, escaped } = this;
    for (; j < n; j++) {
      const c = chunk[j]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) break;
        depth--;
      } else if (c === COMMA && depth === 0) break;
    }
    Object.assign(this, { depth, inString, escaped });
    this.keep(chunk, i, j);
    if (j === n) return n;
    const text = Buffer.concat(this.gathered).toString('utf8');
    const scan = scanJson(text, 1);
    const piece: Piece = { containers: scan.containers, chars: text.length, ...(scan.error ? { error: scan.error } : {}) };
    if (!scan.error) {
      try {
        setField(this.shell, this.key, JSON.parse(text));
      } catch (error) {
        piece.syntax = (error as Error).message;
      }
    }
    this.piece(piece);
    this.state = State.AfterValue;
    return j; // the comma or brace is read in AfterValue
  }

  /** Speculative cutting: one search per event for `},{`; a batch is sent at the first boundary past batchBytes. */
  private async scoutEvents(chunk: Buffer, i: number): Promise<number> {
    this.gathered.push(chunk.subarray(i));
    this.gatheredBytes += chunk.length - i;
    // The search runs over what is gathered: a boundary may straddle two chunks.
    const end = this.offset + chunk.length;
    const window = this.windowFrom(this.searchFrom);
    const base = this.searchFrom;
    let from = 0;
    for (;;) {
      const p = window.indexOf(BOUNDARY, from);
      if (p === -1) {
        // Only a `}` at the very end may pair with the next chunk's `,`; otherwise the next search starts in the next
        // chunk itself, which then needs no joining to what came before (joining copied every chunk once more).
        const last = window.length - 1;
        this.searchFrom = Math.max(base + (window[last] === 0x7d ? last : last + 1), this.searchFrom);
        break;
      }
      const q = nextEventStart(window, p + 2);
      if (q === UNDECIDED) {
        this.searchFrom = base + p; // undecided until more arrives
        break;
      }
      from = p + 2;
      if (q === NO) continue;
      const comma = base + p + 1;
      if (comma - this.lastBoundary > AUDIT_EVENT_MAX_BYTES) break; // cut exactly below: it judges the size
      this.lastBoundary = comma + 1;
      this.batchCount++;
      if (comma - this.batchStart >= this.batchBytes) await this.dispatch(comma - this.batchStart);
      this.searchFrom = comma + 1;
    }
    // No boundary for longer than an event may be: either an event too large or events that are not objects.
    if (end - this.lastBoundary > AUDIT_EVENT_MAX_BYTES) this.toExact = true;
    return chunk.length;
  }

  /** The gathered bytes from file offset `from` on, as one buffer. */
  private windowFrom(from: number): Buffer {
    let skip = from - this.batchStart;
    const parts: Buffer[] = [];
    for (const part of this.gathered) {
      if (skip >= part.length) skip -= part.length;
      else {
        parts.push(skip > 0 ? part.subarray(skip) : part);
        skip = 0;
      }
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Stop guessing: cut again, exactly, everything since the last batch sent (and the rest of the file after it). */
  private async cutExactlyFromBatchStart(): Promise<void> {
    this.speculative = this.toExact = false;
    const pending = Buffer.concat(this.gathered);
    const resume = this.offset;
    this.gathered = [];
    this.gatheredBytes = this.batchCount = 0;
    this.depth = 0;
    this.inString = this.escaped = this.content = false;
    this.sawComma = this.events > 0;
    this.offset = this.elementStart = this.batchStart;
    await this.push(pending);
    if (!this.stopped && this.offset !== resume) throw new Error('internal: the exact cut lost its place');
  }

  /** Exact cutting: every string followed, every top-level comma of the array found. */
  private async cutEvents(chunk: Buffer, i: number): Promise<number> {
    const n = chunk.length;
    let { depth, content } = this;
    let j = i;
    let segment = i; // where the part of this chunk not yet kept for the batch starts
    if (this.inString) {
      // A string left open by the last chunk (maybe mid-escape): find its end.
      const q = closingQuote(chunk, this.escaped ? j + 1 : j);
      if (q < 0) return this.keepEvents(chunk, segment, q);
      this.inString = false;
      j = q + 1;
    }
    for (; j < n; j++) {
      const c = chunk[j]!;
      if (c === QUOTE) {
        content = true;
        const q = closingQuote(chunk, j + 1);
        if (q < 0) {
          Object.assign(this, { depth, content });
          return this.keepEvents(chunk, segment, q);
        }
        j = q;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
        content = true;
      } else if (c === 0x7d || c === 0x5d) {
        if (depth > 0) {
          depth--;
          continue;
        }
        // The end of the events array.
        Object.assign(this, { depth, content });
        if (c !== 0x5d || (!content && this.sawComma)) {
          this.fail(c, j);
          return n;
        }
        if (content) this.element(j);
        this.gathered.push(chunk.subarray(segment, j));
        this.gatheredBytes += j - segment;
        if (this.batchCount > 0) await this.dispatch(this.gatheredBytes);
        else this.current.chars += this.gatheredBytes; // white space only: an empty array
        this.close(State.AfterValue);
        return j + 1;
      } else if (c === COMMA) {
        if (depth > 0) continue;
        if (!content) {
          this.fail(c, j);
          return n;
        }
        this.sawComma = true;
        this.element(j);
        content = false;
        if (this.offset + j - this.batchStart >= this.batchBytes) {
          this.gathered.push(chunk.subarray(segment, j + 1));
          this.gatheredBytes += j + 1 - segment;
          await this.dispatch(this.offset + j - this.batchStart);
          segment = j + 1;
        }
        this.elementStart = this.offset + j + 1;
      } else if (depth === 0 && !WS(c)) content = true; // any other byte (a control character too) is an element JSON.parse must judge
    }
    Object.assign(this, { depth, content });
    return this.keepEvents(chunk, segment);
  }

  /** The rest of the chunk from `segment` belongs to the batch being gathered; `open` is closingQuote's answer if a string runs on. */
  private keepEvents(chunk: Buffer, segment: number, open?: number): number {
    this.inString = open !== undefined;
    this.escaped = open === OPEN_ESCAPE;
    this.gathered.push(chunk.subarray(segment));
    this.gatheredBytes += chunk.length - segment;
    return chunk.length;
  }

  /** An element of the events array ends at chunk index `end` (exclusive). */
  private element(end: number): void {
    if (this.offset + end - this.elementStart > AUDIT_EVENT_MAX_BYTES) throw this.eventTooLarge();
    this.batchCount++;
  }

  /**
   * Send the first `length` gathered bytes as a batch of batchCount events; when the batch ends at a comma (not at
   * the array's end), that comma is dropped and what follows it stays gathered for the next batch.
   */
  private async dispatch(length: number): Promise<void> {
    // In the brackets of an array (checkBatch parses it as one), written here where the bytes are copied anyway.
    const bytes = this.checker.buffer(length + 2);
    bytes[0] = 0x5b;
    bytes[length + 1] = 0x5d;
    const rest: Buffer[] = [];
    let at = 0; // the file offset of `part`, from the batch's start
    for (const part of this.gathered) {
      const from = at;
      at += part.length;
      // A part from the comma on is the next batch's (without the comma).
      if (from >= length) {
        rest.push(from === length ? part.subarray(1) : part);
        continue;
      }
      const take = Math.min(part.length, length - from);
      part.copy(bytes, from + 1, 0, take);
      if (take < part.length) rest.push(part.subarray(take + 1)); // the comma is the part's byte at `take`
    }
    const ended = this.gatheredBytes > length; // a comma follows
    if (ended && rest[0]?.length === 0) rest.shift();
    const { report } = await this.checker.submit({ bytes, start: this.events, count: this.batchCount });
    const batch: Batch = { start: this.events, count: this.batchCount, report };
    // A wrong guess shows as a batch that does not scan, parse or count as cut: stop reading and cut exactly.
    if (this.speculative)
      void report.then(
        (r) => (r.scan.error || r.syntax !== undefined || r.count !== batch.count) && (this.misjudged = true),
        () => undefined,
      );
    this.piece(batch);
    if (ended) this.current.chars++; // the comma between two batches
    this.events += this.batchCount;
    this.batchCount = 0;
    this.gathered = rest;
    this.gatheredBytes = Math.max(0, this.gatheredBytes - length - 1);
    this.batchStart += length + 1;
  }

  private piece(p: Piece | Batch): void {
    if (this.current.containers || this.current.chars) this.pieces.push(this.current);
    this.current = { containers: 0, chars: 0 };
    this.pieces.push(p);
  }

  private eventTooLarge(): UsageError {
    return this.tooLarge(`an event larger than ${AUDIT_EVENT_MAX_BYTES} bytes (from byte ${this.elementStart})`);
  }

  private tooLarge(what: string): UsageError {
    return new UsageError(
      'too_large',
      `${this.name} has ${what}; a streamed audit export may have at most ${AUDIT_EVENT_MAX_BYTES} bytes per event and ${AUDIT_FIELDS_MAX_BYTES} bytes in its other fields together`,
    );
  }

  /**
   * What the whole-file path would say: the strict scan's first problem in text order (with the budget of objects
   * and arrays over the whole file), else the first text that does not parse, else the chain's verdict.
   */
  async verdict(expectedHead?: string): Promise<Verdict> {
    if (this.current.containers || this.current.chars) this.pieces.push(this.current);
    const pieces: (Piece & { batch?: Batch; report?: BatchReport })[] = [];
    for (const p of this.pieces) {
      if ('report' in p) {
        const report = await p.report;
        pieces.push({
          containers: report.scan.containers,
          chars: report.chars,
          error: report.scan.error,
          syntax: report.syntax,
          batch: p,
          report,
        });
      } else pieces.push(p);
    }
    const shell = this.shell;
    const length = pieces.reduce((sum, p) => sum + p.chars, 0);
    // The budget needs the whole file's length; a file cut short by a syntax error is judged on what was read.
    const budget = this.syntax ? Infinity : maxContainers(length);
    let opened = 0;
    for (const p of pieces) {
      if (p.error && opened + p.error.before <= budget) return { shell, jsonError: p.error.message };
      if (opened + (p.error ? p.error.before : p.containers) > budget) return { shell, jsonError: tooManyContainers(budget, length) };
      opened += p.containers;
    }
    const syntax = pieces.find((p) => p.syntax !== undefined)?.syntax ?? this.syntax;
    if (syntax !== undefined) return { shell, jsonError: syntax };
    try {
      const shape = exportShapeFailure(shell);
      if (shape) return { shell, result: shape };
      const runs = pieces.filter((p) => p.batch).map((p) => ({ start: p.batch!.start, count: p.batch!.count, run: p.report!.run! }));
      const run = joinRuns(runs, shell.workspaceId as string);
      if (run.failure) return { shell, result: failureResult(run.failure, this.events) };
      return { shell, result: chainResult(shell, run.head, this.events, expectedHead) };
    } catch (error) {
      return { shell, result: { valid: false, errors: ['verification_failed'], detail: (error as Error).message } };
    }
  }
}

/** As JSON.parse sets a key: an own property, even for `__proto__`. */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
