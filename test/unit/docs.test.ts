/**
 * The README and the documents in docs/ hold together: every relative link resolves to a file of
 * the tree (and a link into a page to one of its headings or anchors), every numbered section of
 * design.md carries its stable anchor, every `docs/design.md §N` citation in the code names a
 * section that exists, and the generated tables of the README and docs/ are the ones rendered
 * from the code and from bench/results.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { renderDoc } from '../../scripts/docs-tables.js';
import { secp256k1Skips, shellBlocks, shellPages } from '../../scripts/doc-blocks.js';

const ROOT = join(import.meta.dirname, '../../..');
const DOCS = join(ROOT, 'docs');
const README = join(ROOT, 'README.md');
const pages = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .map((f) => join(DOCS, f));
const read = (path: string) => readFileSync(path, 'utf8');

/** The anchors a page offers: its headings as GitHub slugs them, and its explicit `<a id>`s. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.replace(/```[\s\S]*?```/g, '').split('\n')) {
    const h = /^#{1,6} (.+)$/.exec(line);
    if (h !== null)
      out.add(
        h[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\- ]/gu, '')
          .replace(/ /g, '-'),
      );
  }
  for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}

/** The relative links of a page (outside code blocks and code spans) that lead nowhere in the tree. */
export function brokenLinks(page: string, text: string, exists: (path: string) => boolean = existsSync, readPage: (path: string) => string = read): string[] {
  const broken: string[] = [];
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '``');
  for (const m of prose.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split('#', 2) as [string, string | undefined];
    const path = file === '' ? page : join(dirname(page), file);
    if (!exists(path)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && path.endsWith('.md') && !anchors(readPage(path)).has(anchor)) broken.push(`${target}: no such heading or anchor`);
  }
  return broken;
}

/** The numbered sections of design.md (`## 5. …`, `### 5.2 …`). */
export function sections(design: string): Set<string> {
  return new Set([...design.matchAll(/^#{2,4} (\d+(?:\.\d+)*)\.? /gm)].map((m) => m[1]!));
}

/** Every section a text cites as `docs/design.md §N` (or `§N, §M`). */
export function citations(text: string): string[] {
  return [...text.matchAll(/docs\/design\.md ((?:§\d+(?:\.\d+)*(?:, )?)+)/g)].flatMap((m) => [...m[1]!.matchAll(/§(\d+(?:\.\d+)*)/g)].map((s) => s[1]!));
}

/** The source files citations may live in. */
function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(?:ts|js|mjs|sh|md|sql|json)$/.test(name) ? [path] : [];
  });
}

