// Which kind of evidence file a document is, from its content — and, before a large file is read at all, from
// its first bytes, so that how much is read is bounded by the kind of file (a 240 MB file of nested arrays once
// took 6 GB of memory before the packet size check could run).
export type EvidenceKind = 'packet' | 'audit' | 'coverage' | 'trusted-keys' | 'unknown';
export type KnownKind = Exclude<EvidenceKind, 'unknown'>;

const MiB = 1024 * 1024;

/**
 * The most loopsign reads whole of each kind. Packets: the service's own verifier limit (evidence.md §9.4).
 * Trusted keys: at most 256 keys of well under 1 KiB each. Audit chains: about 200,000 events — read whole only
 * from stdin or when they are not a JSON object; an audit export file of STREAM_MIN_BYTES or more is streamed
 * instead, with no size cap (audit-split.ts bounds its events and other fields). Coverage exports: the service
 * caps them at 500 scopes and 5,000 rows per series.
 */
export const KIND_MAX_BYTES: Record<KnownKind, number> = {
  packet: 2_000_000,
  'trusted-keys': 1 * MiB,
  coverage: 64 * MiB,
  audit: 128 * MiB,
};

/**
 * Audit exports from this size on are streamed and checked by worker threads (audit-stream.ts), with no cap on
 * their size. Smaller ones are read whole on the main thread: below about 16 MiB, starting the workers (some
 * 35 ms, and each worker's code starting cold) costs more than they save (bench/evidence.mjs measures both).
 */
export const STREAM_MIN_BYTES = 16 * MiB;

/** How much of a file is read to tell its kind. */
export const SNIFF_BYTES = 64 * 1024;

const KIND_LABEL: Record<KnownKind, string> = {
  packet: 'an evidence packet',
  'trusted-keys': 'a trusted-keys document',
  coverage: 'a coverage export',
  audit: 'an audit export',
};
export const kindLabel = (kind: KnownKind): string => KIND_LABEL[kind];

export function detectKind(doc: unknown): EvidenceKind {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'unknown';
  const d = doc as Record<string, unknown>;
  if ('payload' in d && 'signing' in d) return 'packet';
  if (d.format === 'rateloop-audit-v1' || (Array.isArray(d.events) && 'integrity' in d)) return 'audit';
  if (typeof d.schemaVersion === 'string' && d.schemaVersion.startsWith('rateloop.assurance-coverage-export')) return 'coverage';
  if (typeof d.schemaVersion === 'string' && d.schemaVersion.includes('trusted-key')) return 'trusted-keys';
  return 'unknown';
}

/**
 * The kind a file's start suggests: the top-level keys in `prefix` (and the values of `format` and
 * `schemaVersion` when they are there). Liberal on purpose — it only chooses how much to read; the parsed
 * document is classified again by detectKind. When several kinds fit, the one read with the smallest cap wins.
 */
export function sniffKind(prefix: string): EvidenceKind {
  const { keys, values } = topLevelKeys(prefix);
  const schema = values.schemaVersion ?? '';
  if (['payload', 'signing', 'packetDigest', 'signature'].some((k) => keys.has(k))) return 'packet';
  if (schema.includes('trusted-key')) return 'trusted-keys';
  if (schema.startsWith('rateloop.assurance-coverage-export')) return 'coverage';
  if ((values.format ?? '').startsWith('rateloop-audit') || keys.has('events') || keys.has('integrity') || keys.has('format'))
    return 'audit';
  return 'unknown';
}

/** The keys of the top-level object seen in a (possibly cut) JSON text, and its string values for two keys. */
function topLevelKeys(text: string): { keys: Set<string>; values: { format?: string; schemaVersion?: string } } {
  const keys = new Set<string>();
  const values: { format?: string; schemaVersion?: string } = {};
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (text[i] !== '{') return { keys, values };
  let depth = 0;
  let expectKey = false;
  let lastKey: string | undefined;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) break; // cut inside a string
      let s: string;
      try {
        s = JSON.parse(text.slice(i, j + 1)) as string;
      } catch {
        break;
      }
      if (depth === 1 && expectKey) {
        keys.add(s);
        lastKey = s;
        expectKey = false;
      } else if (depth === 1 && (lastKey === 'format' || lastKey === 'schemaVersion')) {
        values[lastKey] = s;
      }
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      depth++;
      expectKey = c === '{' && depth === 1;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth <= 0) break;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
      lastKey = undefined;
    }
    i++;
  }
  return { keys, values };
}
