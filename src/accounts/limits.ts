/**
 * What one account may hold. The onboarding CLI and the file loader (parseAccounts), the
 * database (migration 002's CHECK) and each edge's row check refuse an account past any of
 * them, so no row can grow past what an edge checks in bounded time and memory.
 */
export const ACCOUNT_LIMITS = {
  /** Key hashes per account (rotation keeps old keys until revoked). */
  keys: 64,
  /** Grants per account (one per chain). */
  grants: 64,
  /** Tip addresses per grant. */
  tipAddresses: 100_000,
  /** Sender addresses per grant (the allow-list). */
  senders: 100_000,
  /** Fee patterns per grant. */
  feePatterns: 64,
  /**
   * The account's document, in bytes of JSON text: the CLI and the file loader measure compact
   * JSON; the database and the edges measure jsonb's text form (`doc::text`, a space after each
   * `,` and `:`, ~2% longer for a large grant). The 100,000-address grant is ~4.6 MB.
   */
  docBytes: 8 * 1024 * 1024,
} as const;

/** Problems listed for one refusal at most (a row with a million bad addresses is named once, counted). */
export const MAX_PROBLEMS = 20;

/** The first MAX_PROBLEMS problems and how many more there were. */
export function capProblems(problems: readonly string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return [...problems];
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more problems`];
}
