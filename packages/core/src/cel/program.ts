// CEL as the Kubernetes API server evaluates it, over plain JSON, with @bufbuild/cel. Used for the
// CRDs' x-kubernetes-validations (self, oldSelf) and meant for ValidatingAdmissionPolicy expressions
// (object, oldObject, request, params, namespaceObject, variables, authorizer-free): any binding name.
//
// Supported: the CEL standard library (operators, size, contains, startsWith, endsWith, matches
// with RE2, int/uint/double/string/bool/bytes/timestamp/duration conversions, timestamp and
// duration accessors), the macros has, all, exists, exists_one, map, filter, `in` on lists and
// maps, and the strings extension that Kubernetes enables (charAt, indexOf, lastIndexOf,
// lowerAscii, upperAscii, replace, split, substring, trim, join, format, strings.quote).
// Not supported, so not to be used in claimkit's rules: optional syntax (`?.`, `[?k]`, orValue,
// and so `optionalOldSelf`), string reverse, the Kubernetes lists library (isSorted, sum, min,
// max, indexOf on lists, slice), regex find/findAll, url, quantity, ip, cidr, semver, authorizer
// and two-variable comprehensions. compileCel refuses an expression that calls a function the
// evaluator lacks, so a rule using one fails loudly in core's tests instead of being skipped.
//
// Unlike the API server there is no static type check and no cost estimate: the e2e suite installs
// the generated CRDs into a real API server, which does both.
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { fromCelValue, toCelValue } from './values.ts';

/** Why an expression could not be compiled or evaluated. */
export class CelError extends Error {
  override readonly name = 'CelError';
  /** `compile`: the expression is not valid CEL here; `evaluate`: it failed on these bindings. */
  readonly stage: 'compile' | 'evaluate';
  readonly expression: string;
  constructor(stage: 'compile' | 'evaluate', expression: string, message: string) {
    super(message);
    this.stage = stage;
    this.expression = expression;
  }
}

/** The value of an expression (as plain JSON, see fromCelValue), or why it has none. */
export type CelOutcome = { ok: true; value: unknown } | { ok: false; error: CelError };

/** Binding name -> plain JSON value (`undefined` leaves the name unbound; `null` binds null). */
export type CelBindings = Record<string, unknown>;

export interface CelProgram {
  readonly expression: string;
  /** Free variables the expression reads (e.g. self, oldSelf, object, request, variables). */
  readonly variables: ReadonlySet<string>;
  /** Evaluates with plain JSON bindings; never throws. */
  evaluate(bindings: CelBindings): CelOutcome;
  /** As evaluate, but the bindings are converted already (toCelValue) and the result is CEL's own value. */
  evaluateRaw(bindings: CelBindings): { ok: true; value: unknown } | { ok: false; error: CelError };
}

// The API server's CRD and admission environments both enable the strings extension.
const ENV = celEnv({ funcs: strings });

// Calls the planner evaluates itself rather than through the function resolver.
const PLANNER_OPERATORS = new Set([
  '_[_]',
  '_&&_',
  '_||_',
  '_?_:_',
  '@not_strictly_false',
  '__not_strictly_false__',
]);
const OPTIONAL_OPERATORS = new Set(['_[?_]', '_?._']);

// Compiled programs, by expression text: rules are evaluated on every write, parsed once.
const cache = new Map<string, CelProgram>();
const MAX_CACHED = 4096;

/** Compiles `expression` (cached); throws CelError (stage `compile`) when it is not usable here. */
export function compileCel(expression: string): CelProgram {
  const hit = cache.get(expression);
  if (hit) return hit;
  if (expression.trim() === '') throw new CelError('compile', expression, 'empty CEL expression');
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
  } catch (e) {
    throw new CelError('compile', expression, `CEL syntax error: ${messageOf(e)}`);
  }
  const { variables, unsupported } = analyse(parsed.expr);
  if (unsupported.length > 0) {
    throw new CelError(
      'compile',
      expression,
      `CEL function(s) not supported by core's evaluator: ${unsupported.join(', ')}`,
    );
  }
  let run: (bindings: Record<string, unknown>) => unknown;
  try {
    run = plan(ENV, parsed) as (bindings: Record<string, unknown>) => unknown;
  } catch (e) {
    throw new CelError('compile', expression, `CEL planning failed: ${messageOf(e)}`);
  }
  const evaluateRaw = (bindings: CelBindings): CelOutcome => {
    let result: unknown;
    try {
      result = run(bindings);
    } catch (e) {
      return { ok: false, error: new CelError('evaluate', expression, messageOf(e)) };
    }
    if (isCelError(result)) return { ok: false, error: new CelError('evaluate', expression, result.message) };
    return { ok: true, value: result };
  };
  const program: CelProgram = {
    expression,
    variables,
    evaluateRaw,
    evaluate(bindings) {
      const converted: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(bindings)) if (v !== undefined) converted[k] = toCelValue(v);
      const out = evaluateRaw(converted);
      return out.ok ? { ok: true, value: fromCelValue(out.value) } : out;
    },
  };
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(expression, program);
  return program;
}

