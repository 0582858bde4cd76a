// The error-code table (src/error-codes.ts) against everything that gives codes: every code src/ throws is in it with
// the exit code of the class that throws it (found by scanning the source, and by the compiler: a canary program
// that throws bad codes must not compile), every entry is thrown somewhere, docs/errors.md is exactly what the
// table renders to, and the service's words reach error.code only as the table's service families allow.
// In-process, no build: the table and the scan read src/ directly.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ERROR_AREAS, ERROR_CODES, SERVICE_FAMILIES, httpStatusCode, serviceCode, type CodeEntry } from '../src/error-codes.js';
import {
  ChainError,
  CredentialError,
  EvidenceInvalidError,
  BusyError,
  EXIT_MEANING,
  InterruptedError,
  NotReadyError,
  RefusedError,
  ServiceError,
  UsageError,
  type LoopsignError,
} from '../src/errors.js';
import { errorBody } from '../src/output.js';
import { renderErrorDocs } from '../scripts/error-docs.mjs';
import { ROOT } from './helpers/cli.js';

const SRC = path.join(ROOT, 'src');
const TABLE = ERROR_CODES as Record<string, CodeEntry>;

const CLASS_EXIT: Record<string, number> = {
  UsageError: 2,
  ServiceError: 3,
  ChainError: 4,
  RefusedError: 5,
  CredentialError: 6,
  NotReadyError: 7,
  EvidenceInvalidError: 8,
  BusyError: 9,
};
const TYPE_EXIT: Record<string, number | undefined> = {
  UsageCode: 2,
  ServiceCode: 3,
  ChainCode: 4,
  RefusedCode: 5,
  CredentialCode: 6,
  NotReadyCode: 7,
  EvidenceInvalidCode: 8,
  BusyCode: 9,
  ErrorCode: undefined,
};
const CODE_TYPE = new RegExp(`\\b(${Object.keys(TYPE_EXIT).join('|')})\\b`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

interface Given {
  code: string;
  /** The exit code the throw site gives it (its class, or the code type of the parameter it is passed as). */
  exit: number | undefined;
  at: string;
}

/** The initializer of the `const` an identifier names: found in the nearest function (or the file) declaring it. */
function constOf(id: ts.Identifier): ts.Expression | undefined {
  const isScope = (n: ts.Node) => ts.isSourceFile(n) || ts.isFunctionLike(n);
  for (let scope: ts.Node | undefined = id.parent; scope; scope = scope.parent) {
    if (!isScope(scope)) continue;
    let found: ts.Expression | null | undefined;
    const look = (n: ts.Node): void => {
      if (found !== undefined) return;
      if (n !== scope && ts.isFunctionLike(n)) {
        // A nested function's parameters and locals are not in this scope.
        return;
      }
      if ((ts.isParameter(n) || ts.isBindingElement(n)) && ts.isIdentifier(n.name) && n.name.text === id.text) found = null;
      else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === id.text)
        found = n.initializer && ts.isVariableDeclarationList(n.parent) && n.parent.flags & ts.NodeFlags.Const ? n.initializer : null;
      n.forEachChild(look);
    };
    if (ts.isFunctionLike(scope)) scope.parameters.forEach(look);
    scope.forEachChild(look);
    if (found !== undefined) return found ?? undefined;
  }
  return undefined;
}

/** The string literals an expression can evaluate to: itself, the branches of `?:`, `??` and `||`, a local const. */
function literals(node: ts.Expression | undefined): string[] {
  if (!node) return [];
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node))
    return literals(node.expression);
  if (ts.isConditionalExpression(node)) return [...literals(node.whenTrue), ...literals(node.whenFalse)];
  if (
    ts.isBinaryExpression(node) &&
    (node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken)
  )
    return [...literals(node.left), ...literals(node.right)];
  if (ts.isIdentifier(node)) return literals(constOf(node));
  return [];
}

const calleeName = (e: ts.Expression): string | undefined =>
  ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) ? e.name.text : undefined;

interface Source {
  rel: string;
  sf: ts.SourceFile;
  /** Functions declared here, by name. */
  functions: Map<string, ts.SignatureDeclaration>;
  /** Names imported by `import { … } from './x.js'`: name → the declaring file (relative). */
  imports: Map<string, string>;
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

function fnName(fn: ts.SignatureDeclaration): string | undefined {
  if (ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)) return fn.name?.getText();
  return ts.isVariableDeclaration(fn.parent) ? fn.parent.name.getText() : undefined;
}

