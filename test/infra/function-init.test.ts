import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionSpecs } from '#lib/function-specs';
import { type Bundle, bundleFunction, COLD_START_BUDGET, importBundle, MAX_BUNDLE_BYTES } from '#scripts/bundles';

/**
 * Real bundles, built as the stack builds them, each imported in a fresh process with exactly the
 * environment the stack gives its function: a function whose imports need a variable its access
 * does not grant fails here, not at its first cold start in AWS. Also holds the cold-start budget
 * (median of 3 imports; `npm run bundle-size` takes 20) and the size ceiling, and
 * cross-checks the manifest's access against the code, both ways: a bundle that contains a write or
 * send operation its role is not granted would fail with AccessDenied once deployed, and a write
 * action granted to a bundle that contains no operation needing it is a permission nobody uses.
 */
const specs = functionSpecs();
const outDir = mkdtempSync(join(tmpdir(), 'merchant-api-init-'));
const bundles = new Map<string, Bundle>();

beforeAll(async () => {
  for (const bundle of await Promise.all(specs.map((spec) => bundleFunction(spec, outDir)))) bundles.set(bundle.spec.id, bundle);
}, 120_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** The AWS operations (by their wire name, which the SDK's command schemas carry) and the IAM actions they need. */
const GUARDED_OPERATIONS: Record<string, string[]> = {
  PutItem: ['dynamodb:PutItem'],
  UpdateItem: ['dynamodb:UpdateItem'],
  DeleteItem: ['dynamodb:DeleteItem'],
  BatchWriteItem: ['dynamodb:BatchWriteItem'],
  TransactWriteItems: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  SendMessage: ['sqs:SendMessage'],
  SendMessageBatch: ['sqs:SendMessage'],
  SendEmail: ['ses:SendEmail'],
  SendRawEmail: ['ses:SendRawEmail'],
};

describe('every deployed bundle', () => {
  it.each(specs.map((spec) => [spec.id]))(
    '%s initialises with only its own environment, within the cold-start budget and the size ceiling',
    async (id) => {
      const bundle = bundles.get(id) as Bundle;
      expect(bundle.bytes).toBeLessThan(MAX_BUNDLE_BYTES);
      const results = [await importBundle(bundle), await importBundle(bundle), await importBundle(bundle)];
      const failure = results.find((result) => !result.ok);
      expect(failure && !failure.ok ? failure.error : 'initialised').toBe('initialised');
      const cpu = results.flatMap((result) => (result.ok ? [result.importCpuMs] : [])).sort((a, b) => a - b);
      expect(cpu[1], 'median CPU time of the import (ms)').toBeLessThanOrEqual(COLD_START_BUDGET.importCpuMs);
    },
  );

  it.each(specs.map((spec) => [spec.id]))('%s contains no write or send operation its role does not allow', (id) => {
    const bundle = bundles.get(id) as Bundle;
    const { access } = bundle.spec;
    const granted = new Set([
      ...access.table,
      ...(access.sends.length > 0 ? ['sqs:SendMessage'] : []),
      ...(access.mail ? ['ses:SendEmail'] : []),
      ...(access.quota ? ['dynamodb:UpdateItem'] : []),
    ]);
    const code = readFileSync(bundle.file, 'utf8');
    const used = Object.keys(GUARDED_OPERATIONS).filter((operation) => code.includes(`"${operation}"`));
    // TransactWriteItems needs the item actions of its parts: at least one of them granted.
    const denied = used.filter((operation) => !(GUARDED_OPERATIONS[operation] ?? []).some((action) => granted.has(action)));
    expect(denied).toEqual([]);
  });

  it.each(specs.map((spec) => [spec.id]))('%s is granted no table write action its code never uses', (id) => {
    const bundle = bundles.get(id) as Bundle;
    const code = readFileSync(bundle.file, 'utf8');
    const contains = (operation: string) => code.includes(`"${operation}"`);
    // Each write action is used by its own operation, or by an item of a TransactWriteItems
    // (ConditionCheckItem only that way).
    const needs: Record<string, () => boolean> = {
      'dynamodb:PutItem': () => contains('PutItem') || contains('TransactWriteItems'),
      'dynamodb:BatchWriteItem': () => contains('BatchWriteItem'),
      'dynamodb:UpdateItem': () => contains('UpdateItem') || contains('TransactWriteItems'),
      'dynamodb:ConditionCheckItem': () => contains('TransactWriteItems'),
      'dynamodb:DeleteItem': () => contains('DeleteItem') || contains('TransactWriteItems'),
    };
    const unused = bundle.spec.access.table.filter((action) => needs[action] && !needs[action]!());
    expect(unused).toEqual([]);
  });
});