/**
 * Evaluates `expression` with plain JSON `bindings` (integral numbers are CEL ints); never throws.
 * A compile error comes back as `{ ok: false, error }` with `error.stage === 'compile'`.
 */
export function evaluateCel(expression: string, bindings: CelBindings): CelOutcome {
  let program: CelProgram;
  try {
    program = compileCel(expression);
  } catch (e) {
    if (e instanceof CelError) return { ok: false, error: e };
    throw e;
  }
  return program.evaluate(bindings);
}

/** A boolean expression's value; a non-boolean result is an evaluate-stage CelError. */
export function evaluateCelBoolean(expression: string, bindings: CelBindings): boolean | CelError {
  const out = evaluateCel(expression, bindings);
  if (!out.ok) return out.error;
  if (typeof out.value !== 'boolean') {
    return new CelError('evaluate', expression, `expected a bool, got ${JSON.stringify(out.value)}`);
  }
  return out.value;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---------------- static analysis of the parsed expression ----------------

interface ExprNode {
  exprKind: { case: string | undefined; value?: unknown };
}

/** Free variables, and calls of functions the evaluator does not have. */
function analyse(root: unknown): { variables: Set<string>; unsupported: string[] } {
  const variables = new Set<string>();
  const unsupported = new Set<string>();
  const visit = (e: ExprNode | undefined, bound: ReadonlySet<string>): void => {
    if (!e) return;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr': {
        const name = (k.value as { name: string }).name;
        if (!bound.has(name)) variables.add(name);
        return;
      }
      case 'selectExpr':
        visit((k.value as { operand?: ExprNode }).operand, bound);
        return;
      case 'callExpr': {
        const call = k.value as { target?: ExprNode; function: string; args: ExprNode[] };
        if (!isSupportedCall(call)) unsupported.add(call.function);
        // A qualified function name (strings.quote) is not a variable reference.
        if (
          !(
            call.target &&
            qualifiedName(call.target) &&
            ENV.funcs.find(`${qualifiedName(call.target)}.${call.function}`)
          )
        ) {
          visit(call.target, bound);
        }
        for (const a of call.args) visit(a, bound);
        return;
      }
      case 'listExpr':
        for (const el of (k.value as { elements: ExprNode[] }).elements) visit(el, bound);
        return;
      case 'structExpr':
        for (const entry of (
          k.value as { entries: { keyKind: { case: string; value: unknown }; value: ExprNode }[] }
        ).entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value as ExprNode, bound);
          visit(entry.value, bound);
        }
        return;
      case 'comprehensionExpr': {
        const c = k.value as {
          iterVar: string;
          iterVar2?: string;
          accuVar: string;
          iterRange?: ExprNode;
          accuInit?: ExprNode;
          loopCondition?: ExprNode;
          loopStep?: ExprNode;
          result?: ExprNode;
        };
        visit(c.iterRange, bound);
        visit(c.accuInit, bound);
        const inner = new Set([...bound, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]);
        visit(c.loopCondition, inner);
        visit(c.loopStep, inner);
        visit(c.result, inner);
        return;
      }
      default:
        return;
    }
  };
  visit(root as ExprNode, new Set());
  return { variables, unsupported: [...unsupported].sort() };
}

function isSupportedCall(call: { target?: ExprNode; function: string }): boolean {
  if (OPTIONAL_OPERATORS.has(call.function)) return false;
  if (PLANNER_OPERATORS.has(call.function)) return true;
  if (ENV.funcs.find(call.function)) return true;
  const q = call.target ? qualifiedName(call.target) : undefined;
  return q !== undefined && ENV.funcs.find(`${q}.${call.function}`) !== undefined;
}

/** `a.b.c` as a dotted name when the expression is only identifiers and selections. */
function qualifiedName(e: ExprNode): string | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return (k.value as { name: string }).name;
  if (k.case === 'selectExpr') {
    const s = k.value as { operand?: ExprNode; field: string; testOnly: boolean };
    if (s.testOnly || !s.operand) return undefined;
    const base = qualifiedName(s.operand);
    return base === undefined ? undefined : `${base}.${s.field}`;
  }
  return undefined;
}
