// One batch of a streamed audit export's events: the raw text between two of the events array's commas, checked
// as the whole-file path checks it — the same strict scan (its count of objects and arrays goes to the export's
// budget), JSON.parse, then checkRun. Runs in a worker thread (audit-worker.ts) or, with no workers, in place.
import { checkRun, type RunCheck } from './audit.js';
import { scanJson, type ScanReport } from './strict-json.js';

export interface BatchTask {
  /** UTF-8 text of the batch: whole events and the commas between them. */
  bytes: Uint8Array;
  /** The index of its first event in the export. */
  start: number;
  /** How many events it was cut as. */
  count: number;
}

export interface BatchReport {
  /** Characters (UTF-16 code units) of the batch's text, for the budget of the whole export. */
  chars: number;
  scan: ScanReport;
  /** JSON.parse's message when the text does not parse (only looked for when the scan found nothing). */
  syntax?: string;
  /** How many events it holds (when it parsed). */
  count?: number;
  run?: RunCheck;
}

const decoder = new TextDecoder();

export function checkBatch(task: BatchTask): BatchReport {
  const text = decoder.decode(task.bytes);
  // Wrapped in brackets that stand for the events array itself: one level below the export object, as in the file.
  const wrapped = `[${text}]`;
  const raw = scanJson(wrapped, 1);
  // The wrapper's own bracket is the events array, counted once by the caller.
  const scan: ScanReport = { containers: raw.containers - 1, ...(raw.error ? { error: { ...raw.error, before: raw.error.before - 1 } } : {}) };
  if (scan.error) return { chars: text.length, scan };
  let events: unknown[];
  try {
    events = JSON.parse(wrapped) as unknown[];
  } catch (error) {
    return { chars: text.length, scan, syntax: (error as Error).message };
  }
  return { chars: text.length, scan, count: events.length, run: checkRun(events, task.start, undefined, undefined) };
}
