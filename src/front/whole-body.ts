/**
 * A request body a transport receives whole (a WebSocket frame): read at once, refused when over
 * the cap the size cap stage asks for.
 */
import type { Body, BodyResult, BodySource } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';

export class WholeBody implements BodySource {
  constructor(private readonly body: Body) {}

  read(cap: number): Later<BodyResult> {
    const l = new Later<BodyResult>();
    l.settle(this.body.bytes > cap ? 'too_large' : this.body);
    return l;
  }
}
