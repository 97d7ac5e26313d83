// A small, tolerant XML reader: enough for `nvidia-smi -q -x` (elements, attributes, text; no
// namespaces or CDATA). One left-to-right pass; unknown or unbalanced closing tags are ignored.

export interface XmlElement {
  name: string;
  /** Raw attribute text inside the start tag. */
  attrs: string;
  children: XmlElement[];
  text: string;
}

import { MAX_XML_ELEMENTS } from './limits.js';

const MAX_DEPTH = 64;

export function parseXml(xml: string): XmlElement {
  const root: XmlElement = { name: '#root', attrs: '', children: [], text: '' };
  const stack: XmlElement[] = [root];
  let pos = 0;
  let elements = 0;
  while (pos < xml.length && elements < MAX_XML_ELEMENTS) {
    const lt = xml.indexOf('<', pos);
    const top = stack[stack.length - 1];
    if (lt === -1) {
      top.text += xml.slice(pos);
      break;
    }
    if (lt > pos) top.text += xml.slice(pos, lt);
    if (xml.startsWith('<!--', lt)) {
      pos = skipPast(xml, '-->', lt);
      continue;
    }
    if (xml.startsWith('<?', lt)) {
      pos = skipPast(xml, '?>', lt);
      continue;
    }
    const gt = xml.indexOf('>', lt);
    if (gt === -1) break;
    pos = gt + 1;
    const tag = xml.slice(lt + 1, gt);
    if (tag.startsWith('!')) continue; // DOCTYPE
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      for (let d = stack.length - 1; d > 0; d--) {
        if (stack[d].name === name) {
          stack.length = d;
          break;
        }
      }
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const space = body.search(/\s/);
    const name = space === -1 ? body : body.slice(0, space);
    if (name === '') continue;
    const el: XmlElement = { name, attrs: space === -1 ? '' : body.slice(space + 1), children: [], text: '' };
    top.children.push(el);
    elements++;
    if (!selfClosing && stack.length < MAX_DEPTH) stack.push(el);
  }
  return root;
}

function skipPast(xml: string, end: string, from: number): number {
  const at = xml.indexOf(end, from);
  return at === -1 ? xml.length : at + end.length;
}

export function child(el: XmlElement | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => c.name === name);
}

export function childrenNamed(el: XmlElement | undefined, name: string): XmlElement[] {
  return el ? el.children.filter((c) => c.name === name) : [];
}

/** Trimmed, entity-decoded text of the element at a child path, e.g. textAt(gpu, 'fb_memory_usage', 'used'). */
export function textAt(el: XmlElement | undefined, ...path: string[]): string | undefined {
  let cur = el;
  for (const p of path) cur = child(cur, p);
  return cur ? decodeEntities(cur.text.trim()) : undefined;
}

export function attr(el: XmlElement, name: string): string | undefined {
  const re = new RegExp(`(?:^|\\s)${name}\\s*=\\s*"([^"]*)"`);
  return re.exec(el.attrs)?.[1];
}

function decodeEntities(s: string): string {
  if (s.indexOf('&') === -1) return s;
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] ?? '');
}
