// `pnpm bench --memory-limit 512Mi`: the controller runs in a memory cgroup of that size, as in its
// chart (resources.limits.memory), so Node sizes its heap from the limit (libuv reads the cgroup) and
// the kernel kills it past the limit. cgroup v2 (memory.max) or v1 (memory.limit_in_bytes); creating
// one needs root and a writable cgroup filesystem, and the bench says so when it cannot.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `512Mi`, `1Gi`, `300M`, or bytes; undefined for anything else. */
export function parseMemorySize(s: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(s.trim());
  if (!m) return undefined;
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  const bytes = Number(m[1]) * unit;
  return bytes > 0 ? bytes : undefined;
}

export interface MemoryCgroup {
  /** Write a pid here to move that process into the cgroup. */
  procsFile: string;
  limitBytes: number;
  /** OOM kills the kernel counted in this cgroup (undefined when it does not say). */
  oomKills(): number | undefined;
  /** The most memory the cgroup was charged, when the kernel records it (v1; v2 from 5.19). */
  peakBytes(): number | undefined;
  /** Removes the cgroup (its processes must have exited). */
  remove(): void;
}

const readNumber = (path: string): number | undefined => {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
};

const keyedCount = (path: string, key: string): number | undefined => {
  try {
    const line = readFileSync(path, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${key} `));
    return line ? Number(line.slice(key.length + 1)) : undefined;
  } catch {
    return undefined;
  }
};

/** Creates a memory cgroup of `limitBytes` under the machine's cgroup root. */
export function createMemoryCgroup(limitBytes: number, name: string, root = '/sys/fs/cgroup'): MemoryCgroup {
  const v2 = existsSync(join(root, 'cgroup.controllers'));
  const base = v2 ? root : join(root, 'memory');
  if (v2 && !readFileSync(join(root, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory'))
    throw new Error(`--memory-limit: ${root} (cgroup v2) offers no memory controller`);
  if (!v2 && !existsSync(base))
    throw new Error(`--memory-limit: no memory cgroup (neither ${root}/cgroup.controllers nor ${base})`);
  const dir = join(base, name);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
  } catch (e) {
    throw new Error(
      `--memory-limit: cannot create the memory cgroup ${dir} (needs root and a writable cgroup filesystem): ${(e as Error).message}`,
    );
  }
  return {
    procsFile: join(dir, 'cgroup.procs'),
    limitBytes,
    oomKills: () =>
      v2
        ? keyedCount(join(dir, 'memory.events'), 'oom_kill')
        : keyedCount(join(dir, 'memory.oom_control'), 'oom_kill'),
    peakBytes: () => readNumber(join(dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // Still busy (a process left): the kernel keeps it; nothing of ours to lose.
      }
    },
  };
}

/**
 * The argv that starts `exe args` inside the cgroup: a shell moves itself into it, then execs the
 * program, so the program starts there (Node reads the limit at start-up to size its heap).
 */
export function inCgroupArgv(procsFile: string, exe: string, args: string[]): [string, string[]] {
  return ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', procsFile, exe, ...args]];
}
