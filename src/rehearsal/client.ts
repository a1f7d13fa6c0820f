/**
 * The rehearsal's client (rehearsal.ts): one kept-alive connection to the rehearsal's private
 * listener, one request at a time, each written as prepared bytes and its answer read to its
 * Content-Length. An HTTP client library would run more of its own code than the rehearsal runs of
 * txgate's; this one only has to read what txgate's own HTTP front end writes (write.ts: a status
 * line, headers with Content-Length, the body). Anything else it reads, a close or an error ends
 * the call with what happened, and the next call opens a new connection.
 */
import { connect, type Socket } from 'node:net';

/** A call's end: null when answered 200 with a body holding `expect`, else what happened instead. */
type Ended = (problem: string | null) => void;

const HEAD_END = '\r\n\r\n';
/** An answer this long is no rehearsal's. */
const MAX_ANSWER = 64 << 10;

export class RehearsalClient {
  private socket: Socket | null = null;
  private call: { expect: string; ended: Ended } | null = null;
  private text = '';

  constructor(private readonly port: number) {}

  /** Sends `request` (a whole HTTP request); resolves null when answered 200 with `expect` in the body, else what was answered. */
  send(request: Buffer, expect: string): Promise<string | null> {
    if (this.call !== null) return Promise.resolve('a call is still running');
    return new Promise((done) => {
      this.call = { expect, ended: done };
      this.text = '';
      (this.socket ?? this.open()).write(request);
    });
  }

  close(): void {
    this.end('closed');
    this.socket?.destroy();
    this.socket = null;
  }

  private open(): Socket {
    const s = connect({ host: '127.0.0.1', port: this.port, noDelay: true });
    s.setEncoding('latin1');
    s.on('data', (chunk: string) => {
      if (this.socket === s) this.read(chunk);
    });
    s.on('error', (e) => this.drop(s, e.message));
    s.on('close', () => this.drop(s, 'the connection closed'));
    this.socket = s;
    return s;
  }

  /** Ends `s`, and the call on it: a socket already replaced (its close arriving late) ends no call of another. */
  private drop(s: Socket, why: string): void {
    s.destroy();
    if (this.socket !== s) return;
    this.socket = null;
    this.end(why);
  }

  private read(chunk: string): void {
    this.text += chunk;
    const call = this.call;
    if (call === null || this.text.length > MAX_ANSWER) {
      if (this.socket !== null) this.drop(this.socket, call === null ? 'bytes with no call' : 'an answer too long');
      return;
    }
    const head = this.text.indexOf(HEAD_END);
    if (head < 0) return;
    const length = /\r\ncontent-length: *(\d+)\r\n/i.exec(this.text.slice(0, head + 2));
    if (length === null) {
      if (this.socket !== null) this.drop(this.socket, `an answer without Content-Length: ${this.text.slice(0, 200)}`);
      return;
    }
    const body = this.text.slice(head + HEAD_END.length);
    if (body.length < Number(length[1])) return;
    const ok = this.text.startsWith('HTTP/1.1 200 ') && body.includes(call.expect);
    const problem = ok ? null : this.text.slice(0, 300);
    this.text = '';
    this.end(problem);
  }

  private end(problem: string | null): void {
    const call = this.call;
    this.call = null;
    call?.ended(problem);
  }
}
