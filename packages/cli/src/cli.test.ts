// claimctl on core's in-memory API model: argument parsing, every output format, every command.

import { readFileSync } from 'node:fs';
import {
  ANNOTATION_MIGRATE,
  ANNOTATION_MIGRATE_TO,
  type KubeEvent,
  keyOf,
  LABEL_CLAIMED_BY,
  reconcilePodPool,
} from '@claimkit/core';
import type { ApiModel, ManualClock } from '@claimkit/core/model';
import {
  defineOptions,
  formatDuration,
  type OptionSpec,
  parseDuration,
  usageLine,
} from '@claimkit/core/options';
import {
  boundTo,
  capture,
  claimedBy,
  forPool,
  idle,
  inNamespace,
  inPool,
  inSet,
  migratingFrom,
  notReady,
  onNode,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  put,
  ready,
  running,
  withLostPolicy,
  withPodMetadata,
  withReleaseFinalizer,
  withReplicas,
  withSelector,
  withState,
  world,
} from '@claimkit/core/testing';
import { describe, expect, test } from 'vitest';
import { parseCommand, UsageError } from './args.ts';
import { run } from './cli.ts';
import { COMPLETIONS } from './completion.ts';
import type { Ctx } from './context.ts';
import { humanDuration, makeStyle, table, wantColor } from './output.ts';

async function claimctl(model: ApiModel, clock: ManualClock, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const connects: unknown[] = [];
  const ctx: Ctx = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    style: makeStyle(false),
    now: () => clock.now(),
    env: {},
    connect: async (o) => {
      connects.push(o);
      return { client: model, namespace: 'default' };
    },
  };
  const code = await run(argv, ctx);
  return { code, out: out.join('\n'), err: err.join('\n'), connects };
}

/** A help's flag entries by long name, their wrapped lines joined. */
function flagEntries(help: string): Map<string, string> {
  const entries = new Map<string, string>();
  let last: string | undefined;
  for (const line of help.split('\n')) {
    const flag = /^ {2}(?:-\w, | {4})--([\w-]+)/.exec(line)?.[1];
    if (flag) {
      last = flag;
      entries.set(flag, line.trim());
    } else if (last && /^ {10,}\S/.test(line)) entries.set(last, `${entries.get(last)} ${line.trim()}`);
    else last = undefined;
  }
  return entries;
}

const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), onNode('n1'), running(), notReady(), ...mods);

async function sample() {
  const w = world();
  const { model, clock } = w;
  await put(model, podPool('web'));
  const set = await put(model, podClaimSet('web-set', withReplicas(1)));
  const a = await put(
    model,
    podClaim('web-set-abcde', inSet(set), withReleaseFinalizer(), boundTo('web-1', 'n1')),
  );
  await put(model, poolPod('web-1', claimedBy(a)));
  await put(model, poolPod('web-2', idle()));
  await put(model, podClaim('other', forPool('web'), inNamespace('team-b')));
  clock.advance(5 * 60_000);
  return { ...w, a };
}

describe('version', () => {
  test("--version and `version` print the package's version (written by pnpm manifests), connecting to nothing", async () => {
    const { model, clock } = world();
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const argv of [['--version'], ['version']]) {
      const r = await claimctl(model, clock, ...argv);
      expect(r).toMatchObject({ code: 0, out: `claimctl ${pkg.version}`, connects: [] });
    }
  });
});

