export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  signal?: AbortSignal;
  /**
   * At the deadline: what the world looks like instead (e.g. the pod's phase, node and conditions),
   * appended to the error so a failed wait says why it waited in vain. Its own failure is reported
   * in its place, never instead of the timeout.
   */
  explain?: () => Promise<string> | string;
}

/** Polls `check` until it returns a value other than undefined/false, or throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const why =
        lastError instanceof Error ? `: ${lastError.message}` : lastError ? `: ${String(lastError)}` : '';
      const seen = opts.explain ? `\n  instead: ${await explained(opts.explain)}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${seen}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}

async function explained(explain: () => Promise<string> | string): Promise<string> {
  try {
    return await explain();
  } catch (e) {
    return `(could not say: ${e instanceof Error ? e.message : String(e)})`;
  }
}
