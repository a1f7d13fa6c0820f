/** Request ids: a per-process (or per-worker) prefix and a count, in base 36. */
let processSeq = 0;

export class RequestIds {
  /** Ids given so far (the HTTP front end samples requests by it). */
  seq = 0;
  private readonly prefix: string;

  /** `prefix`: e.g. the worker's index, to keep ids unique per process. */
  constructor(prefix?: string) {
    this.prefix = (prefix ?? `${process.pid.toString(36)}${(processSeq++).toString(36)}`) + '-';
  }

  next(): string {
    return this.prefix + (++this.seq).toString(36);
  }
}
