// Detached helper started by the local provider: waits for the owning process to end; if the run
// is still there (the owner died without stopping it), kills its process groups and removes it.
//   node watchdog.ts <owner pid> <state dir>
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { endRun, isAlive, PID_FILE, readPidFile } from './procs.ts';

const owner = Number(process.argv[2]);
const stateDir = process.argv[3] ?? '';
if (!owner || !stateDir) process.exit(2);

const timer = setInterval(async () => {
  if (!existsSync(join(stateDir, PID_FILE))) {
    clearInterval(timer); // stopped normally
    return;
  }
  if (isAlive(owner)) return;
  clearInterval(timer);
  const pf = readPidFile(stateDir);
  if (!pf || pf.persistent) return;
  await endRun(stateDir, pf.procs, 5_000);
  if (process.env.CLAIMKIT_E2E_KEEP_STATE === '1') rmSync(join(stateDir, PID_FILE), { force: true });
  else rmSync(stateDir, { recursive: true, force: true });
}, 500);
