// Types for scripts/error-docs.mjs (imported by test/error-codes.test.ts).
export declare function renderErrorDocs(input: {
  areas: Record<string, Record<string, { exit: number; says: string; service?: string }>>;
  families: readonly { code: string; exit: number; says: string }[];
  exitMeaning: Record<number, string>;
}): string;
