/**
 * Calls that are expected to fail on malformed input (JSON.parse of a body, RLP.decode of a
 * transaction): the error is kept as a value, captured without a stack trace, since that
 * capture is most of what such a refusal costs and the refusal never needs it.
 */
export function orError<A, T>(f: (a: A) => T, a: A): T | Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return f(a);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  } finally {
    Error.stackTraceLimit = limit;
  }
}
