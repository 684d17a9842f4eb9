import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_MAIL_DEFAULTS } from '#local/aws-env';
import { getMerchant } from '#shared/db/entities/merchant';
import { api, seedOne, stack, storeFor } from './helpers';

/**
 * What a newcomer runs first: every command line tool explains itself with --help, the shipped
 * fixture seeds either stage with tokens that stage accepts, the example client names a missing
 * variable in one line, and the local invitation link answers.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');

type Run = { code: number; stdout: string; stderr: string };
const tsx = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<Run>((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', ...args],
      {
        cwd: ROOT,
        // A variable given as undefined is left out of the child's environment.
        env: Object.fromEntries(
          Object.entries({ ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env }).filter(
            ([, value]) => value !== undefined,
          ),
        ),
        timeout: 60_000,
      },
      (error, stdout, stderr) => done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const ADMIN_COMMANDS = [
  'mint-token',
  'revoke-token',
  'apply',
  'mark-invite-used',
  'link-payment',
  'resend-notifications',
  'redrive',
  'commission',
  'recount',
  'check-totals',
  'parked',
];

describe('--help', () => {
  it.each([
    ['seed', ['bin/seed.ts', '--help']],
    ['invoke', ['bin/invoke.ts', '--help']],
    ['bench', ['harness/bench.ts', '--help']],
    ['bundle-size', ['scripts/bundle-size.ts', '--help']],
    ['admin', ['bin/admin.ts', '--help']],
  ])('npm run %s -- --help prints its usage and exits 0', async (_name, args) => {
    // Act
    const run = await tsx(args);

    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^usage: npm run/);
  });

  it('npm run admin -- --help lists every command, and each command explains its options', async () => {
    // Act
    const overview = await tsx(['bin/admin.ts', '--help']);
    const each = await Promise.all(ADMIN_COMMANDS.map((command) => tsx(['bin/admin.ts', command, '--help'])));

    // Assess
    for (const command of ADMIN_COMMANDS) expect(overview.stdout).toContain(`  ${command} `);
    each.forEach((run, index) => {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.split('\n')[0]).toContain(`admin -- ${ADMIN_COMMANDS[index]}`);
    });
  });
});

describe('examples/fixture.json', () => {
  it.each(['live', 'sandbox'] as const)('seeds the %s stage with tokens that stage accepts', async (stage) => {
    // Act
    const run = await tsx(['bin/seed.ts', 'examples/fixture.json', '--stage', stage], {
      DYNAMODB_PORT: new URL(stack.endpoints.dynamodb).port,
      SEED_TABLE_NAME: '',
    });
    const seeded = JSON.parse(run.stdout) as { merchants: { acme: { tokens: { main: string } } } };
    const orders = await api(stage, seeded.merchants.acme.tokens.main).get('/api/v2/orders');

    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(orders.status).toBe(200);
    expect(orders.body.data.orders.map((order: { order_no: string }) => order.order_no)).toEqual(['A-1']);
  });
});

describe('npm run seed', () => {
  const seedEnv = () => ({ DYNAMODB_PORT: new URL(stack.endpoints.dynamodb).port, SEED_TABLE_NAME: '' });

  it('refuses a fixture with problems before writing anything, naming each problem, and a bad option in one line', async () => {
    // Prepare: the first merchant fixes a token value another merchant's token already has.
    const taken = Object.values((await seedOne()).tokens)[0] as string;
    const first = randomUUID();
    const order = {
      affiliate_slug: 'alice',
      currency_code: 'EUR',
      total_shipping_value: 0,
      order_rows: [{ product_name: 'Tent', price_value: 1, quantity: 1 }],
    };
    const fixture = {
      merchants: [
        { key: 'fine', id: first, name: 'Fine', currency: 'EUR', tokens: [{ key: 'live', value: taken }] },
        {
          key: 'broken',
          name: 'Broken',
          currency: 'EUR',
          affiliates: [{ slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'platinum' }],
          orders: [
            { key: 'a', order_no: 'X-1', ...order },
            { key: 'b', order_no: 'X-1', ...order },
          ],
        },
      ],
    };
    const file = join(mkdtempSync(join(tmpdir(), 'seed-')), 'fixture.json');
    writeFileSync(file, JSON.stringify(fixture));

    // Act
    const run = await tsx(['bin/seed.ts', file], seedEnv());
    const badOption = await tsx(['bin/seed.ts', file, '--bogus'], seedEnv());

    // Assess
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('merchant broken: order_no "X-1" is used twice');
    expect(run.stderr).toContain('merchant broken: affiliate alice: tier platinum is not in the fixture');
    expect(run.stderr).toContain('a token value is already in the live table');
    expect(await getMerchant(storeFor('live'), first, true)).toBeUndefined();
    expect(badOption.code).toBe(1);
    expect(badOption.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('npm run invoke', () => {
  it('refuses a stage that does not exist and an unknown option in a line or two, exit 1, never a stack trace', async () => {
    // Act
    const runs = await Promise.all([
      tsx(['bin/invoke.ts', 'orders-list', '--stage', 'prod']),
      tsx(['bin/invoke.ts', 'orders-list', '--bogus']),
    ]);

    // Assess
    expect(runs.map((run) => run.code)).toEqual([1, 1]);
    expect(runs[0]?.stderr.trim()).toBe('STAGE must be "live" or "sandbox", got "prod"');
    expect(runs[1]?.stderr).toMatch(/^Unknown option '--bogus'/);
    for (const run of runs) expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('npm run admin', () => {
  it("mints a testing token on the sandbox stage, where it works, and writes nothing on stderr, the SDK's Node.js notice included", async () => {
    // Prepare
    const merchant = await seedOne(undefined, 'sandbox');

    // Act
    const run = await tsx(['bin/admin.ts', 'mint-token', '--merchant', merchant.id, '--kind', 'testing'], {
      DYNAMODB_PORT: new URL(stack.endpoints.dynamodb).port,
      SEED_TABLE_NAME: '',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined,
    });
    const minted = JSON.parse(run.stdout) as { stage: string; token: string };
    const onSandbox = await api('sandbox', minted.token).get('/api/v2/tiers');

    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(minted.stage).toBe('sandbox');
    expect(onSandbox.status).toBe(200);
  });
});

describe('examples/orders.ts', () => {
  it('names a missing variable in one line on stderr and exits 1', async () => {
    // Act
    const run = await tsx(['examples/orders.ts'], { API_TOKEN: '' });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^examples\/orders\.ts: set API_TOKEN, /)]);
  });
});

describe('the local invitation link', () => {
  it('answers with a page that names the invitation, where the e-mails of the local stages link', async () => {
    // Prepare
    const uuid = '0b7c1e2d-3f4a-4b5c-8d6e-7f8091a2b3c4';
    const link = new URL(`${LOCAL_MAIL_DEFAULTS.INVITE_LINK_BASE_URL}/${uuid}`);

    // Act
    const response = await fetch(`${stack.stages.live.url}${link.pathname}`);

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain(uuid);
  });
});
