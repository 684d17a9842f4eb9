import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The hand-written documents: what a reader follows links and paths from. */
const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCUMENTS = [
  'README.md',
  'lib/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const outsideFences = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading = ''] of outsideFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
};

/** Every relative link of a document: the file it names (resolved) and its anchor. */
const linksOf = (document: string) => {
  const text = readFileSync(join(ROOT, document), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target = '']) => target)
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => {
      const [path = '', anchor] = target.split('#');
      return { target, file: path === '' ? join(ROOT, document) : resolve(dirname(join(ROOT, document)), path), anchor };
    });
};

/** Repository paths a document names in backticks (`shared/db/query.ts`): files it says exist. */
const pathsOf = (document: string) =>
  [
    ...readFileSync(join(ROOT, document), 'utf8').matchAll(
      /`((?:bin|lib|functions|shared|local|harness|scripts|test|examples|events|docs)\/[\w./-]+)`/g,
    ),
  ]
    .map(([, path = '']) => path.replace(/[.,:]$/, ''))
    .filter((path) => !path.includes('*'));

/** Every `docs/<file>.md#<anchor>` the code's comments point to, with the file that says it. */
const codeReferences = () => {
  const files = (folder: string): string[] =>
    readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
    );
  return ['bin', 'lib', 'functions', 'shared', 'local', 'harness', 'scripts'].flatMap(files).flatMap((file) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/docs\/([\w-]+\.md)#([\w-]+)/g)].map(
      ([reference = '', name = '', anchor = '']) => ({
        file,
        reference,
        name,
        anchor,
      }),
    ),
  );
};

describe('the documents', () => {
  it.each(DOCUMENTS)('%s links only to files and headings that exist', (document) => {
    const broken = linksOf(document).filter(
      ({ file, anchor }) =>
        !existsSync(file) || (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)),
    );

    expect(broken.map(({ target }) => target)).toEqual([]);
  });

  it.each(DOCUMENTS)('%s names only repository paths that exist', (document) => {
    const missing = pathsOf(document).filter((path) => !existsSync(join(ROOT, path)));

    expect(missing.map((path) => relative(ROOT, join(ROOT, path)))).toEqual([]);
  });

  it('are where the comments of the code point, heading included', () => {
    const broken = codeReferences().filter(
      ({ name, anchor }) => !existsSync(join(ROOT, 'docs', name)) || !anchorsOf(readFileSync(join(ROOT, 'docs', name), 'utf8')).has(anchor),
    );

    expect(codeReferences().length).toBeGreaterThan(10);
    expect(broken.map(({ file, reference }) => `${file}: ${reference}`)).toEqual([]);
  });
});