function parse(file: string): Source {
  const rel = path.relative(ROOT, file);
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const functions = new Map<string, ts.SignatureDeclaration>();
  const imports = new Map<string, string>();
  walk(sf, (n) => {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)) {
      const name = fnName(n);
      if (name !== undefined && !functions.has(name)) functions.set(name, n);
    }
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text.startsWith('.')) {
      const from = path.relative(ROOT, path.resolve(path.dirname(file), n.moduleSpecifier.text.replace(/\.js$/, '.ts')));
      const named = n.importClause?.namedBindings;
      if (named && ts.isNamedImports(named)) for (const e of named.elements) imports.set(e.name.text, from);
    }
  });
  return { rel, sf, functions, imports };
}

/**
 * Every error code src/ gives as a literal: the first argument of `new <Class>Error(…)`, the arguments passed to a
 * function's code parameter (one typed by the table's code types, or passed on as the code of an error or of another
 * such function), such a parameter's default, the values of maps typed by the code types, and InterruptedError's.
 */
function scan(): Given[] {
  const sources = sourceFiles(SRC).map(parse);
  // Functions with a code parameter: "file#name" → [parameter index, exit code (undefined: any)].
  const codeParams = new Map<string, [number, number | undefined]>();
  const declaring = new Map<string, string[]>();
  for (const s of sources) for (const name of s.functions.keys()) declaring.set(name, [...(declaring.get(name) ?? []), s.rel]);
  /** The code parameter of the function a call in `s` names: declared there, imported, or declared in one file only. */
  const lookup = (s: Source, name: string): [number, number | undefined] | undefined => {
    const file = s.functions.has(name)
      ? s.rel
      : (s.imports.get(name) ?? (declaring.get(name)?.length === 1 ? declaring.get(name)![0] : undefined));
    return file === undefined ? undefined : codeParams.get(`${file}#${name}`);
  };
  /** Where a `new`/call expression puts a code: [argument index, exit code]. */
  const target = (s: Source, n: ts.NewExpression | ts.CallExpression): readonly [number, number | undefined] | undefined => {
    const callee = calleeName(n.expression);
    if (callee === undefined) return undefined;
    if (ts.isNewExpression(n) && CLASS_EXIT[callee] !== undefined) return [0, CLASS_EXIT[callee]];
    return lookup(s, callee);
  };
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of sources) {
      for (const [name, fn] of s.functions) {
        const key = `${s.rel}#${name}`;
        if (codeParams.has(key)) continue;
        fn.parameters.forEach((p, i) => {
          if (codeParams.has(key) || !ts.isIdentifier(p.name)) return;
          const param = p.name.text;
          const typed = p.type && CODE_TYPE.exec(p.type.getText());
          let exit: number | undefined | null = typed ? TYPE_EXIT[typed[1]!] : null;
          // Passed on as the code of an error, or of another function with a code parameter.
          walk(fn, (n) => {
            if (exit !== null || !(ts.isNewExpression(n) || ts.isCallExpression(n))) return;
            const t = target(s, n);
            const arg = t && n.arguments?.[t[0]];
            if (arg && ts.isIdentifier(arg) && arg.text === param) exit = t[1];
          });
          if (exit !== null) {
            codeParams.set(key, [i, exit]);
            grew = true;
          }
        });
      }
    }
  }

  const given: Given[] = [];
  for (const s of sources) {
    const { rel, sf } = s;
    const at = (n: ts.Node) => `${rel}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
    const add = (codes: string[], exit: number | undefined, n: ts.Node) => codes.forEach((code) => given.push({ code, exit, at: at(n) }));
    walk(sf, (n) => {
      if (ts.isNewExpression(n) || ts.isCallExpression(n)) {
        const t = target(s, n);
        if (t) add(literals(n.arguments?.[t[0]]), t[1], n);
      }
      // A code parameter's default.
      if (ts.isParameter(n) && n.initializer) {
        const fn = n.parent as ts.SignatureDeclaration;
        const name = fnName(fn);
        const param = name === undefined ? undefined : codeParams.get(`${rel}#${name}`);
        if (param && fn.parameters.indexOf(n) === param[0]) add(literals(n.initializer), param[1], n);
      }
      // Maps of codes: `satisfies …Record<…, UsageCode>` or `const X: Record<…, UsageCode> = {…}`.
      const typeText = ts.isSatisfiesExpression(n)
        ? n.type.getText()
        : ts.isVariableDeclaration(n) && n.type
          ? n.type.getText()
          : undefined;
      const object = ts.isSatisfiesExpression(n) ? n.expression : ts.isVariableDeclaration(n) ? n.initializer : undefined;
      const typed = typeText === undefined ? null : CODE_TYPE.exec(typeText);
      if (typed && object) {
        const inner = ts.isAsExpression(object) ? object.expression : object;
        if (ts.isObjectLiteralExpression(inner))
          for (const p of inner.properties) if (ts.isPropertyAssignment(p)) add(literals(p.initializer), TYPE_EXIT[typed[1]!], p);
      }
      // InterruptedError passes its code to LoopsignError's constructor.
      if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.SuperKeyword && rel === path.join('src', 'errors.ts'))
        add(literals(n.arguments[0]), undefined, n);
    });
  }
  return given;
}

