/** The pipeline's stages, in their order (a leaf module: the reasons table names them too). */
export const STAGE_NAMES = ['host', 'size_cap', 'parse', 'route', 'auth', 'grant', 'decode', 'fee', 'sender', 'rate_limit', 'forward'] as const;
export type StageName = (typeof STAGE_NAMES)[number];
