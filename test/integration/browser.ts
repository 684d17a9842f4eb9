import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Which Chromium the browser tests drive, in this order: `CHROMIUM_PATH`; a system Chromium
 * (`chromium`, `chromium-browser`, `google-chrome` on the PATH); the build that
 * `@sparticuz/chromium` (a dev dependency) ships inside its npm package, unpacked into the temp
 * directory on first use. There is always one, so the browser tests never skip.
 */
export type BrowserChoice = { executablePath: string; source: 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium' };

const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

const onPath = (name: string): string | undefined => {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};

export const findChromium = async (): Promise<BrowserChoice> => {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH is ${configured}, which does not exist`);
    return { executablePath: configured, source: 'CHROMIUM_PATH' };
  }
  for (const name of SYSTEM_NAMES) {
    const found = onPath(name);
    if (found) return { executablePath: found, source: 'system' };
  }
  const { default: chromium } = await import('@sparticuz/chromium');
  return { executablePath: await chromium.executablePath(), source: '@sparticuz/chromium' };
};
