// The capture agent's state on disk (`--state-dir`/state.json): the highest token per capture, the
// tokens accepted, and every job with its request and state. Written on every change as a whole,
// atomically (a temporary file, fsync, rename, fsync of the directory), so after a crash the file is
// either the state before a change or after it, never half of one. A file that does not parse is
// moved aside (state.json.corrupt-<time>) and the agent starts empty, saying so: nothing is lost
// silently.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AgentJobRequest {
  namespace: string;
  pod: string;
  uid: string;
  container: string;
  node: string;
  capture: string;
  token: number;
}

export type AgentJobState =
  | { state: 'Running' }
  | { state: 'Succeeded'; ref: string }
  | { state: 'Failed'; error: string };

export interface AgentJob {
  id: string;
  req: AgentJobRequest;
  state: AgentJobState;
  /** When the job was accepted (ISO 8601). */
  startedAt: string;
  /** When it reached Succeeded or Failed. */
  finishedAt?: string;
  /** How many times its capture has been started (a job Running at a restart runs again). */
  runs: number;
}

export interface AgentState {
  /** Highest token accepted per capture (`namespace/name`). */
  highest: Record<string, number>;
  /** Tokens accepted per capture, in order. */
  accepted: Record<string, number[]>;
  /** Starts refused for a stale token. */
  rejected: number;
  jobs: AgentJob[];
}

export const STATE_FILE = 'state.json';
const VERSION = 1;

export const emptyState = (): AgentState => ({ highest: {}, accepted: {}, rejected: 0, jobs: [] });

export type StateLog = (
  level: 'info' | 'warn' | 'error',
  msg: string,
  fields: Record<string, unknown>,
) => void;

export class AgentStateError extends Error {
  override readonly name = 'AgentStateError';
}

export class StateStore {
  readonly dir: string;
  readonly file: string;
  private readonly tmp: string;
  private readonly log: StateLog;

  constructor(dir: string, log: StateLog) {
    this.dir = dir;
    this.log = log;
    this.file = join(dir, STATE_FILE);
    this.tmp = join(dir, `${STATE_FILE}.tmp`);
  }

  /**
   * The saved state; empty when there is none. A corrupt file is moved aside (and logged) and the
   * state starts empty; any other I/O error (no permission, not a directory) is thrown.
   */
  load(now = new Date()): AgentState {
    try {
      mkdirSync(this.dir, { recursive: true });
    } catch (e) {
      throw new AgentStateError(`cannot create the state directory ${this.dir}: ${(e as Error).message}`);
    }
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        this.log('info', 'no saved state: starting empty', { file: this.file });
        return emptyState();
      }
      throw new AgentStateError(`cannot read the state file ${this.file}: ${(e as Error).message}`);
    }
    let problem: string;
    try {
      const r = validateState(JSON.parse(text));
      if (typeof r !== 'string') {
        this.log('info', 'loaded saved state', {
          file: this.file,
          captures: Object.keys(r.highest).length,
          jobs: r.jobs.length,
        });
        return r;
      }
      problem = r;
    } catch (e) {
      problem = `not JSON: ${(e as Error).message}`;
    }
    const aside = `${this.file}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`;
    try {
      renameSync(this.file, aside);
    } catch (e) {
      throw new AgentStateError(
        `the state file ${this.file} is corrupt (${problem}) and cannot be moved aside: ${(e as Error).message}`,
      );
    }
    this.log(
      'error',
      'state file is corrupt: moved it aside and starting with empty state (the fencing tokens and jobs it held are forgotten; the controller still fences)',
      { file: this.file, movedTo: aside, problem },
    );
    return emptyState();
  }

  /** Writes the whole state atomically; throws AgentStateError when it cannot. */
  save(s: AgentState): void {
    const text = `${JSON.stringify({ version: VERSION, ...s })}\n`;
    try {
      const fd = openSync(this.tmp, 'w', 0o600);
      try {
        writeFileSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(this.tmp, this.file);
    } catch (e) {
      throw new AgentStateError(`cannot save the state to ${this.file}: ${(e as Error).message}`);
    }
    // The rename itself is durable once the directory is synced (best effort: some filesystems refuse).
    try {
      const d = openSync(this.dir, 'r');
      try {
        fsyncSync(d);
      } finally {
        closeSync(d);
      }
    } catch {}
  }
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const isToken = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 1;

/** The state in `x`, or what is wrong with it. */
export function validateState(x: unknown): AgentState | string {
  if (!isObj(x)) return 'not an object';
  if (x.version !== VERSION) return `version ${JSON.stringify(x.version)}, want ${VERSION}`;
  if (!isObj(x.highest) || !Object.values(x.highest).every(isToken)) return 'highest: want {capture: token}';
  if (!isObj(x.accepted) || !Object.values(x.accepted).every((a) => Array.isArray(a) && a.every(isToken)))
    return 'accepted: want {capture: [token]}';
  if (typeof x.rejected !== 'number') return 'rejected: want a number';
  if (!Array.isArray(x.jobs)) return 'jobs: want a list';
  for (const [i, j] of x.jobs.entries()) {
    const why = validateJob(j);
    if (why) return `jobs[${i}]: ${why}`;
  }
  return {
    highest: x.highest as Record<string, number>,
    accepted: x.accepted as Record<string, number[]>,
    rejected: x.rejected,
    jobs: x.jobs as AgentJob[],
  };
}

function validateJob(j: unknown): string | undefined {
  if (!isObj(j)) return 'not an object';
  if (typeof j.id !== 'string' || j.id === '') return 'id: want a string';
  if (typeof j.startedAt !== 'string') return 'startedAt: want a string';
  if (j.finishedAt !== undefined && typeof j.finishedAt !== 'string') return 'finishedAt: want a string';
  if (typeof j.runs !== 'number') return 'runs: want a number';
  const r = j.req;
  if (!isObj(r)) return 'req: want an object';
  for (const f of ['namespace', 'pod', 'uid', 'container', 'node', 'capture'])
    if (typeof r[f] !== 'string') return `req.${f}: want a string`;
  if (!isToken(r.token)) return 'req.token: want a positive integer';
  const s = j.state;
  if (!isObj(s)) return 'state: want an object';
  if (s.state === 'Running') return undefined;
  if (s.state === 'Succeeded') return typeof s.ref === 'string' ? undefined : 'state.ref: want a string';
  if (s.state === 'Failed') return typeof s.error === 'string' ? undefined : 'state.error: want a string';
  return `state.state: ${JSON.stringify(s.state)} is not Running, Succeeded or Failed`;
}