describe('argument parsing', () => {
  const options = defineOptions({
    namespace: { type: 'string', short: 'n', help: 'namespace' },
    fix: { type: 'bool', help: 'repair' },
    output: { type: 'enum', short: 'o', values: ['text', 'json'], default: 'text', help: 'format' },
    steps: { type: 'int', min: 1, default: 2000, help: 'steps' },
  });
  test('long, inline, short, glued short, booleans and --; typed values with their defaults', () => {
    expect(parseCommand(options, ['pc', '--namespace', 'a', '-ojson', '--fix', 'x'])).toEqual({
      values: { verbose: false, namespace: 'a', output: 'json', fix: true, steps: 2000 },
      positionals: ['pc', 'x'],
    });
    expect(
      parseCommand(options, ['--namespace=b', '-n', 'c', '--fix=false', '--steps=5', '--', '-z']),
    ).toEqual({
      values: { verbose: false, namespace: 'c', output: 'text', fix: false, steps: 5 },
      positionals: ['-z'],
    });
    expect(parseCommand(options, ['-o=json'])?.values.output).toBe('json');
    // An empty value reaches the command, which says what it means there.
    expect(parseCommand(options, ['-n', ''])?.values.namespace).toBe('');
  });
  test('-h/--help: the help, unless a flag is unknown (a bad value is answered by the help)', () => {
    expect(parseCommand(options, ['pc', '-h'])).toBeUndefined();
    expect(parseCommand(options, ['--help', '-o', 'xml'])).toBeUndefined();
    expect(() => parseCommand(options, ['--help', '--nope'])).toThrow(new UsageError('unknown flag --nope'));
  });
  test('errors are one-line UsageErrors', () => {
    expect(() => parseCommand(options, ['--nope'])).toThrow(new UsageError('unknown flag --nope'));
    expect(() => parseCommand(options, ['-x'])).toThrow(new UsageError('unknown flag -x'));
    expect(() => parseCommand(options, ['-n'])).toThrow(new UsageError('-n: needs a value'));
    expect(() => parseCommand(options, ['--fix=maybe'])).toThrow(
      new UsageError('--fix: want true or false, got "maybe"'),
    );
    expect(() => parseCommand(options, ['--steps', '0'])).toThrow(
      new UsageError('--steps: want an integer >= 1, got "0"'),
    );
    expect(() => parseCommand(options, ['-o', 'xml'])).toThrow(
      new UsageError('--output: want one of text|json, got "xml"'),
    );
    expect(() => parseCommand(options, ['--nope', '-x'])).toThrow(
      new UsageError(['unknown flag --nope', 'unknown flag -x']),
    );
  });
  test("durations (core's one syntax)", () => {
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(() => parseDuration('5 minutes')).toThrow('not a duration: "5 minutes" (e.g. 30s, 5m, 1h30m)');
    expect(() => parseDuration('')).toThrow(/not a duration/);
  });
  test('ages like kubectl', () => {
    expect(humanDuration(45_000)).toBe('45s');
    expect(humanDuration(5 * 60_000 + 10_000)).toBe('5m10s');
    expect(humanDuration(3 * 3_600_000)).toBe('3h');
    expect(humanDuration(50 * 3_600_000)).toBe('2d2h');
  });
  test('colour only on a TTY, never with NO_COLOR', () => {
    expect(wantColor(true, {})).toBe(true);
    expect(wantColor(false, {})).toBe(false);
    expect(wantColor(true, { NO_COLOR: '1' })).toBe(false);
    expect(wantColor(false, { FORCE_COLOR: '1' })).toBe(true);
    expect(makeStyle(true).red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(table(['A', 'LONGER'], [['xx', 'y']])).toBe('A    LONGER\nxx   y');
  });
});

describe('usage', () => {
  test('--help and help for every command, exit 0, no cluster', async () => {
    const { model, clock } = world();
    const top = await claimctl(model, clock, '--help');
    expect(top.code).toBe(0);
    expect(top.out).toContain('doctor');
    for (const cmd of ['get', 'describe', 'doctor', 'capture', 'claim', 'simulate', 'manifests']) {
      const r = await claimctl(model, clock, cmd, '--help');
      expect(r.code, cmd).toBe(0);
      expect(r.out, cmd).toMatch(/Usage:/);
      expect(r.connects).toEqual([]);
      expect((await claimctl(model, clock, 'help', cmd)).out).toBe(r.out);
    }
  });
  test('unknown commands, flags and bad values: one line, exit 2, no stack trace', async () => {
    const { model, clock } = world();
    for (const argv of [
      ['frobnicate'],
      ['get'],
      ['get', 'pods'],
      ['get', 'pc', '--bogus'],
      ['get', 'pc', '-o', 'xml'],
      ['get', 'pc', '-n', 'a', '-A'],
      ['doctor', '--stuck-after', 'soon'],
      ['doctor', '--dry-run'],
      ['capture', 'acquire', 'c'],
      ['capture', 'complete', 'c', '--token', 'x', '--ref', 'r'],
      ['capture', 'explode', 'c'],
      ['simulate', '--faults', '2'],
      ['manifests', '--components', 'crds,operator'],
      ['--bogus'],
    ]) {
      const r = await claimctl(model, clock, ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err.split('\n'), argv.join(' ')).toHaveLength(1);
      // The one wording of every claimkit binary: `<bin>: <problem> (see <help>)`.
      expect(r.err, argv.join(' ')).toMatch(/^claimctl: .+ \(see (claimctl \w+ )?--help\)$/);
    }
  });
  test('a usage error names the problem and the help to read', async () => {
    const { model, clock } = world();
    const cases: [string[], string][] = [
      [['--bogus'], 'claimctl: unknown flag --bogus (see --help)'],
      [['frobnicate'], 'claimctl: unknown command "frobnicate" (see --help)'],
      [['get', 'pc', '--bogus'], 'claimctl: unknown flag --bogus (see claimctl get --help)'],
      [
        ['get', 'pc', '-o', 'xml'],
        'claimctl: --output: want one of table|wide|json|yaml|name, got "xml" (see claimctl get --help)',
      ],
      [
        ['doctor', '--stuck-after', 'soon'],
        'claimctl: --stuck-after: not a duration: "soon" (e.g. 30s, 5m, 1h30m) (see claimctl doctor --help)',
      ],
    ];
    for (const [argv, line] of cases)
      expect((await claimctl(model, clock, ...argv)).err, argv.join(' ')).toBe(line);
  });
  test("each command's help lists every option of its table, with its default", async () => {
    const { model, clock } = world();
    const hasDefault = (o: OptionSpec) =>
      o.default !== undefined || o.defaultText !== undefined || o.type === 'bool';
    const defaultOf = (o: OptionSpec) =>
      o.defaultText ??
      (o.type === 'duration'
        ? formatDuration(o.default as number)
        : Array.isArray(o.default)
          ? o.default.join(',')
          : String(o.default ?? false));
    const commands = Object.entries(COMPLETIONS).filter(([, c]) => Object.keys(c.options).length > 0);
    // get, describe, doctor, capture, claim, simulate and manifests.
    expect(commands).toHaveLength(7);
    for (const [cmd, { options }] of commands) {
      const entries = flagEntries((await claimctl(model, clock, cmd, '--help')).out);
      expect([...entries.keys()].sort(), cmd).toEqual(Object.keys(options).sort());
      for (const [name, o] of Object.entries<OptionSpec>(options)) {
        const entry = entries.get(name)!;
        expect(entry, `${cmd} --${name}`).toMatch(
          new RegExp(`^${o.short ? `-${o.short}, ` : ''}--${name}\\b`),
        );
        if (hasDefault(o)) expect(entry, `${cmd} --${name}`).toContain(`(default ${defaultOf(o)})`);
        else expect(entry, `${cmd} --${name}`).not.toContain('(default');
      }
    }
    // The defaults each command's help once restated by hand: now its table's, shown as it runs them.
    const doctor = flagEntries((await claimctl(model, clock, 'doctor', '--help')).out);
    expect(doctor.get('stuck-after')).toContain('(default 5m)');
    const sim = flagEntries((await claimctl(model, clock, 'simulate', '--help')).out);
    expect([sim.get('steps'), sim.get('replicas'), sim.get('faults'), sim.get('seed')]).toEqual([
      expect.stringContaining('(default 2000)'),
      expect.stringContaining('(default 2)'),
      expect.stringContaining('(default 0.04)'),
      expect.stringContaining('(default random, printed)'),
    ]);
  });
  test("every command: an unknown flag or a bad value is core's one usage line, exit 2, nothing run", async () => {
    const { model, clock } = world();
    const cases: [string[], string][] = [
      ...['get', 'describe', 'doctor', 'capture', 'claim', 'simulate', 'manifests', 'completion'].map(
        (cmd): [string[], string] => [[cmd, '--no-such-flag'], 'unknown flag --no-such-flag'],
      ),
      [['get', 'pc', '-o', 'xml'], '--output: want one of table|wide|json|yaml|name, got "xml"'],
      [['describe', 'pc', '-A=maybe'], '-A: want true or false, got "maybe"'],
      [['doctor', '-o', 'yaml'], '--output: want one of text|json, got "yaml"'],
      [['doctor', '--stuck-after', 'soon'], '--stuck-after: not a duration: "soon" (e.g. 30s, 5m, 1h30m)'],
      [['capture', 'renew', 'snap', '--token', 'x'], '--token: want an integer >= 1, got "x"'],
      [['claim', 'migrate', 'c', '--to'], '--to: needs a value'],
      [['simulate', '--steps', '0'], '--steps: want an integer >= 1, got "0"'],
      [['simulate', '--faults', '2'], '--faults: want a number from 0 to 1, got "2"'],
      [['manifests', '--components'], '--components: needs a value'],
    ];
    for (const [argv, problem] of cases) {
      const r = await claimctl(model, clock, ...argv);
      expect(r, argv.join(' ')).toEqual({
        code: 2,
        out: '',
        err: usageLine('claimctl', new UsageError(problem), `claimctl ${argv[0]} --help`),
        connects: [],
      });
    }
  });
  test('API errors: one line, the stack only with --verbose', async () => {
    const { model, clock } = world();
    const r = await claimctl(model, clock, 'get', 'pc', 'missing');
    expect(r.code).toBe(2);
    expect(r.err).toBe('Error from server (NotFound): podclaims "missing" not found');
    const v = await claimctl(model, clock, '--verbose', 'get', 'pc', 'missing');
    expect(v.err.split('\n').length).toBeGreaterThan(1);
    expect(v.err).toMatch(/at /);
  });
});

describe('get', () => {
  test('table: kubectl columns, current namespace', async () => {
    const { model, clock } = await sample();
    const r = await claimctl(model, clock, 'get', 'pc');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        'NAME            POOL   PHASE   POD     SOURCE POD   WAITING   AGE',
        'web-set-abcde   web    Bound   web-1   <none>       <none>    5m',
      ].join('\n'),
    );
    expect(r.connects).toEqual([{}]);
  });
  test('names and a selector together are a usage error, as in kubectl (not a silently ignored -l)', async () => {
    const { model, clock } = await sample();
    for (const cmd of ['get', 'describe']) {
      const r = await claimctl(model, clock, cmd, 'podclaims', 'web-set-abcde', '-l', 'a=b');
      expect([r.code, r.err]).toEqual([
        2,
        expect.stringContaining('name cannot be provided when a selector'),
      ]);
    }
  });
  test('--as and --as-group are passed on (doctor --fix as the controller, past the webhook)', async () => {
    const { model, clock } = await sample();
    const sa = 'system:serviceaccount:claimkit-system:claimkit-controller';
    const r = await claimctl(model, clock, 'doctor', '--as', sa, '--as-group', 'system:serviceaccounts');
    expect(r.connects).toEqual([{ as: sa, asGroup: 'system:serviceaccounts' }]);
    const bad = await claimctl(model, clock, 'get', 'podclaims', '--as-group', 'g');
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('--as-group needs --as')]);
    expect(bad.connects).toEqual([]);
  });
  test('wide, -A, -l, kubeconfig and context are passed on', async () => {
    const { model, clock } = await sample();
    const r = await claimctl(
      model,
      clock,
      'get',
      'podclaims',
      '-A',
      '-o',
      'wide',
      '--context',
      'x',
      '--kubeconfig',
      '/k',
    );
    expect(r.out.split('\n')[0]).toMatch(
      /^NAMESPACE\s+NAME\s+POOL\s+PHASE\s+POD\s+SOURCE POD\s+WAITING\s+NODE\s+ADDRESS\s+MIGRATIONS\s+LOST POLICY\s+POD METADATA\s+AGE$/,
    );
    expect(r.out).toContain('team-b');
    expect(r.connects).toEqual([{ kubeconfig: '/k', context: 'x' }]);
    const l = await claimctl(
      model,
      clock,
      'get',
      'pc',
      '-A',
      '-l',
      'claimkit.dev/claim-set=web-set',
      '-o',
      'name',
    );
    expect(l.out).toBe('podclaim.claimkit.dev/web-set-abcde');
  });
  test('json and yaml: an object for one name, a List otherwise', async () => {
    const { model, clock } = await sample();
    const one = JSON.parse((await claimctl(model, clock, 'get', 'pc', 'web-set-abcde', '-o', 'json')).out);
    expect(one.kind).toBe('PodClaim');
    expect(one.status?.podName).toBe('web-1');
    const list = JSON.parse((await claimctl(model, clock, 'get', 'pool', '-o', 'json')).out);
    expect(list).toMatchObject({ kind: 'List', items: [{ kind: 'PodPool' }] });
    const yaml = (await claimctl(model, clock, 'get', 'pcs', 'web-set', '-o', 'yaml')).out;
    expect(yaml).toMatch(/^apiVersion: claimkit.dev\/v1alpha1\nkind: PodClaimSet\n/);
    expect(yaml).toContain('replicas: 1');
  });
  test('every resource and short name has a table', async () => {
    const { model, clock } = await sample();
    const holder = await put(
      model,
      pod('db-1', ready(), (p) => {
        p.metadata.labels = { app: 'db' };
      }),
    );
    await put(model, capture('snap', withSelector({ app: 'db' })));
    const { acquireCapture } = await import('@claimkit/core');
    await acquireCapture(
      model,
      { namespace: 'default', name: 'snap' },
      { name: 'db-1', uid: holder.metadata.uid! },
      () => clock.now(),
    );
    const cap = await claimctl(model, clock, 'get', 'cap');
    expect(cap.out.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+HOLDER\s+TOKEN\s+EPOCH\s+LEASE\s+AGE$/);
    expect(cap.out.split('\n')[1]).toMatch(/^snap\s+Capturing\s+db-1\s+1\s+1\s+50m\s+0s$/);
    expect((await claimctl(model, clock, 'get', 'cap', '-o', 'wide')).out).toMatch(
      /ATTEMPTS\s+BACKEND\s+RESULT/,
    );
    expect((await claimctl(model, clock, 'get', 'pool')).out.split('\n')[0]).toMatch(
      /^NAME\s+MIN IDLE\s+TOTAL\s+IDLE\s+BOUND\s+DRAINING\s+UPDATED\s+OUTDATED\s+AGE$/,
    );
    await model.patch('PodPool', { namespace: 'default', name: 'web' }, { spec: { disruptionBudget: {} } });
    const wide = (await claimctl(model, clock, 'get', 'pool', '-o', 'wide')).out.split('\n');
    expect(wide[0]).toMatch(
      /MAX PODS\s+RELEASE\s+TEMPLATE\s+SELECTOR\s+PDB MAX UNAVAILABLE\s+SOURCE\s+SOURCE READY\s+SHARD PIN\s+AGE$/,
    );
    expect(wide[1]).toMatch(/Recycle\s+\S+\s+\S+\s+0\s+<none>\s+<none>\s+<none>\s+\S+$/);
    await model.patch(
      'PodPool',
      { namespace: 'default', name: 'web' },
      { spec: { source: { captureName: 'snap' } } },
    );
    await reconcilePodPool(
      { client: model, cache: model, now: () => clock.now() },
      { namespace: 'default', name: 'web' },
    );
    await model.patch(
      'PodPool',
      { namespace: 'default', name: 'web' },
      { metadata: { annotations: { 'claimkit.dev/shard': '1' } } },
    );
    const seeded = (await claimctl(model, clock, 'get', 'pool', '-o', 'wide')).out.split('\n');
    expect(seeded[1]).toMatch(/\s+snap\s+False \(NotCaptured\)\s+1\s+\S+$/);
    expect((await claimctl(model, clock, 'get', 'pcs')).out.split('\n')[0]).toMatch(
      /^NAME\s+REPLICAS\s+BOUND\s+PENDING\s+MIGRATING\s+LOST\s+AGE$/,
    );
    const empty = await claimctl(model, clock, 'get', 'pc', '-n', 'nowhere');
    expect(empty).toMatchObject({ code: 0, out: '', err: 'No resources found in nowhere namespace.' });
  });
});

