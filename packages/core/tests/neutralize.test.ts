import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  emptyState,
  neutralizeClosingKeywords,
  neutralizeLinks,
  neutralizeMentions,
  neutralizeModelText,
  neutralizeReferences,
  neutralizeText,
  renderProgressComment,
} from '../src/index';

const INVISIBLE = /[\u200b\u200d]/g;
const visible = (text: string) => text.replace(INVISIBLE, '');
const OWN = 'https://github.com/acme/widgets/';

/** What GitHub would act on, read the way its filters read text (rendered, so markup characters count as spaces). */
const LIVE_MENTION = /@[A-Za-z0-9]/;
const LIVE_CLOSING =
  /(?<![A-Za-z0-9])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)[\s:*_~`()[\]]*(?:[\w.-]+\/[\w.-]+)?#\d/i;
/** An inline link or image, a definition, an absolute URL, a www. autolink, an angle autolink, an HTML link or image. */
function liveLinks(text: string, trusted: readonly string[] = []): string[] {
  const found: string[] = [];
  const ok = (at: number) => trusted.some((p) => text.startsWith(p, at));
  for (const m of text.matchAll(/\][([:]/g)) {
    const dest = m.index + 2 + (/^\s*<?/.exec(text.slice(m.index + 2))?.[0].length ?? 0);
    if (!(m[0] === '](' && ok(dest))) found.push(m[0]);
  }
  for (const m of text.matchAll(/[A-Za-z][A-Za-z0-9+.-]*:\/\//g)) if (!ok(m.index)) found.push(m[0]);
  for (const m of text.matchAll(/www\./gi)) found.push(m[0]);
  for (const m of text.matchAll(/<\/?(?:a|img|picture|source)(?![A-Za-z0-9-])/gi)) found.push(m[0]);
  for (const m of text.matchAll(/&(?:#|(?!(?:lt|gt|amp|quot|apos);)[A-Za-z]+;)/g)) found.push(m[0]);
  return found;
}

/** Strings made of the pieces an attacker combines: mentions, keywords, references, links, markup, entities. */
const hostile = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '@',
        'alice',
        'acme/team',
        '`',
        '``',
        'Fixes',
        'closes',
        'RESOLVED',
        'fix',
        ':',
        ' ',
        '\n',
        '#',
        '9',
        'acme/widgets',
        'GH-',
        '[',
        ']',
        '(',
        ')',
        '!',
        'https',
        'http',
        '://',
        '//',
        'www.',
        'evil.example',
        '<',
        '>',
        '/',
        'a ',
        'img',
        'href=',
        '&',
        '#64;',
        'lt;',
        'colon;',
        '*',
        '_',
        '\u200b',
        'x',
        OWN,
      ),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('neutralizeMentions', () => {
  it('breaks a mention after a closed code span, inside emphasis, in a team and in an e-mail address', () => {
    for (const text of ['`x` @alice', '`x`@alice', '_@alice_', '**@alice**', '@acme/team', '\\@alice', 'a@alice.io'])
      expect(neutralizeMentions(text), text).not.toMatch(LIVE_MENTION);
  });

  it('for any string: no @ directly before a letter or digit, the visible text unchanged, idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string()), (text) => {
        const out = neutralizeMentions(text);
        expect(out).not.toMatch(LIVE_MENTION);
        expect(visible(out)).toBe(visible(text));
        expect(neutralizeMentions(out)).toBe(out);
      }),
    );
  });
});

describe('neutralizeClosingKeywords', () => {
  it('breaks every GitHub closing keyword, in any case, with or without a colon, before any kind of reference', () => {
    const keywords = ['close', 'closes', 'closed', 'fix', 'fixes', 'fixed', 'resolve', 'resolves', 'resolved'];
    for (const keyword of keywords)
      for (const variant of [keyword, keyword.toUpperCase(), keyword[0]!.toUpperCase() + keyword.slice(1)])
        for (const ref of [
          ' #12',
          ': #12',
          ' acme/widgets#3',
          ':acme/widgets#3',
          '** #4',
          ' https://github.com/a/b/issues/5',
        ])
          expect(neutralizeClosingKeywords(`${variant}${ref}`), `${variant}${ref}`).not.toMatch(
            /(?<![A-Za-z0-9])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?![A-Za-z])/i,
          );
  });

  it('leaves the words alone where they close nothing', () => {
    expect(neutralizeClosingKeywords('This fixes the bug; prefixes #1 stay; closes the loop.')).toBe(
      'This fixes the bug; prefixes #1 stay; closes the loop.',
    );
  });

  it('for any string: no closing keyword before a reference, the visible text unchanged, idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string()), (text) => {
        const out = neutralizeClosingKeywords(text);
        expect(out).not.toMatch(LIVE_CLOSING);
        expect(visible(out)).toBe(visible(text));
        expect(neutralizeClosingKeywords(out)).toBe(out);
      }),
    );
  });
});

