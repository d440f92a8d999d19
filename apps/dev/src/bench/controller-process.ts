// What the benchmarks that run the controller as shipped (its own process) share: the image's V8
// flags, a free loopback port for its metrics, and its resident memory.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** V8 flags the controller image runs with (packages/controller/Dockerfile): a small young generation, a heap tuned for size. */
export const CONTROLLER_NODE_FLAGS = ['--max-semi-space-size=1', '--optimize-for-size'];

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in MB (Linux /proc). */
export const rssMb = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
};
