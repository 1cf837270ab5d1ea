/**
 * The job log (src/runner/io.ts): untrusted text printed by HydraFlow must not be able to issue a workflow command,
 * while HydraFlow's own commands (masks, annotations) keep working.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRunnerIO, escapeLogText } from '../src/runner/io';

/** The runner's reading of a log: lines end at \n, \r or \r\n; `::` after .NET whitespace, or `##[` anywhere, is a command. */
function commandLines(log: string): string[] {
  return log.split(/\r\n|\r|\n/).filter((line) => /^[\s\u0085]*::/.test(line) || line.includes('##['));
}

function captured() {
  let log = '';
  const io = createRunnerIO({}, (text) => (log += text));
  return { io, log: () => log };
}

describe('the job log', () => {
  it('info() of multi-line untrusted text issues no workflow command, on any line', () => {
    const { io, log } = captured();
    const text = [
      'The agent said: done.',
      '::add-mask::secret',
      '  ::stop-commands::pause',
      '\t::error file=a.js,line=1::spoofed',
      '\u2003::warning::em space',
      '\u0085::notice::next line',
      'carriage\r::set-output name=x::y',
      'legacy ##[add-mask]secret',
    ].join('\n');
    io.info(text);
    expect(commandLines(log())).toEqual([]);
    // the text is still all there to read
    expect(log()).toContain('add-mask::secret');
    expect(log()).toContain('stop-commands::pause');
  });

  it('HydraFlow’s own commands still work, their data kept on one line', () => {
    const { io, log } = captured();
    io.mask('s3cr3t');
    io.warning('first\n::stop-commands::x');
    io.error('50% done\r\n::add-mask::y');
    expect(commandLines(log())).toEqual([
      '::add-mask::s3cr3t',
      '::warning::first%0A::stop-commands::x',
      '::error::50%25 done%0D%0A::add-mask::y',
    ]);
  });

  it('escapeLogText: for any text, no line is a command; lines that were not stay as they were', () => {
    const piece = fc.constantFrom(
      '::',
      ':',
      '##[',
      '#',
      '[',
      ' ',
      '\t',
      '\u0085',
      '\u00a0',
      '\n',
      '\r',
      'add-mask',
      'x',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(piece, { maxLength: 30 }).map((p) => p.join('')),
          fc.string(),
        ),
        (text) => {
          const out = escapeLogText(text);
          expect(commandLines(out)).toEqual([]);
          const before = text.split(/\r\n|\r|\n/);
          const after = out.split(/\r\n|\r|\n/);
          expect(after).toHaveLength(before.length);
          before.forEach((line, i) => {
            if (commandLines(line).length === 0) expect(after[i]).toBe(line);
          });
        },
      ),
    );
  });
});
