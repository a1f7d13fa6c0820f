/**
 * The front end's failure to listen, recognised from any thread (a worker's error reaches the
 * main thread as text), so that start-up can say it in one line with the setting to change.
 */
/** The listener's own failure, as the front end reports it (`cannot listen on HOST:PORT`, from any thread). */
export function listenFailure(e: unknown): { host: string; port: number; internal: boolean } | null {
  const m = /cannot listen on (.+):(\d+)( \(internal\))?/.exec(e instanceof Error ? e.message : String(e));
  return m === null ? null : { host: m[1]!, port: Number(m[2]), internal: m[3] !== undefined };
}
