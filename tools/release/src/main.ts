// pnpm release [--dry-run [--json] | --plan]
//   --dry-run  prints every artefact the release would publish, packing the npm packages (their
//              integrity) and the chart (its digest); publishes nothing, runs anywhere.
//   --plan     prints the plan as JSON, computing nothing (the release workflow reads it).
//   (none)     publishes the npm packages (`changeset publish`, which also tags) — only in the release
//              workflow; images and the chart are the workflow's later jobs, from --plan.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Computed } from './report.ts';

const USAGE = `usage: pnpm release [--dry-run [--json] | --plan | --krew DIR] [--out FILE]
  --dry-run   print every artefact the release would publish (packs the npm packages and the chart)
  --json      with --dry-run: as JSON
  --plan      print the release plan as JSON (no packing)
  --krew DIR  pack DIR/<os>-<arch>/kubectl-claimkit (compiled per platform) into the plugin's
              archives and write its krew manifest (claimkit.yaml, with their sha256) in DIR
  --out FILE  write the JSON (--plan, --dry-run --json) to FILE instead of stdout
Without a flag it publishes, and only in the release workflow (.github/workflows/release.yml).`;

/** Why publishing must not run here, or undefined in the release workflow. */
export function refusePublishing(env: NodeJS.ProcessEnv): string | undefined {
  if (env.CI === 'true' && env.GITHUB_ACTIONS === 'true') return undefined;
  return 'pnpm release publishes to npm and runs only in the release workflow (.github/workflows/release.yml, CI=true and GITHUB_ACTIONS=true). To see what it would publish: pnpm release --dry-run';
}

async function main(argv: string[]): Promise<number> {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const known = new Set(['--dry-run', '--json', '--plan', '--help', '-h']);
  const outAt = argv.indexOf('--out');
  const out = outAt >= 0 ? argv[outAt + 1] : undefined;
  const krewAt = argv.indexOf('--krew');
  const krewDir = krewAt >= 0 ? argv[krewAt + 1] : undefined;
  const flagValue = (at: number, i: number) => at >= 0 && (i === at || i === at + 1);
  const unknown = argv.find((a, i) => !known.has(a) && !flagValue(outAt, i) && !flagValue(krewAt, i));
  if (outAt >= 0 && (out === undefined || out.startsWith('--'))) {
    console.error('pnpm release: --out needs a file (see --help)');
    return 2;
  }
  if (krewAt >= 0 && (krewDir === undefined || krewDir.startsWith('--'))) {
    console.error('pnpm release: --krew needs a directory (see --help)');
    return 2;
  }
  const emitJson = (value: unknown) => {
    const text = `${JSON.stringify(value, null, 2)}\n`;
    if (out) writeFileSync(out, text);
    else process.stdout.write(text);
  };
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (unknown !== undefined) {
    console.error(`pnpm release: unknown argument ${JSON.stringify(unknown)} (see --help)`);
    return 2;
  }
  const dryRun = argv.includes('--dry-run');
  const planOnly = argv.includes('--plan');
  if (!dryRun && !planOnly && krewDir === undefined) {
    const refusal = refusePublishing(process.env);
    if (refusal) {
      console.error(`pnpm release: refused: ${refusal}`);
      return 2;
    }
  }
  // Loaded only now: a refused or mistyped command answers at once.
  const [
    { findHelm, packageChart, packPackage },
    { lintDockerfile },
    { releasePlan },
    { formatReport },
    { readWorkspace },
  ] = await Promise.all([
    import('./artefacts.ts'),
    import('./dockerfile.ts'),
    import('./plan.ts'),
    import('./report.ts'),
    import('./workspace.ts'),
  ]);
  const decided = releasePlan(readWorkspace(root));
  if ('errors' in decided) {
    console.error(
      `pnpm release: nothing can be released:\n${decided.errors.map((e) => `  ${e}`).join('\n')}`,
    );
    return 1;
  }
  const plan = decided.plan;
  const dockerfileProblems = plan.images.flatMap((i) =>
    lintDockerfile(readFileSync(join(root, i.dockerfile), 'utf8')).map((p) => `${i.dockerfile}: ${p}`),
  );
  if (dockerfileProblems.length > 0) {
    console.error(`pnpm release: the Dockerfiles break the release rules:\n${dockerfileProblems.join('\n')}`);
    return 1;
  }
  if (planOnly) {
    emitJson(plan);
    return 0;
  }
  if (krewDir !== undefined) {
    const { writeKrewArtefacts } = await import('./krew.ts');
    const problems = writeKrewArtefacts(plan.krew, plan.version, join(root, 'packages/cli/LICENSE'), krewDir);
    if (problems.length > 0) {
      console.error(`pnpm release: the kubectl plugin's artefacts cannot be made:\n${problems.join('\n')}`);
      return 1;
    }
    console.log(
      `${plan.krew.archives.map((a) => a.file).join('\n')}\n${plan.krew.manifestFile}\n(in ${krewDir}: attach them to the GitHub release ${plan.krew.releaseTag})`,
    );
    return 0;
  }
  if (!dryRun) {
    // In the workflow: publish what is not on npm yet (with provenance from the environment) and tag.
    const r = spawnSync('pnpm', ['exec', 'changeset', 'publish'], { cwd: root, stdio: 'inherit' });
    return r.status ?? 1;
  }
  const dest = mkdtempSync(join(tmpdir(), 'claimkit-release-'));
  try {
    // What `pnpm publish` packs: the built packages.
    const build = spawnSync('pnpm', ['-r', '--filter', './packages/*', 'run', 'build'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (build.status !== 0) {
      console.error('pnpm release: building the packages failed');
      return 1;
    }
    const npm: Computed['npm'] = {};
    for (const p of plan.npm) {
      const packed = packPackage(root, p.dir, dest);
      if (packed.name !== p.name || packed.version !== p.version)
        throw new Error(`${p.dir}: packed ${packed.name}@${packed.version}, planned ${p.name}@${p.version}`);
      npm[p.name] = packed;
    }
    const helm = findHelm();
    let chart: Computed['chart'] = { skipped: 'no helm: set CLAIMKIT_HELM or put helm on PATH' };
    if (helm) {
      const chartDest = join(dest, 'chart');
      chart = packageChart(helm, root, plan.chart.dir, chartDest);
    }
    const computed: Computed = { npm, chart };
    if (argv.includes('--json')) emitJson({ plan, computed });
    else process.stdout.write(formatReport(plan, computed));
    return 0;
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
