// A V8 CPU profile (.cpuprofile: Node's --cpu-prof, or the inspector's Profiler.stop) summarised for
// bench/results.json: the top self-time entries and where the busy time goes by category (the
// garbage collector, each node_modules package, Node's internals, each workspace package). Busy time
// only: `(idle)` samples (the event loop waiting) are left out of every percentage.

/** The parts of a .cpuprofile this reads. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
    hitCount?: number;
  }>;
  startTime?: number;
  endTime?: number;
  /** Node id of each sample, in order. */
  samples?: number[];
  /** µs before each sample. */
  timeDeltas?: number[];
}

export interface ProfileSummary {
  /** Busy samples (all but `(idle)`) and their share of all samples. */
  busySamples: number;
  busyPercent: number;
  /** Approximate busy CPU time: busy samples × the mean sampling interval. */
  busyMs: number;
  top: Array<{ function: string; file: string; selfPercent: number }>;
  categories: Array<{ category: string; selfPercent: number }>;
}

/** The category of a call frame (its file's url, or V8's pseudo-frames by name). */
export function categoryOf(url: string, functionName: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collector';
    if (functionName.startsWith('(')) return functionName; // (program), (root)
    return 'V8 builtins and native';
  }
  if (url.startsWith('node:')) return 'node: internals';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? path);
  }
  const ws = /\/(packages|apps|tools)\/([^/]+)\/(dist|src)\//.exec(path);
  if (ws) return `${ws[1]}/${ws[2]}/${ws[3]}`;
  return 'other';
}

/** `url` made short: from node_modules/<pkg> or the workspace directory on, else as is. */
function shortFile(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  const ws = /\/((?:packages|apps|tools)\/.*)$/.exec(path);
  return ws ? ws[1]! : path;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/** The `topN` self-time entries and every category, by share of busy samples. */
export function summariseProfile(profile: CpuProfile, topN = 15): ProfileSummary {
  // Samples per node: from the sample list when there is one, else each node's hitCount.
  const hits = new Map<number, number>();
  if (profile.samples && profile.samples.length > 0)
    for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  else for (const n of profile.nodes) hits.set(n.id, n.hitCount ?? 0);

  let total = 0;
  let busy = 0;
  const byFrame = new Map<string, { function: string; file: string; n: number }>();
  const byCategory = new Map<string, number>();
  for (const node of profile.nodes) {
    const n = hits.get(node.id) ?? 0;
    if (n === 0) continue;
    total += n;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += n;
    // One function may appear under many call paths: its self time is the sum over them.
    const key = `${functionName}\0${url}\0${lineNumber}\0${columnNumber ?? 0}`;
    const f = byFrame.get(key) ?? {
      function: functionName || '(anonymous)',
      // lineNumber is 0-based in a .cpuprofile.
      file: url ? `${shortFile(url)}:${lineNumber + 1}` : '',
      n: 0,
    };
    f.n += n;
    byFrame.set(key, f);
    const cat = categoryOf(url, functionName);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + n);
  }
  const pct = (n: number) => (busy > 0 ? r1((n / busy) * 100) : 0);
  const durationUs =
    profile.timeDeltas && profile.timeDeltas.length > 0
      ? profile.timeDeltas.reduce((a, b) => a + b, 0)
      : (profile.endTime ?? 0) - (profile.startTime ?? 0);
  return {
    busySamples: busy,
    busyPercent: total > 0 ? r1((busy / total) * 100) : 0,
    busyMs: total > 0 ? Math.round(((durationUs / total) * busy) / 1000) : 0,
    top: [...byFrame.values()]
      .sort((a, b) => b.n - a.n)
      .slice(0, topN)
      .map((f) => ({ function: f.function, file: f.file, selfPercent: pct(f.n) })),
    categories: [...byCategory.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([category, n]) => ({ category, selfPercent: pct(n) })),
  };
}
