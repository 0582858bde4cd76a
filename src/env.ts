// The environment a run reads its variables from, as a value: the CLI takes it once from the process (src/cli.ts)
// and hands it down through the Context; tests give their own. Nothing in the core reads the process's environment
// itself (test/env-boundary.test.ts), so a test can set a variable for one context while the process holds another.
// Secrets in it (a raw private key, a password) are read where they are used and never copied out of it.
export type Env = Readonly<Record<string, string | undefined>>;
