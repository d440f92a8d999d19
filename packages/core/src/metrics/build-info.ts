// claimkit_build_info: one series, always 1, naming the component, the claimkit release it was built
// from and the runtime it runs on (as Kubernetes components export kubernetes_build_info). During a
// rolling upgrade or after a rollback it says which versions serve at once:
// `count by (component, version) (claimkit_build_info)`.
import { Gauge, type Registry } from './prometheus.ts';

const BUILD_INFO_METRIC = 'claimkit_build_info';

export interface BuildInfo {
  component: 'controller' | 'webhook' | 'capture-agent';
  /** The release (CLAIMKIT_VERSION). */
  version: string;
  /** `node v24.22.3`, `deno 2.9.6`. */
  runtime: string;
}

export function registerBuildInfo(registry: Registry, info: BuildInfo): Gauge {
  return registry.register(
    new Gauge(
      BUILD_INFO_METRIC,
      'A metric with a constant 1 value labelled by the component, the claimkit release it was built from and the runtime it runs on.',
      () => [{ labels: { component: info.component, version: info.version, runtime: info.runtime }, v: 1 }],
    ),
  );
}
