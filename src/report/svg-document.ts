/**
 * A minimal DOM for @observablehq/plot's static rendering (charts.ts): elements, text nodes, attributes, inline styles
 * and serialization, and nothing else.
 *
 * Hand-written on purpose, in place of linkedom (issue 17): a report draws ~15 charts of ~100-1,100 nodes each, and
 * linkedom made every element and every attribute an EventTarget (a WeakMap entry and a Map each), parsed a whole
 * HTML page per chart, and with its CSS parser (cssomnom), htmlparser2 and css-select was ~850 KB of the renderer's
 * bundle: about half of the report's CPU at the end of a run. Plot only builds a tree and reads it back: it needs
 * createElement(NS), createTextNode, append/insert/remove, attributes, `style` and textContent, which is what is here.
 * A DOM method Plot would need beyond these throws a TypeError (not a function) rather than drawing something wrong.
 *
 * outerHTML writes what linkedom wrote for the same tree, byte for byte (test/report/svg-document.test.ts renders
 * every chart both ways): attributes in the reverse of the order they were first set (linkedom's), values with `"`
 * as &quot;, text with & < > and U+00A0 escaped (labels and series names from data stay escaped), an HTML <style>'s
 * CSS raw, childless SVG elements as `<tag ... />`, and an empty class, id or style attribute left out.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const XHTML_NS = 'http://www.w3.org/1999/xhtml';

/** Attributes written bare when empty (HTML's boolean attributes); class, id and style are left out when empty. */
const EMPTY_SKIPPED = new Set(['class', 'id', 'style']);

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\u00a0': '&#160;' };

function escapeText(text: string): string {
  return text.replace(/[<>&\u00a0]/g, (c) => TEXT_ESCAPES[c]!);
}

/** A node of the tree: an element or a text node. */
export type MiniNode = MiniElement | MiniText;

/** What element and text nodes share: a parent and siblings. */
abstract class NodeBase {
  parentNode: MiniElement | null = null;

  constructor(readonly ownerDocument: MiniDocument) {}

  get nextSibling(): MiniNode | null {
    const siblings = this.parentNode?.childNodes;
    return siblings === undefined ? null : (siblings[siblings.indexOf(this as unknown as MiniNode) + 1] ?? null);
  }

  get previousSibling(): MiniNode | null {
    const siblings = this.parentNode?.childNodes;
    return siblings === undefined ? null : (siblings[siblings.indexOf(this as unknown as MiniNode) - 1] ?? null);
  }

  remove(): void {
    this.parentNode?.removeChild(this as unknown as MiniNode);
  }
}

export class MiniText extends NodeBase {
  readonly nodeType = 3;

  constructor(
    ownerDocument: MiniDocument,
    public data: string,
  ) {
    super(ownerDocument);
  }

  get textContent(): string {
    return this.data;
  }

  set textContent(value: string) {
    this.data = value;
  }
}

/** A style property's CSS name: camelCase fields (fontSize) as CSS writes them (font-size); CSS names unchanged. */
function cssName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * An element's inline style: property names are set as CSS names (setProperty('font-size')) or camelCase fields
 * (style.fontSize = ..., Object.assign(style, {...})), and written to the style attribute as "name:value;name:value".
 */
function styleOf(element: MiniElement): Record<string, unknown> {
  const properties = new Map<string, string>();
  // What a style attribute already says (set as text: `element.style = 'a:b'`, or setAttribute) is where it starts.
  for (const rule of (element.getAttribute('style') ?? '').split(';')) {
    const colon = rule.indexOf(':');
    if (colon > 0 && rule.slice(colon + 1).trim() !== '') properties.set(rule.slice(0, colon).trim(), rule.slice(colon + 1).trim());
  }
  const write = (): void => element.setAttribute('style', [...properties].map(([k, v]) => `${k}:${v}`).join(';'));
  const set = (name: string, value: unknown): void => {
    const css = cssName(name);
    if (value === null || value === undefined || value === '') properties.delete(css);
    else properties.set(css, String(value));
    write();
  };
  const methods: Record<string, unknown> = {
    setProperty: (name: string, value: unknown) => set(name, value),
    removeProperty: (name: string) => set(name, null),
    getPropertyValue: (name: string) => properties.get(name) ?? '',
  };
  return new Proxy(methods, {
    get: (target, name) => (typeof name === 'string' && name in target ? target[name] : typeof name === 'string' ? (properties.get(cssName(name)) ?? '') : undefined),
    set: (_, name, value) => {
      if (typeof name === 'string') set(name, value);
      return true;
    },
  });
}

export class MiniElement extends NodeBase {
  readonly nodeType = 1;
  readonly childNodes: MiniNode[] = [];
  /** Attributes in the order they were first set (a later set keeps the first place). */
  readonly attributes = new Map<string, string>();
  #style: Record<string, unknown> | undefined;

  constructor(
    ownerDocument: MiniDocument,
    readonly namespaceURI: string,
    readonly localName: string,
  ) {
    super(ownerDocument);
  }

  get tagName(): string {
    return this.namespaceURI === XHTML_NS ? this.localName.toUpperCase() : this.localName;
  }

  get nodeName(): string {
    return this.tagName;
  }

  /** Plot tells an SVG element by this (as linkedom, which also writes childless SVG elements as `<tag />`). */
  get ownerSVGElement(): MiniElement | null {
    return this.namespaceURI === SVG_NS ? this : null;
  }