const given = scan();

describe('the error-code table', () => {
  it('every code thrown in src/ is in the table, with the exit code of the class that throws it', () => {
    expect(given.length).toBeGreaterThan(400);
    const missing = given.filter((g) => TABLE[g.code] === undefined).map((g) => `${g.code} (${g.at})`);
    expect(missing).toEqual([]);
    const wrongExit = given
      .filter((g) => g.exit !== undefined && TABLE[g.code]?.exit !== g.exit)
      .map((g) => `${g.code}: thrown with exit ${g.exit} at ${g.at}, the table says ${TABLE[g.code]?.exit}`);
    expect(wrongExit).toEqual([]);
  });

  it('every code in the table is given somewhere (none is left over)', () => {
    const thrown = new Set(given.map((g) => g.code));
    // internal_error is what errorBody (src/output.ts) gives to anything that is not a LoopsignError.
    thrown.add(errorBody(new Error('x'), false).code);
    expect(Object.keys(TABLE).filter((c) => !thrown.has(c))).toEqual([]);
  });

  it('the scan sees codes given through helpers, maps, defaults and conditionals', () => {
    const codes = new Set(given.map((g) => g.code));
    // guardRefusal, the signer guard, the policy's refuse, checkAddress's default and a passed code, commander's map,
    // the ids map, settle's conditional, credentialRefused's literal, InterruptedError.
    for (const c of [
      'plan_refused',
      'message_refused',
      'transaction_wrong_chain',
      'policy_limit',
      'invalid_address',
      'invalid_voter',
      'unknown_command',
      'invalid_run_id',
      'review_unverifiable',
      'agent_pairing_not_approved',
      'interrupted',
      'terminated',
      'tool_error',
    ]) {
      expect(codes.has(c), c).toBe(true);
    }
  });

  it("each class gives exactly the table's exit code for every code (and errorBody's internal_error is exit 1)", () => {
    const CLASSES: Record<number, (code: never) => LoopsignError> = {
      2: (c) => new UsageError(c, 'm'),
      3: (c) => new ServiceError(c, 'm'),
      4: (c) => new ChainError(c, 'm'),
      5: (c) => new RefusedError(c, 'm'),
      6: (c) => new CredentialError(c, 'm'),
      7: (c) => new NotReadyError(c, 'm'),
      8: (c) => new EvidenceInvalidError(c, 'm'),
      9: (c) => new BusyError(c, 'm'),
    };
    for (const [code, e] of Object.entries(TABLE)) {
      if (e.exit === 1) expect(errorBody(new Error('x'), false)).toMatchObject({ code, exitCode: 1 });
      else if (e.exit === 130 || e.exit === 143)
        expect(new InterruptedError(e.exit === 130 ? 'SIGINT' : 'SIGTERM', 'm')).toMatchObject({ code, exitCode: e.exit });
      else expect(CLASSES[e.exit]!(code as never), code).toMatchObject({ code, exitCode: e.exit });
    }
  });

  it('codes are snake_case words, unique across areas, each with a sentence; exit codes are the documented ones', () => {
    const all = Object.values(ERROR_AREAS).flatMap((a) => Object.keys(a));
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(Object.keys(TABLE).length);
    for (const [code, e] of Object.entries(TABLE)) {
      // A word (never a dot: `service.<word>` is the service's), and never the service's http_<status> family.
      expect(code).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
      expect(code).not.toMatch(/^http_\d+$/);
      expect(Object.keys(EXIT_MEANING)).toContain(String(e.exit));
      expect(e.exit).not.toBe(0);
      expect(e.says.length, code).toBeGreaterThan(20);
      expect(e.says, code).toMatch(/[.)]$/);
    }
  });

  it('docs/errors.md is the table rendered (npm run docs:errors), and the CLI docs and README link to it', () => {
    const page = renderErrorDocs({ areas: ERROR_AREAS, families: SERVICE_FAMILIES, exitMeaning: EXIT_MEANING });
    expect(readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8'), 'docs/errors.md is stale: run npm run docs:errors').toBe(page);
    for (const code of Object.keys(TABLE)) expect(page).toContain(`| \`${code}\` |`);
    expect(readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8')).toContain('(errors.md)');
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('(docs/errors.md)');
  });
});

describe("the service's words", () => {
  it("pass on as they came, unless they are one of loopsign's own codes with another meaning", () => {
    expect(serviceCode('duplicate_ask')).toBe('duplicate_ask');
    expect(serviceCode('max_payment_exceeded')).toBe('max_payment_exceeded');
    // Shared words (the table says what the service means by them) pass unchanged.
    expect(serviceCode('invalid_arguments')).toBe('invalid_arguments');
    expect(serviceCode('insufficient_scope')).toBe('insufficient_scope');
    // One of loopsign's codes, not shared: renamed, so it cannot read as loopsign's.
    expect(serviceCode('internal_error')).toBe('service.internal_error');
    expect(serviceCode('wallet_busy')).toBe('service.wallet_busy');
    // Idempotent, and free text never becomes a code.
    expect(serviceCode(serviceCode('internal_error'))).toBe('service.internal_error');
    expect(serviceCode(httpStatusCode(502))).toBe('http_502');
    for (const bad of ['Invalid input', 'x'.repeat(65), 'DROP TABLE', '\u001b[31mred', 'service.', 'a.b', 42, undefined, null])
      expect(serviceCode(bad)).toBeUndefined();
  });

  it("a renamed word cannot be one of loopsign's codes, and no loopsign code is an http_<status>", () => {
    for (const code of Object.keys(TABLE)) {
      const passed = serviceCode(code)!;
      expect(passed === code ? TABLE[code]!.service !== undefined : passed === `service.${code}` && TABLE[passed] === undefined, code).toBe(
        true,
      );
    }
  });

  it("every word of the live corpus and the sandbox that is one of loopsign's codes is shared, or deliberately renamed", () => {
    const words = new Set<string>();
    const collect = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) (k === 'code' || k === 'error') && typeof x === 'string' ? words.add(x) : collect(x);
    };
    const live = path.join(ROOT, 'test/fixtures/vectors/live');
    for (const f of readdirSync(live).filter((f) => f.endsWith('.json'))) collect(JSON.parse(readFileSync(path.join(live, f), 'utf8')));
    // The sandbox stands in for the service: the codes its errors carry.
    for (const f of sourceFiles(path.join(SRC, 'sandbox/service'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/new (?:ApiError|WsError)\(\s*[^,]+,\s*'([a-z][a-z0-9_]*)'/g)) words.add(m[1]!);
    }
    expect(words.size).toBeGreaterThan(50);
    const collisions = [...words].filter((w) => TABLE[w] !== undefined).sort();
    const renamed = collisions.filter((w) => serviceCode(w) !== w);
    // The service's internal_error is the service failing, not a loopsign bug (loopsign's internal_error, exit 1).
    expect(renamed).toEqual(['internal_error']);
    expect(collisions.length).toBeGreaterThan(5);
    expect(SERVICE_FAMILIES.find((f) => f.code === 'service.<word>')?.says).toMatch(/internal_error/);
  });
});

