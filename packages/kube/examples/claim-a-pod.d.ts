import type { Client, Watcher } from '@claimkit/core';
export declare function useAWarmPod(kube: Client & Watcher): Promise<string>;
