// The chart as a user's parent chart consumes it: packaged (`helm package`, or a .tgz a release or a
// consumer test produced), unpacked, declared as a `file://` dependency of a scratch parent chart,
// pulled in with `helm dependency update`, then linted and rendered with the parent's values (its
// `global` and the `claimkit:` section). Used by chart.test.ts and by tests that check a packed chart.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SYSTEM_NAMESPACE } from '@claimkit/core';
import { loadYaml } from '../harness/index.ts';

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A rendered Kubernetes object (the fields the tests read). */
export type RenderedObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [k: string]: unknown;
};

/** Runs helm (or tar) and resolves with its exit code and output; never rejects on exit != 0. */
export function runHelm(
  helm: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<HelmResult> {
  return new Promise((resolve) => {
    execFile(helm, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The documents of a multi-document YAML stream, without the empty ones (a template rendered off). */
export function parseRendered(text: string): RenderedObject[] {
  return text
    .split(/^---\s*$/m)
    .filter((d) => d.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#')))
    .map((d) => loadYaml<RenderedObject>(d));
}

export interface SubchartOptions {
  /** The helm binary (ensureHelm() from the harness). */
  helm: string;
  /** The chart: a chart directory (packaged first) or a packaged chart (.tgz). */
  chart: string;
  /** The parent chart's values: typically `{ global: {...}, claimkit: {...} }`. */
  values?: Record<string, unknown>;
  release?: string;
  namespace?: string;
  /** Keep the scratch directory (for a failure's inspection); default: removed. */
  keep?: boolean;
}

export interface SubchartRender {
  /** `helm lint --strict` of the parent chart with the values (it lints the subchart too). */
  lint: HelmResult;
  /** `helm template` of the parent chart. */
  template: HelmResult;
  /** The rendered objects (empty when template failed). */
  objects: RenderedObject[];
  /** The file name of the packaged chart used as the dependency (claimkit-<version>.tgz). */
  packaged: string;
  /** The dependency as the parent declared it. */
  dependency: { name: string; version: string; repository: string };
}

/**
 * Renders `chart` as the dependency of a scratch parent chart. Helm runs with its own empty
 * config, cache and data directories: nothing of the user's repositories is read, and nothing is
 * fetched (the only dependency is a local file:// chart).
 */
export async function renderAsSubchart(o: SubchartOptions): Promise<SubchartRender> {
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-subchart-'));
  const env = {
    ...process.env,
    HELM_CONFIG_HOME: join(dir, 'helm/config'),
    HELM_CACHE_HOME: join(dir, 'helm/cache'),
    HELM_DATA_HOME: join(dir, 'helm/data'),
  };
  const must = async (args: string[]) => {
    const r = await runHelm(o.helm, args, env);
    if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}): ${r.stderr || r.stdout}`);
    return r;
  };
  try {
    let packaged = o.chart;
    if (statSync(o.chart).isDirectory()) {
      mkdirSync(join(dir, 'packaged'));
      await must(['package', o.chart, '--destination', join(dir, 'packaged')]);
      const [tgz] = readdirSync(join(dir, 'packaged'));
      if (!tgz) throw new Error(`helm package ${o.chart} wrote nothing`);
      packaged = join(dir, 'packaged', tgz);
    }
    const meta = loadYaml<{ name: string; version: string }>(
      (await must(['show', 'chart', packaged])).stdout,
    );
    // The parent depends on the packaged chart's contents, unpacked (file:// names a directory).
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    const untar = await runHelm('tar', ['-xzf', packaged, '-C', unpacked]);
    if (untar.code !== 0) throw new Error(`tar -xzf ${packaged}: ${untar.stderr}`);
    const dependency = {
      name: meta.name,
      version: meta.version,
      repository: `file://${join(unpacked, meta.name)}`,
    };
    const parent = join(dir, 'parent');
    mkdirSync(join(parent, 'templates'), { recursive: true });
    // JSON is YAML: no serializer needed.
    writeFileSync(
      join(parent, 'Chart.yaml'),
      `${JSON.stringify({
        apiVersion: 'v2',
        name: 'claimkit-parent',
        description: 'A scratch chart that installs claimkit as a dependency',
        type: 'application',
        version: '0.0.1',
        dependencies: [dependency],
      })}\n`,
    );
    writeFileSync(join(parent, 'values.yaml'), `${JSON.stringify(o.values ?? {})}\n`);
    await must(['dependency', 'update', parent]);
    const lint = await runHelm(o.helm, ['lint', '--strict', parent], env);
    const template = await runHelm(
      o.helm,
      ['template', o.release ?? 'claimkit', parent, '--namespace', o.namespace ?? SYSTEM_NAMESPACE],
      env,
    );
    const objects = template.code === 0 ? parseRendered(template.stdout) : [];
    return { lint, template, objects, packaged: basename(packaged), dependency };
  } finally {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}
