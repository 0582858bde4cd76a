// Types for scripts/package-files.mjs (imported by test/package.test.ts).
export declare const REQUIRED_FILES: string[];
export declare function packageProblems(files: string[]): string[];
