/** Generators of JSON text shared by the property tests of the id rule and of the one-pass read. */
import fc from 'fast-check';

/** A JSON number as the grammar allows it (RFC 8259 §6): -? int frac? exp?; `1e400` among them (JSON.parse gives Infinity). */
export const jsonNumberText = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
    fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,3}$/)), { nil: undefined }),
  )
  .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : exp.join('')}`);
