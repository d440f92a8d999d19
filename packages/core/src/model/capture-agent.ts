// An in-memory capture agent (the simulator's and unit tests' backend): it fences on tokens (rejects a token lower than the
// highest it has seen for a capture), is idempotent per (capture, token), and whose jobs succeed,
// fail or hang as the simulation decides.
import { ApiError } from '../api/errors.ts';
import type { CaptureBackend, CaptureJobRequest, JobState } from '../capture/backend.ts';

export type JobFate = 'succeed' | 'fail' | 'hang';

interface Job {
  id: string;
  req: CaptureJobRequest;
  doneAtMs: number;
  fate: JobFate;
}

export class SimCaptureAgent implements CaptureBackend {
  private readonly jobs = new Map<string, Job>();
  private readonly highest = new Map<string, number>();
  /** Tokens in the order the agent accepted them, per capture (they must strictly increase). */
  readonly accepted = new Map<string, number[]>();
  /** Set by the simulation before each start: what happens to the next job, and when. */
  nextFate: JobFate = 'succeed';
  nextDurationMs = 3000;
  down = false;
  /** Starts refused (agent down, or a token below the highest seen). */
  startsRefused = 0;
  private seq = 0;
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  async start(_url: string, req: CaptureJobRequest): Promise<{ id: string }> {
    if (this.down) {
      this.startsRefused++;
      throw new ApiError('Unavailable', 'capture agent unreachable');
    }
    const capture = `${req.namespace}/${req.capture}`;
    const top = this.highest.get(capture) ?? 0;
    if (req.token < top) {
      this.startsRefused++;
      throw new ApiError('Conflict', `stale token ${req.token} < ${top}`);
    }
    for (const j of this.jobs.values()) {
      if (`${j.req.namespace}/${j.req.capture}` === capture && j.req.token === req.token) return { id: j.id };
    }
    this.highest.set(capture, req.token);
    const list = this.accepted.get(capture) ?? [];
    list.push(req.token);
    this.accepted.set(capture, list);
    const id = `job-${++this.seq}`;
    this.jobs.set(id, { id, req, doneAtMs: this.now() + this.nextDurationMs, fate: this.nextFate });
    return { id };
  }

  async poll(_url: string, id: string): Promise<JobState> {
    if (this.down) throw new ApiError('Unavailable', 'capture agent unreachable');
    const j = this.jobs.get(id);
    if (!j) return { state: 'Failed', error: `unknown job ${id}` };
    if (j.fate === 'hang' || this.now() < j.doneAtMs) return { state: 'Running' };
    if (j.fate === 'fail') return { state: 'Failed', error: 'checkpoint failed' };
    return { state: 'Succeeded', ref: `snapshot://${j.req.capture}/${j.req.token}` };
  }

  /** The agent-side C1 check: accepted tokens strictly increase per capture. */
  tokenViolations(): string[] {
    const out: string[] = [];
    for (const [capture, tokens] of this.accepted) {
      for (let i = 1; i < tokens.length; i++) {
        if (tokens[i]! <= tokens[i - 1]!) out.push(`${capture}: token ${tokens[i]} after ${tokens[i - 1]}`);
      }
    }
    return out;
  }
}
