// The release and the local image build (apps/e2e/images/build-images.sh, buildah without Docker)
// build the same thing: every packages/<c>/Dockerfile of the release plan, unchanged, from the
// repository root, and the local build passes no build argument the release does not but NODE_IMAGE
// (a base image assembled locally, as Docker Hub is not reachable there) and no option that changes
// what is built. The script's `--plan` prints its buildah arguments exactly as it passes them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from './dockerfile.ts';
import { releasePlan } from './plan.ts';
import { readWorkspace } from './workspace.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'apps/e2e/images/build-images.sh');

const planned = releasePlan(readWorkspace(root, 'a'.repeat(40)));
if (!('plan' in planned)) throw new Error(planned.errors.join('\n'));
const plan = planned.plan;

interface LocalBuild {
  component: string;
  dockerfile: string;
  args: string[];
}
const local: LocalBuild[] = execFileSync('bash', [script, '--plan'], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .map((l) => {
    const [component, dockerfile, ...args] = l.split('\t');
    return { component: component!, dockerfile: dockerfile!, args };
  });

/** The values of every occurrence of an option that takes a value (`-f x`, `--build-arg K=V`). */
function values(args: string[], opt: string): string[] {
  return args.flatMap((a, i) => (a === opt ? [args[i + 1]!] : []));
}

describe('the local image build and the release build the same Dockerfiles', () => {
  it('the same components, each from packages/<c>/Dockerfile', () => {
    expect(plan.images.length).toBeGreaterThan(0);
    const release = plan.images.map((i) => [i.component, i.dockerfile]).sort();
    expect(local.map((b) => [b.component, b.dockerfile]).sort()).toEqual(release);
    for (const b of local) {
      expect(b.dockerfile).toBe(`packages/${b.component}/Dockerfile`);
      expect(values(b.args, '-f'), b.component).toEqual([b.dockerfile]);
    }
  });

  it('from the repository root, as the release workflow (context: ., file: the plan dockerfile)', () => {
    const workflow = readFileSync(join(root, '.github/workflows/release.yml'), 'utf8');
    expect(workflow).toMatch(/\n\s+context: \.\n\s+file: \$\{\{ matrix\.image\.dockerfile \}\}\n/);
    expect(workflow).toContain('image: $' + '{{ fromJSON(needs.plan.outputs.images) }}');
    expect(workflow).toContain('component, dockerfile, repository');
    for (const b of local) expect(b.args.at(-1), b.component).toBe('.');
    // The script runs buildah in the repository root.
    expect(readFileSync(script, 'utf8')).toMatch(
      /component_build\(\) \{\n.*\n\s+cd "\$ROOT" && bah bud "\$@"\n\}/,
    );
  });

  it('only NODE_IMAGE differs among the build arguments; no option changes what is built', () => {
    const allowedFlags = new Set(['--layers', '--pull-never']);
    const withValue = new Set(['--isolation', '--network', '-f', '--build-arg', '-t', '-v']);
    // The only mounts: a TLS-intercepting proxy's CA for the RUN steps that reach the npm registry
    // (on a machine whose Node is told of one by NODE_EXTRA_CA_CERTS); RUN-only, in no image.
    const mounts = [/:\/etc\/ssl\/certs\/claimkit-build-ca\.crt:ro$/, /:\/root\/\.npmrc:ro$/];
    for (const b of local) {
      const release = plan.images.find((i) => i.component === b.component)!;
      const args = b.args.slice(0, -1);
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (withValue.has(a)) i++;
        else expect(allowedFlags.has(a), `${b.component}: unexpected buildah option ${a}`).toBe(true);
      }
      const buildArgs = Object.fromEntries(
        values(args, '--build-arg').map((kv) => [
          kv.slice(0, kv.indexOf('=')),
          kv.slice(kv.indexOf('=') + 1),
        ]),
      );
      for (const v of values(args, '-v'))
        expect(
          mounts.some((m) => m.test(v)),
          `${b.component}: unexpected mount ${v}`,
        ).toBe(true);
      const extra = Object.keys(buildArgs).filter((k) => !(k in release.buildArgs));
      expect(extra, b.component).toEqual(['NODE_IMAGE']);
      for (const [k, v] of Object.entries(buildArgs)) {
        if (k !== 'NODE_IMAGE') expect(v, `${b.component}: --build-arg ${k}`).toBe(release.buildArgs[k]);
      }
      // Tagged as the manifests run it: the release's repository at the version.
      expect(values(args, '-t'), b.component).toEqual([`${release.repository}:${plan.version}`]);
    }
  });

  it('NODE_IMAGE is the base of every stage that is not another stage', () => {
    for (const b of local) {
      const d = parseDockerfile(readFileSync(join(root, b.dockerfile), 'utf8'));
      const names = new Set(d.stages.flatMap((s) => (s.name ? [s.name] : [])));
      expect('NODE_IMAGE' in d.globalArgs, b.dockerfile).toBe(true);
      for (const s of d.stages)
        if (!names.has(s.from)) expect(s.from, b.dockerfile).toBe('$' + '{NODE_IMAGE}');
    }
  });

  it('the build context leaves out dependencies, build output, git and run directories', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['**/node_modules', '**/dist', '.git', '.claimkit', '**/.turbo'])
      expect(ignored, p).toContain(p);
  });
});
