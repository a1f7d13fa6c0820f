/**
 * Frames from peers over WebSocket that answered nothing and were dropped: from a ws(s)://
 * sequencer (ws/ws-upstream.ts: unknown or repeated ids, notifications, garbage) and from the chain
 * RPC's head subscription (chain-rpc/chain-heads.ts: neither a head nor the subscription's answer).
 * Counted per thread, by source; the metrics read them at a scrape (txgate_peer_frames_ignored_total).
 */
export const IGNORED_FRAME_SOURCES = ['sequencer', 'chain_rpc'] as const;
export type FrameSource = (typeof IGNORED_FRAME_SOURCES)[number];

export const ignoredFrames: Record<FrameSource, number> = { sequencer: 0, chain_rpc: 0 };
