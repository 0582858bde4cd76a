// Types for scripts/package-files.mjs (imported by test/package.cli.test.ts).
export declare const REQUIRED_FILES: string[];
export declare function packageProblems(files: string[]): string[];
