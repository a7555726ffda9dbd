// The CLI's terminal filter (issue 21 item 8): escape sequences and control characters from provider-controlled text
// never reach the terminal; ordinary text, newlines and tabs pass unchanged.
import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../cli/terminal-text.js';

describe('terminalSafe', () => {
  it('removes OSC, CSI, string commands, 8-bit forms and bare controls', () => {
    const cases: [string, string][] = [
      ['Echo \u001b]0;pwned\u0007API', 'Echo API'],
      ['Echo \u001b]52;c;ZXZpbA==\u001b\\API', 'Echo API'],
      ['\u001b[2J\u001b[HClean', 'Clean'],
      ['red \u001b[31;1mtext\u001b[0m', 'red text'],
      ['a\u009b2Jb', 'ab'],
      ['a\u009d0;title\u009cb', 'ab'],
      ['a\u001bPq#0;2;0;0;0\u001b\\b', 'ab'],
      ['a\u001b(Bb\u001bcc', 'abc'],
      ['over\rwrite\u0008\u007f', 'overwrite'],
      ['unterminated \u001b]0;title', 'unterminated '],
      ['gnp.exe\u202eexe.txt', 'gnp.exeexe.txt'],
      ['trailing escape \u001b', 'trailing escape '],
    ];
    for (const [input, want] of cases) {
      const got = terminalSafe(input);
      expect(got, JSON.stringify(input)).toBe(want);
      expect([...got].every((c) => c === '\n' || c === '\t' || c >= ' ')).toBe(true);
      expect(got).not.toMatch(/[\u007f-\u009f]/);
    }
  });

  it('keeps text, newlines, tabs and non-ASCII letters', () => {
    const text = 'SLUG\tNAME\nmétéo  Zürich – 天気 $0.05 ✓\n';
    expect(terminalSafe(text)).toBe(text);
  });
});
