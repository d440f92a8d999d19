// An in-memory capture agent (the simulator's and unit tests' backend): it fences on tokens with the
// shipped agent's fence (capture/token-fence.ts: a token below the highest seen is refused, a start
// with an accepted token finds its job again), and its jobs succeed, fail or hang as the simulation
// decides.
import { ApiError } from '../api/errors.ts';
import type { CaptureBackend, CaptureJobRequest, JobState } from '../capture/backend.ts';
import { TokenFence } from '../capture/token-fence.ts';

export type JobFate = 'succeed' | 'fail' | 'hang';

interface Job {
  id: string;
  req: CaptureJobRequest;
  doneAtMs: number;
  fate: JobFate;
}

export class SimCaptureAgent implements CaptureBackend {
  private readonly jobs = new Map<string, Job>();
  private readonly fence = new TokenFence();
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
    const judged = this.fence.judge(capture, req.token);
    if (judged.verdict === 'existing') return { id: judged.jobId };
    if (judged.verdict === 'stale') {
      this.startsRefused++;
      throw new ApiError('Conflict', `stale token ${req.token} < ${judged.highest}`);
    }
    const id = `job-${++this.seq}`;
    this.fence.accept(capture, req.token, id);
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
    return this.fence.violations();
  }

  /** Tokens in the order the agent accepted them, per capture (they must strictly increase). */
  get accepted(): ReadonlyMap<string, readonly number[]> {
    return this.fence.acceptedTokens;
  }
}
