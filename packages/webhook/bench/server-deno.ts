// Benchmark server on Deno: deno run --node-modules-dir=manual --conditions=@claimkit/source -A bench/server-deno.ts CERT KEY
import { benchApp } from './bench-app.ts';

declare const Deno: {
  args: string[];
  readTextFileSync(path: string): string;
  serve(
    opts: { port: number; hostname: string; cert: string; key: string; onListen?: () => void },
    handler: (req: Request) => Response | Promise<Response>,
  ): { addr: { port: number } };
  addSignalListener(signal: 'SIGTERM', fn: () => void): void;
  exit(code: number): never;
};

const [certFile, keyFile] = Deno.args;
const server = Deno.serve(
  {
    port: 0,
    hostname: '127.0.0.1',
    cert: Deno.readTextFileSync(certFile!),
    key: Deno.readTextFileSync(keyFile!),
    onListen: () => {},
  },
  benchApp().fetch,
);
console.log(JSON.stringify({ msg: 'webhook listening', port: server.addr.port, runtime: 'deno' }));
Deno.addSignalListener('SIGTERM', () => Deno.exit(0));
