// Preloaded with --import: records every module the process loads into $LOOPSIGN_IMPORT_LOG, as URLs: ES modules as
// node resolves them (record-imports-hook.mjs), CommonJS modules as require resolves them, and the program's own files
// as bin/load-chunks.cjs compiles them (each a vm.Script named by its file).
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

const log = process.env.LOOPSIGN_IMPORT_LOG;
register('./record-imports-hook.mjs', import.meta.url, { data: { log } });
const note = (file) => {
  if (log) appendFileSync(log, (file.startsWith('node:') || !file.startsWith('/') ? file : pathToFileURL(file).href) + '\n');
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const file = resolve.call(this, request, ...rest);
  note(file.startsWith('/') ? file : `node:${file.replace(/^node:/, '')}`);
  return file;
};
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (typeof options?.filename === 'string') note(options.filename);
  }
};
