import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { freePort } from '#local/ports';
import { OPENAPI_PATH } from '#scripts/openapi';

/**
 * Opt-in: `CONTRACT_PROXY=<path to a prism binary> npx vitest run --project integration <files>`
 * puts a Prism validation proxy (@stoplight/prism-cli, not a dependency) in front of each stage, so
 * the tests' traffic is checked against openapi.json by a third-party validator as well as by
 * contract.ts. At the end it prints how many responses it saw and fails on any response violation
 * (request violations are expected: the tests send invalid requests on purpose). Prism answers a
 * body that is not JSON itself (400), so the malformed-JSON tests fail through it.
 */
export type ContractProxy = { url: string; stop: () => Promise<{ responses: number; violations: string[] }> };

export const startContractProxy = async (prism: string, upstream: string, name: string): Promise<ContractProxy> => {
  const port = await freePort();
  const logPath = `${process.cwd()}/.local/prism-${name}.log`;
  const log = createWriteStream(logPath);
  const child: ChildProcess = spawn(prism, ['proxy', '-h', '127.0.0.1', '-p', String(port), '--errors=false', OPENAPI_PATH, upstream], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (attempt > 100) throw new Error(`prism proxy did not start on ${url}; see ${logPath}`);
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => log.end(resolve));
      const colours = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'); // Prism colours its log
      const lines = readFileSync(logPath, 'utf8').replace(colours, '').split('\n');
      return {
        responses: lines.filter((line) => line.includes('Received forward response')).length,
        violations: lines.filter((line) => /Violation: response/.test(line)),
      };
    },
  };
};
