// CPU seconds each process of the run used over a phase (Linux /proc), so a benchmark says where
// the machine's cores went: the API server, etcd, kwok, the controller or the bench client itself.
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SEC = 100; // USER_HZ on Linux

/** Control-plane binaries found by name in /proc/<pid>/cmdline. */
const COMPONENTS = ['kube-apiserver', 'etcd', 'kwok', 'kube-controller-manager', 'kube-scheduler'] as const;

/** utime + stime of a process in seconds, or undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return undefined;
  }
}

/** The pids of the control-plane components running on this machine, by component name. */
export function componentPids(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv0: string;
    try {
      argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      continue;
    }
    const base = argv0.slice(argv0.lastIndexOf('/') + 1);
    const name = COMPONENTS.find((c) => c === base);
    if (name) out.set(name, [...(out.get(name) ?? []), Number(entry)]);
  }
  return out;
}

export type CpuSnapshot = Map<string, number>;

/** CPU seconds used so far by each named group of pids. */
export function snapshotCpu(groups: Map<string, number[]>): CpuSnapshot {
  const out: CpuSnapshot = new Map();
  for (const [name, pids] of groups) {
    out.set(
      name,
      pids.reduce((a, p) => a + (cpuSeconds(p) ?? 0), 0),
    );
  }
  return out;
}

/** CPU used between two snapshots per group, in seconds and as cores busy over `seconds`. */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, seconds: number) {
  const out: Record<string, { cpuSeconds: number; cores: number }> = {};
  for (const [name, end] of b) {
    const used = end - (a.get(name) ?? end);
    out[name] = { cpuSeconds: Math.round(used * 10) / 10, cores: Math.round((used / seconds) * 100) / 100 };
  }
  return out;
}
