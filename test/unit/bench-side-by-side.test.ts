import { describe, expect, it } from 'vitest';
import type { Reply } from '#harness/bench/local';
import { p50Drop, printSideBySide, type SideBySide } from '#harness/bench/side-by-side';

/** The side-by-side comparison's figures: how much lower this tree's p50 is, said as the table's last line. */

const side = (label: string, commit: string, p50: number): SideBySide[number] => ({
  tree: { label, commit, dir: '/tmp' },
  replies: [{ status: 201, ms: p50 } as Reply],
  p50,
  p99: p50 * 2,
  mean: p50,
});

describe('side-by-side creates', () => {
  it('gives the drop of the p50 as a share of the other commit’s', () => {
    // Prepare
    const result = [side('HEAD', 'aaa', 12), side('before', 'bbb', 16)];

    // Act
    const drop = p50Drop(result);

    // Assess
    expect(drop).toBeCloseTo(0.25);
  });

  it('prints both trees and says whether the p50 is lower or higher here', () => {
    // Prepare
    const lines: string[] = [];
    const slower = [side('HEAD', 'aaa', 20), side('before', 'bbb', 16)];

    // Act
    printSideBySide((line) => lines.push(line), slower);

    // Assess
    expect(lines).toContain('| HEAD | aaa | 1 x 201 | 20.0 ms | 40.0 ms | 20.0 ms |');
    expect(lines).toContain('| before | bbb | 1 x 201 | 16.0 ms | 32.0 ms | 16.0 ms |');
    expect(lines.at(-1)).toBe('\nThe p50 is 25.0 % higher here than at bbb.');
  });
});
