/**
 * The page's HTML tokenizer (WHATWG "Tokenization", as far as these states go) over the raw
 * HTML Markdown hands it (inline.ts, mentions.ts): what it leaves open runs on.
 */

/** Where the HTML tokenizer is: in text, a comment, a bogus comment (`<?`, `<!X`: up to the next `>`) or a tag (in a value's quotes, or after its `=`). */
export interface Html {
  state: 'data' | 'comment' | 'bogus' | 'tag';
  tag?: { name: string; closing: boolean; quote?: string };
  /** An element whose content is raw text, open (`script`, `textarea`, …; `plaintext` never ends). */
  raw?: string;
  /** `<details>` not ended. */
  details: number;
}

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);
const SPACE = /[\t\n\f\r ]/;

/** A tag ended: what it opens or closes. */
export function ended(h: Html): Html {
  const { name, closing } = h.tag as NonNullable<Html['tag']>;
  const details = name !== 'details' ? h.details : closing ? Math.max(0, h.details - 1) : h.details + 1;
  return { state: 'data', details, ...(!closing && RAW_TEXT.has(name) ? { raw: name } : {}) };
}

/** The tokenizer run on over `html` from `h`; `inTag` gets the ranges inside tags. */
export function tokenize(h: Html, html: string, inTag: (from: number, to: number) => void): Html {
  let tagFrom = 0;
  for (let i = 0; ;) {
    const data: Html = { state: 'data', details: h.details };
    if (h.raw || h.state === 'comment' || h.state === 'bogus') {
      const end = h.raw ? new RegExp(`</${h.raw}[\\t\\n\\f\\r />]`, 'ig') : h.state === 'comment' ? /--!?>/g : />/g;
      end.lastIndex = i;
      const found = h.raw === 'plaintext' ? null : end.exec(html);
      if (!found) return h;
      [h, i] = [data, found.index + (h.raw ? 0 : found[0].length)];
    } else if (h.state === 'tag') {
      // Attributes, up to the `>` that ends the tag: only a value's quotes hide one. `=`: a value is to come.
      const tag = h.tag as NonNullable<Html['tag']>;
      const open = (quote?: string): Html => (inTag(tagFrom, html.length), { ...h, tag: { name: tag.name, closing: tag.closing, ...(quote ? { quote } : {}) } });
      for (let quote = tag.quote; ;) {
        if (quote === '=') {
          while (SPACE.test(html[i] ?? '')) i += 1;
          if (i >= html.length) return open(quote);
          if (html[i] === '"' || html[i] === "'") quote = html[i++];
          else for (quote = undefined; i < html.length && !SPACE.test(html[i] as string) && html[i] !== '>';) i += 1;
        } else if (quote) {
          const close = html.indexOf(quote, i);
          if (close < 0) return open(quote);
          [i, quote] = [close + 1, undefined];
        } else {
          while (i < html.length && html[i] !== '>' && html[i] !== '=') i += 1;
          if (i >= html.length) return open();
          if (html[i] === '>') break;
          [i, quote] = [i + 1, '='];
        }
      }
      inTag(tagFrom, i + 1);
      [h, i] = [ended(h), i + 1];
    } else {
      const lt = html.indexOf('<', i);
      if (lt < 0) return h;
      i = lt + 1;
      const closing = html[i] === '/';
      const first = html[closing ? i + 1 : i] ?? '';
      if (html.startsWith('!--', i)) {
        // `<!-->` and `<!--->` end at once.
        i += html[i + 3] === '>' ? 4 : html.startsWith('->', i + 3) ? 5 : 3;
        if (i === lt + 4) h = { state: 'comment', details: h.details };
      } else if (/[A-Za-z]/.test(first)) {
        const from = closing ? i + 1 : i;
        for (i = from; i < html.length && !/[\t\n\f\r />]/.test(html[i] as string);) i += 1;
        [h, tagFrom] = [{ state: 'tag', tag: { name: html.slice(from, i).toLowerCase(), closing }, details: h.details }, lt];
      } else if (closing && first === '>') i += 2;
      else if (first === '!' || first === '?' || closing) h = { state: 'bogus', details: h.details };
    }
  }
}

/**
 * The tokenizer's possible states over a reply's raw HTML, fed piece by piece in order.
 * Between two pieces the page gets Markdown's own markup and escaped text, which may end a
 * bogus comment or a tag (a `>`, a quote) or may not: both are followed.
 */
export class HtmlReader {
  states: Html[] = [{ state: 'data', details: 0 }];
  private fed = false;

  /** Feeds raw HTML; per character, 1 where it is inside a tag whatever the state before. */
  feed(html: string): Uint8Array {
    if (this.fed) this.states = merge(this.states.flatMap(between));
    this.fed = true;
    const inTag = new Uint8Array(html.length).fill(1);
    this.states = merge(this.states.map((h) => {
      const mine = new Uint8Array(html.length);
      const next = tokenize(h, html, (from, to) => void mine.fill(1, from, to));
      for (let i = 0; i < html.length; i++) inTag[i] = (inTag[i] as number) & (mine[i] as number);
      return next;
    }));
    return inTag;
  }

  /** Whether Markdown's own output here is read as it is meant (no tag, comment or raw text open). */
  get plain(): boolean {
    return this.end().every((h) => h.state === 'data' && !h.raw);
  }

  /** The states once Markdown's markup after the last piece has come too. */
  end(): Html[] {
    return merge(this.states.flatMap(between));
  }
}

const between = (h: Html): Html[] => (h.state === 'bogus' ? [h, { state: 'data', details: h.details }] : h.state === 'tag' ? [h, ended(h)] : [h]);

/** One state per kind, with the most `<details>` open. */
function merge(states: Html[]): Html[] {
  const byKey = new Map<string, Html>();
  for (const h of states) {
    const key = JSON.stringify([h.state, h.tag, h.raw]);
    if ((byKey.get(key)?.details ?? -1) < h.details) byKey.set(key, h);
  }
  return [...byKey.values()];
}
