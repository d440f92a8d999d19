// Restores a container checkpoint archive of the real node (what the kubelet's ContainerCheckpoint
// API writes: CRIU images in checkpoint/, the container's rw layer as rootfs-diff.tar, its OCI spec
// as spec.dump, CRI metadata as config.dump) outside Kubernetes, with runc and CRIU directly.
// containerd 2.4 cannot restore through CRI (it has CheckpointContainer but no restore in
// CreateContainer), so this is what "the archive is real" rests on, and what a user runs by hand.
//
// The bundle: the image the container ran (config.dump's rootfsImageName), mounted read-write from
// the node's containerd, with rootfs-diff.tar over it; the spec with the pod's own paths replaced:
// the kubelet's files (/etc/hosts, the service-account token, ...) by empty stand-ins, the pod's
// network namespace by a fresh one, the pod's IPC/UTS by new ones, the cgroup by one under the
// node's cgroup root (so ending the run kills what is left). The restored process's stdout and
// stderr (pipes when checkpointed) are runc's: a pipe into `output`.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runcPath } from './local-node.ts';
import { NODE_CGROUP_ROOT } from './local-node-cleanup.ts';
import { waitFor } from './wait.ts';

const exec = promisify(execFile);

/** The kubelet's and containerd's single-file bind mounts (everything else bound is a directory). */
const FILE_MOUNTS = ['/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/dev/termination-log'];

export interface CheckpointNode {
  binDir: string;
  containerdSocket: string;
  criuDir?: string;
}

export interface RestoredContainer {
  id: string;
  /** What the restored process has written to stdout/stderr since the restore. */
  output(): string;
  /** The CRI metadata of the checkpoint (config.dump). */
  config: { rootfsImageName?: string; checkpointedTime?: string; name?: string };
  /** The container's log up to the checkpoint (container.log, CRI format). */
  logBeforeCheckpoint: string;
  stop(): Promise<void>;
}

interface OciSpec {
  root?: { path: string; readonly?: boolean };
  mounts?: { destination: string; source?: string; type?: string; options?: string[] }[];
  linux?: { namespaces?: { type: string; path?: string }[]; cgroupsPath?: string };
}

/** Restores `archive` (a .tar the kubelet wrote) into a new container named `id`; resolves once it runs. */
export async function restoreCheckpoint(
  node: CheckpointNode,
  archive: string,
  workDir: string,
  id: string,
): Promise<RestoredContainer> {
  if (!node.criuDir) throw new Error('the real node has no CRIU (build-criu.sh failed; see the run log)');
  const criu = join(node.criuDir, 'criu');
  const dir = join(workDir, id);
  rmSync(dir, { recursive: true, force: true });
  const files = join(dir, 'files');
  const rootfs = join(dir, 'rootfs');
  const image = join(dir, 'archive');
  for (const d of [files, rootfs, image]) mkdirSync(d, { recursive: true });
  await exec('tar', ['-xf', archive, '-C', image]);
  const config = JSON.parse(readFileSync(join(image, 'config.dump'), 'utf8')) as RestoredContainer['config'];
  const logBeforeCheckpoint = existsSync(join(image, 'container.log'))
    ? readFileSync(join(image, 'container.log'), 'utf8')
    : '';
  if (!config.rootfsImageName) throw new Error(`${archive}: config.dump names no image`);

  const ctr = (args: string[]) =>
    exec(join(node.binDir, 'ctr'), ['-a', node.containerdSocket, '-n', 'k8s.io', ...args]);
  const netns = `ck-restore-${id}`;
  const runcRoot = join(dir, 'runc');
  const runc = (args: string[]) => exec(runcPath(), ['--root', runcRoot, '--criu', criu, ...args]);
  const undo: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const f of undo.reverse()) await f().catch(() => undefined);
    undo.length = 0;
  };
  try {
    await ctr(['images', 'mount', '--rw', config.rootfsImageName, rootfs]);
    undo.push(() => ctr(['images', 'unmount', '--rm', rootfs]));
    const diff = join(image, 'rootfs-diff.tar');
    if (existsSync(diff)) await exec('tar', ['-xf', diff, '-C', rootfs]);
    await exec('ip', ['netns', 'add', netns]);
    undo.push(() => exec('ip', ['netns', 'del', netns]));

    const spec = JSON.parse(readFileSync(join(image, 'spec.dump'), 'utf8')) as OciSpec;
    spec.root = { path: rootfs, readonly: false };
    for (const m of spec.mounts ?? []) {
      // Bind mounts of the pod's own files (gone with the pod): an empty stand-in of the same kind.
      if (!m.source?.startsWith('/')) continue;
      const standIn = join(files, m.destination.replace(/^\/+/, '').replaceAll('/', '_'));
      const isDir = existsSync(m.source)
        ? statSync(m.source).isDirectory()
        : !FILE_MOUNTS.includes(m.destination);
      if (isDir) mkdirSync(standIn, { recursive: true });
      else writeFileSync(standIn, '');
      m.source = standIn;
    }
    spec.linux ??= {};
    spec.linux.namespaces = (spec.linux.namespaces ?? []).map((n) =>
      n.type === 'network' ? { type: 'network', path: `/var/run/netns/${netns}` } : { type: n.type },
    );
    spec.linux.cgroupsPath = `/${NODE_CGROUP_ROOT}/claimkit-restore/${id}`;
    writeFileSync(join(dir, 'config.json'), JSON.stringify(spec, null, 2));

    const out = join(dir, 'output.log');
    const err = join(dir, 'runc.log');
    writeFileSync(out, '');
    // runc hands the restored process its own stdio for the pipes it had: make them pipes (| cat).
    const sh = spawn(
      'sh',
      [
        '-c',
        `exec 0</dev/null; "$0" --root "$1" --criu "$2" restore --image-path "$3" --work-path "$4" --bundle "$5" --detach "$6" 2>"$7" | cat >"$8"`,
        runcPath(),
        runcRoot,
        criu,
        join(image, 'checkpoint'),
        join(dir, 'work'),
        dir,
        id,
        err,
        out,
      ],
      { detached: true, stdio: 'ignore' },
    );
    sh.unref();
    undo.push(async () => {
      await runc(['kill', id, 'KILL']).catch(() => undefined);
      await runc(['delete', '-f', id]);
    });
    await waitFor(
      `runc restore of ${id} running (runc says: ${err}; CRIU: ${join(dir, 'work', 'restore.log')})`,
      async () => {
        const state = await runc(['state', id]).then(
          (r) => (JSON.parse(r.stdout) as { status?: string }).status,
          () => undefined,
        );
        if (state === 'running') return true;
        const said = existsSync(err) ? readFileSync(err, 'utf8') : '';
        if (/level=error/.test(said)) {
          const criuLog = join(dir, 'work', 'restore.log');
          const tail = existsSync(criuLog)
            ? readFileSync(criuLog, 'utf8')
                .split('\n')
                .filter((l) => /Error/.test(l))
                .slice(-5)
                .join('\n')
            : '';
          throw new Error(`runc restore failed: ${said.trim()}\n${tail}`);
        }
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    id,
    config,
    logBeforeCheckpoint,
    output: () => readFileSync(join(dir, 'output.log'), 'utf8'),
    stop,
  };
}
