// Benchmark server on Node: node --conditions=@claimkit/source bench/server-node.ts CERT KEY
import { jsonLogger } from '../src/logger.ts';
import { serveNodeHttps } from '../src/serve-node.ts';
import { benchApp } from './bench-app.ts';

const [certFile, keyFile] = process.argv.slice(2);
const server = await serveNodeHttps({
  fetch: benchApp().fetch,
  port: 0,
  host: '127.0.0.1',
  certFile: certFile!,
  keyFile: keyFile!,
  logger: jsonLogger('info'),
});
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
