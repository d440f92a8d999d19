// The contract and assertions of the API-model conformance cases (conformance.ts,
// conformance-crd-rules.ts; both import it, neither imports the other's types). The assertions
// throw ConformanceError on a mismatch and import no test framework, so any runner can use them.
import { ApiError, type ApiErrorReason } from '../api/errors.ts';
import { deepEqual } from '../api/json.ts';
import type { KubeObject, ObjectKey } from '../api/meta.ts';
import type { Client, Watcher } from '../api/ports.ts';

export type ConformanceClient = Client & Partial<Watcher>;

export interface ConformanceEnv {
  /** Retries `fn` until it stops throwing or the runner's deadline passes (then rethrows). */
  eventually(fn: () => Promise<void> | void): Promise<void>;
}

export interface ConformanceCase {
  name: string;
  run(client: ConformanceClient, ns: string, env: ConformanceEnv): Promise<void>;
}

class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
}

export function fail(msg: string): never {
  throw new ConformanceError(msg);
}

export function check(cond: unknown, msg: string): asserts cond {
  if (!cond) fail(msg);
}

// Key order is not compared: the API server serializes maps (data, labels) with sorted keys.
export function equal(got: unknown, want: unknown, what: string): void {
  if (!deepEqual(got, want)) {
    fail(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

/** Awaits `p` and checks it fails with one of `reasons`; returns the error. */
export async function rejects(
  p: Promise<unknown>,
  reasons: ApiErrorReason[],
  what: string,
): Promise<ApiError> {
  let result: unknown;
  try {
    result = await p;
  } catch (e) {
    if (!(e instanceof ApiError)) fail(`${what}: threw a non-ApiError: ${String(e)}`);
    if (!reasons.includes(e.reason))
      fail(`${what}: got ${e.reason} (${e.message}), want ${reasons.join(' or ')}`);
    return e;
  }
  return fail(`${what}: succeeded (${JSON.stringify(result)?.slice(0, 200)}), want ${reasons.join(' or ')}`);
}

function hasCause(e: ApiError, field: string, fragment?: string): boolean {
  return e.causes.some(
    (c) =>
      (c.field === field || c.field.endsWith(`.${field}`) || c.field === `.${field}`) &&
      (fragment === undefined || c.message.includes(fragment)),
  );
}

export function expectCause(e: ApiError, field: string, fragment?: string): void {
  if (!hasCause(e, field, fragment)) {
    fail(
      `expected a cause on ${field}${fragment ? ` containing ${JSON.stringify(fragment)}` : ''}, got ${JSON.stringify(e.causes)} (${e.message})`,
    );
  }
}

export const key = (ns: string, name: string): ObjectKey => ({ namespace: ns, name });
export const rvOf = (o: KubeObject): string =>
  o.metadata.resourceVersion ?? fail(`${o.metadata.name}: no resourceVersion`);

/** A cause with exactly this field and message: the model and the server word a refusal alike. */
export function expectExactCause(e: ApiError, field: string, message: string): void {
  if (!e.causes.some((c) => c.field === field && c.message === message)) {
    fail(
      `expected the cause ${JSON.stringify({ field, message })}, got ${JSON.stringify(e.causes)} (${e.message})`,
    );
  }
}
