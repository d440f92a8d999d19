// The capture agent's half of C1: per capture, a start with a token below the highest seen is
// refused, a start with a token already accepted finds its job again (idempotent: a retried start
// never runs a second job), and a higher token is accepted and supersedes the capture's running job.
// The shipped agent (@claimkit/controller's agent) and the simulator's agent both judge starts here,
// so the simulator runs the fence that ships. Pure state, no I/O: the agent saves it as it likes.

/** What the fence remembers: per capture (`namespace/name`) the highest token and those accepted. */
export interface TokenFenceState {
  highest: Record<string, number>;
  /** Tokens in the order they were accepted: strictly increasing, or the fence is broken. */
  accepted: Record<string, number[]>;
}

export type StartVerdict =
  /** This (capture, token) was accepted before: its job, not a new one. */
  | { verdict: 'existing'; jobId: string }
  /** Below the highest token seen for the capture: refused (409). */
  | { verdict: 'stale'; highest: number }
  /** Accept it (with `accept`): a new job, superseding the capture's running one. */
  | { verdict: 'accept' };

export class TokenFence {
  private readonly highest = new Map<string, number>();
  private readonly accepted = new Map<string, number[]>();
  /** `capture#token` -> the job accepted for it (forgotten with the job). */
  private readonly jobs = new Map<string, string>();

  constructor(state?: TokenFenceState) {
    for (const [cap, t] of Object.entries(state?.highest ?? {})) this.highest.set(cap, t);
    for (const [cap, ts] of Object.entries(state?.accepted ?? {})) this.accepted.set(cap, [...ts]);
  }

  /** How a start of `capture` with `token` is answered. */
  judge(capture: string, token: number): StartVerdict {
    const existing = this.jobs.get(jobKey(capture, token));
    if (existing !== undefined) return { verdict: 'existing', jobId: existing };
    const top = this.highest.get(capture) ?? 0;
    if (token < top) return { verdict: 'stale', highest: top };
    return { verdict: 'accept' };
  }

  /**
   * Records an accepted start (after judge said 'accept'). Answers the undo: the agent calls it when
   * it cannot make the acceptance durable, so memory and disk agree.
   */
  accept(capture: string, token: number, jobId: string): () => void {
    const top = this.highest.get(capture);
    const before = this.accepted.get(capture);
    this.highest.set(capture, token);
    this.accepted.set(capture, [...(before ?? []), token]);
    this.jobs.set(jobKey(capture, token), jobId);
    return () => {
      if (top === undefined) this.highest.delete(capture);
      else this.highest.set(capture, top);
      if (before === undefined) this.accepted.delete(capture);
      else this.accepted.set(capture, before);
      this.jobs.delete(jobKey(capture, token));
    };
  }

  /** A job the agent keeps (restored from its saved state): its start is found again. */
  remember(capture: string, token: number, jobId: string): void {
    this.jobs.set(jobKey(capture, token), jobId);
  }

  /** The agent forgot a job: a start with its token is judged again (stale, unless still the highest). */
  forget(capture: string, token: number): void {
    this.jobs.delete(jobKey(capture, token));
  }

  highestOf(capture: string): number {
    return this.highest.get(capture) ?? 0;
  }

  /** The tokens accepted per capture, in order (the agent's /debug/tokens). */
  get acceptedTokens(): ReadonlyMap<string, readonly number[]> {
    return this.accepted;
  }

  state(): TokenFenceState {
    return { highest: Object.fromEntries(this.highest), accepted: Object.fromEntries(this.accepted) };
  }

  /** Breaches of "accepted tokens strictly increase per capture" (must be empty). */
  violations(): string[] {
    const out: string[] = [];
    for (const [cap, ts] of this.accepted) {
      for (let i = 1; i < ts.length; i++)
        if (ts[i]! <= ts[i - 1]!) out.push(`${cap}: token ${ts[i]} accepted after ${ts[i - 1]}`);
    }
    return out;
  }
}

const jobKey = (capture: string, token: number) => `${capture}#${token}`;
