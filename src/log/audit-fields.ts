/**
 * The audit line's fields that repeat from one forward to the next (docs/observability.md, Logs:
 * the audit line), each run of them one piece of JSON text built once (log-line.ts's `Piece`): the head
 * (`audit`, the lane on a chain that names it, the method of a send that is not the plain one),
 * the chain and sequencer, and the part's outcome, answer, rule and role. A line then costs one
 * concatenation per run instead of two per field. Every value here comes from the code's own
 * vocabularies (reasons.ts, answer.ts) or is JSON already (a sequencer's label): bounded, and
 * written as `str` and `json` wrote them.
 */
import { piece, piecesBy, type Piece } from './log-line.js';

/** What the line reads of a sequencer (src/forward/sequencer.ts): its label, as JSON already. */
type Sequencer = { readonly labelJson: string };

/** `,"audit":"forward"`, then `,"lane":"plain"` where the chain names the lane, then `,"method":…` (by lane named, then method). */
const headOf = (laneNamed: boolean) =>
  piecesBy(
    (method: string | undefined) => ',"audit":"forward"' + (laneNamed ? ',"lane":"plain"' : '') + (method !== undefined ? ',"method":"' + method + '"' : ''),
    64,
  );
const HEADS = [headOf(false), headOf(true)] as const;
export function auditHead(laneNamed: boolean, method: string | undefined): Piece {
  return HEADS[laneNamed ? 1 : 0](method);
}

/** The head, then `,"reqId":"` left open for the request's id (LogLine.strAfter): by lane named, then method. */
const headReqOf = (laneNamed: boolean) => piecesBy((method: string | undefined) => auditHead(laneNamed, method).closed + ',"reqId":"', 64);
const HEAD_REQS = [headReqOf(false), headReqOf(true)] as const;
export function auditHeadReqId(laneNamed: boolean, method: string | undefined): Piece {
  return HEAD_REQS[laneNamed ? 1 : 0](method);
}

/** `,"account":"…","tx":"` left open for the hash (LogLine.strAfter), by account id (ids need no escaping: what `str` wrote). */
export const accountTxKey = piecesBy((account: string) => ',"account":"' + account + '","tx":"');

/** `,"chainId":N,"sequencer":LABEL` of a sequencer (it belongs to one chain): kept while the sequencer is. */
const SEQUENCERS = new WeakMap<Sequencer, Piece>();
export function sequencerFields(chainId: number, seq: Sequencer): Piece {
  let p = SEQUENCERS.get(seq);
  if (p === undefined) SEQUENCERS.set(seq, (p = piece(',"chainId":' + chainId + ',"sequencer":' + seq.labelJson)));
  return p;
}

/** `,"outcome":…,"answer":…`, `,"rule":…` where the part has one, `,"role":…`: by outcome, answer, rule ('' for none) and role. */
type PartPieces = Map<string, Map<string, Map<string, Map<string, Piece>>>>;
const PARTS: PartPieces = new Map();
export function partFields(outcome: string, answer: string, rule: string | null, role: string): Piece {
  return partPiece(PARTS, 0, null, outcome, answer, rule, role);
}

/**
 * The sequencer's fields and the part's (`sequencerFields`, then `partFields`), then the key of the
 * milliseconds (`,"ms":`, for LogLine.jsonAfter), as one piece: they run together on every audit
 * line. Kept while the sequencer is, by outcome, answer, rule and role.
 */
const SEQUENCER_PARTS = new WeakMap<Sequencer, PartPieces>();
export function sequencerPartMsKey(chainId: number, seq: Sequencer, outcome: string, answer: string, rule: string | null, role: string): Piece {
  let parts = SEQUENCER_PARTS.get(seq);
  if (parts === undefined) SEQUENCER_PARTS.set(seq, (parts = new Map()));
  return partPiece(parts, chainId, seq, outcome, answer, rule, role);
}

/** A part's piece in `pieces`; where `seq` is given, after the sequencer's fields and before the key of the milliseconds (built only when not kept yet). */
function partPiece(pieces: PartPieces, chainId: number, seq: Sequencer | null, outcome: string, answer: string, rule: string | null, role: string): Piece {
  const r = rule ?? '';
  let byAnswer = pieces.get(outcome);
  if (byAnswer === undefined) pieces.set(outcome, (byAnswer = new Map()));
  let byRule = byAnswer.get(answer);
  if (byRule === undefined) byAnswer.set(answer, (byRule = new Map()));
  let byRole = byRule.get(r);
  if (byRole === undefined) byRule.set(r, (byRole = new Map()));
  let p = byRole.get(role);
  if (p === undefined)
    byRole.set(
      role,
      (p = piece(
        (seq === null ? '' : sequencerFields(chainId, seq).closed) +
          ',"outcome":"' +
          outcome +
          '","answer":"' +
          answer +
          '"' +
          (rule !== null ? ',"rule":"' + rule + '"' : '') +
          ',"role":"' +
          role +
          '"' +
          (seq === null ? '' : ',"ms":'),
      )),
    );
  return p;
}
