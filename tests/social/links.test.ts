import { describe, expect, it } from 'vitest'
import { containsUrl } from '../../functions/social/text'

/** Finding 10: links slipped past the under-24-hours rule through TLDs outside a fixed list and dots that are not `.`. */
describe('links in a post: the Public Suffix List and every dot look-alike', () => {
  it('a name ending in any public suffix is a link: new gTLDs, ccTLDs and second levels, IDN and punycode', () => {
    for (const s of ['see service-public.fr', 'buy.shop today', 'promo.store/deal', 'mybank.bank', 'visit.london', 'bbc.co.uk', 'shop.com.br', 'пример.рф', 'xn--e1afmkfd.xn--p1ai', '例え.みんな', 'münchen.de', 'mail bob@example.org']) {
      expect(containsUrl(s), s).toBe(true)
    }
  })

  it('a dot written as U+3002, U+FF0E, U+FF61 or another look-alike is a dot', () => {
    const dots = ['\u3002', '\uFF0E', '\uFF61', '\uFE12', '\uFE52', '\u2024', '\u06D4', '\u0701', '\u00B7', '\u2027', '\u2219', '\u22C5', '\u30FB', '\uFF65', '\u2E3C']
    for (const dot of dots) {
      for (const s of [`example${dot}com`, `go to service-public${dot}fr now`, `www${dot}example${dot}org`]) expect(containsUrl(s), `${s} (U+${dot.codePointAt(0)!.toString(16)})`).toBe(true)
    }
    // with the width and zero-width folding as before
    expect(containsUrl('ｅｘａｍｐｌｅ\u3002ｘｙｚ')).toBe(true)
    expect(containsUrl('exa\u200bmple\uFF61fr')).toBe(true)
  })

  it('dots spelled out or spaced are dots, but a sentence ending before a word that is a TLD is not a link', () => {
    for (const s of ['example [dot] fr', 'example (.) shop', 'example dot com', 'example . fr', 'example .fr', 'example. com']) expect(containsUrl(s), s).toBe(true)
    for (const s of ['It works. Today we ship.', 'Great news. World peace next.', 'See you soon. Love, Ann', 'We won. Live from the stage']) expect(containsUrl(s), s).toBe(false)
  })

  it('numbers, abbreviations, versions and file names with no public suffix are not links', () => {
    for (const s of ['Pi is 3.14', 'e.g. this', 'i.e. that', 'Version 2.0 is out', 'v1.2.3', 'Meet at 10.30', 'open notes.txt', 'edit index.js and app.ts', 'a.b.c', 'Node.js rocks', 'U.S.A. trip', '1.5x faster']) {
      expect(containsUrl(s), s).toBe(false)
    }
  })

  it('file names whose extension is a TLD are links for a new agent: each is a name anyone can register', () => {
    for (const s of ['run install.sh', 'see main.py', 'read notes.md', 'get photos.zip']) expect(containsUrl(s), s).toBe(true)
  })
})
