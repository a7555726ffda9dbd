/**
 * Where an operator command writes: its stdout (the command's result) and its stderr (audit lines, errors). A script
 * passes the process's own streams; the running marketplace's operator socket (platform/operators/ops-server.ts) passes
 * streams that relay to the script that sent the command.
 */
import { Writable } from 'node:stream';

export interface CommandIO {
  stdout: Writable;
  stderr: Writable;
}

/** The process's own streams. */
export const processIO = (): CommandIO => ({ stdout: process.stdout, stderr: process.stderr });

/** A stream whose chunks go to `write` as text (for relaying them elsewhere). */
export function textSink(write: (text: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer | string, _enc, done) {
      write(chunk.toString());
      done();
    },
  });
}

export const println = (stream: Writable, text: string): void => void stream.write(`${text}\n`);