describe('docs', () => {
  it('there are pages to check', () => {
    for (const page of ['design.md', 'architecture.md', 'clients.md', 'operations.md']) assert.ok(existsSync(join(DOCS, page)), page);
  });

  it('every relative link in README.md and docs/*.md resolves to a file of the tree, and a link into a page to one of its anchors', () => {
    const problems = [README, ...pages].flatMap((p) => brokenLinks(p, read(p)).map((b) => `${relative(ROOT, p)}: ${b}`));
    assert.deepEqual(problems, []);
  });

  it('the link check finds what is broken', () => {
    const page = join(DOCS, 'x.md');
    const text =
      '[ok](design.md#s5) [gone](nowhere.md) [bad anchor](design.md#no-such) [web](https://example.com) `[code](nowhere.md)` [self](#here)\n## Here\n';
    const files = new Map([[join(DOCS, 'design.md'), '<a id="s5"></a>\n## 5. The forward\n']]);
    const found = brokenLinks(
      page,
      text,
      (p) => p === page || files.has(p),
      (p) => files.get(p) ?? text,
    );
    assert.deepEqual(found, ['nowhere.md: no such file', 'design.md#no-such: no such heading or anchor']);
  });

  it('every numbered section of design.md has its stable anchor (#s5, #s5-2), each once', () => {
    const design = read(join(DOCS, 'design.md'));
    const numbers = [...sections(design)];
    assert.ok(numbers.length >= 10, 'design.md has numbered sections');
    const ids = [...design.matchAll(/<a id="(s[\d-]+)"><\/a>/g)].map((m) => m[1]!);
    assert.equal(new Set(ids).size, ids.length, 'anchors are unique');
    for (const n of numbers) {
      const id = `s${n.replaceAll('.', '-')}`;
      assert.ok(new RegExp(`<a id="${id}"></a>\\n#{2,4} ${n.replaceAll('.', '\\.')}\\.? `).test(design), `§${n} is preceded by <a id="${id}"></a>`);
    }
  });

  it('every docs/design.md §N citation in src/, test/, bench/, scripts/ and packages/ names a section of design.md', () => {
    const known = sections(read(join(DOCS, 'design.md')));
    const unknown: string[] = [];
    for (const dir of ['src', 'test', 'bench', 'scripts', 'packages'])
      for (const file of sources(join(ROOT, dir))) for (const n of citations(read(file))) if (!known.has(n)) unknown.push(`${relative(ROOT, file)}: §${n}`);
    assert.deepEqual(unknown, []);
  });

  it('the citation check reads single and listed citations, and only those of design.md', () => {
    const d = 'docs/design.md'; // spelled apart, so this file cites nothing itself
    assert.deepEqual(citations(`see ${d} §5.2 and (${d} §3, §4.1); DESIGN §4; docs/clients.md §9; ${d} §99`), ['5.2', '3', '4.1', '99']);
    assert.deepEqual([...sections('## 1. The contract\n### 1.1 What is served\n#### not numbered\n')], ['1', '1.1']);
  });

  it('every file the citation map of design.md names exists', () => {
    const design = read(join(DOCS, 'design.md'));
    const map = design.slice(design.indexOf('<a id="s12"></a>'));
    const files = [...map.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]!);
    assert.ok(files.length > 0, 'the map lists files');
    for (const f of files) assert.ok(existsSync(join(ROOT, f)), f);
  });

  it('the generated tables of the README and docs/ are the ones rendered from the code and bench/results (npm run readme)', () => {
    for (const p of [README, ...pages]) assert.equal(read(p), renderDoc(read(p)), `${relative(ROOT, p)} is out of date: run npm run readme`);
    const carries: [string, string][] = [
      ['README.md', 'retry'],
      ['README.md', 'perf'],
      ['README.md', 'skips'],
      ['docs/clients.md', 'retry'],
      ['docs/clients.md', 'reasons'],
      ['docs/clients.md', 'kit-outcomes'],
      ['docs/design.md', 'stages'],
      ['docs/tracking.md', 'track-states'],
      ['docs/tracking.md', 'track-transitions'],
    ];
    for (const [page, block] of carries) assert.ok(read(join(ROOT, page)).includes(`<!-- ${block}:start -->`), `${page} carries the ${block} table`);
  });
  it("the README's skip count is the run's: the secp256k1 tests that take { skip } and the shell blocks marked needs", () => {
    const text = read(README);
    const blocks = shellPages()
      .flatMap((p) => shellBlocks(p))
      .filter((b) => b.needs !== null).length;
    const tests = secp256k1Skips();
    assert.ok(blocks >= 1 && tests >= 1, `${blocks} ${tests}`);
    assert.ok(text.includes(`A run skips ${tests + blocks} tests. ${tests} skip unless`), 'the total and the tests');
    assert.ok(text.includes(`and ${blocks} shell blocks of the docs`), 'the blocks');
  });

  it('the README is the door: under 400 lines, every link into docs/ resolving', () => {
    const text = read(README);
    assert.ok(text.split('\n').length < 400, `README.md: ${text.split('\n').length} lines`);
    for (const page of ['clients.md', 'operations.md', 'architecture.md', 'design.md', 'performance.md', 'observability.md'])
      assert.ok(text.includes(`](docs/${page}`), `README.md links docs/${page}`);
  });
});