describe('the compiler', () => {
  it('refuses a code the table lacks, a code through the wrong class, and a raw string where a service word belongs', () => {
    // A program beside src/ that throws good and bad codes; each bad line must be a compile error (an unused
    // @ts-expect-error is one too), so the program has no diagnostics exactly when the types hold.
    const canary = path.join(SRC, '__error_code_canary__.ts');
    const text = [
      "import { ChainError, CredentialError, LoopsignError, RefusedError, ServiceError, UsageError } from './errors.js';",
      "import { httpStatusCode, serviceCode } from './error-codes.js';",
      "new UsageError('invalid_amount', 'ok');",
      "new ChainError('wallet_busy', 'ok');",
      "new ServiceError(serviceCode('duplicate_ask') ?? httpStatusCode(400), 'ok');",
      "new CredentialError(serviceCode('invalid_api_key') ?? 'api_key_invalid', 'ok');",
      '// @ts-expect-error: not in the table',
      "new UsageError('no_such_code', 'bad');",
      '// @ts-expect-error: the table gives wallet_busy exit 4',
      "new UsageError('wallet_busy', 'bad');",
      '// @ts-expect-error: the table gives invalid_amount exit 2',
      "new CredentialError('invalid_amount', 'bad');",
      '// @ts-expect-error: a service word only through serviceCode()',
      "new ServiceError('duplicate_ask', 'bad');",
      '// @ts-expect-error: any string',
      "new RefusedError(String(Date.now()), 'bad');",
      '// @ts-expect-error: only through the class of its exit code',
      "new LoopsignError('usage', 'bad');",
      '',
    ].join('\n');
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT);
    const options = { ...config.options, noEmit: true };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (f, v, ...rest) => (path.resolve(f) === canary ? ts.createSourceFile(f, text, v) : getSourceFile(f, v, ...rest));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (f) => path.resolve(f) === canary || fileExists(f);
    const program = ts.createProgram({ rootNames: [canary], options, host });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
    // And the canary really is checked: one more bad line without its directive is reported.
    const bad = ts.createProgram({
      rootNames: [canary],
      options,
      host: {
        ...host,
        getSourceFile: (f, v, ...rest) =>
          path.resolve(f) === canary
            ? ts.createSourceFile(f, `${text}new UsageError('no_such_code', 'bad');\n`, v)
            : getSourceFile(f, v, ...rest),
      },
    });
    expect(ts.getPreEmitDiagnostics(bad).length).toBe(1);
  }, 60_000);
});