describe('neutralizeLinks', () => {
  it('leaves no link or image in any form, and keeps the URL readable', () => {
    const forms = [
      '[click](https://evil.example/x)',
      '![pixel](https://evil.example/p.png?leak=1)',
      '[click][ref]\n\n[ref]: https://evil.example',
      '[click] (https://evil.example)',
      '<https://evil.example/a>',
      'https://evil.example/b',
      'www.evil.example',
      '<a href="https://evil.example/c">c</a>',
      '<img src=//evil.example/i.png>',
      '<picture><source srcset="https://evil.example/s.png"></picture>',
      '[x](//evil.example)',
      'https&colon;//evil.example and &#104;ttps://evil.example and &#64;alice',
    ];
    for (const form of forms) {
      const out = neutralizeLinks(form);
      expect(liveLinks(out), form).toEqual([]);
      expect(visible(out)).toBe(form);
    }
  });

  it('keeps links under a trusted prefix (HydraFlow’s own, to the repository) and only those', () => {
    const own = `[#2](${OWN}pull/2) and ${OWN}issues/1#issuecomment-3 and [x](<${OWN}pull/2>)`;
    expect(neutralizeLinks(own, { trustedPrefixes: [OWN] })).toBe(own);
    const lookalikes = `[a](https://github.com/acme/widgets.evil/x) [b](https://github.com/acme/widgets@evil.example) https://github.com/acme/widgetsx`;
    expect(liveLinks(neutralizeLinks(lookalikes, { trustedPrefixes: [OWN] }), [OWN])).toEqual([]);
    expect(liveLinks(neutralizeLinks(own))).toEqual([]); // without the prefix, none stays
  });

  it('leaves code that holds no link syntax as it was', () => {
    const code = 'const xs: Array<string> = [1, 2].map((n) => n * 2); if (a < b && c > d) {}';
    expect(neutralizeLinks(code)).toBe(code);
  });

  it('for any string: no link outside the trusted prefix, the visible text unchanged, idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string()), fc.boolean(), (text, withTrust) => {
        const trusted = withTrust ? [OWN] : [];
        const out = neutralizeLinks(text, { trustedPrefixes: trusted });
        expect(liveLinks(out, trusted)).toEqual([]);
        expect(visible(out)).toBe(visible(text));
        expect(neutralizeLinks(out, { trustedPrefixes: trusted })).toBe(out);
      }),
    );
  });
});

describe('neutralizeText and neutralizeModelText', () => {
  it('for any string: nothing GitHub acts on, and neutralizing again changes nothing (the progress comment re-reads its details)', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string()), (text) => {
        for (const f of [neutralizeModelText, (t: string) => neutralizeText(t)]) {
          const out = f(text);
          expect(out).not.toMatch(LIVE_MENTION);
          expect(out).not.toMatch(LIVE_CLOSING);
          expect(out).not.toMatch(/<!--/);
          expect(liveLinks(out)).toEqual([]);
          expect(f(out)).toBe(out);
        }
      }),
    );
  });

  it('neutralizeReferences (for commit messages and titles) breaks mentions and closing keywords only', () => {
    const title = 'Average of [1, 2] (fixes #99, cc @victim) <https://x.example>';
    const out = neutralizeReferences(title);
    expect(out).not.toMatch(LIVE_MENTION);
    expect(out).not.toMatch(LIVE_CLOSING);
    expect(visible(out)).toBe(title);
    expect(out).toContain('<https://x.example>');
  });
});

describe('a long answer', () => {
  it('is neutralized in linear time, whatever it repeats (the progress comment neutralizes up to 80,000 characters)', () => {
    for (const unit of ['d', 'fix.', 'fix ', '](', ']( ', 'a://', '&a', '<a', 'www.', '@a', 'x/'.repeat(3)]) {
      const text = unit.repeat(Math.ceil(100_000 / unit.length));
      const started = performance.now();
      neutralizeModelText(text);
      expect(performance.now() - started, JSON.stringify(unit)).toBeLessThan(1_000);
    }
  });
});

describe('the progress comment', () => {
  it('keeps HydraFlow’s own links to the repository and neutralizes every other link, mention and keyword', () => {
    const body = renderProgressComment({
      state: emptyState(1, 1),
      stage: 'review',
      headline: 'Pull request #2 opened: `x`@victim',
      next: `The review runs next. [#2](${OWN}pull/2)`,
      details: `**Merged: [#2](${OWN}pull/2)**\n\nThe agent said: Fixes #99 [click](https://evil.example) ![p](https://evil.example/p.png)`,
      error: 'it said ::add-mask::x and @alice and https://evil.example',
      trustedLinkPrefixes: [OWN],
    });
    expect(body).toContain(`[#2](${OWN}pull/2)`);
    expect(body.split(`[#2](${OWN}pull/2)`)).toHaveLength(3); // in Next and in the details
    const shown = body.slice(0, body.indexOf('<!-- hydraflow:state'));
    expect(shown).not.toMatch(LIVE_MENTION);
    expect(shown).not.toMatch(LIVE_CLOSING);
    expect(liveLinks(shown, [OWN])).toEqual([]);
  });
});