describe('claims: lostPolicy, podMetadata and why a claim waits', () => {
  test('get shows the waiting reason (wide: lost policy and podMetadata); describe says it in full', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const c = await put(
      model,
      podClaim(
        'c1',
        forPool('ghost'),
        withLostPolicy('Fail'),
        withPodMetadata({ team: 'a' }, { 'example.com/o': 'x' }),
      ),
    );
    // The controller's own decision writes the condition (no hand-made status).
    const { reconcilePodClaim } = await import('@claimkit/core');
    // Created without the release finalizer: the first pass adds it, the second says why it waits.
    for (let i = 0; i < 2; i++)
      await reconcilePodClaim({ client: model, cache: model, now: () => clock.now() }, keyOf(c));
    const get = await claimctl(model, clock, 'get', 'pc', 'c1');
    expect(get.out.split('\n')[1]).toMatch(/^c1\s+ghost\s+Pending\s+<none>\s+<none>\s+PoolNotFound\s+0s$/);
    const wide = await claimctl(model, clock, 'get', 'pc', 'c1', '-o', 'wide');
    expect(wide.out.split('\n')[1]).toMatch(/\sFail\s+labels: team=a; annotations: example.com\/o\s+0s$/);
    const d = await claimctl(model, clock, 'describe', 'pc', 'c1');
    expect(d.out).toContain('Lost Policy:  Fail');
    expect(d.out).toContain('Address:      <none>');
    expect(d.out).toMatch(/Waiting:\s+PoolNotFound: PodPool ghost does not exist in namespace default/);
    expect(d.out).toMatch(/Pod Metadata:\n\s+Labels:\n\s+Team: a/);
  });
});