  get children(): MiniElement[] {
    return this.childNodes.filter((n): n is MiniElement => n instanceof MiniElement);
  }

  get firstChild(): MiniNode | null {
    return this.childNodes[0] ?? null;
  }

  get lastChild(): MiniNode | null {
    return this.childNodes[this.childNodes.length - 1] ?? null;
  }

  get firstElementChild(): MiniElement | null {
    return this.children[0] ?? null;
  }

  get isConnected(): boolean {
    return false;
  }

  get style(): Record<string, unknown> {
    return (this.#style ??= styleOf(this));
  }

  /** A style given as text (d3's `selection.property('style', text)`) replaces the attribute. */
  set style(text: unknown) {
    this.#style = undefined;
    this.setAttribute('style', String(text));
  }

  get className(): string {
    return this.getAttribute('class') ?? '';
  }

  set className(value: string) {
    this.setAttribute('class', value);
  }

  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value));
  }

  /** Namespaced attributes (xlink:href) are kept by their qualified name, as they are written. */
  setAttributeNS(_namespace: string | null, name: string, value: unknown): void {
    this.setAttribute(name, value);
  }

  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }

  hasAttribute(name: string): boolean {
    return this.attributes.has(name);
  }

  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }

  removeAttributeNS(_namespace: string | null, name: string): void {
    this.attributes.delete(name);
  }

  appendChild<T extends MiniNode>(node: T): T {
    return this.insertBefore(node, null);
  }

  insertBefore<T extends MiniNode>(node: T, before: MiniNode | null | undefined): T {
    node.parentNode?.removeChild(node);
    const at = before === null || before === undefined ? -1 : this.childNodes.indexOf(before);
    if (at < 0) this.childNodes.push(node);
    else this.childNodes.splice(at, 0, node);
    node.parentNode = this;
    return node;
  }

  removeChild<T extends MiniNode>(node: T): T {
    const at = this.childNodes.indexOf(node);
    if (at >= 0) this.childNodes.splice(at, 1);
    node.parentNode = null;
    return node;
  }

  append(...nodes: Array<MiniNode | string>): void {
    for (const node of nodes) this.appendChild(typeof node === 'string' ? this.ownerDocument.createTextNode(node) : node);
  }

  contains(node: MiniNode | null): boolean {
    for (let at: MiniNode | null = node; at !== null; at = at.parentNode) if (at === this) return true;
    return false;
  }

  get textContent(): string {
    return this.childNodes.map((n) => n.textContent).join('');
  }

  set textContent(value: unknown) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes.length = 0;
    const text = value === null || value === undefined ? '' : String(value);
    if (text !== '') this.appendChild(this.ownerDocument.createTextNode(text));
  }

  /** Only `*` and a tag name: what d3's selection.insert(name, '*') and Plot's own calls ask for. */
  querySelector(selector: string): MiniElement | null {
    return this.querySelectorAll(selector)[0] ?? null;
  }

  querySelectorAll(selector: string): MiniElement[] {
    if (!/^(\*|[a-zA-Z][\w-]*)$/.test(selector)) throw new TypeError(`svg-document: unsupported selector ${JSON.stringify(selector)}`);
    const found: MiniElement[] = [];
    const walk = (element: MiniElement): void => {
      for (const child of element.children) {
        if (selector === '*' || child.localName === selector) found.push(child);
        walk(child);
      }
    };
    walk(this);
    return found;
  }

  cloneNode(deep = false): MiniElement {
    const clone = new MiniElement(this.ownerDocument, this.namespaceURI, this.localName);
    for (const [name, value] of this.attributes) clone.attributes.set(name, value);
    if (deep) for (const child of this.childNodes) clone.appendChild(child instanceof MiniElement ? child.cloneNode(true) : this.ownerDocument.createTextNode(child.data));
    return clone;
  }

  get outerHTML(): string {
    const out: string[] = [];
    serialize(this, out);
    return out.join('');
  }
}

function serialize(element: MiniElement, out: string[]): void {
  out.push('<', element.localName);
  const names = [...element.attributes.keys()];
  for (let i = names.length - 1; i >= 0; i--) {
    const name = names[i]!;
    const value = element.attributes.get(name)!;
    if (value === '' && EMPTY_SKIPPED.has(name)) continue;
    out.push(' ', name, '="', value.replace(/"/g, '&quot;'), '"');
  }
  const svg = element.namespaceURI === SVG_NS;
  if (element.childNodes.length === 0) {
    out.push(svg ? ' />' : `></${element.localName}>`);
    return;
  }
  out.push('>');
  // An HTML <style> (or <script>) holds raw text: CSS such as `.a > svg` is written as it is.
  const raw = !svg && (element.localName === 'style' || element.localName === 'script');
  for (const child of element.childNodes) {
    if (child instanceof MiniElement) serialize(child, out);
    else out.push(raw ? child.data : escapeText(child.data));
  }
  out.push(`</${element.localName}>`);
}

/** The document Plot draws into (its `document` option). */
export class MiniDocument {
  readonly documentElement: MiniElement;
  readonly defaultView = null;

  constructor() {
    this.documentElement = new MiniElement(this, XHTML_NS, 'html');
  }

  createElement(name: string): MiniElement {
    return new MiniElement(this, XHTML_NS, name.toLowerCase());
  }

  createElementNS(namespace: string | null, name: string): MiniElement {
    return new MiniElement(this, namespace ?? XHTML_NS, name);
  }

  createTextNode(data: unknown): MiniText {
    return new MiniText(this, String(data));
  }
}
