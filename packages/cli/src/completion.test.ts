// The completion scripts, run as the shells run them: bash's completion function with COMP_WORDS and
// COMP_CWORD set (object names come from a stand-in claimctl on PATH), zsh's checked for syntax when
// zsh is installed and for structure always.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inNamespace, podClaim, podPool, put, world } from '@claimkit/core/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { run } from './cli.ts';
import { COMMAND_SUMMARY } from './command-list.ts';
import { DOCTOR_OPTIONS } from './commands/doctor.ts';
import { GET_OPTIONS } from './commands/get.ts';
import {
  bashScript,
  COMPLETIONS,
  completeArgs,
  DIRECTIVE,
  flagsOf,
  KIND_WORDS,
  zshScript,
} from './completion.ts';
import type { Ctx } from './context.ts';
import { makeStyle } from './output.ts';

const dir = mkdtempSync(join(tmpdir(), 'claimctl-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bashFile = join(dir, 'claimctl.bash');
writeFileSync(bashFile, bashScript());
// A claimctl that answers `get KIND -o name` as the real one does and records how it was asked.
const bin = join(dir, 'bin');
execFileSync('mkdir', ['-p', bin]);
writeFileSync(
  join(bin, 'claimctl'),
  `#!/bin/sh\necho "$*" >> "${dir}/asked"\nfor n in web-1 web-2 other; do echo "podclaim.claimkit.dev/$n"; done\n`,
);
chmodSync(join(bin, 'claimctl'), 0o755);

/** What bash offers for the last word of `words` (as the user typed them, the last one partial). */
function complete(...words: string[]): string[] {
  const r = spawnSync(
    'bash',
    [
      '-c',
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _claimctl; printf "%s\\n" "$' +
        '{COMPREPLY[@]}"',
      '_',
      bashFile,
      ...words,
    ],
    { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter((l) => l !== '');
}

function asked(): string[] {
  try {
    return readFileSync(join(dir, 'asked'), 'utf8').trim().split('\n');
  } catch {
    return [];
  }
}

async function claimctl(...argv: string[]) {
  return claimctlOn(world().model, ...argv);
}

async function claimctlOn(model: ReturnType<typeof world>['model'], ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: Ctx = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    style: makeStyle(false),
    now: () => 0,
    env: {},
    connect: async () => ({ client: model, namespace: 'default' }),
  };
  const code = await run(argv, ctx);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('claimctl completion', () => {
  test('prints each script; anything else is a usage error', async () => {
    expect(await claimctl('completion', 'bash')).toEqual({ code: 0, out: bashScript(), err: '' });
    expect(await claimctl('completion', 'zsh')).toEqual({ code: 0, out: zshScript(), err: '' });
    expect((await claimctl('completion', '--help')).out).toMatch(/source <\(claimctl completion bash\)/);
    expect(await claimctl('completion', 'fish')).toMatchObject({
      code: 2,
      err: 'claimctl: shell: want one of bash|zsh, got "fish" (see claimctl completion --help)',
    });
    expect((await claimctl('completion')).code).toBe(2);
  });

  test('every command help lists is completed, with every flag its parser takes', () => {
    expect(Object.keys(COMPLETIONS).sort()).toEqual([...COMMAND_SUMMARY.map((c) => c.name), 'help'].sort());
    expect(flagsOf(COMPLETIONS.get!).map((f) => f.long)).toEqual([
      'help',
      'verbose',
      'kubeconfig',
      'context',
      'as',
      'as-group',
      'namespace',
      'all-namespaces',
      'selector',
      'output',
    ]);
    // Described and valued by the table the command parses with, not by a second list.
    expect(flagsOf(COMPLETIONS.doctor!).find((f) => f.long === 'fix')?.description).toBe(
      DOCTOR_OPTIONS.fix.help,
    );
    expect(flagsOf(COMPLETIONS.get!).find((f) => f.long === 'output')?.values).toBe(
      GET_OPTIONS.output.values,
    );
    // A menu line: the help without its parenthesized detail.
    expect(flagsOf(COMPLETIONS.get!).find((f) => f.long === 'as-group')?.description).toBe(
      'act with GROUP too',
    );
  });
});

describe('bash', () => {
  test('the script is valid bash', () => {
    expect(spawnSync('bash', ['-n', bashFile], { encoding: 'utf8' })).toMatchObject({
      status: 0,
      stderr: '',
    });
  });

  test('commands, flags and flag values', () => {
    expect(complete('claimctl', 'ge')).toEqual(['get']);
    expect(complete('claimctl', 'd')).toEqual(['describe', 'doctor']);
    expect(complete('claimctl', '')).toEqual(COMMAND_SUMMARY.map((c) => c.name).concat('help'));
    expect(complete('claimctl', 'get', '--out')).toEqual(['--output']);
    expect(complete('claimctl', 'doctor', '--f')).toEqual(['--fix']);
    expect(complete('claimctl', 'doctor', '--stuck-after', '')).toEqual([]);
    expect(complete('claimctl', 'get', '-o', '')).toEqual(['table', 'wide', 'json', 'yaml', 'name']);
    // COMP_WORDBREAKS splits --output=y into '--output' '=' 'y'.
    expect(complete('claimctl', 'get', '--output', '=', 'y')).toEqual(['yaml']);
    expect(complete('claimctl', 'manifests', '--components', 'c')).toEqual(['crds', 'controller']);
    expect(complete('claimctl', 'completion', '')).toEqual(['bash', 'zsh']);
    expect(complete('claimctl', 'help', 'cl')).toEqual(['claim']);
  });

  test('resource types, then names read with claimctl in the namespace the line names', () => {
    expect(complete('claimctl', 'get', '')).toEqual(KIND_WORDS);
    expect(complete('claimctl', 'describe', 'pcs')).toEqual(['pcs']);
    expect(complete('claimctl', 'capture', 're')).toEqual(['renew', 'release', 'retry']);
    expect(complete('claimctl', 'get', 'pc', '-n', 'team-b', '-o', 'yaml', 'w')).toEqual(['web-1', 'web-2']);
    expect(complete('claimctl', 'get', 'pc', 'web-1', '')).toEqual(['web-1', 'web-2', 'other']);
    expect(complete('claimctl', 'capture', 'renew', '--context', 'kind', '')).toEqual([
      'web-1',
      'web-2',
      'other',
    ]);
    expect(complete('claimctl', 'claim', 'migrate', '-n', 'team-b', 'o')).toEqual(['other']);
    expect(complete('claimctl', 'describe', 'pc', '-A', 'o')).toEqual(['other']);
    expect(asked()).toEqual([
      'get pc -o name -n team-b',
      'get pc -o name',
      'get captures -o name --context kind',
      'get podclaims -o name -n team-b',
      'get pc -o name -A',
    ]);
    // No kind yet, or a command without names: claimctl is not run.
    complete('claimctl', 'doctor', '');
    expect(asked()).toHaveLength(5);
  });
});

describe('zsh', () => {
  const script = zshScript();

  test('syntax (zsh -n) where zsh is installed', () => {
    const zsh = spawnSync('zsh', ['--version']);
    if (zsh.error) return; // not installed here: the structure test below still runs
    const file = join(dir, '_claimctl');
    writeFileSync(file, script);
    expect(spawnSync('zsh', ['-n', file], { encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
  });

  test('structure: a #compdef function with a branch per command, every flag and positional', () => {
    expect(script.split('\n')[0]).toBe('#compdef claimctl kubectl-claimkit');
    expect(script).toMatch(/^_claimctl\(\) \{$/m);
    expect(script).toMatch(/compdef _claimctl claimctl kubectl-claimkit/);
    for (const [name, c] of Object.entries(COMPLETIONS)) {
      const branch = new RegExp(`^ {4}${name}\\)\\n([\\s\\S]*?)\\n {6};;$`, 'm').exec(script)?.[1];
      expect(branch, name).toBeDefined();
      for (const f of flagsOf(c)) {
        const spec = f.short
          ? `'(-${f.short} --${f.long})'{-${f.short}${f.takesValue ? '+' : ''},--${f.long}${f.takesValue ? '=' : ''}}'[`
          : `'--${f.long}${f.takesValue ? '=' : ''}[`;
        expect(branch, `${name} --${f.long}`).toContain(spec);
      }
      expect(branch!.match(/'\d+:/g) ?? [], name).toHaveLength(c.args.length);
    }
    expect(script).toContain(`'1:arg:(${KIND_WORDS.join(' ')})'`);
    expect(script).toContain("'2:name:->names-captures'");
    // Quotes pair up on every line (a description's apostrophe is escaped as '\'').
    for (const line of script.split('\n')) {
      expect(line.replaceAll("'\\''", '').split("'").length % 2, line).toBe(1);
    }
  });
});

describe("kubectl claimkit <TAB> (kubectl_complete-claimkit, cobra's __complete protocol)", () => {
  const names = async (kind: string, cluster: string[]) =>
    kind === 'pc' || kind === 'podclaims' ? [`a${cluster.join('')}`, 'b'] : [];
  const words = async (...args: string[]) =>
    (await completeArgs(args, names)).words.map((w) => w.split('\t')[0]);

  test('the same answers as the scripts, filtered by the word typed', async () => {
    expect(await words('ge')).toEqual(['get']);
    expect((await completeArgs([''], names)).words[0]).toBe(
      'get\tlist captures (cap), podpools (pool), podclaims (pc), podclaimsets (pcs)',
    );
    expect(await completeArgs(['get', '--out'], names)).toEqual({
      words: ['--output\toutput format'],
      directive: DIRECTIVE.noFiles,
    });
    expect(await words('get', '-o', 'y')).toEqual(['yaml']);
    expect(await words('get', '--output=j')).toEqual(['--output=json']);
    expect(await words('get', 'podc')).toEqual(['podclaims', 'podclaim', 'podclaimsets', 'podclaimset']);
    expect(await words('get', 'pc', '-n', 'x', '')).toEqual(['a-nx', 'b']);
    expect(await words('claim', 'migrate', '--namespace=y', '')).toEqual(['a--namespace=y', 'b']);
    expect(await words('capture', 'r')).toEqual(['renew', 'release', 'retry']);
    expect(await words('doctor', '')).toEqual([]);
    expect((await completeArgs(['get', '--kubeconfig', ''], names)).directive).toBe(DIRECTIVE.default);
  });

  test('claimctl __complete prints the candidates and the directive; names come from the cluster', async () => {
    const { model } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('web-a'));
    await put(model, podClaim('web-b'));
    await put(model, podClaim('other', inNamespace('team-b')));
    expect(await claimctlOn(model, '__complete', 'get', 'pc', 'w')).toEqual({
      code: 0,
      out: 'web-a\nweb-b\n:4',
      err: '',
    });
    expect((await claimctlOn(model, '__complete', 'get', 'pc', '-n', 'team-b', '')).out).toBe('other\n:4');
    expect((await claimctlOn(model, '__complete', 'get', 'pc', '-A', '')).out).toBe(
      'web-a\nweb-b\nother\n:4',
    );
    // An unknown kind completes nothing (no error on the terminal while typing).
    expect(await claimctlOn(model, '__complete', 'get', 'nodes', '')).toEqual({
      code: 0,
      out: ':4',
      err: '',
    });
  });
});
