// What a page looks like at its current viewport, measured in Chromium (issue #34, item 4: reports read on a phone).
// The function given to page.evaluate runs in the page, so it is self-contained and declares the little of the DOM it
// uses (the project compiles without the DOM's types).
import type { Page } from 'playwright-core';

/** SVG text under this many CSS pixels, as rendered after the SVG's scaling, is too small to read. */
export const MIN_SVG_TEXT_PX = 8;

/** A whitespace-separated token longer than this is a long token (a URL, a path, an id) and may break anywhere. */
export const LONG_TOKEN_CHARS = 24;

/** What layoutProblems measured: the page's widths, and each kind of problem as short descriptions (empty when none). */
export interface LayoutReport {
  innerWidth: number;
  scrollWidth: number;
  /** Elements that reach past the viewport's right edge and are not inside a box that scrolls sideways itself. */
  pastViewport: string[];
  tables: number;
  /** Tables wider than the box they sit in (so scrolling inside it): proves the check saw wide tables. */
  wideTables: number;
  /** Tables not inside a box with overflow-x auto/scroll that fits the viewport. */
  unboxedTables: string[];
  svgTexts: number;
  /** The smallest rendered SVG text: its size in px and its text. */
  smallestSvgText: { px: number; text: string } | null;
  /** SVG texts rendered under MIN_SVG_TEXT_PX. */
  smallSvgTexts: string[];
  cards: number;
  /** Cards whose box leaves the viewport. */
  cardsPastViewport: string[];
  /** Letters-and-digits runs of a short token rendered on more than one line (a word broken inside itself). */
  brokenWords: string[];
  /** Elements styled word-break: break-all. */
  breakAll: string[];
}

/** Measures the page at its current viewport: see LayoutReport. */
export async function layoutProblems(page: Page): Promise<LayoutReport> {
  const boxes = await page.evaluate(measureBoxes);
  const text = await page.evaluate(measureSvgText, MIN_SVG_TEXT_PX);
  const brokenWords = await page.evaluate(measureBrokenWords, LONG_TOKEN_CHARS);
  return { ...boxes, ...text, brokenWords };
}

interface Rect {
  left: number;
  right: number;
  top: number;
  width: number;
  height: number;
}
interface El {
  tagName: string;
  textContent: string | null;
  parentElement: El | null;
  clientWidth: number;
  scrollWidth: number;
  getAttribute(n: string): string | null;
  getBoundingClientRect(): Rect;
  closest(s: string): El | null;
  querySelectorAll(s: string): ArrayLike<El>;
  getScreenCTM?(): { a: number; b: number } | null;
}
interface TextNode {
  data: string;
  parentElement: El | null;
}
interface Win {
  innerWidth: number;
  getComputedStyle(e: El): { overflowX: string; fontSize: string; wordBreak: string };
  document: {
    body: El;
    documentElement: El;
    createTreeWalker(root: El, show: number): { nextNode(): TextNode | null };
    createRange(): { setStart(n: TextNode, o: number): void; setEnd(n: TextNode, o: number): void; getClientRects(): ArrayLike<Rect> };
  };
}

type Boxes = Pick<LayoutReport, 'innerWidth' | 'scrollWidth' | 'pastViewport' | 'tables' | 'wideTables' | 'unboxedTables' | 'cards' | 'cardsPastViewport' | 'breakAll'>;

