// What the service returns, before anything has checked it: a document whose every field is `unknown`, and the few
// readers that narrow one field at a time. Nothing here decides what is acceptable — the guards and parsers that read
// a document do, each with its own error code — but the compiler now sees every check they make: a field that is
// used as a string, a number or an object must have been shown to be one first.

/**
 * A document the service returned (a JSON object): every field unknown until a guard or a parser has checked it.
 * HttpClient refuses an answer that is not an object but lets a top-level array through (the evidence verifiers judge
 * those themselves); typed as a ServiceDoc, an array reads as a document without any of the fields asked for.
 */
export type ServiceDoc = { readonly [key: string]: unknown };

/** Whether a value is a JSON object (not null, not an array). */
export function isDoc(value: unknown): value is ServiceDoc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A field of a service document that must be an object (a plan, a bonus), or undefined when it is anything else. */
export function objectField(doc: unknown, key: string): ServiceDoc | undefined {
  const value = isDoc(doc) ? doc[key] : undefined;
  return isDoc(value) ? value : undefined;
}

/** A field that must be an array, or undefined when it is anything else (its items are still unknown). */
export function arrayField(doc: unknown, key: string): readonly unknown[] | undefined {
  const value = isDoc(doc) ? doc[key] : undefined;
  return Array.isArray(value) ? value : undefined;
}

/** A field that must be a safe integer (a JSON number without a fraction), or undefined when it is anything else. */
export function integerField(doc: unknown, key: string): number | undefined {
  const value = isDoc(doc) ? doc[key] : undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}
