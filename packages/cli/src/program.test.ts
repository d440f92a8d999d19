// claimctl as the kubectl plugin `kubectl claimkit`: the bin the package ships, the name it answers to.
import { readFileSync } from 'node:fs';
import { world } from '@claimkit/core/testing';
import { describe, expect, test } from 'vitest';
import { run } from './cli.ts';
import type { Ctx } from './context.ts';
import { makeStyle } from './output.ts';
import { asProgram, isPluginCompletion, PLUGIN_BIN, PLUGIN_COMPLETE_BIN, programName } from './program.ts';

async function as(prog: string | undefined, ...argv: string[]) {
  const { model } = world();
  const out: string[] = [];
  const err: string[] = [];
  const ctx: Ctx = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    style: makeStyle(false),
    now: () => 0,
    env: {},
    connect: async () => ({ client: model, namespace: 'default' }),
    ...(prog ? { prog } : {}),
  };
  const code = await run(argv, ctx);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the name claimctl was run as', () => {
  test('from the entry path or the executable: kubectl-<name> is `kubectl <name>`', () => {
    expect(programName('/usr/lib/node_modules/@claimkit/cli/dist/main.js', 'node')).toBe('claimctl');
    expect(programName('/usr/local/bin/claimctl', 'node')).toBe('claimctl');
    expect(programName('/usr/local/bin/kubectl-claimkit', 'node')).toBe('kubectl claimkit');
    // Behind a pnpm shim the entry file itself carries the name.
    expect(programName('/x/node_modules/@claimkit/cli/dist/kubectl-claimkit.js', 'node')).toBe(
      'kubectl claimkit',
    );
    // A compiled binary that krew links as kubectl-claimkit.
    expect(programName('/tmp/deno-compile/main.js', '/home/u/.krew/bin/kubectl-claimkit')).toBe(
      'kubectl claimkit',
    );
    expect(programName('C:\\npm\\kubectl-claimkit.cmd')).toBe('kubectl claimkit');
    expect(programName('/bin/kubectl-foo-bar_baz')).toBe('kubectl foo bar-baz');
    expect(programName(undefined, undefined)).toBe('claimctl');
    expect(programName('/bin/kubectl-')).toBe('claimctl');
  });

  test('rewrites claimctl where it starts a command, not where it is a value', () => {
    expect(asProgram("Run 'claimctl get --help'; claimctl: x", 'kubectl claimkit')).toBe(
      "Run 'kubectl claimkit get --help'; kubectl claimkit: x",
    );
    expect(asProgram('--reason TEXT  why (default claimctl)', 'kubectl claimkit')).toBe(
      '--reason TEXT  why (default claimctl)',
    );
    expect(asProgram('claimctl get pc', undefined)).toBe('claimctl get pc');
  });

  test('the package ships the plugin bin; krew would refuse a generic name', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      bin: Record<string, string>;
      sideEffects: string[];
    };
    expect(pkg.bin).toEqual({
      claimctl: './dist/main.js',
      [PLUGIN_BIN]: './dist/kubectl-claimkit.js',
      [PLUGIN_COMPLETE_BIN]: './dist/kubectl_complete-claimkit.js',
    });
    expect(pkg.sideEffects).toContain('./dist/kubectl-claimkit.js');
    expect(pkg.sideEffects).toContain('./dist/kubectl_complete-claimkit.js');
    expect(PLUGIN_COMPLETE_BIN).toBe('kubectl_complete-claimkit');
    expect(isPluginCompletion('/x/dist/kubectl_complete-claimkit.js')).toBe(true);
    expect(isPluginCompletion('/usr/local/bin/kubectl_complete-claimkit')).toBe(true);
    expect(isPluginCompletion('/usr/local/bin/kubectl-claimkit')).toBe(false);
    expect(readFileSync(new URL('./kubectl-claimkit.ts', import.meta.url), 'utf8')).toMatch(
      /^#!\/usr\/bin\/env node\n[\s\S]*^import '\.\/main\.ts';$/m,
    );
  });
});

describe('as kubectl claimkit', () => {
  test('help and every command help show the plugin command', async () => {
    const top = await as('kubectl claimkit', '--help');
    expect(top.out.split('\n')[0]).toBe(
      'kubectl claimkit: inspect, repair and drive claimkit claims (claimctl, as a kubectl plugin)',
    );
    expect(top.out).toContain('  kubectl claimkit COMMAND [ARGS] [flags]');
    expect(top.out).toContain("Run 'kubectl claimkit COMMAND --help'");
    expect(top.out).not.toMatch(/claimctl (COMMAND|get)/);
    for (const cmd of [
      'get',
      'describe',
      'doctor',
      'capture',
      'claim',
      'simulate',
      'manifests',
      'completion',
    ]) {
      const r = await as('kubectl claimkit', cmd, '--help');
      expect(r.code, cmd).toBe(0);
      expect(r.out, cmd).toContain(`kubectl claimkit ${cmd}`);
      expect(r.out, cmd).not.toMatch(/(^|\s|')claimctl [a-z]/m);
    }
    expect((await as('kubectl claimkit', 'claim', '--help')).out).toContain('(default claimctl)');
    // As claimctl, the same help as before, pointing at the plugin.
    const plain = await as(undefined, '--help');
    expect(plain.out.split('\n')[0]).toBe(
      'claimctl: inspect, repair and drive claimkit claims (also: kubectl claimkit ...)',
    );
    expect(plain.out).toContain('  get TYPE [NAME...]          list captures (cap)');
    expect(plain.out).toContain('  completion bash|zsh         print a shell completion script');
  });

  test('usage errors name the plugin command and its help', async () => {
    expect((await as('kubectl claimkit', 'get', 'pc', '--bogus')).err).toBe(
      'kubectl claimkit: unknown flag --bogus (see kubectl claimkit get --help)',
    );
    expect((await as('kubectl claimkit', 'frobnicate')).err).toBe(
      'kubectl claimkit: unknown command "frobnicate" (see --help)',
    );
    expect((await as('kubectl claimkit', 'capture', 'renew')).err).toBe(
      'kubectl claimkit: missing argument: usage: kubectl claimkit capture OP NAME [flags] (see kubectl claimkit capture --help)',
    );
  });
});
