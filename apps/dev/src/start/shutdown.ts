// The stop steps of `npm start`, run last-started-first, each bounded: a component that hangs or
// fails must not keep Ctrl-C from stopping the others and the control plane.
export interface ShutdownStep {
  what: string;
  stop: () => Promise<unknown>;
  /** How long to wait for it before going on. */
  timeoutMs: number;
}

export class Shutdown {
  private readonly steps: ShutdownStep[] = [];
  private running: Promise<void> | undefined;
  private readonly say: (msg: string) => void;

  constructor(say: (msg: string) => void) {
    this.say = say;
  }

  /** Whether stopping has begun (startup steps still in flight then give up). */
  get started(): boolean {
    return this.running !== undefined;
  }

  /** Registers how to stop what was just started. */
  add(what: string, stop: () => Promise<unknown>, timeoutMs = 10_000): void {
    this.steps.push({ what, stop, timeoutMs });
  }

  /** Runs every step once, newest first; a second call returns the same run. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const s of [...this.steps].reverse()) await this.bounded(s);
    })();
    return this.running;
  }

  private async bounded(s: ShutdownStep): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), s.timeoutMs);
    });
    const done = s.stop().then(
      () => 'done' as const,
      (e: unknown) => {
        this.say(`${s.what}: ${e instanceof Error ? e.message : String(e)}; going on`);
        return 'failed' as const;
      },
    );
    const res = await Promise.race([done, timedOut]);
    clearTimeout(timer);
    if (res === 'timeout') this.say(`${s.what}: did not stop within ${s.timeoutMs / 1000} s; going on`);
  }
}
