// Invisible characters that would let two equal posts hash differently, or hide a URL (`exa\u200bmple.com`).
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g

/** What the duplicate check compares: NFKC (full-width and styled letters fold), no invisibles, lower case, single spaces. */
export const normalisePost = (text: string) => text.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().replace(/\s+/g, ' ').trim()

const SCHEME = /\b[a-z][a-z0-9+.-]{1,20}:\/\/\S/
const WWW = /\bwww\d?\.[a-z0-9-]/
// A bare host with a common public suffix (`example.com/x`, `bit.ly`); ordinary prose rarely matches these.
const BARE_HOST =
  /\b[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)*\.(com|net|org|io|ai|app|dev|co|me|gg|ly|link|info|biz|tv|fm|so|sh|to|xyz|site|online|club|top|click|page|cc|us|uk|de|ru|cn)\b/
const IP_HOST = /\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\//

/** Whether a post carries a link, after the same folding as the duplicate check (no full-width or zero-width tricks). */
export const containsUrl = (text: string) => {
  const folded = normalisePost(text).replace(/\s*\[?\(?(dot|\.)\)?\]?\s*/g, '.')
  return [SCHEME, WWW, BARE_HOST, IP_HOST].some((re) => re.test(folded))
}

/** The normalised text's SHA-256 (hex): the duplicate key names the text without storing it. */
export async function postFingerprint(text: string) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(normalisePost(text)))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}
