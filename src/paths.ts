// Where loopsign keeps its files, following the XDG base directories (env-paths reads XDG_* on every call).
import path from 'node:path';
import envPaths from 'env-paths';

export interface LoopsignPaths {
  config: string;
  data: string;
  state: string;
}

export function loopsignPaths(): LoopsignPaths {
  const p = envPaths('loopsign', { suffix: '' });
  return { config: p.config, data: p.data, state: p.log };
}

export function defaultConfigFile(): string {
  return process.env.LOOPSIGN_CONFIG ?? path.join(loopsignPaths().config, 'config.json');
}

export function defaultKeystorePath(): string {
  return path.join(loopsignPaths().data, 'keystore.json');
}

export function journalDir(): string {
  return path.join(loopsignPaths().state, 'journal');
}

export function defaultSandboxDir(): string {
  return path.join(loopsignPaths().state, 'sandbox');
}
