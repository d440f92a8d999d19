import { COMPONENTS } from '@claimkit/e2e/harness';
import { describe, expect, it } from 'vitest';
import { CLUSTER_HELP, clusterStartup } from './cluster-args.ts';

const help = (...argv: string[]) => {
  const s = clusterStartup(argv);
  if (!('help' in s)) throw new Error(`not a help: ${JSON.stringify(s)}`);
  return s.help;
};

describe('pnpm cluster arguments', () => {
  it('one command, each with its own flags and arguments', () => {
    expect(clusterStartup(['up'])).toEqual({ config: { cmd: 'up' } });
    expect(clusterStartup(['up', '--nodes', '4'])).toEqual({ config: { cmd: 'up', nodes: 4 } });
    expect(clusterStartup(['up', '--nodes=1'])).toEqual({ config: { cmd: 'up', nodes: 1 } });
    expect(clusterStartup(['down'])).toEqual({ config: { cmd: 'down' } });
    expect(clusterStartup(['status'])).toEqual({ config: { cmd: 'status' } });
    for (const cmd of ['stop', 'kill', 'start', 'restart'])
      expect(clusterStartup([cmd, 'kube-apiserver'])).toEqual({
        config: { cmd, component: 'kube-apiserver' },
      });
  });

  it("refuses what it does not know, in core's one wording, pointing at the command's help", () => {
    const components = COMPONENTS.join(', ');
    expect(clusterStartup([])).toEqual({ error: 'pnpm cluster: missing COMMAND (see --help)' });
    expect(clusterStartup(['upp'])).toEqual({ error: 'pnpm cluster: unknown command "upp" (see --help)' });
    expect(clusterStartup(['--nodes', '3', 'up'])).toEqual({
      error: 'pnpm cluster: the COMMAND comes first, got "--nodes" (see --help)',
    });
    expect(clusterStartup(['up', '--nodes', '0'])).toEqual({
      error: 'pnpm cluster up: --nodes: want an integer >= 1, got "0" (see --help)',
    });
    expect(clusterStartup(['up', '--nodes'])).toEqual({
      error: 'pnpm cluster up: --nodes: needs a value (see --help)',
    });
    expect(clusterStartup(['up', 'extra'])).toEqual({
      error: 'pnpm cluster up: unexpected argument "extra" (see --help)',
    });
    expect(clusterStartup(['down', '--all'])).toEqual({
      error: 'pnpm cluster down: unknown flag --all (see --help)',
    });
    expect(clusterStartup(['restart'])).toEqual({
      error: `pnpm cluster restart: missing COMPONENT (one of ${components}) (see --help)`,
    });
    expect(clusterStartup(['stop', 'etcdd'])).toEqual({
      error: `pnpm cluster stop: unknown component "etcdd" (want one of ${components}) (see --help)`,
    });
    expect(clusterStartup(['kill', 'etcd', 'kwok'])).toEqual({
      error: 'pnpm cluster kill: unexpected argument "kwok" (see --help)',
    });
    expect(clusterStartup(['start', '--force', 'etcd'])).toEqual({
      error: 'pnpm cluster start: unknown flag --force (see --help)',
    });
  });

  it('--help: the commands; COMMAND --help: its usage, summary and flags from its table', () => {
    expect(help('--help')).toBe(CLUSTER_HELP);
    expect(help('-h')).toBe(CLUSTER_HELP);
    for (const cmd of ['up [flags]', 'status', 'down', 'stop COMPONENT', 'restart COMPONENT'])
      expect(CLUSTER_HELP).toContain(`\n  pnpm cluster ${cmd}\n`);
    for (const c of COMPONENTS) expect(CLUSTER_HELP).toMatch(new RegExp(`[ ,]${c}(,|\n)`));
    const up = help('up', '--nodes=0', '--help');
    expect(up).toMatch(/^usage: pnpm cluster up \[flags\]\n/);
    expect(up).toMatch(/--nodes N +fake \(kwok\) nodes \(default the e2e harness's\)$/m);
    const restart = help('restart', '-h');
    expect(restart).toMatch(/^usage: pnpm cluster restart COMPONENT\n/);
    for (const c of COMPONENTS) expect(restart).toMatch(new RegExp(`[ ,]${c}(,|\n)`));
    expect(restart).toMatch(/-h, --help +this help\n$/);
    for (const text of [CLUSTER_HELP, up, restart])
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });
});