describe('a bound claim says where its pod is', () => {
  test('get -o wide lists its IPs, describe its IPs, node IP and ports', async () => {
    const { model, clock, a } = await sample();
    const address = {
      podIPs: ['10.1.0.5', 'fd00::5'],
      hostIP: '10.0.0.2',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090 }],
    };
    await model.patchStatus('PodClaim', keyOf(a), { status: { phase: 'Bound', address } });
    const wide = await claimctl(model, clock, 'get', 'pc', a.metadata.name, '-o', 'wide');
    expect(wide.out.split('\n')[1]).toMatch(/\sn1\s+10\.1\.0\.5,fd00::5\s+0\s/);
    const d = await claimctl(model, clock, 'describe', 'pc', a.metadata.name);
    expect(d.out).toContain('Address:      10.1.0.5,fd00::5 on 10.0.0.2, ports http:8080/TCP 9090/TCP');
  });
});

describe('describe', () => {
  test('fields, conditions and events', async () => {
    const { model, clock, a } = await sample();
    await model.patchStatus(
      'PodClaim',
      { namespace: 'default', name: a.metadata.name },
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Bound',
              message: 'bound',
              lastTransitionTime: new Date(clock.now()).toISOString(),
            },
          ],
        },
      },
    );
    const ev: KubeEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', namespace: 'default' },
      involvedObject: {
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        name: a.metadata.name,
        namespace: 'default',
        uid: a.metadata.uid!,
      },
      reason: 'Bound',
      message: 'bound to pod web-1 on node n1',
      type: 'Normal',
      count: 2,
      lastTimestamp: new Date(clock.now() - 60_000).toISOString(),
      source: { component: 'claimkit-controller' },
    };
    await model.create(ev);
    const r = await claimctl(model, clock, 'describe', 'pc', a.metadata.name);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Name:         ${a.metadata.name}`);
    expect(r.out).toContain('  Pool Name: web');
    expect(r.out).toContain('  Finalizers:          claimkit.dev/release');
    expect(r.out).toMatch(
      /Conditions:\n {2}Type\s+Status\s+Reason\s+Age\s+Message\n {2}Ready\s+True\s+Bound\s+0s\s+bound/,
    );
    expect(r.out).toMatch(
      /Events:\n {2}Type\s+Reason\s+Age\s+From\s+Message\n {2}Normal\s+Bound\s+60s \(x2\)\s+claimkit-controller\s+bound to pod web-1/,
    );
    await reconcilePodPool(
      { client: model, cache: model, now: () => clock.now() },
      { namespace: 'default', name: 'web' },
    );
    const none = await claimctl(model, clock, 'describe', 'pool', 'web');
    expect(none.out).toContain('Events:\n  <none>');
    // The scale replicas (minIdle), the rollout counts and the selector HPA/KEDA read.
    expect(none.out).toMatch(/Spec:[\s\S]* {2}Min Idle: \d+/);
    expect(none.out).toMatch(
      /Status:[\s\S]* {2}Updated: \d+\n {2}Outdated: \d+\n {2}Template Hash: [0-9a-f]{10}\n {2}Selector: claimkit.dev\/pool=web/,
    );
    expect(none.out).toMatch(/TemplateUpToDate\s+(True|False)/);
  });
});

describe('doctor', () => {
  async function broken() {
    const w = await sample();
    await put(w.model, podClaim('ghost', forPool('web'), withReleaseFinalizer(), boundTo('cn-zkskr', 'n1')));
    await put(w.model, poolPod('web-9', claimedBy('mxxhz')));
    return w;
  }
  test('healthy: exit 0', async () => {
    const { model, clock } = await sample();
    expect(await claimctl(model, clock, 'doctor')).toMatchObject({ code: 0, out: 'no problems found' });
  });
  test('problems: codes and objects, exit 1', async () => {
    const { model, clock } = await broken();
    const r = await claimctl(model, clock, 'doctor');
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'CK002 BoundToMissingPod PodClaim/default/ghost: claim ghost is Bound with podName cn-zkskr, which does not exist',
    );
    expect(r.out).toContain('CK003 LabelNamesMissingClaim Pod/default/web-9');
    expect(r.out).toContain('2 problem(s) found, 2 fixable');
    const j = JSON.parse((await claimctl(model, clock, 'doctor', '-o', 'json')).out);
    expect(j.findings.map((f: { code: string }) => f.code)).toEqual(['CK002', 'CK003']);
  });
  test('--fix --dry-run prints the writes and changes nothing; --fix repairs; then healthy', async () => {
    const { model, clock } = await broken();
    const before = model.writes.length;
    const dry = await claimctl(model, clock, 'doctor', '--fix', '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.out).toMatch(
      /patchStatus PodClaim default\/ghost \(resourceVersion \d+, uid [\w-]+\) .*"podName":null.*: doctor: pod cn-zkskr is gone/,
    );
    expect(dry.out).toMatch(/patch Pod default\/web-9 \(resourceVersion \d+, uid [\w-]+\)/);
    expect(model.writes.length).toBe(before);
    const fix = await claimctl(model, clock, 'doctor', '--fix');
    expect(fix.code).toBe(0);
    expect(fix.out).toContain('fixed CK002 PodClaim/default/ghost');
    expect(fix.out).toContain('all problems repaired');
    expect(
      model.getNow('Pod', { namespace: 'default', name: 'web-9' }).metadata.labels?.[LABEL_CLAIMED_BY],
    ).toBeUndefined();
    expect(await claimctl(model, clock, 'doctor', '-A')).toMatchObject({ code: 0 });
  });
  test('--help lists every check; a leaked pod (CK011) is found and released', async () => {
    const { model, clock } = await sample();
    const help = await claimctl(model, clock, 'doctor', '--help');
    for (const line of [/CK011 {2}LeakedPod/, /CK012 {2}SelfMigration/, /CK013 {2}UnfencedResult/]) {
      expect(help.out).toMatch(line);
    }
    await put(model, poolPod('web-7', withState('Draining')));
    const r = await claimctl(model, clock, 'doctor');
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'CK011 LeakedPod Pod/default/web-7: pod web-7 of pool web is Draining with no claimed-by label, and no claim references it',
    );
    const fix = await claimctl(model, clock, 'doctor', '--fix');
    expect(fix.out).toContain('fixed CK011 Pod/default/web-7');
    expect(fix.code).toBe(0);
    expect(
      model.getNow('Pod', { namespace: 'default', name: 'web-7' }).metadata.labels?.['claimkit.dev/state'],
    ).toBe('Idle');
  });
  test('--stuck-after decides when a deletion is stuck', async () => {
    const { model, clock } = await sample();
    const set = model.getNow('PodClaimSet', { namespace: 'default', name: 'web-set' });
    await put(
      model,
      podClaim('m', inSet(set), withReleaseFinalizer(), boundTo('web-2', 'n1'), migratingFrom('web-1')),
    );
    await model.delete('PodClaim', { namespace: 'default', name: 'm' });
    clock.advance(60_000);
    expect((await claimctl(model, clock, 'doctor')).out).not.toContain('CK001');
    const r = await claimctl(model, clock, 'doctor', '--stuck-after', '30s');
    expect(r.out).toContain('CK001 FinalizerStuck PodClaim/default/m');
  });
});

describe('capture', () => {
  async function cap() {
    const w = world();
    const p = await put(
      w.model,
      pod('db-1', ready(), (x) => {
        x.metadata.labels = { app: 'db' };
      }),
    );
    await put(w.model, capture('snap', withSelector({ app: 'db' })));
    return { ...w, p };
  }
  test('acquire, renew, complete; a stale token is refused with exit 3', async () => {
    const { model, clock } = await cap();
    const acq = await claimctl(model, clock, 'capture', 'acquire', 'snap', '--pod', 'db-1');
    expect(acq).toMatchObject({ code: 0, out: 'acquired capture snap for db-1: token 1' });
    expect((await claimctl(model, clock, 'capture', 'renew', 'snap', '--token', '1')).code).toBe(0);
    const stale = await claimctl(model, clock, 'capture', 'complete', 'snap', '--token', '7', '--ref', 'r');
    expect(stale.code).toBe(3);
    expect(stale.err).toMatch(
      /claim superseded: complete with token 7, but the current token is 1; nothing was written/,
    );
    const done = await claimctl(
      model,
      clock,
      'capture',
      'complete',
      'snap',
      '--token',
      '1',
      '--ref',
      'img:1',
      '-o',
      'json',
    );
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out).capture).toMatchObject({
      phase: 'Captured',
      result: { ref: 'img:1', token: 1 },
    });
    expect((await claimctl(model, clock, 'capture', 'release', 'snap', '--token', '1')).code).toBe(3);
  });
  test('held by a live pod: exit 1; fail and retry', async () => {
    const { model, clock } = await cap();
    await claimctl(model, clock, 'capture', 'acquire', 'snap', '--pod', 'db-1');
    await put(
      model,
      pod('db-2', ready(), (x) => {
        x.metadata.labels = { app: 'db' };
      }),
    );
    const held = await claimctl(model, clock, 'capture', 'acquire', 'snap', '--pod', 'db-2');
    expect(held.code).toBe(1);
    expect(held.out).toContain('held by db-1');
    const f = await claimctl(model, clock, 'capture', 'fail', 'snap', '--token', '1', '--error', 'boom');
    expect(f.out).toContain('attempt 1 failed; phase Pending');
    expect((await claimctl(model, clock, 'capture', 'retry', 'snap')).code).toBe(2); // not Failed
  });
});

describe('claim migrate', () => {
  test('sets the annotations', async () => {
    const { model, clock, a } = await sample();
    const r = await claimctl(model, clock, 'claim', 'migrate', a.metadata.name, '--to', 'web-2');
    expect(r.code).toBe(0);
    const c = model.getNow('PodClaim', { namespace: 'default', name: a.metadata.name });
    expect(c.metadata.annotations).toMatchObject({
      [ANNOTATION_MIGRATE]: 'claimctl',
      [ANNOTATION_MIGRATE_TO]: 'web-2',
    });
    await claimctl(model, clock, 'claim', 'migrate', a.metadata.name, '--reason', 'drain');
    const c2 = model.getNow('PodClaim', { namespace: 'default', name: a.metadata.name });
    expect(c2.metadata.annotations?.[ANNOTATION_MIGRATE]).toBe('drain');
    expect(c2.metadata.annotations?.[ANNOTATION_MIGRATE_TO]).toBeUndefined();
  });
});

describe('simulate', () => {
  test('a clean run exits 0 and reports the seed', async () => {
    const { model, clock } = world();
    const r = await claimctl(model, clock, 'simulate', '--seed', '3', '--steps', '150');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok: seed 3, 150 steps, 2 replica\(s\), fault rate 0.04: no invariant violated/);
    const j = JSON.parse(
      (await claimctl(model, clock, 'simulate', '--seed', '3', '--steps', '50', '-o', 'json')).out,
    );
    expect(j).toMatchObject({ seed: 3, steps: 50, violations: [] });
  });
});
