import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '#functions/routes';

/**
 * The deployed stack gives MAIL_FROM and INVITE_LINK_BASE_URL only to functions whose access says
 * they mail. So a read-only affiliate-program function must load without them, and a mailing one
 * must fail at init (fail fast) rather than mid-request when one is missing.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const program = routes.filter(
  (route) => !route.id.startsWith('orders-') && !route.id.startsWith('webhooks-') && !route.id.startsWith('events-'),
);
const mailing = program.filter((route) => 'mail' in route.access && route.access.mail);
const reading = program.filter((route) => !('mail' in route.access && route.access.mail));

const importWithout = async (handler: string, missing: string[]) => {
  for (const name of missing) vi.stubEnv(name, '');
  vi.resetModules();
  return import(resolve(ROOT, handler));
};

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('affiliate-program function environment', () => {
  it('covers every affiliate-program route', () => {
    expect(reading.length + mailing.length).toBe(12);
    expect(mailing.map((route) => route.id).sort()).toEqual(['affiliate-requests-accept', 'affiliate-requests-decline', 'invites-create']);
  });

  it.each(reading.map((route) => [route.id, route.handler]))('%s loads without the mail environment', async (_id, handler) => {
    await expect(importWithout(handler, ['MAIL_FROM', 'INVITE_LINK_BASE_URL'])).resolves.toHaveProperty('handler');
  });

  it.each(mailing.map((route) => [route.id, route.handler]))('%s fails at init without INVITE_LINK_BASE_URL', async (_id, handler) => {
    await expect(importWithout(handler, ['INVITE_LINK_BASE_URL'])).rejects.toThrow(
      'Missing required environment variable INVITE_LINK_BASE_URL',
    );
  });
});
