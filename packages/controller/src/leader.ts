// The Manager's Elector over @claimkit/kube's LeaderElector (the loop around core's leaseStep). It
// takes any core Client, so unit tests elect on the in-memory model. Leadership is for efficiency
// only: the reconcilers keep every invariant with two replicas active at once.
import type { Client } from '@claimkit/core';
import { LeaderElector } from '@claimkit/kube';
import type { Logger } from './log.ts';
import type { Elector } from './manager.ts';

export interface LeaseElectorOptions {
  client: Client;
  namespace: string;
  name?: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewDeadlineSeconds?: number;
  retryPeriodSeconds?: number;
  log?: Logger;
}

export class LeaseElector implements Elector {
  private readonly o: LeaseElectorOptions;
  private elector: LeaderElector | undefined;

  constructor(opts: LeaseElectorOptions) {
    this.o = opts;
  }

  get isLeader(): boolean {
    return this.elector?.isLeader() ?? false;
  }

  run(handlers: { onStartedLeading: () => void; onStoppedLeading: () => void }): void {
    const o = this.o;
    const lease = `${o.namespace}/${o.name ?? 'claimkit-controller'}`;
    this.elector = new LeaderElector(o.client, {
      namespace: o.namespace,
      name: o.name ?? 'claimkit-controller',
      identity: o.identity,
      leaseDurationSeconds: o.leaseDurationSeconds ?? 15,
      renewDeadlineSeconds: o.renewDeadlineSeconds ?? 10,
      retryPeriodSeconds: o.retryPeriodSeconds ?? 2,
      onStartedLeading: () => {
        o.log?.info('became leader', { lease, identity: o.identity });
        handlers.onStartedLeading();
      },
      onStoppedLeading: () => {
        o.log?.warn('stopped leading', { lease, identity: o.identity });
        handlers.onStoppedLeading();
      },
      onNewLeader: (id) => o.log?.info('leader', { lease, leader: id }),
      onError: (e) => o.log?.warn('leader election', { error: (e as Error)?.message ?? String(e) }),
    });
    this.elector.start();
  }

  async release(): Promise<void> {
    await this.elector?.stop();
  }
}
