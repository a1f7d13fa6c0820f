/**
 * How the kit reaches txgate for JSON-RPC: over HTTP (one request per POST, the spec's contract)
 * or over the WebSocket transport (one connection, many requests in flight, answers by id), chosen by
 * the URL's scheme. Both give the same RpcAnswer, so the outcome rules are the same.
 */
import { HttpClient, rpcCall, type RpcAnswer } from './http.js';
import type { LinkTimes, RpcLink } from './rpc-link.js';
import { WsLink } from './ws.js';

/** Whether a txgate URL names the WebSocket transport (ws:// or wss://). */
export const isWebSocketUrl = (url: string): boolean => /^wss?:\/\//i.test(url);

/** The HTTP base URL of a txgate URL (ws → http, wss → https): GET /tip-addresses is HTTP only. */
export function httpUrlOf(url: string): string {
  return url.replace(/^ws(s?):\/\//i, 'http$1://');
}

class HttpLink implements RpcLink {
  /** A private field: util.inspect and console.log of the link never show the key. */
  readonly #apiKey: string;

  constructor(
    readonly http: HttpClient,
    apiKey: string,
  ) {
    this.#apiKey = apiKey;
  }

  call(method: string, params: readonly unknown[], auth: boolean): Promise<RpcAnswer> {
    return rpcCall(this.http, method, params, auth ? { 'x-api-key': this.#apiKey } : {});
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** The link a URL names: HTTP (http://, https://) or the WebSocket transport (ws://, wss://). */
export function openLink(url: string, apiKey: string, times: LinkTimes): RpcLink {
  return isWebSocketUrl(url) ? new WsLink(url, apiKey, times) : new HttpLink(new HttpClient(url, times), apiKey);
}

/** The link, and the HTTP client for what only HTTP serves (GET /tip-addresses): the link's own for an HTTP URL. */
export function openLinks(url: string, apiKey: string, times: LinkTimes): { readonly link: RpcLink; readonly web: HttpClient; close(): Promise<void> } {
  const link = openLink(url, apiKey, times);
  if (link instanceof HttpLink) return { link, web: link.http, close: () => link.close() };
  const web = new HttpClient(httpUrlOf(url), times);
  return { link, web, close: async () => void (await Promise.all([link.close(), web.close()])) };
}
