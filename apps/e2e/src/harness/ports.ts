import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A loopback TCP port that was free a moment ago (the kernel picks it; we release it at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Ports the kernel never hands out as the source port of an outgoing connection: below Linux's
 * ip_local_port_range (and macOS's 49152+). A component restarted on its port (the chaos tests
 * SIGKILL etcd and the API server) could otherwise find it taken meanwhile by any connection on
 * the machine: etcd's restart failed once with "bind: address already in use" on its peer port.
 */
export function restartSafePortRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) ephemeralLow = low;
  } catch {
    // not Linux: 32768 is below the other systems' ephemeral ranges too
  }
  const hi = Math.min(32767, ephemeralLow - 1);
  return [Math.max(1024, Math.min(20000, hi - 2000)), hi];
}

/**
 * n distinct ports, free a moment ago, that a restarted component can listen on again (see
 * restartSafePortRange); the kernel's choice when that range has no room.
 */
export async function freePorts(n: number, random: () => number = Math.random): Promise<number[]> {
  const [lo, hi] = restartSafePortRange();
  const out = new Set<number>();
  for (let tries = 0; out.size < n && hi - lo >= 100 && tries < 200; tries++) {
    const p = lo + Math.floor(random() * (hi - lo + 1));
    if (!out.has(p) && !(await portInUse(p))) out.add(p);
  }
  while (out.size < n) out.add(await freePort());
  return [...out];
}

/** True when something accepts connections on 127.0.0.1:port. */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(true));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => srv.close(() => resolve(false)));
  });
}