describe("viem's errors from a request to the node", () => {
  it('are the chain failure rpc_failed (exit 4) in one line with the node words; any other error stays internal_error', async () => {
    const { BaseError, HttpRequestError, InternalRpcError, RpcRequestError } = await import('viem');
    const url = 'http://127.0.0.1:9/key-in-path';
    const rpc = new InternalRpcError(
      new RpcRequestError({ body: { method: 'eth_getBlockByNumber' }, error: { code: -32603, message: 'overloaded' }, url }),
    );
    const wrapped = new BaseError('reading the latest block', { cause: rpc });
    for (const e of [rpc, wrapped]) {
      const body = errorBody(e, false);
      expect(body).toMatchObject({ code: 'rpc_failed', exitCode: 4 });
      expect(body.message).toMatch(/^a request to the RPC failed: .*overloaded$/);
      expect(body.message).not.toMatch(/\n|key-in-path/);
    }
    expect(errorBody(new HttpRequestError({ url, details: 'connect ECONNREFUSED 127.0.0.1:9' }), false)).toMatchObject({
      code: 'rpc_failed',
      message: 'a request to the RPC failed: HTTP request failed: connect ECONNREFUSED 127.0.0.1:9',
    });
    // An answer over viem's cap (a node or proxy that sends megabytes, or never stops) is the node's failure too.
    const { ResponseBodyTooLargeError } = await import('viem');
    expect(errorBody(new ResponseBodyTooLargeError({ maxSize: 10_485_760, size: 99_999_999 }), false)).toMatchObject({
      code: 'rpc_failed',
      exitCode: 4,
      message: 'a request to the RPC failed: HTTP response body exceeded the size limit.',
    });
    // No answer at all (a timeout, an HTTP error, a dropped connection), wrapped or not, is no verdict of the node's;
    // a JSON-RPC error answer is one (a revert, "nonce too low").
    const { noAnswerFromNode } = await import('../src/errors.js');
    const { TimeoutError } = await import('viem');
    expect(noAnswerFromNode(new BaseError('estimating gas', { cause: new TimeoutError({ body: {}, url }) }))).toBe(true);
    expect(noAnswerFromNode(new HttpRequestError({ url, status: 503 }))).toBe(true);
    expect(noAnswerFromNode(wrapped)).toBe(false);
    expect(noAnswerFromNode(new Error('plain'))).toBe(false);
    // A viem error that is not a request to the node (loopsign's own use of viem) is a bug, as any other error.
    expect(errorBody(new BaseError('an encoding went wrong'), false)).toMatchObject({ code: 'internal_error', exitCode: 1 });
    expect(errorBody(Object.assign(new Error('t'), { name: 'TimeoutError' }), false)).toMatchObject({ code: 'internal_error' });
  });
});
