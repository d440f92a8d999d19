// pnpm release [--dry-run [--json] | --plan | --publish ... | --krew DIR]
//   --dry-run  prints every artefact the release would publish, packing the npm packages (their
//              integrity) and the chart (its digest); publishes nothing, runs anywhere.
//   --plan     prints the plan as JSON, computing nothing (the release workflow reads it).
//   --publish  publishes the version to the registries named (publish.ts): npm packages, images,
//              the chart, the release's files; refused when any registry already holds the version.
//   (none)     publishes the npm packages (`changeset publish`, which also tags) — only in the release
//              workflow; images and the chart are the workflow's later jobs, from --plan.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Computed } from './report.ts';

const USAGE = `usage: pnpm release [--dry-run [--json] | --plan | --publish TARGET... | --krew DIR] [--out FILE]
  --dry-run   print every artefact the release would publish (packs the npm packages and the chart)
  --json      with --dry-run: as JSON
  --plan      print the release plan as JSON (no packing)
  --publish   publish this version: every npm package (npm publish), every component image (an OCI
              push of the image built by apps/e2e/images/build-images.sh), the chart (helm push) and
              the release's files; refused, publishing nothing, when any registry already holds it.
              TARGET (all but --ca-file and --plain-http required):
    --npm-registry URL      the npm registry (its token: NODE_AUTH_TOKEN)
    --oci-repository REPO   HOST[:PORT]/PATH: images at REPO/<component>, the chart at oci://REPO/charts
    --ca-file FILE          the PEM CA the OCI registry's certificate chains to
    --plain-http            the OCI registry speaks http
    --assets DIR            where the release's files go (deploy archive, chart, tarballs, SHA256SUMS,
                            release-<version>.json: every artefact's name, refs, size and digest)
    --root DIR              release another checkout (e.g. the previous version's tree) ...
    --revision COMMIT       ... built from this commit (its labels and release record name it)
  exit: 0 published, 1 failed (says what was published by then), 2 bad usage, 3 refused: already published
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
  const here = fileURLToPath(new URL('../../../', import.meta.url));
  const known = new Set(['--dry-run', '--json', '--plan', '--publish', '--plain-http', '--help', '-h']);
  const valued: Record<string, string> = {
    '--out': 'a file',
    '--krew': 'a directory',
    '--npm-registry': 'a URL',
    '--oci-repository': 'HOST[:PORT]/PATH',
    '--ca-file': 'a file',
    '--assets': 'a directory',
    '--root': 'a directory',
    '--revision': 'a commit',
  };
  const values: Record<string, string | undefined> = {};
  const takenAt = new Set<number>();
  for (const [flag, what] of Object.entries(valued)) {
    const at = argv.indexOf(flag);
    if (at < 0) continue;
    const v = argv[at + 1];
    if (v === undefined || v.startsWith('--')) {
      console.error(`pnpm release: ${flag} needs ${what} (see --help)`);
      return 2;
    }
    values[flag] = v;
    takenAt.add(at).add(at + 1);
  }
  const out = values['--out'];
  const krewDir = values['--krew'];
  // Another checkout's release (the previous version's tree, for the upgrade e2e) and its commit.
  const root = values['--root'] ?? here;
  const revision = values['--revision'];
  if (revision !== undefined && !/^[0-9a-f]{40}$/.test(revision)) {
    console.error(
      `pnpm release: --revision needs a full commit id (40 hex), not ${JSON.stringify(revision)}`,
    );
    return 2;
  }
  const unknown = argv.find((a, i) => !known.has(a) && !takenAt.has(i));
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
  const publishTo = argv.includes('--publish');
  if (publishTo) {
    const missing = ['--npm-registry', '--oci-repository', '--assets'].filter((f) => values[f] === undefined);
    if (missing.length > 0) {
      console.error(`pnpm release: --publish needs ${missing.join(', ')} (see --help)`);
      return 2;
    }
  }
  if (!dryRun && !planOnly && !publishTo && krewDir === undefined) {
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
  const decided = releasePlan(revision ? readWorkspace(root, revision) : readWorkspace(root));
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
  if (publishTo) {
    const { buildImagesWithScript, publish, PublishRefused } = await import('./publish.ts');
    const helm = findHelm();
    if (!helm) {
      console.error('pnpm release: --publish needs helm: set CLAIMKIT_HELM or put helm on PATH');
      return 1;
    }
    try {
      const report = await publish(
        root,
        plan,
        {
          npmRegistry: values['--npm-registry']!,
          ...(process.env.NODE_AUTH_TOKEN ? { npmToken: process.env.NODE_AUTH_TOKEN } : {}),
          ociRepository: values['--oci-repository']!,
          ...(values['--ca-file'] ? { caFile: values['--ca-file'] } : {}),
          ...(argv.includes('--plain-http') ? { plainHttp: true } : {}),
          assetsDir: values['--assets']!,
        },
        {
          helm,
          buildImages: (components) => buildImagesWithScript(root, components),
          log: (line) => console.error(`[release] ${line}`),
        },
      );
      if (argv.includes('--json')) emitJson(report);
      else
        for (const a of report.artefacts)
          console.log(`${a.kind}\t${a.refs.join(' ')}\t${a.size}\t${a.digest}`);
      return 0;
    } catch (e) {
      if (e instanceof PublishRefused) {
        console.error(`pnpm release: refused: ${e.message}`);
        return 3;
      }
      console.error(`pnpm release: publishing failed: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
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
