// question.targetAudience as the service records it (the live corpus, `target-audience*`): only known fields; each
// list's values trimmed and de-duplicated with their order kept; country codes upper-cased (two letters); empty lists
// and groups left out; fields in the service's fixed order; nothing left → null. Whether a value (a language, a
// role) is one the service offers is the service's to say: an unknown value draws its 400, never a different hash.
import { AskFieldError } from './ask-errors.js';
import type { AskRules, ServiceRejection } from './profiles/types.js';

type Rejection = (path: string) => ServiceRejection;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function list(value: unknown, field: string, country: boolean): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new AskFieldError(field, 'must be an array of strings');
  const out: string[] = [];
  for (const item of value) {
    const raw = typeof item === 'string' ? item.trim() : '';
    if (!raw) throw new AskFieldError(field, 'contains a blank value');
    const v = country ? raw.toUpperCase() : raw;
    if (country && !/^[A-Z]{2}$/.test(v)) throw new AskFieldError(field, `"${raw}" is not an ISO-3166 alpha-2 country code`);
    if (!out.includes(v)) out.push(v);
  }
  return out.length ? out : undefined;
}

function group(
  value: Obj,
  prefix: string,
  fields: readonly string[],
  countryFields: readonly string[],
  nested: Record<string, readonly string[]>,
  field: string,
  unknown?: Rejection,
): Obj | undefined {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key))
      throw new AskFieldError(
        `${field}.${key}`,
        `is not a supported targetAudience field${key === 'ageRanges' ? ' (use ageGroups, e.g. ["25-34"])' : ''}`,
        unknown?.(`${field}.${key}`),
      );
  }
  const out: Obj = {};
  for (const key of fields) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (nested[key]) {
      const v = value[key];
      if (v === undefined || v === null) continue;
      if (!isObj(v)) throw new AskFieldError(`${field}.${key}`, 'must be an object');
      const g = group(v, path, nested[key]!, countryFields, {}, `${field}.${key}`, unknown);
      if (g) out[key] = g;
    } else {
      const l = list(value[key], `${field}.${key}`, countryFields.includes(path));
      if (l) out[key] = l;
    }
  }
  return Object.keys(out).length ? out : undefined;
}

export function normalizeTargetAudience(value: unknown, field: string, rules: AskRules['targetAudience'], unknown?: Rejection): Obj | null {
  if (value === undefined || value === null) return null;
  if (!isObj(value)) throw new AskFieldError(field, 'must be an object');
  return group(value, '', rules.fields, rules.countryFields, rules.nested, field, unknown) ?? null;
}
