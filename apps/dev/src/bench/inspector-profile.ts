// A V8 CPU profile of one phase of a child process, through its inspector (the child runs with
// --inspect=127.0.0.1:PORT): Profiler.start when the phase begins, Profiler.stop when it ends. Node's
// --cpu-prof can only cover a process's whole life; this covers the steady phase alone.
import type { CpuProfile } from './profile-summary.ts';

export interface PhaseProfiler {
  start(): Promise<void>;
  stop(): Promise<CpuProfile>;
  close(): void;
}

/** Connects to the inspector on 127.0.0.1:`port` (retrying for up to `timeoutMs` while it starts). */
export async function connectProfiler(port: number, timeoutMs = 30_000): Promise<PhaseProfiler> {
  const deadline = performance.now() + timeoutMs;
  let url: string | undefined;
  for (;;) {
    try {
      const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
        webSocketDebuggerUrl?: string;
      }>;
      url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
      if (url) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`no inspector on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`inspector ${url}: connection failed`)), {
      once: true,
    });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const p = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!p) return; // an event, not an answer
    pending.delete(msg.id!);
    if (msg.error) p.reject(new Error(`inspector: ${msg.error.message}`));
    else p.resolve(msg.result);
  });
  ws.addEventListener('close', () => {
    for (const p of pending.values()) p.reject(new Error('inspector connection closed'));
    pending.clear();
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  // Node's --cpu-prof samples every 1000 µs by default; the same here, so the two compare.
  await call('Profiler.setSamplingInterval', { interval: 1000 });
  return {
    start: async () => {
      await call('Profiler.start');
    },
    stop: async () => ((await call('Profiler.stop')) as { profile: CpuProfile }).profile,
    close: () => ws.close(),
  };
}
