/**
 * Text from the server reaches a person's terminal (issue 21, item 8): listing names, summaries, upstream bodies and
 * error messages are provider-controlled, and a terminal obeys escape sequences in them: an OSC sequence retitles the
 * window or writes the clipboard, CSI sequences clear the screen or move the cursor to overwrite what was printed.
 * Every human printer passes its text through `terminalSafe`, which removes escape sequences (7- and 8-bit) and every
 * control character but newline and tab, plus the Unicode bidirectional overrides that reorder what a line shows.
 * `--json` output is the server's body unchanged (JSON escapes C0 controls) and does not pass through here.
 */

/* eslint-disable no-control-regex -- matching control characters is what this module is for */

// OSC (ESC ] or 0x9d) and the string commands DCS, SOS, PM, APC (ESC P, X, ^, _ or 0x90, 0x98, 0x9e, 0x9f) run to a
// terminator (BEL, ESC \ or 0x9c), or to the end of the text when it never comes.
const STRING_SEQUENCE = /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)/g;
// CSI (ESC [ or 0x9b): parameter bytes, intermediate bytes, one final byte.
const CSI_SEQUENCE = /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?/g;
// Any other escape: ESC, its intermediate bytes and one final character.
const OTHER_ESCAPE = /\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embedding, override and isolate marks.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without escape sequences or control characters (newline and tab kept). */
export function terminalSafe(text: string): string {
  return text.replace(STRING_SEQUENCE, '').replace(CSI_SEQUENCE, '').replace(OTHER_ESCAPE, '').replace(CONTROL, '');
}
