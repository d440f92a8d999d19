// What the Manager's tests share: core's in-memory API model with the CRDs' rules, a scheduler +
// kubelet over it, a poll that says what it waited for, and one list of things to stop after each test.
import { keyOf } from '@claimkit/core';
import { ApiModel, schemaModelOptions } from '@claimkit/core/model';
import { controllerDefaults } from '../flags.ts';
import type { ManagerConfig } from '../manager-options.ts';

/** Managers, kubelets and servers a test started; `stopRunning` stops them, newest first. */
export const running: { stop(): Promise<void> | void }[] = [];

export async function stopRunning(): Promise<void> {
  for (const r of running.splice(0).reverse()) await r.stop();
}

export function model(): ApiModel {
  return new ApiModel({ clock: { now: () => Date.now() }, ...schemaModelOptions() });
}

/** A scheduler + kubelet: place pods, make them Running and Ready, finish graceful deletions. */
export function kubelet(m: ApiModel, place: () => string = () => 'node-1'): { stop(): void } {
  let busy = false;
  const t = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      m.completePodDeletions();
      for (const p of m.listNow('Pod')) {
        if (p.metadata.deletionTimestamp) continue;
        if (!p.spec.nodeName) await m.patch('Pod', keyOf(p), { spec: { nodeName: place() } }).catch(() => {});
        else if (p.status?.phase !== 'Running')
          m.setPodStatusNow(keyOf(p), { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
      }
    } finally {
      busy = false;
    }
  }, 5);
  const r = { stop: () => clearInterval(t) };
  running.push(r);
  return r;
}

/** Polls `f` until it returns a value, or fails naming `what`. */
export async function until<T>(what: string, f: () => T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The shipped configuration with a test's changes (the Manager takes no default of its own). */
export function testConfig(changes: Partial<ManagerConfig> = {}): ManagerConfig {
  return { ...controllerDefaults(), ...changes };
}