/** Runs in the page: what reaches past the viewport, the tables' scroll boxes, the cards, break-all. */
function measureBoxes(): Boxes {
  const w = globalThis as unknown as Win;
  const doc = w.document;
  const width = w.innerWidth;
  const name = (el: El): string => `${el.tagName.toLowerCase()}${el.getAttribute('class') ? `.${el.getAttribute('class')!.split(' ')[0]}` : ''}`;
  const short = (text: string | null): string => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
  /** The nearest ancestor that scrolls sideways itself (overflow-x auto or scroll), or null. */
  const scrollBox = (el: El): El | null => {
    for (let p = el.parentElement; p !== null && p !== doc.body; p = p.parentElement) {
      if (['auto', 'scroll'].includes(w.getComputedStyle(p).overflowX)) return p;
    }
    return null;
  };
  const fits = (el: El): boolean => el.getBoundingClientRect().right <= width + 1;
  const all = Array.from(doc.body.querySelectorAll('*'));
  const pastViewport: string[] = [];
  for (const el of all) {
    if (el.parentElement?.closest('svg') || fits(el) || el.getBoundingClientRect().width === 0) continue;
    const box = scrollBox(el);
    if (box === null || !fits(box)) pastViewport.push(`${name(el)} right ${Math.round(el.getBoundingClientRect().right)} px: ${short(el.textContent)}`);
  }
  const tables = Array.from(doc.body.querySelectorAll('table'));
  const unboxedTables: string[] = [];
  let wideTables = 0;
  for (const table of tables) {
    const box = scrollBox(table);
    if (box === null || !fits(box)) unboxedTables.push(`${name(table)}: ${short(table.textContent)}`);
    else if (table.getBoundingClientRect().width > box.clientWidth + 1) wideTables++;
  }
  const cards = Array.from(doc.body.querySelectorAll('.card'));
  return {
    innerWidth: width,
    scrollWidth: doc.documentElement.scrollWidth,
    pastViewport,
    tables: tables.length,
    wideTables,
    unboxedTables,
    cards: cards.length,
    cardsPastViewport: cards.filter((c) => !fits(c) || c.getBoundingClientRect().left < -1).map((c) => short(c.textContent)),
    breakAll: all.filter((el) => w.getComputedStyle(el).wordBreak === 'break-all').map(name),
  };
}

/** Runs in the page: each SVG <text>'s font size as rendered, after the SVG's scaling to its box. */
function measureSvgText(minPx: number): Pick<LayoutReport, 'svgTexts' | 'smallestSvgText' | 'smallSvgTexts'> {
  const w = globalThis as unknown as Win;
  const short = (text: string | null): string => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const texts = Array.from(w.document.body.querySelectorAll('svg text')).filter((t) => short(t.textContent) !== '' && t.getBoundingClientRect().width > 0);
  let smallestSvgText: LayoutReport['smallestSvgText'] = null;
  const smallSvgTexts: string[] = [];
  for (const t of texts) {
    // The font size in the SVG's user units times the scale from them to the screen (the viewBox and the CSS size).
    const ctm = t.getScreenCTM?.() ?? { a: 1, b: 0 };
    const px = Math.round(parseFloat(w.getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b) * 100) / 100;
    if (smallestSvgText === null || px < smallestSvgText.px) smallestSvgText = { px, text: short(t.textContent) };
    if (px < minPx) smallSvgTexts.push(`${px} px "${short(t.textContent)}" in ${t.closest('figure.chart')?.getAttribute('data-chart') ?? '?'}`);
  }
  return { svgTexts: texts.length, smallestSvgText, smallSvgTexts };
}

/**
 * Runs in the page: each run of letters and digits inside a whitespace-separated token of at most `longToken`
 * characters must sit on one line. A break inside it (not at a space, hyphen or slash) is a word broken letter by letter.
 */
function measureBrokenWords(longToken: number): string[] {
  const doc = (globalThis as unknown as Win).document;
  const found: string[] = [];
  const walker = doc.createTreeWalker(doc.body, 4 /* NodeFilter.SHOW_TEXT */);
  const range = doc.createRange();
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent === null || parent.closest('svg, style, title') !== null || parent.getBoundingClientRect().width === 0) continue;
    for (const token of node.data.matchAll(/\S+/g)) {
      if (token[0].length > longToken) continue;
      for (const run of token[0].matchAll(/[\p{L}\p{N}]{2,}/gu)) {
        const start = (token.index ?? 0) + (run.index ?? 0);
        range.setStart(node, start);
        range.setEnd(node, start + run[0].length);
        // Lines: rects whose tops differ by more than half a rect's height.
        const tops = Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => ({ top: r.top, half: r.height / 2 })).sort((a, b) => a.top - b.top);
        const lines = tops.filter((r, i) => i === 0 || r.top - tops[i - 1]!.top > r.half).length;
        if (lines > 1) found.push(`"${run[0]}" of "${token[0]}" on ${lines} lines in ${parent.tagName.toLowerCase()} ${Math.round(parent.getBoundingClientRect().width)} px wide`);
      }
    }
  }
  return found;
}
