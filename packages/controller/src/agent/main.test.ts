// The bin as it runs: JSON log lines (ts, level, msg), the protocol served, state saved, SIGTERM.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');
const NODE_ARGS = ['--conditions=@claimkit/source', MAIN];

describe('claimkit-capture-agent (the bin)', () => {
  let child: ChildProcess | undefined;
  let dir = '';
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('without a kubelet address says so in one line, exit 2', () => {
    const r = spawnSync(process.execPath, NODE_ARGS, {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'claimkit-capture-agent: --kubelet-host: required for --capture=kubelet ($NODE_IP is not set); --node-name: required for --capture=kubelet ($NODE_NAME is not set) (see --help)\n',
    );
  }, 60_000);

  it('serves the protocol with the sleep capture, logs JSON lines, saves its state, stops on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-bin-'));
    const stateDir = join(dir, 'state');
    child = spawn(
      process.execPath,
      [
        ...NODE_ARGS,
        '--capture=sleep',
        '--duration-ms=10',
        `--state-dir=${stateDir}`,
        '--listen=127.0.0.1:0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: Record<string, unknown>[] = [];
    const listening = new Promise<string>((resolve, reject) => {
      createInterface({ input: child!.stderr! }).on('line', (l) => {
        const o = JSON.parse(l) as Record<string, unknown>;
        lines.push(o);
        if (o.msg === 'capture agent listening') resolve(o.url as string);
      });
      child!.once('exit', (c) => reject(new Error(`exited ${c}: ${JSON.stringify(lines)}`)));
    });
    const url = await listening;
    for (const l of lines) {
      expect(Object.keys(l).slice(0, 3)).toEqual(['ts', 'level', 'msg']);
      expect(l.logger).toBe('claimkit-capture-agent'); // the controller's logger, as every bin
      expect(l.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const body = { namespace: 'ns', pod: 'p', uid: 'u', container: 'c', node: 'n', capture: 'c1', token: 3 };
    const started = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };
    let state: unknown;
    for (let i = 0; i < 100; i++) {
      state = await (await fetch(`${url}/${id}`)).json();
      if ((state as { state: string }).state !== 'Running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(state).toEqual({ state: 'Succeeded', ref: 'snapshot://ns/c1/p@3' });
    expect(JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')).highest).toEqual({ 'ns/c1': 3 });
    const exited = new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        'no saved state: starting empty',
        'job started',
        'job finished',
        'shutting down',
      ]),
    );
  }, 60_000);
});
