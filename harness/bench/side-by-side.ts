/** HEAD's sequential create beside another commit's, alternating one at a time on one machine (docs/benchmarks.md, "Side by side"). */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEMO } from '#local/demo';
import { freePorts, portsEnv } from '#local/ports';
import { closeConnections, freshCreateBody, mean, type Print, printTable, type Reply, send, statusCount } from './local';
import { p50p99 } from './percentile';

/** The last commit whose create took 5 sequential DynamoDB round trips (a transaction with a guard item, the count after it). */
export const BEFORE_ONE_PUT = '6ecde94';

const ROOT = resolve(import.meta.dirname, '..', '..');
const READY_LINE = 'Ctrl-C stops everything.';

type Tree = { label: string; commit: string; dir: string };
type Running = Tree & { process: ChildProcess; base: string };

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** `npm start --in-memory` in `tree` on free ports, logs at ERROR; a port taken meanwhile (by the other stack) is asked again. */
const start = async (tree: Tree, workerEnv: Record<string, string>, attempts = 3): Promise<Running> => {
  const ports = await freePorts();
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), ['bin/local.ts', '--in-memory'], {
    cwd: tree.dir,
    env: { ...process.env, ...portsEnv(ports), POWERTOOLS_LOG_LEVEL: 'ERROR', ...workerEnv },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`${tree.label} did not start in 180 s:\n${output.slice(-2000)}`)), 180_000);
      const hear = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes(READY_LINE)) {
          clearTimeout(timer);
          ready();
        }
      };
      child.stdout?.on('data', hear);
      child.stderr?.on('data', hear);
      child.once('exit', (code) => fail(new Error(`${tree.label} exited with ${code} before it was ready:\n${output.slice(-2000)}`)));
    });
  } catch (error) {
    if (attempts <= 1 || !String(error).includes('EADDRINUSE')) throw error;
    return start(tree, workerEnv, attempts - 1);
  }
  return { ...tree, process: child, base: `http://127.0.0.1:${ports.live}` };
};

const stop = (running: Running) =>
  new Promise<void>((done) => {
    if (running.process.exitCode !== null || running.process.pid === undefined) return done();
    running.process.once('exit', () => done());
    process.kill(-running.process.pid, 'SIGINT');
    setTimeout(() => {
      if (running.process.exitCode === null && running.process.pid !== undefined) process.kill(-running.process.pid, 'SIGKILL');
    }, 20_000).unref();
  });

const create = (running: Running) =>
  send(`${running.base}/api/v2/orders/create`, DEMO.tokens.live, { method: 'POST', body: freshCreateBody('sbs') });

export type SideBySide = { tree: Tree; replies: Reply[]; p50: number; p99: number; mean: number }[];

/** Starts both stacks, warms each, sends the creates alternating (A B, then B A) and stops them; the other tree is a removed worktree. */
export const benchSideBySide = async ({
  against = BEFORE_ONE_PUT,
  creates = 200,
  warmup = 500,
  workers = false,
} = {}): Promise<SideBySide> => {
  const dir = await mkdtemp(join(tmpdir(), 'side-by-side-'));
  // Both from worktrees of their own, so neither writes the ports record of an npm start running in this tree.
  const trees: Tree[] = [
    { label: 'HEAD', commit: git('rev-parse', '--short', 'HEAD'), dir: join(dir, 'head') },
    { label: 'before', commit: git('rev-parse', '--short', against), dir: join(dir, 'before') },
  ];
  for (const tree of trees) {
    git('worktree', 'add', '--detach', tree.dir, tree.commit);
    symlinkSync(join(ROOT, 'node_modules'), join(tree.dir, 'node_modules'));
  }
  const running: Running[] = [];
  try {
    // Without workers, nothing after the commit shares the stage process with the creates (in AWS each worker is a function of its own).
    const workerEnv: Record<string, string> = workers ? {} : { STREAM_POLL: 'off', CONSUMER_POLL: 'off' };
    for (const tree of trees) running.push(await start(tree, workerEnv));
    for (let index = 0; index < warmup; index++) for (const side of running) await create(side);
    const replies: Reply[][] = running.map(() => []);
    for (let index = 0; index < creates; index++) {
      const order = index % 2 === 0 ? [0, 1] : [1, 0];
      for (const side of order) replies[side]?.push(await create(running[side] as Running));
    }
    return trees.map((tree, side) => {
      const answered = replies[side] ?? [];
      const ms = answered.filter((reply) => reply.status === 201).map((reply) => reply.ms);
      return {
        tree,
        replies: answered,
        ...p50p99(ms),
        mean: mean(ms),
      };
    });
  } finally {
    closeConnections();
    await Promise.all(running.map(stop));
    for (const tree of trees) git('worktree', 'remove', '--force', tree.dir);
    await rm(dir, { recursive: true, force: true });
  }
};

/** How much lower HEAD's p50 is than the other's, as a share of the other's (0.25: a quarter). */
export const p50Drop = ([now, before]: SideBySide) => (now && before ? 1 - now.p50 / before.p50 : Number.NaN);

/** The comparison as a markdown table, then how much lower (or higher) HEAD's p50 is. */
export const printSideBySide = (print: Print, result: SideBySide) => {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  printTable(
    print,
    'tree | commit | statuses | p50 | p99 | mean',
    result.map(({ tree, replies, p50, p99, mean }) => [tree.label, tree.commit, statusCount(replies), ms(p50), ms(p99), ms(mean)]),
  );
  print(`\nThe p50 is ${dropText(p50Drop(result))} here than at ${result[1]?.tree.commit}.`);
};

/** A drop as said: `29.1 % lower`, or `12.0 % higher` when it is a rise. */
export const dropText = (drop: number) => `${Math.abs(drop * 100).toFixed(1)} % ${drop >= 0 ? 'lower' : 'higher'}`;

export const SIDE_BY_SIDE_TITLE = 'Sequential creates side by side with the commit before the one-put create';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      workers: { type: 'boolean', default: false },
      against: { type: 'string', default: BEFORE_ONE_PUT },
      creates: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '500' },
    },
  });
  const result = await benchSideBySide({ ...values, creates: Number(values.creates), warmup: Number(values.warmup) });
  console.log(`## ${SIDE_BY_SIDE_TITLE}\n`);
  printSideBySide(console.log, result);
}
