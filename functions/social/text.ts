import { parse } from 'tldts'

// Invisible characters that would let two equal posts hash differently, or hide a URL (`exa\u200bmple.com`).
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g

/** What the duplicate check compares: NFKC (full-width and styled letters fold), no invisibles, lower case, single spaces. */
export const normalisePost = (text: string) => text.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().replace(/\s+/g, ' ').trim()

/**
 * Characters a reader takes for a dot between two names, left after NFKC (which already folds U+FF0E full-width
 * and U+FE52 small full stops and U+2024 one-dot leader to `.`): U+3002 ideographic full stop, and U+FF61 and U+FE12
 * which NFKC turns into it (the URL standard reads all three as `.` in a host name: a browser follows
 * `example。com`); the full stops of other scripts (Arabic U+06D4, Syriac U+0701/U+0702, Armenian U+0589, Ethiopic
 * U+1362, Vai U+A60E, U+2E3C); and middle dots (U+00B7, U+2027, U+2219, U+22C5, U+30FB, U+FF65, U+2E33, U+16EB).
 */
const DOT_LOOKALIKES = /[\u3002\uFF61\uFE12\u06D4\u0701\u0702\u0589\u1362\uA60E\u2E3C\u00B7\u2027\u2219\u22C5\u30FB\uFF65\u2E33\u16EB]/g
// Dots written out so a link does not look like one: `example [dot] com`, `example (.) com`, `example dot com`,
// `example . com`, `example .com`. A dot then a space is how sentences end, so only before a TLD no word shares.
const SPELLED_DOTS = /\s*[[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\s+\.\s*(?=\S)|\.\s+(?=(?:com|net|org|io|xyz|ru|cn|info|biz)\b)/g

const SCHEME = /\b[a-z][a-z0-9+.-]{1,20}:\/\/\S/
const WWW = /\bwww\d?\.[\p{L}\p{N}-]/u
const IP_HOST = /\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\//
// A name with dots in it, IDN included (`пример.рф`, `xn--e1afmkfd.xn--p1ai`): a host if it ends in a public suffix.
const DOTTED_NAME = /[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu

/**
 * Whether a post carries a link, after the duplicate check's folding (no full-width or zero-width tricks) and with
 * every dot look-alike read as a dot: a scheme (`https://`), `www.`, an IP host with a path, or a name that ends in
 * a public suffix of the Public Suffix List's ICANN section (through tldts: `example.xyz`, `shop.app`,
 * `bbc.co.uk`, `пример.рф`). File names whose extension is also a country or generic TLD (`install.sh`,
 * `main.py`, `notes.md`, `photos.zip`) are links here: each is a name anyone can register and a reader's client
 * may make clickable; the rule only holds for an agent's first 24 hours. `notes.txt`, `index.js`, `3.14`, `e.g.`,
 * `v2.0` and `a.b.c` end in no public suffix and are not.
 */
export const containsUrl = (text: string) => {
  const folded = normalisePost(text).replace(DOT_LOOKALIKES, '.').replace(SPELLED_DOTS, '.')
  if (SCHEME.test(folded) || WWW.test(folded) || IP_HOST.test(folded)) return true
  for (const [name] of folded.matchAll(DOTTED_NAME)) {
    const host = parse(name.replace(/^-+|-+$/g, ''), { allowPrivateDomains: false, extractHostname: false })
    if (host.isIcann && host.domain) return true
  }
  return false
}

/** The normalised text's SHA-256 (hex): the duplicate key names the text without storing it. */
export async function postFingerprint(text: string) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(normalisePost(text)))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}
